"""`ciyuan apply-bpe` against `subword-nmt apply-bpe`: codes learned by `subword-nmt learn-bpe` on
tinyshakespeare, output compared byte for byte, with and without a vocabulary threshold."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import read_prefix, shared

pytest.importorskip("subword_nmt")


def subword_nmt(*args: str, stdin: Path) -> bytes:
    # Its main() called in this interpreter: build/sanitize-venv (make sanitize) sees the main
    # venv's packages but has no `subword-nmt` script, and `python -m subword_nmt.subword_nmt`
    # runs nothing (the module has no __main__ block: empty output, exit 0).
    cmd = [sys.executable, "-c", "import sys; from subword_nmt.subword_nmt import main; sys.exit(main())", *args]
    with open(stdin, "rb") as f:
        return subprocess.run(cmd, stdin=f, capture_output=True, check=True, timeout=900).stdout


def ciyuan(*args: str, stdin: Path) -> bytes:
    with open(stdin, "rb") as f:
        return subprocess.run([sys.executable, "-m", "ciyuan", *args], stdin=f, capture_output=True, check=True,
                              timeout=900).stdout


def run_case(tmp_path: Path, corpus: Path, symbols: int, threshold: int) -> None:
    codes, vocab = tmp_path / "codes.txt", tmp_path / "vocab.txt"
    codes.write_bytes(subword_nmt("learn-bpe", "-s", str(symbols), stdin=corpus))
    vocab.write_bytes(subword_nmt("get-vocab", stdin=corpus))
    plain = subword_nmt("apply-bpe", "-c", str(codes), stdin=corpus)
    assert ciyuan("apply-bpe", "-c", str(codes), stdin=corpus) == plain
    filtered = subword_nmt("apply-bpe", "-c", str(codes), "--vocabulary", str(vocab),
                           "--vocabulary-threshold", str(threshold), stdin=corpus)
    assert filtered != plain  # the threshold re-splits some pieces
    assert ciyuan("apply-bpe", "-c", str(codes), "--vocabulary", str(vocab), "--vocabulary-threshold",
                  str(threshold), stdin=corpus) == filtered


def test_slice(tmp_path):
    corpus = tmp_path / "slice.txt"
    corpus.write_text(read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 100_000), encoding="utf-8")
    run_case(tmp_path, corpus, 500, 3)


@pytest.mark.slow
def test_tinyshakespeare(tmp_path):
    run_case(tmp_path, shared("corpora", "en", "tinyshakespeare.txt"), 10_000, 50)


@pytest.mark.slow
def test_learn_bpe_tinyshakespeare(tmp_path):
    corpus = shared("corpora", "en", "tinyshakespeare.txt")
    out = tmp_path / "codes.txt"
    subprocess.run([sys.executable, "-m", "ciyuan", "learn-bpe", "-s", "10000", "-i", str(corpus), "-o", str(out)],
                   check=True, timeout=900)
    assert out.read_bytes() == subword_nmt("learn-bpe", "-s", "10000", stdin=corpus)
