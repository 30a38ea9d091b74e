"""The native BPE model held against the pure-Python reference (ciyuan.reference.bpe)."""

from __future__ import annotations

import random

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ciyuan
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import Split, WhitespaceSplit
from ciyuan.pre_tokenizers.patterns import GPT2_PATTERN
from ciyuan.reference import bpe as ref
from tests.conftest import shared

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(text=st.text(max_size=200))
def test_merge_ranks_match_reference(gpt2, gpt2_files, text):
    vocab, merges, _ = gpt2_files
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert gpt2.encode_ids(text, disallowed_special=()) == ref.encode(text, GPT2_PATTERN, vocab, merges)


@pytest.mark.parametrize("length", [47, 48, 49, 50, 200, 1000])
def test_long_pieces_use_the_same_rule(gpt2, gpt2_files, length):
    # Pieces longer than the small-piece limit take the heap path: same result required.
    vocab, merges, _ = gpt2_files
    rng = random.Random(length)
    for alphabet in ("abcdefghij", "aab", "ab", "中文字", "é"):
        text = "".join(rng.choice(alphabet) for _ in range(length))
        assert gpt2.encode_ids(text) == ref.encode(text, GPT2_PATTERN, vocab, merges), alphabet


@pytest.mark.parametrize("length", [10, 49, 500])
def test_long_pieces_token_ranks(length):
    # tiktoken's rule on a small vocabulary where ties and overlaps matter.
    ranks = {bytes([b]): b for b in range(256)}
    for t in (b"aa", b"ab", b"aaa", b"ba", b"aab", b"abab", b"bb", b"aaaa"):
        ranks[t] = len(ranks)
    tok = ciyuan.Tokenizer(BPE(ranks, byte_level=True, rank_by_token=True))
    rng = random.Random(length)
    for _ in range(50):
        piece = "".join(rng.choice("ab") for _ in range(length))
        assert tok.encode_ids(piece) == ref.encode_piece_by_token_rank(piece.encode(), ranks)


# A character-level model as the tutorials build it: {low: 5, lower: 2, newest: 6, widest: 3}.
TUTORIAL_MERGES = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w"), ("n", "e"),
                   ("ne", "w"), ("new", "est</w>"), ("low", "</w>"), ("w", "i")]


def tutorial_model(**kwargs):
    # The suffix is a separate symbol here ("est" + "</w>"), as in the classic tutorials.
    vocab = {}
    for c in "lowerniestd</>":
        vocab.setdefault(c, len(vocab))
    vocab.setdefault("</w>", len(vocab))
    for a, b in TUTORIAL_MERGES:
        vocab.setdefault(a + b, len(vocab))
    return vocab


def test_character_level_with_suffix_matches_reference():
    # The suffix attached to the last character (Hugging Face / subword-nmt style).
    merges = [("e", "s"), ("es", "t</w>"), ("l", "o"), ("lo", "w</w>"), ("n", "e"), ("ne", "w"),
              ("new", "est</w>"), ("lo", "w"), ("w", "i")]
    vocab = {}
    for c in "lowernistd":
        vocab.setdefault(c, len(vocab))
        vocab.setdefault(c + "</w>", len(vocab))
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab["<unk>"] = len(vocab)
    tok = ciyuan.Tokenizer(BPE(vocab, merges, end_of_word_suffix="</w>", unk_token="<unk>"),
                           pre_tokenizer=WhitespaceSplit())
    text = "low lower newest widest lowest wide slow"
    expected = [t for w in text.split() for t in ref.encode_word_by_merges(w, merges, "</w>")]
    enc = tok.encode(text)
    assert enc.tokens == expected
    assert tok.decode(enc.ids) == text
    assert [text[s:e] for s, e in enc.offsets] == [t.replace("</w>", "") for t in expected]


def test_unknown_characters():
    vocab = {"a": 0, "b": 1, "ab": 2, "<unk>": 3}
    fused = ciyuan.Tokenizer(BPE(vocab, [("a", "b")], unk_token="<unk>", fuse_unk=True))
    assert fused.encode("abxyab").tokens == ["ab", "<unk>", "ab"]
    assert fused.encode("abxyab").offsets == [(0, 2), (2, 4), (4, 6)]
    plain = ciyuan.Tokenizer(BPE(vocab, [("a", "b")], unk_token="<unk>"))
    assert plain.encode("abxy").tokens == ["ab", "<unk>", "<unk>"]
    strict = ciyuan.Tokenizer(BPE(vocab, [("a", "b")]))
    with pytest.raises(ciyuan.InvalidInputError, match="'x' at byte 2 has no token"):
        strict.encode("abxy")


def test_longest_match_matches_reference(gpt2_files):
    vocab, merges, _ = gpt2_files
    tok = ciyuan.Tokenizer(BPE(vocab, merges, byte_level=True, encode_mode="longest_match"),
                           pre_tokenizer=Split("gpt2"))
    text = shared("corpora", "en", "taylorswift.txt").read_text(encoding="utf-8")[:20000]
    longest = max(len(t) for t in vocab)
    expected = [i for p in regex.findall(GPT2_PATTERN, text)
                for i in ref.encode_longest_match(p.encode(), vocab, longest)]
    assert tok.encode_ids(text) == expected
    assert tok.decode(expected) == text


def test_longest_match_differs_from_bpe_where_textbooks_say():
    # Greedy longest match takes "abc" then "d"; BPE by rank makes "ab" + "cd".
    vocab = {"a": 0, "b": 1, "c": 2, "d": 3, "ab": 4, "cd": 5, "abc": 6}
    merges = [("a", "b"), ("c", "d"), ("ab", "c")]
    assert ciyuan.Tokenizer(BPE(vocab, merges)).encode("abcd").tokens == ["ab", "cd"]
    greedy = ciyuan.Tokenizer(BPE(vocab, merges, encode_mode="longest_match"))
    assert greedy.encode("abcd").tokens == ["abc", "d"]


def test_model_errors():
    with pytest.raises(ciyuan.ModelError, match="merge 1 .* not in the vocabulary"):
        BPE({"a": 0, "b": 1}, [("a", "b")])
    with pytest.raises(ciyuan.ModelError, match="uses 'z'"):
        BPE({"a": 0, "b": 1}, [("a", "z")])
    with pytest.raises(ciyuan.ModelError, match="id 0 is given to both"):
        BPE({b"a": 0, "a": 0})
    with pytest.raises(ciyuan.ModelError, match="empty"):
        BPE({})
    with pytest.raises(ciyuan.ModelError, match="unk_token"):
        BPE({"a": 0}, unk_token="<unk>")
    with pytest.raises(ciyuan.ModelError, match="encode_mode"):
        BPE({"a": 0}, encode_mode="fast")
    with pytest.raises(ciyuan.ModelError, match="printable"):
        BPE({"\x00": 0}, byte_level=True)


def test_duplicate_merges_keep_the_first_rank():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}
    tok = ciyuan.Tokenizer(BPE(vocab, [("a", "b"), ("b", "c"), ("a", "b")]))
    assert tok.encode("abc").tokens == ["ab", "c"]
