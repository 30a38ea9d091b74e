"""`ciyuan apply-bpe` / `ciyuan learn-bpe` against the `subword-nmt` commands, on a slice of
tinyshakespeare (the whole file: tests/parity/test_subword_nmt.py, slow)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ciyuan.cli import main
from tests.conftest import read_prefix, shared
from tests.parity.test_subword_nmt import subword_nmt

pytest.importorskip("subword_nmt")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("snmt") / "slice.txt"
    path.write_text(read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 80_000), encoding="utf-8")
    return path


@pytest.mark.parametrize("options", [[], ["--total-symbols"], ["--min-frequency", "5"]])
def test_learn_bpe_same_codes(tmp_path, corpus, options):
    out = tmp_path / "codes.txt"
    assert main(["learn-bpe", "-s", "700", *options, "-i", str(corpus), "-o", str(out)]) == 0
    assert out.read_bytes() == subword_nmt("learn-bpe", "-s", "700", *options, stdin=corpus)


def test_learn_bpe_dict_input(tmp_path, corpus):
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes(subword_nmt("get-vocab", stdin=corpus))
    out = tmp_path / "codes.txt"
    assert main(["learn-bpe", "-s", "500", "--dict-input", str(vocab), "-o", str(out)]) == 0
    assert out.read_bytes() == subword_nmt("learn-bpe", "-s", "500", "--dict-input", stdin=vocab)


def test_apply_bpe_options(tmp_path, corpus):
    codes = tmp_path / "codes.txt"
    codes.write_bytes(subword_nmt("learn-bpe", "-s", "400", stdin=corpus))
    for options in (["--merges", "100"], ["--glossaries", "[A-Z][a-z]+", "thee"], ["--separator", "+"]):
        out = tmp_path / "out.txt"
        assert main(["apply-bpe", "-c", str(codes), "-i", str(corpus), "-o", str(out), *options]) == 0
        assert out.read_bytes() == subword_nmt("apply-bpe", "-c", str(codes), *options, stdin=corpus), options


def test_apply_bpe_dropout_seeded_as_the_module_script(tmp_path, corpus):
    # `subword-nmt apply-bpe` (the combined command) ignores --seed; its module script
    # `python -m subword_nmt.apply_bpe` seeds Python's random numbers with it.
    codes = tmp_path / "codes.txt"
    codes.write_bytes(subword_nmt("learn-bpe", "-s", "400", stdin=corpus))
    with open(corpus, "rb") as f:
        theirs = subprocess.run([sys.executable, "-m", "subword_nmt.apply_bpe", "-c", str(codes), "--dropout", "0.2",
                                 "--seed", "11"], stdin=f, capture_output=True, check=True).stdout
    out = tmp_path / "out.txt"
    assert main(["apply-bpe", "-c", str(codes), "--dropout", "0.2", "--seed", "11", str(corpus), "-o", str(out)]) == 0
    assert out.read_bytes() == theirs


def test_windows_line_ends(tmp_path):
    codes = tmp_path / "codes.txt"
    codes.write_text("#version: 0.2\nt h\nth e</w>\n", encoding="utf-8")
    src = tmp_path / "in.txt"
    src.write_bytes(b"the cat\r\nthe\rend")
    out = tmp_path / "out.txt"
    assert main(["apply-bpe", "-c", str(codes), str(src), "-o", str(out)]) == 0
    assert out.read_bytes() == subword_nmt("apply-bpe", "-c", str(codes), stdin=src)


def test_errors(tmp_path, capsys):
    bad = tmp_path / "codes.txt"
    bad.write_text("#version: 0.2\na b c\n", encoding="utf-8")
    src = tmp_path / "in.txt"
    src.write_text("x\n", encoding="utf-8")
    assert main(["apply-bpe", "-c", str(bad), str(src)]) != 0
    assert f"{bad}:2:" in capsys.readouterr().err
    assert main(["apply-bpe", "-c", str(Path(tmp_path) / "missing"), str(src)]) != 0
