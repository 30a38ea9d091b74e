"""The textbook API (BPETokenizer), vocab.txt / merges.txt, and the train and zh-bpe commands."""

from __future__ import annotations

import json

import pytest

import ciyuan
from ciyuan import BPETokenizer, InvalidInputError, Tokenizer, UnknownIdError, pre_tokenizers
from ciyuan.cli import main
from ciyuan.formats.vocab_merges import load_bpe, load_merges_txt, load_vocab_txt, save_merges_txt, save_vocab_txt
from ciyuan.trainers import BpeTrainer
from tests.conftest import shared

TUTORIAL = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


# -- the textbook API ----------------------------------------------------------------------------

def test_textbook_worked_example(tmp_path):
    out = tmp_path / "vocab.txt"
    bpe = BPETokenizer(vocab_size=1000).fit(TUTORIAL, max_steps=10, out_fn=out)
    assert bpe.merges[:3] == [("e", "s"), ("es", "t"), ("est", "</w>")]
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[:4] == ["<UNK>", "<PAD>", "<END>", "<MASK>"]
    assert bpe.vocab["est</w>"] == lines.index("est</w>")
    assert bpe.tokenize("Lowest newest") == ["low", "est</w>", "newest</w>"]
    assert bpe.decode(bpe.encode("lowest newest")) == "lowest newest"


def test_textbook_unknown_characters_and_ids():
    bpe = BPETokenizer(vocab_size=50).fit(["low lower newest widest"], out_fn=None)
    assert bpe.tokenize("lox") == ["lo", "<UNK>", "</w>"]  # "x" was never seen
    with pytest.raises(UnknownIdError):
        bpe.decode([10_000])
    with pytest.raises(InvalidInputError):
        BPETokenizer().tokenize("not fitted")


def test_textbook_basic_tokenizer_and_vocab_size():
    bpe = BPETokenizer(vocab_size=30, lowercase=False, basic_tokenizer=str.split).fit(["Hi, hi, hi!"] * 3, out_fn=None)
    assert bpe.merges[:3] == [("i", ","), ("i,", "</w>"), ("H", "i,</w>")]  # words split on spaces only
    assert bpe.tokenize("Hi,") == ["Hi,</w>"] and len(bpe.vocab) < 30  # ran out of pairs
    bpe = BPETokenizer(vocab_size=30, basic_tokenizer=pre_tokenizers.WhitespaceSplit()).fit(["a b"], out_fn=None)
    assert bpe.tokenize("a") == ["a</w>"]


@pytest.mark.slow
def test_textbook_on_tinyshakespeare():
    text = shared("corpora", "en", "tinyshakespeare.txt").read_text(encoding="utf-8")
    bpe = BPETokenizer(vocab_size=2000).fit(text.split("\n"), max_steps=10000, out_fn=None)
    assert len(bpe.vocab) == 2000
    sample = "to be, or not to be: that is the question"
    assert bpe.decode(bpe.encode(sample)) == sample.replace(",", " ,").replace(":", " :")


# -- vocab.txt and merges.txt --------------------------------------------------------------------

def test_vocab_and_merges_files_round_trip(tmp_path):
    tok = Tokenizer.train(["hello world, hello there"] * 5, BpeTrainer(280, byte_level=True, special_tokens=["<|endoftext|>"]))
    save_vocab_txt(tok.model, tmp_path / "vocab.txt")
    save_merges_txt(tok.model, tmp_path / "merges.txt")
    vocab_lines = (tmp_path / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert vocab_lines[0] == "<|endoftext|>" and "Ġhello" in vocab_lines
    merges = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    assert merges[0] == "#version: 0.2" and merges[1] == "h e"
    model = load_bpe(tmp_path / "vocab.txt", tmp_path / "merges.txt", byte_level=True)
    assert model.merges == tok.model.merges and model.get_vocab() == tok.model.get_vocab()
    assert load_vocab_txt(tmp_path / "vocab.txt")["Ġhello"] == tok.token_to_id("Ġhello")
    assert load_merges_txt(tmp_path / "merges.txt")[0] == ("h", "e")


# -- the CLI ---------------------------------------------------------------------------------------

def test_cli_train_outputs_load_and_encode(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog\n" * 50 + "the end\n", encoding="utf-8")
    out, merges, vocab = tmp_path / "tok.json", tmp_path / "merges.txt", tmp_path / "vocab.txt"
    assert main(["train", "--model", "bpe", "--byte-level", "--vocab-size", "300", "--min-frequency", "2",
                 "--output", str(out), "--merges", str(merges), "--vocab", str(vocab), str(corpus)]) == 0
    tok = Tokenizer.from_file(out)
    assert tok.decode(tok.encode("the lazy fox").ids) == "the lazy fox"
    assert len(vocab.read_text(encoding="utf-8").split("\n")) - 1 == tok.vocab_size
    assert merges.read_text(encoding="utf-8").split("\n")[1] == "Ġ t" or len(merges.read_text().split("\n")) > 2
    assert main(["train", "--pre-tokenizer", "whitespace", "--end-of-word-suffix", "</w>", "--tie-break",
                 "subword-nmt", "--vocab-size", "0", "--max-merges", "20", "--output", str(out), str(corpus)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["model"]["end_of_word_suffix"] == "</w>"


def test_cli_train_errors_leave_no_output(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\nbad \xc3\x28 here\n")
    out = tmp_path / "tok.json"
    assert main(["train", "--byte-level", "--vocab-size", "300", "--output", str(out), str(bad)]) == 1
    err = capsys.readouterr().err
    assert "invalid UTF-8 at byte 14 (line 2)" in err and "--errors replace" in err
    assert not out.exists() and not list(tmp_path.glob(".tok.json*"))
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["train", "--vocab-size", "300", "--output", str(out), str(empty)]) == 1
    assert "empty" in capsys.readouterr().err and not out.exists()
    assert main(["train", "--byte-level", "--vocab-size", "10", "--output", str(out), str(bad), "--errors", "replace"]) == 1
    assert "smaller than" in capsys.readouterr().err and not out.exists()
    assert main(["train", "--vocab-size", "10", "--output", str(out), str(tmp_path / "missing.txt")]) == 1
    assert not out.exists()
    # merges.txt cannot hold tokens with line breaks: nothing is written, not even tok.json.
    lines = tmp_path / "lines.txt"
    lines.write_text("ab\nab\nab\n", encoding="utf-8")
    assert main(["train", "--pre-tokenizer", "none", "--vocab-size", "20", "--output", str(out),
                 "--merges", str(tmp_path / "m.txt"), str(lines)]) == 1
    assert "line break" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "m.txt").exists()


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


def test_zh_sentence_pre_tokenizer():
    zh = pre_tokenizers.ZhSentence()
    assert zh.pre_tokenize_str("你好 世界，我们, 走。") == [
        ("你好", (0, 2)), ("世界", (3, 5)), ("，", (5, 6)), ("我们", (6, 8)), (",", (8, 9)), ("走", (10, 11)), ("。", (11, 12))]
    assert pre_tokenizers.from_dict(zh.to_dict()) == zh
    assert [p for p, _ in pre_tokenizers.ZhSentence(keep_punctuation=False).pre_tokenize_str("甲，乙。")] == ["甲", "乙"]
    tok = Tokenizer.train(["我们的生活，我们的工作。"] * 5, BpeTrainer(40), pre_tokenizer=zh)
    assert tok.encode("我们的工作").tokens[0].startswith("我们")
    assert Tokenizer.from_dict(tok.to_dict()).encode("我们的").ids == tok.encode("我们的").ids
