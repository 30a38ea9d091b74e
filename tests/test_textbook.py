"""The textbook API (BPETokenizer): the worked example, unknown characters, options, a real corpus."""

from __future__ import annotations

import pytest

from ciyuan import BPETokenizer, InvalidInputError, UnknownIdError, pre_tokenizers
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

