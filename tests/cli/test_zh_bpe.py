"""`ciyuan zh-bpe train` and `ciyuan zh-bpe apply`: the command's forms, output and errors (what
they compute is held against the reference in tests/seeds/test_002_zh_bpe.py)."""

from __future__ import annotations

import pytest

from ciyuan.cli import main
from tests.conftest import shared

TRAIN = "我们 是 中国 人 ,中国 。\n我们 ,人民 ,中国\n中国,人民\n"


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "train.txt").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "test.txt").write_text("中 国 人 民\n我 们 , 的 中 国\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("form", [
    ["train", "--train_text", "{d}/train.txt", "--save_vocab", "{d}/v.txt"],
    ["train", "--train-text", "{d}/train.txt", "--save-vocab", "{d}/v.txt"],
    ["--mode", "train", "--train_text", "{d}/train.txt", "--save_vocab", "{d}/v.txt"],
    ["--train_text", "{d}/train.txt", "--mode", "train", "--save-vocab", "{d}/v.txt", "--vocab_size", "1000",
     "--min-frequency", "2"],
])
def test_train_forms(files, capsys, form):
    assert main(["zh-bpe", *(a.format(d=files) for a in form)]) == 0
    out, err = capsys.readouterr()
    assert out == "已达到下限\n"
    assert (files / "v.txt").read_text(encoding="utf-8") == "中 国</w>\n人 民</w>\n"
    assert err == (f"ciyuan zh-bpe train: 2 merges from 4 distinct clauses (7 in all) -> {files}/v.txt; "
                   "stopped: the most frequent pair occurs fewer than --min_frequency 2 times "
                   "(reached the lower bound)\n")


def test_train_stops_after_vocab_size_steps(files, capsys):
    assert main(["zh-bpe", "train", "--train_text", str(files / "train.txt"), "--save_vocab", str(files / "v.txt"),
                 "--vocab_size", "1"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("ciyuan zh-bpe train: 1 merge from 4 distinct clauses")
    assert err.endswith("stopped: --vocab_size 1 merge steps done\n")
    assert (files / "v.txt").read_text(encoding="utf-8") == "中 国</w>\n"
    assert main(["zh-bpe", "train", "--train_text", str(files / "train.txt"), "--save_vocab", str(files / "v.txt"),
                 "--vocab_size", "100", "--min_frequency", "0"]) == 0
    assert capsys.readouterr().err.endswith("stopped: no pair left to merge\n")


@pytest.mark.parametrize("mode", [["apply"], ["--mode", "apply"]])
def test_apply_forms(files, capsys, mode):
    (files / "v.txt").write_text("中 国</w>\n人 民</w>\n我 们\n的 中\n", encoding="utf-8")
    assert main(["zh-bpe", *mode, "--test_text", str(files / "test.txt"), "--vocab-filename", str(files / "v.txt"),
                 "--answer_filename", str(files / "a.txt")]) == 0
    assert (files / "a.txt").read_text(encoding="utf-8") == "中国 人民\n我们 , 的 中国\n"
    assert capsys.readouterr().err == f"ciyuan zh-bpe apply: 3 units from {files}/v.txt; 2 lines -> {files}/a.txt\n"
    # Without --answer_filename (the README's real run names none): standard output.
    assert main(["zh-bpe", *mode, "--test_text", str(files / "test.txt"),
                 "--vocab_filename", str(files / "v.txt")]) == 0
    out, err = capsys.readouterr()
    assert out == "中国 人民\n我们 , 的 中国\n"
    assert err.endswith("2 lines -> standard output\n")


def test_the_sample(tmp_path, capsys):
    train, test = shared("zh-bpe-sample", "smalltrain.txt"), shared("zh-bpe-sample", "smalltest.txt")
    vocab, answer = tmp_path / "1000.txt", tmp_path / "answer.txt"
    assert main(["zh-bpe", "train", "--train_text", str(train), "--save_vocab", str(vocab)]) == 0
    assert len(vocab.read_text(encoding="utf-8").split("\n")) - 1 == 423
    assert main(["zh-bpe", "apply", "--test_text", str(test), "--vocab_filename", str(vocab),
                 "--answer_filename", str(answer)]) == 0
    out = answer.read_text(encoding="utf-8").split("\n")[:-1]
    src = test.read_text(encoding="utf-8").split("\n")
    assert [line.replace(" ", "") for line in out] == [line.replace(" ", "") for line in src]
    assert sum(len(u) == 2 for line in out for u in line.split(" ")) > 1000


@pytest.mark.parametrize("args, message", [
    ([], "give a mode"),
    (["train", "--mode", "apply"], "two modes given: train and --mode apply"),
    (["train", "--train_text", "{d}/train.txt"], "train needs --save_vocab FILE"),
    (["apply", "--vocab_filename", "{d}/v.txt"], "apply needs --test_text FILE"),
    (["apply", "--test_text", "{d}/test.txt", "--vocab_filename", "{d}/v.txt", "--vocab_size", "5"],
     "--vocab_size: not an option of apply"),
    (["train", "--train_text", "{d}/missing.txt", "--save_vocab", "{d}/v.txt"],
     "cannot read {d}/missing.txt: No such file or directory"),
    (["train", "--train_text", "{d}/train.txt", "--save_vocab", "{d}/v.txt", "--vocab_size", "-1"],
     "vocab_size (the number of merge steps) must be a non-negative integer, not -1"),
    (["train", "--train_text", "{d}/train.txt", "--save_vocab", "{d}/v.txt", "--min_frequency", "-2"],
     "min_frequency must be a non-negative integer, not -2"),
    (["train", "--train_text", "{d}/bad.txt", "--save_vocab", "{d}/v.txt"], "{d}/bad.txt: invalid UTF-8 at byte 3"),
    (["apply", "--test_text", "{d}/test.txt", "--vocab_filename", "{d}/bad.txt"], "{d}/bad.txt: invalid UTF-8"),
    (["train", "--train_text", "{d}/train.txt", "--save_vocab", "{d}/no/v.txt"],
     "cannot write {d}/no/v.txt: No such file or directory"),
])
def test_errors(files, capsys, args, message):
    (files / "bad.txt").write_bytes(b"ab\n\xff\n")
    assert main(["zh-bpe", *(a.format(d=files) for a in args)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ciyuan zh-bpe: error: ") and message.format(d=files) in err
    assert not (files / "v.txt").exists()


def test_bad_bytes_replaced(files, capsys):
    (files / "bad.txt").write_bytes("中国\n\xff中国\n".encode("utf-8", "surrogateescape"))
    assert main(["zh-bpe", "train", "--train_text", str(files / "bad.txt"), "--save_vocab", str(files / "v.txt"),
                 "--errors", "replace"]) == 0
    assert (files / "v.txt").read_text(encoding="utf-8") == "中 国</w>\n"


def test_help(capsys):
    with pytest.raises(SystemExit):
        main(["zh-bpe", "--help"])
    out = capsys.readouterr().out
    for text in ("--train_text FILE, --train-text FILE", "--mode {train,apply}", "--vocab_size N",
                 "counts merge steps", "已达到下限", "U+4E00..U+9FA5", "spaces, tabs and U+3000",
                 "ciyuan zh-bpe --mode train --train_text"):
        assert text in out
