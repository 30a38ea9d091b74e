"""Document 003's BPE with a merge table and BBPE: the printed splits, training and applying
held against the reference (``ciyuan.reference.merge_table``) on generated and real text, and
BBPE's round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from ciyuan.errors import InvalidInputError, UnknownIdError
from ciyuan.models import BPE
from ciyuan.reference.merge_table import apply_merge_table, segment, train_merge_table
from ciyuan.textbook import BBPE, MergeTable, MergeTableBPE, format_word_split, split_word, word_counts
from tests.conftest import read_prefix, shared

# -- the printed examples ---------------------------------------------------------------------------


def test_split_into_characters():
    assert format_word_split("highest", split_word("highest", end_of_word="")) == "highest -> h, i, g, h, e, s, t"


def test_split_with_end_of_word():
    assert format_word_split("highest", split_word("highest")) == "highest -> h, i, g, h, e, s, t, </w>"


def test_after_merging_h_i():
    # A corpus where (h, i) is the most frequent pair: the first merge is (h, i).
    bpe = MergeTableBPE(max_iterations=1).train(["hi hi highest"])
    assert bpe.merge_table.merges == [("h", "i")]
    assert "hi" in bpe.vocab
    assert format_word_split("highest", bpe.apply("highest")) == "highest -> hi, g, h, e, s, t, </w>"


def test_alphabet_with_end_of_word_is_the_first_vocabulary():
    bpe = MergeTableBPE(max_iterations=0).train(["highest high"])
    assert list(bpe.vocab) == ["e", "g", "h", "i", "s", "t", "</w>"]
    assert bpe.merge_table.merges == []


def test_vocabulary_limit_stops_training():
    # The alphabet (10 characters and </w>) is already over the limit: no merge.
    bpe = MergeTableBPE(vocab_size=10).train(["low lower newest widest"])
    assert len(bpe.vocab) == 11 and bpe.merge_table.merges == []
    bpe = MergeTableBPE(vocab_size=14).train(["low lower newest widest newest"])
    assert len(bpe.vocab) == 14 and bpe.merge_table.merges == [("w", "e"), ("s", "t"), ("st", "</w>")]


def test_merges_never_cross_words():
    # "a b" is frequent across the word boundary in "a b a b": it is never a pair.
    bpe = MergeTableBPE(max_iterations=50).train(["a b a b a b"])
    assert bpe.merge_table.merges == [("a", "</w>"), ("b", "</w>")]


def test_merge_table_is_applied_in_table_order():
    # Applying rule by rule, (ab, c) comes before "ab" exists and never applies; rank-based BPE
    # (always the lowest-ranked pair present) would merge it after (a, b).
    table = MergeTable([("ab", "c"), ("a", "b")])
    assert table.apply(["a", "b", "c", "</w>"]) == ["ab", "c", "</w>"]
    assert apply_merge_table(["a", "b", "c", "</w>"], table.merges) == ["ab", "c", "</w>"]
    vocab = {"a": 0, "b": 1, "c": 2, "</w>": 3, "ab": 4, "abc": 5}
    rank_based = Tokenizer(BPE(vocab, table.merges, end_of_word_symbol="</w>"), pre_tokenizer=None)
    assert rank_based.encode("abc").tokens == ["abc", "</w>"]


def test_encode_decode_and_unknown_characters():
    bpe = MergeTableBPE(vocab_size=20).train(["low lower newest widest"])
    ids = bpe.encode("lowest  newer")
    assert bpe.decode(ids) == "lowest newer"
    with pytest.raises(InvalidInputError, match="'z' is not in the vocabulary"):
        bpe.encode("zoo")
    with pytest.raises(UnknownIdError):
        bpe.decode([len(bpe.vocab)])
    unk = MergeTableBPE(vocab_size=20, unk_token="<unk>").train(["low lower newest widest"])
    assert unk.vocab["<unk>"] == 0
    assert unk.tokenize("zoo") == ["z", "o", "o", "</w>"]
    assert unk.encode("zoo") == [0, unk.vocab["o"], unk.vocab["o"], unk.vocab["</w>"]]
    assert unk.decode(unk.encode("zoo")) == "<unk>oo"


def test_options_are_checked():
    with pytest.raises(InvalidInputError, match="vocab_size or max_iterations"):
        MergeTableBPE()
    with pytest.raises(InvalidInputError, match="vocab_size"):
        MergeTableBPE(vocab_size=0)
    with pytest.raises(InvalidInputError, match="no words"):
        MergeTableBPE(max_iterations=3).train(["  "])
    with pytest.raises(InvalidInputError, match="pair"):
        MergeTable([("a",)])  # type: ignore[list-item]


def test_word_counts_first_seen_order():
    assert word_counts(["b a", "a\tc\n"]) == {"b": 1, "a": 2, "c": 1}


# -- against the reference --------------------------------------------------------------------------

TEXTS = st.lists(st.text(st.sampled_from(list("abcé字 <>/w")), max_size=20), min_size=1, max_size=5).filter(
    lambda docs: any(d.split() for d in docs))
LIMITS = st.tuples(st.one_of(st.none(), st.integers(1, 40)), st.one_of(st.none(), st.integers(0, 30))).filter(
    lambda limits: limits != (None, None))


@settings(max_examples=150, deadline=None)
@given(TEXTS, LIMITS, st.text(st.sampled_from(list("abcé字 <>/w")), max_size=20))
def test_merge_table_bpe_equals_reference(docs, limits, text):
    vocab_size, max_iterations = limits
    bpe = MergeTableBPE(vocab_size, max_iterations).train(docs)
    tokens, merges = train_merge_table(docs, vocab_size, max_iterations)
    assert bpe.merge_table.merges == merges
    assert list(bpe.vocab) == tokens
    assert bpe.tokenize(text) == segment(text, merges)


@settings(max_examples=150, deadline=None)
@given(TEXTS, LIMITS, st.text(max_size=20))
def test_bbpe_equals_reference(docs, limits, text):
    vocab_size, max_iterations = limits
    if vocab_size is not None:
        vocab_size += 257
    bbpe = BBPE(vocab_size, max_iterations).train(docs)
    tokens, merges = train_merge_table(docs, vocab_size, max_iterations, byte_level=True)
    assert bbpe.merge_table.merges == merges
    assert list(bbpe.vocab) == tokens
    assert bbpe.tokenize(text) == segment(text, merges, byte_level=True)


SYMBOLS = st.sampled_from(["a", "b", "ab", "ba", "aab", "</w>", "b</w>"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(SYMBOLS, SYMBOLS), max_size=12), st.lists(SYMBOLS, max_size=10))
def test_merge_table_apply_equals_rule_by_rule(merges, split):
    # Any table, duplicates and merges that make the same symbol included.
    assert MergeTable(merges).apply(split) == apply_merge_table(split, merges)


# -- BBPE round trip ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4), st.integers(0, 60), st.text(max_size=40))
def test_bbpe_round_trips_any_text(docs, merges, text):
    bbpe = BBPE(max_iterations=merges).train([*docs, "x"])
    assert all(0 <= i < len(bbpe.vocab) for i in bbpe.encode(text))  # every byte is in the alphabet
    # Words are cut at whitespace and end with "</w>", which decodes as a space.
    expected = " ".join(text.split())
    if "</w>" not in text:
        assert bbpe.decode(bbpe.encode(text)) == expected
    words = [w for w in text.split() if "</w>" not in w]
    assert bbpe.decode(bbpe.encode(" ".join(words))) == " ".join(words)


def test_bbpe_merges_bytes_into_characters():
    bbpe = BBPE(max_iterations=2).train(["你好 你好 你"])
    assert bbpe.merge_table.merges == [(b"\xe4", b"\xbd"), (b"\xe4\xbd", b"\xa0")]
    assert bbpe.tokenize("你好") == ["你".encode(), b"\xe5", b"\xa5", b"\xbd", b"</w>"]
    assert format_word_split("你好", bbpe.tokenize("你好")) == "你好 -> 你, \\xe5, \\xa5, \\xbd, </w>"
    assert bbpe.decode(bbpe.encode("你好 🙂")) == "你好 🙂"


# -- real text ---------------------------------------------------------------------------------------


def test_merge_table_bpe_equals_reference_on_real_text():
    text = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 24_000)
    train, held_out = text[:12_000], text[12_000:]
    bpe = MergeTableBPE(vocab_size=300).train(train.split("\n"))
    tokens, merges = train_merge_table(train.split("\n"), vocab_size=300)
    assert bpe.merge_table.merges == merges and list(bpe.vocab) == tokens
    assert bpe.tokenize(held_out) == segment(held_out, merges)


def test_bbpe_equals_reference_on_chinese_text():
    text = read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 6_000)
    bbpe = BBPE(vocab_size=420).train(text.split("\n"))
    tokens, merges = train_merge_table(text.split("\n"), vocab_size=420, byte_level=True)
    assert bbpe.merge_table.merges == merges and list(bbpe.vocab) == tokens
    assert bbpe.tokenize(text) == segment(text, merges, byte_level=True)
    assert bbpe.decode(bbpe.encode(text)) == " ".join(text.split())


@pytest.mark.slow
def test_merge_table_bpe_equals_reference_on_whole_corpus():
    text = shared("corpora", "en", "tinyshakespeare.txt").read_text(encoding="utf-8")
    lines = text.split("\n")
    bpe = MergeTableBPE(vocab_size=400).train(lines)
    _, merges = train_merge_table(lines, vocab_size=400)
    assert bpe.merge_table.merges == merges
    assert bpe.tokenize(text) == segment(text, merges)
