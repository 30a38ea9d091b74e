"""`ciyuan train`: every model, the options, the output files, clear errors that leave no output."""

from __future__ import annotations

import json
import subprocess
import sys

from ciyuan import Tokenizer
from ciyuan.cli import main
from tests.test_training import TEXTS


def run(args, stdin=b""):
    return subprocess.run([sys.executable, "-m", "ciyuan", *args], input=stdin, capture_output=True, timeout=120)


def test_train_with_a_separate_end_of_word_symbol(tmp_path):
    # The classic tutorial from the command line: "l o w </w>", ties to the pair seen first.
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3 + "\n", encoding="utf-8")
    tok, merges = tmp_path / "tok.json", tmp_path / "merges.txt"
    assert main(["train", "--pre-tokenizer", "whitespace", "--end-of-word-symbol", "</w>", "--tie-break", "first",
                 "--max-merges", "10", "--vocab-size", "0", "--output", str(tok), "--merges", str(merges),
                 "--no-progress", str(corpus)]) == 0
    assert merges.read_text(encoding="utf-8").splitlines()[1:4] == ["e s", "es t", "est </w>"]
    r = run(["tokenize", "-t", str(tok)], b"lowest newest\n")
    assert r.stdout.decode() == "low est</w> newest</w>\n"


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
    assert main(["train", "--byte-level", "--vocab-size", "10", "--output", str(out), str(bad),
                 "--errors", "replace"]) == 1
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


def _unigram_corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(["low lower lowest newer newest 12 345 talking walked"] * 50) + "\n", encoding="utf-8")
    return path


def test_train_unigram_model_file_loads_in_sentencepiece(tmp_path, capsys):
    import sentencepiece as spm

    out = tmp_path / "x.model"
    assert main(["train", "--model", "unigram", "--split-digits", "--byte-fallback",
                 "--vocab-size", "300", "--output", str(out), str(_unigram_corpus(tmp_path))]) == 0
    assert "training Unigram" in capsys.readouterr().err
    sp = spm.SentencePieceProcessor(model_file=str(out))
    tok = Tokenizer.from_file(str(out))
    assert sp.get_piece_size() == tok.vocab_size and sp.is_byte(3)
    for text in ("lowest newer 12", "walked 9 talking", "ünknown"):
        assert tok.encode(text).ids == sp.encode(text)


def test_train_sentencepiece_bpe_json(tmp_path):
    out = tmp_path / "x.json"
    assert main(["train", "--model", "sentencepiece-bpe", "--vocab-size", "40", "--no-progress",
                 "--output", str(out), str(_unigram_corpus(tmp_path))]) == 0
    tok = Tokenizer.from_file(str(out))
    assert type(tok.model).__name__ == "SentencePieceBPE"
    assert tok.encode("lowest").tokens[0].startswith("\u2581")


def test_train_unigram_errors(tmp_path):
    out = tmp_path / "x.model"
    corpus = str(_unigram_corpus(tmp_path))
    assert main(["train", "--model", "unigram", "--output", str(out), corpus]) == 1  # no --vocab-size
    assert main(["train", "--model", "unigram", "--vocab-size", "5", "--output", str(out), corpus]) == 1
    assert main(["train", "--model", "unigram", "--vocab-size", "50", "--character-coverage", "2",
                 "--output", str(out), corpus]) == 1
    assert not out.exists()
