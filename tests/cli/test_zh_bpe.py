"""`ciyuan zh-bpe train` and `ciyuan zh-bpe apply` on the course's sample."""

from __future__ import annotations

from ciyuan.cli import main
from tests.conftest import shared


def test_cli_zh_bpe_sample(tmp_path, capsys):
    train = shared("zh-bpe-sample", "smalltrain.txt")
    test = shared("zh-bpe-sample", "smalltest.txt")
    vocab, answer = tmp_path / "vocab.txt", tmp_path / "answer.txt"
    assert main(["zh-bpe", "train", "--train_text", str(train), "--save_vocab", str(vocab),
                 "--vocab_size", "1000", "--min_frequency", "2"]) == 0
    units = vocab.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(units) == 1000 and "中国" in units and " " not in units
    assert main(["zh-bpe", "apply", "--test_text", str(test), "--vocab_filename", str(vocab),
                 "--answer_filename", str(answer)]) == 0
    out = answer.read_text(encoding="utf-8").split("\n")
    src = test.read_text(encoding="utf-8").split("\n")
    assert [line.replace(" ", "") for line in out[:50]] == [line.replace(" ", "") for line in src[:50]]
    assert any(len(u) > 1 for line in out for u in line.split(" "))
    # Without the merges file, units are taken greedily (longest first).
    (tmp_path / "vocab.txt.merges").unlink()
    assert main(["zh-bpe", "apply", "--test_text", str(test), "--vocab_filename", str(vocab),
                 "--answer_filename", str(answer)]) == 0
