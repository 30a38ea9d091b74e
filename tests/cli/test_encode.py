"""The command line: encode / decode / tokenize over files and standard input."""

from __future__ import annotations

import subprocess
import sys

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
