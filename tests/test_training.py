"""WordPiece, word-level and character-level tokenizers end to end: training through
``Tokenizer.train`` and the CLI, saving and loading, pairs, truncation and padding, decoding."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import ciyuan
from ciyuan.errors import InvalidInputError
from ciyuan.trainers import CharLevelTrainer, WordLevelTrainer, WordPieceTrainer
from tests.conftest import shared

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "A quick brown dog outpaces a quick fox!",
    "Foxes and dogs: the quickest jumpers, the laziest sleepers.",
    "词元是文本的最小单位。",
] * 20


def run(args, stdin=b""):
    return subprocess.run([sys.executable, "-m", "ciyuan", *args], input=stdin, capture_output=True, timeout=120)


@pytest.mark.parametrize("criterion", ["likelihood", "frequency"])
def test_trained_wordpiece_is_a_bert_tokenizer(tmp_path, criterion):
    tok = ciyuan.Tokenizer.train(TEXTS, WordPieceTrainer(200, criterion=criterion, lowercase=True))
    enc = tok.encode("The quick fox", "lazy dogs")
    assert enc.tokens[0] == "[CLS]" and enc.tokens.count("[SEP]") == 2
    assert enc.type_ids == [0] * (enc.tokens.index("[SEP]") + 1) + [1] * (len(enc) - enc.tokens.index("[SEP]") - 1)
    assert tok.decode(enc.ids, skip_special_tokens=True) == "the quick fox lazy dogs"
    # Every character of the training text is known: nothing becomes [UNK].
    assert "[UNK]" not in tok.encode(TEXTS[2]).tokens
    path = tmp_path / "wp.json"
    tok.enable_truncation(8, stride=2)
    tok.enable_padding(pad_to_multiple_of=4)
    tok.save(path)
    again = ciyuan.Tokenizer.from_file(path)
    for text in TEXTS[:4]:
        a, b = tok.encode(text), again.encode(text)
        assert (a.ids, a.offsets, a.attention_mask) == (b.ids, b.offsets, b.attention_mask)
        assert [o.ids for o in a.overflowing] == [o.ids for o in b.overflowing]
    assert again.to_dict() == tok.to_dict()


def test_batch_ids_equal_batch_encodings():
    tok = ciyuan.Tokenizer.from_bert_vocab(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt"))
    inputs = TEXTS[:4] + [("first text", "second text"), ""]
    full = [e.ids for e in tok.encode_batch(inputs)]
    assert tok.encode_batch_ids(inputs) == full
    assert tok.encode_batch_ids(TEXTS[:4]) == full[:4]
    assert tok.encode_batch_ids(TEXTS[:4], add_special_tokens=False) == [ids[1:-1] for ids in full[:4]]
    assert tok.encode_ids("hello world") == tok.encode("hello world").ids == [101, 7592, 2088, 102]
    tok.enable_padding(length=12)  # padding never cuts: longer texts keep their length
    assert [len(ids) for ids in tok.encode_batch_ids(TEXTS[:4])] == [max(12, len(ids)) for ids in full[:4]]
    with pytest.raises(InvalidInputError):
        tok.encode_batch([("only one",)])
    with pytest.raises(InvalidInputError):
        tok.enable_padding(pad_token="<pad>")


def test_word_and_char_level_tokenizers(tmp_path):
    words = ciyuan.Tokenizer.train(TEXTS, WordLevelTrainer(30, min_frequency=2))
    enc = words.encode("the quick zebra")
    assert enc.tokens == ["the", "quick", "[UNK]"]
    assert enc.offsets == [(0, 3), (4, 9), (10, 15)]
    assert words.decode(words.encode("the quick fox").ids) == "the quick fox"
    chars = ciyuan.Tokenizer.train(TEXTS, CharLevelTrainer(100))
    enc = chars.encode("词元 fox?")
    assert enc.tokens == ["词", "元", " ", "f", "o", "x", "[UNK]"]
    assert chars.decode(chars.encode("the fox").ids) == "the fox"
    for tok in (words, chars):
        tok.save(tmp_path / "t.json")
        assert ciyuan.Tokenizer.from_file(tmp_path / "t.json").encode("the fox").ids == tok.encode("the fox").ids


def test_cli_train_models_and_encode_pairs(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    for model in ("wordpiece", "wordlevel", "charlevel"):
        out = tmp_path / f"{model}.json"
        r = run(["train", "--model", model, "--vocab-size", "120", "--no-progress", "-o", str(out), str(corpus)])
        assert r.returncode == 0, r.stderr.decode()
        r = run(["tokenize", "-t", str(out)], b"the quick fox\n")
        assert r.returncode == 0, r.stderr.decode()
    wp = tmp_path / "wordpiece.json"
    r = run(["encode", "-t", str(wp), "--pair", "--max-length", "8", "--padding", "max-length"],
            b"the quick brown fox\tthe lazy dog\nfox\tdog\n")
    assert r.returncode == 0, r.stderr.decode()
    rows = [line.split() for line in r.stdout.decode().splitlines()]
    assert [len(row) for row in rows] == [8, 8]
    r = run(["encode", "-t", str(wp), "--pair", "--max-length", "6", "--stride", "1", "--format", "json"],
            b"the quick brown fox jumps\tdog\n")
    data = json.loads(r.stdout)
    assert data["type_ids"][-2:] == [1, 1] and data["overflowing"]
    # Clear errors, no output file.
    r = run(["encode", "-t", str(wp), "--pair"], b"no tab here\n")
    assert r.returncode == 1 and b"tab" in r.stderr
    r = run(["encode", "-t", str(wp), "--padding", "max-length"], b"x\n")
    assert r.returncode == 1 and b"--max-length" in r.stderr
    r = run(["train", "--model", "wordpiece", "--byte-level", "--vocab-size", "50", "-o", str(tmp_path / "x.json"),
             str(corpus)])
    assert r.returncode == 1 and b"--byte-level" in r.stderr and not (tmp_path / "x.json").exists()


def test_cli_reads_a_bert_vocab_txt():
    vocab = shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")
    r = run(["tokenize", "-t", str(vocab)], "Hello, 世界!\n".encode())
    assert r.stdout.decode().split() == ["[CLS]", "hello", ",", "世", "[UNK]", "!", "[SEP]"]  # 界 is not in it
    r = run(["decode", "-t", str(vocab), "--skip-special-tokens"], b"101 7592 1010 2088 999 102\n")
    assert r.stdout.decode() == "hello, world!\n"
