"""The "subword-nmt" target of ciyuan.convert: codes that subword-nmt applies as ciyuan encodes."""

from __future__ import annotations

import io

import pytest

from ciyuan import Tokenizer
from ciyuan.convert import ConversionError, convert
from ciyuan.formats.subword_nmt import load_codes
from ciyuan.formats.subword_nmt_apply import SubwordNmt
from ciyuan.pre_tokenizers import WhitespaceSplit
from ciyuan.trainers import BpeTrainer
from tests.conftest import read_prefix, shared

apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")


def pieces_as_subword_nmt(tok: Tokenizer, line: str) -> str:
    """ciyuan's tokens of each word, written as subword-nmt writes pieces."""
    words = []
    for word in line.split():
        tokens = tok.encode(word).tokens
        last = tokens[-1]
        tokens[-1] = last[: -len("</w>")] if last.endswith("</w>") else last
        tokens = [t for t in tokens if t]
        words.append(" ".join([t + "@@" for t in tokens[:-1]] + tokens[-1:]))
    return " ".join(words)


@pytest.fixture(scope="module")
def lines():
    return read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 60_000).splitlines()


@pytest.mark.parametrize("how", ["end_of_word_suffix", "end_of_word_symbol"])
def test_codes_apply_as_ciyuan_encodes(tmp_path, lines, how):
    tok = Tokenizer.train(lines, BpeTrainer(600, **{how: "</w>"}), pre_tokenizer=WhitespaceSplit())
    assert tok.normalizer is None
    path = tmp_path / "bpe.codes"
    notes = convert(tok, path)
    assert any("not ids" in n for n in notes)
    codes = load_codes(path)
    assert codes.version == ((0, 2) if how == "end_of_word_suffix" else (0, 1))
    assert codes.merges == tok.model.merges
    peer = apply_bpe.BPE(io.StringIO(path.read_text(encoding="utf-8")))
    ours = SubwordNmt(codes)
    for line in lines:
        expected = peer.segment(line)
        assert ours.segment(line) == expected
        assert pieces_as_subword_nmt(tok, line) == expected, line


def test_refusals(tmp_path, lines):
    byte_level = Tokenizer.train(lines[:200], BpeTrainer(300, byte_level=True))
    with pytest.raises(ConversionError, match="not a character-level BPE"):
        convert(byte_level, tmp_path / "x.codes")
    plain = Tokenizer.train(lines[:200], BpeTrainer(300), pre_tokenizer=WhitespaceSplit())
    with pytest.raises(ConversionError, match="end-of-word marker"):
        convert(plain, tmp_path / "x.codes", lossy=True)
    lower = Tokenizer.train(lines[:200], BpeTrainer(300, end_of_word_suffix="</w>", special_tokens=["<unk>"]))
    with pytest.raises(ConversionError) as e:
        convert(lower, tmp_path / "x.codes")
    assert "special tokens" in str(e.value)
    notes = convert(lower, tmp_path / "x.codes", lossy=True)
    assert any(n.startswith("lost: the special tokens") for n in notes)
    assert load_codes(tmp_path / "x.codes").merges == lower.model.merges
