"""The command line: encode / decode / tokenize over files and standard input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ciyuan.cli import main
from tests.conftest import shared


@pytest.fixture(scope="module")
def cl100k_path():
    return str(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"))


def run(args, stdin=b""):
    return subprocess.run([sys.executable, "-m", "ciyuan", *args], input=stdin, capture_output=True, timeout=120)


def test_encode_decode_round_trip_files(tmp_path, cl100k_path):
    src = tmp_path / "in.txt"
    text = "Hello world\n\n词元 tokenizer\nlast line without newline"
    src.write_text(text, encoding="utf-8")
    ids, back = tmp_path / "ids.txt", tmp_path / "back.txt"
    assert main(["encode", "-t", cl100k_path, str(src), "-o", str(ids)]) == 0
    lines = ids.read_text().split("\n")
    assert lines[0] == "9906 1917" and lines[1] == ""
    assert main(["decode", "-t", cl100k_path, str(ids), "-o", str(back)]) == 0
    assert back.read_text(encoding="utf-8") == text + "\n"


def test_stdin_tokenize_and_json(cl100k_path):
    r = run(["tokenize", "-t", cl100k_path], b"Hello world\n")
    assert r.returncode == 0 and r.stdout.decode() == "Hello Ġworld\n"
    r = run(["encode", "-t", cl100k_path, "--format", "json"], "词\n".encode())
    assert r.returncode == 0
    assert r.stdout.decode().strip() == '{"ids": [6744, 235], "tokens": ["è¯", "į"], "offsets": [[0, 1], [0, 1]]}'
    r = run(["encode", "-t", cl100k_path, "--whole"], b"a\nb\n")
    assert r.stdout.decode() == "64 198 65 198\n"


def test_errors_are_clear_and_leave_no_output(tmp_path, cl100k_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nbroken \xff here\n")
    out = tmp_path / "out.txt"
    out.write_text("previous")
    r = run(["encode", "-t", cl100k_path, str(bad), "-o", str(out)])
    assert r.returncode == 1
    assert "bad.txt: invalid UTF-8 at byte 12 (line 2)" in r.stderr.decode()
    assert out.read_text() == "previous"  # the old file is intact
    r = run(["encode", "-t", cl100k_path, "--errors", "replace", str(bad)])
    assert r.returncode == 0 and r.stdout.decode().count("\n") == 2

    r = run(["encode", "-t", cl100k_path], b"<|endoftext|>\n")
    assert r.returncode == 1 and "--allowed-special" in r.stderr.decode()
    r = run(["encode", "-t", cl100k_path, "--allowed-special", "all"], b"<|endoftext|>\n")
    assert r.stdout.decode() == "100257\n"

    r = run(["decode", "-t", cl100k_path], b"1 2 x\n")
    assert r.returncode == 1 and "<stdin>:1: expected whitespace-separated integer ids" in r.stderr.decode()
    r = run(["decode", "-t", cl100k_path], b"1 999999\n")
    assert r.returncode == 1 and "id 999999 at position 1" in r.stderr.decode()
    r = run(["encode", "-t", str(tmp_path / "nope.tiktoken")], b"x")
    assert r.returncode == 1 and "no such file" in r.stderr.decode()


def test_help_explains(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "encode" in out and "decode" in out and "tokenize" in out and "examples:" in out
    with pytest.raises(SystemExit):
        main(["encode", "--help"])
    assert "--allowed-special" in capsys.readouterr().out


def test_cli_reads_a_bert_vocab_txt():
    vocab = shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")
    r = run(["tokenize", "-t", str(vocab)], "Hello, 世界!\n".encode())
    assert r.stdout.decode().split() == ["[CLS]", "hello", ",", "世", "[UNK]", "!", "[SEP]"]  # 界 is not in it
    r = run(["decode", "-t", str(vocab), "--skip-special-tokens"], b"101 7592 1010 2088 999 102\n")
    assert r.stdout.decode() == "hello, world!\n"


# -- subword regularization: --sample, --alpha, --nbest-size, --seed, --nbest ----------------------


@pytest.fixture(scope="module")
def regularization_files(tmp_path_factory):
    import ciyuan
    from ciyuan import decoders
    from ciyuan.models import BPE, Unigram
    from ciyuan.pre_tokenizers import WhitespaceSplit

    folder = tmp_path_factory.mktemp("regularization")
    vocab = {"l": 0, "o": 1, "w": 2, "e": 3, "r": 4, "lo": 5, "low": 6, "er": 7, "lower": 8}
    merges = [("l", "o"), ("lo", "w"), ("e", "r"), ("low", "er")]
    bpe = ciyuan.Tokenizer(BPE(vocab, merges), pre_tokenizer=WhitespaceSplit())
    bpe.save(folder / "bpe.json")
    ciyuan.Tokenizer(BPE(vocab, merges, dropout=0.5), pre_tokenizer=WhitespaceSplit()).save(folder / "dropout.json")
    unigram = ciyuan.Tokenizer(Unigram([("<unk>", 0.0), ("▁a", -1.0), ("b", -2.0), ("▁ab", -2.5), ("a", -3.0),
                                        ("▁", -2.0)], unk_id=0),
                               decoder=decoders.from_dict({"type": "BPESuffix", "suffix": ""}))
    unigram.save(folder / "unigram.json")
    return {"bpe": str(folder / "bpe.json"), "dropout": str(folder / "dropout.json"),
            "unigram": str(folder / "unigram.json"), "tokenizer": unigram}


def test_sample_with_a_seed_is_reproducible_and_decodes(regularization_files, tmp_path):
    bpe = regularization_files["bpe"]
    lines = "\n".join(["lower lower lower low"] * 40) + "\n"
    src = tmp_path / "in.txt"
    src.write_text(lines)
    plain = run(["encode", "-t", bpe, str(src)]).stdout
    assert set(plain.decode().splitlines()) == {"8 8 8 6"}
    a = run(["encode", "-t", bpe, "--sample", "--alpha", "0.5", "--seed", "7", str(src)])
    b = run(["encode", "-t", bpe, "--sample", "--alpha", "0.5", "--seed", "7", "--threads", "1", str(src)])
    assert a.returncode == 0 and a.stdout == b.stdout and a.stdout != plain
    assert len(set(a.stdout.decode().splitlines())) > 1  # lines draw apart
    assert run(["encode", "-t", bpe, "--sample", "--alpha", "0.5", "--seed", "8", str(src)]).stdout != a.stdout
    assert run(["encode", "-t", bpe, "--sample", "--alpha", "0", "--seed", "8", str(src)]).stdout == plain
    ids = tmp_path / "ids.txt"
    ids.write_bytes(a.stdout)
    back = run(["decode", "-t", bpe, str(ids)]).stdout.decode().splitlines()
    assert set(back) == {"lowerlowerlowerlow"}  # the BPESuffix decoder joins the words' tokens
    tokens = run(["tokenize", "-t", bpe, "--sample", "--alpha", "1", "--seed", "1"], b"lower\n").stdout
    assert tokens.decode() == "l o w e r\n"
    j = run(["encode", "-t", bpe, "--format", "json", "--sample", "--alpha", "1", "--seed", "1"], b"low\n")
    assert json.loads(j.stdout) == {"ids": [0, 1, 2], "tokens": ["l", "o", "w"], "offsets": [[0, 1], [1, 2], [2, 3]]}
    # A model saved with dropout samples without --sample; --seed makes it reproducible.
    d1 = run(["encode", "-t", regularization_files["dropout"], "--seed", "3", str(src)])
    assert d1.stdout == run(["encode", "-t", regularization_files["dropout"], "--seed", "3", str(src)]).stdout
    assert d1.stdout != plain


def test_unigram_sampling_and_nbest(regularization_files):
    uni, tok = regularization_files["unigram"], regularization_files["tokenizer"]
    r = run(["encode", "-t", uni, "--nbest", "3"], "▁ab▁ab\n▁a\n".encode())
    assert r.returncode == 0, r.stderr.decode()
    groups = r.stdout.decode().split("\n\n")
    assert groups[-1] == ""
    best = tok.nbest("▁ab▁ab", 3)
    assert groups[0].splitlines() == [f"{s:.6g}\t{' '.join(map(str, e.ids))}" for e, s in best]
    assert groups[1].splitlines() == [f"{s:.6g}\t{' '.join(map(str, e.ids))}" for e, s in tok.nbest("▁a", 3)]
    t = run(["tokenize", "-t", uni, "--nbest", "2"], "▁ab▁ab\n".encode()).stdout.decode()
    assert t == f"{best[0][1]:.6g}\t▁ab ▁ab\n{best[1][1]:.6g}\t▁a b ▁ab\n\n"
    j = run(["encode", "-t", uni, "--nbest", "2", "--format", "json"], "▁ab▁ab\n".encode()).stdout.decode()
    data = json.loads(j)
    assert [(x["ids"], x["score"], x["tokens"]) for x in data["nbest"]] == [(e.ids, s, e.tokens) for e, s in best[:2]]
    assert data["nbest"][0]["offsets"] == [[0, 3], [3, 6]]
    s = run(["encode", "-t", uni, "--sample", "--alpha", "0.5", "--nbest-size", "-1", "--seed", "2"],
            "▁ab▁ab\n".encode() * 50)
    assert s.returncode == 0 and len(set(s.stdout.decode().splitlines())) > 1
    one = run(["encode", "-t", uni, "--sample", "--nbest-size", "1", "--seed", "2"], "▁ab▁ab\n".encode() * 5)
    assert set(one.stdout.decode().splitlines()) == {" ".join(map(str, tok.encode("▁ab▁ab").ids))}


def test_regularization_errors_are_clear(regularization_files):
    bpe, uni = regularization_files["bpe"], regularization_files["unigram"]
    cases = [
        (["encode", "-t", bpe, "--alpha", "0.2"], "--alpha applies to sampled segmentations: add --sample"),
        (["encode", "-t", bpe, "--nbest-size", "2"], "--nbest-size applies to sampled segmentations"),
        (["encode", "-t", bpe, "--sample", "--alpha", "2"], "between 0 and 1"),
        (["encode", "-t", uni, "--sample", "--alpha", "-1"], ">= 0"),
        (["encode", "-t", bpe, "--nbest", "2"], "BPE models have one segmentation per text"),
        (["encode", "-t", uni, "--nbest", "0"], "--nbest must be a positive number"),
        (["encode", "-t", uni, "--nbest", "2", "--sample"], "does not go with --sample"),
        (["encode", "-t", uni, "--nbest", "2", "--pair"], "does not go with --pair"),
    ]
    for args, message in cases:
        r = run(args, "▁ab lower\n".encode())
        assert r.returncode == 1 and message in r.stderr.decode(), (args, r.stderr.decode())
    with pytest.raises(SystemExit):
        main(["encode", "--sample", "--alpha", "x", "-t", bpe])


def test_help_explains_regularization(capsys):
    with pytest.raises(SystemExit):
        main(["tokenize", "--help"])
    out = capsys.readouterr().out
    for flag in ("--sample", "--alpha A", "--nbest-size N", "--seed S", "--nbest K", "BPE-dropout", "examples:"):
        assert flag in out


def test_sentencepiece_models_encode_files_and_refuse_bad_input(tmp_path):
    model = str(shared("tokenizers", "sentencepiece", "llama2.model"))
    src = tmp_path / "in.txt"
    src.write_text("Hello world\n词元\n", encoding="utf-8")
    r = run(["encode", "-t", model, str(src)])
    assert r.returncode == 0 and r.stdout.decode() == "15043 3186\n29871 235 178 144 30824\n"
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nbroken \xff here\n")
    r = run(["encode", "-t", model, str(bad)])
    assert r.returncode == 1 and "bad.txt: invalid UTF-8 at byte 12 (line 2)" in r.stderr.decode()
    r = run(["decode", "-t", model], b"15043 32000\n")
    assert r.returncode == 1 and "id 32000" in r.stderr.decode()
    truncated = tmp_path / "cut.model"
    truncated.write_bytes(Path(model).read_bytes()[:1000])
    r = run(["encode", "-t", str(truncated)], b"x\n")
    assert r.returncode == 1 and "cut.model" in r.stderr.decode() and "Traceback" not in r.stderr.decode()
