"""Founding document 000 (``BPETokenizer``): its worked examples, and ``ciyuan.textbook`` held
against the plain-Python transcription of its algorithm (``ciyuan.reference.textbook_bpe``) on
generated and real corpora: the same vocab.txt bytes, merges and tokens."""

from __future__ import annotations

import doctest
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import InvalidInputError, UnknownIdError
from ciyuan.reference import textbook_bpe as reference
from ciyuan.textbook import BPETokenizer, bpe_tokenizer, get_stats, wordpunct_tokenize
from tests.conftest import read_prefix, shared

# The document's example corpus: low x5, lower x2, newest x6, widest x3.
EXAMPLE = ["low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3]


def fitted(vocab_size: int, max_steps: int, corpus=EXAMPLE) -> BPETokenizer:
    bpe = BPETokenizer(vocab_size)
    bpe.fit(corpus, max_steps=max_steps, out_fn=None)
    return bpe


# -- the document's worked examples ----------------------------------------------------------------

def test_initial_vocabulary_as_printed():
    # "在_count_vocab中统计处目前的词典为[('e', 17), ('w', 16), ('</w>', 16), ...]"
    vocab = BPETokenizer(1000).fit(EXAMPLE, max_steps=0, out_fn=None)
    assert vocab[4:] == [("e", 17), ("w", 16), ("</w>", 16), ("s", 9), ("t", 9), ("l", 7), ("o", 7), ("n", 6),
                         ("i", 3), ("d", 3), ("r", 2)]


def test_bigram_table_as_printed():
    # "lo: 5+2=7, ow: 5+2=7, w</w>: 5 / we: 2+6=8, er: 2, r</w>: 2 / ne: 6, ew: 6, es: 6+3=9, ..."
    words = {"l o w </w>": 5, "l o w e r </w>": 2, "n e w e s t </w>": 6, "w i d e s t </w>": 3}
    table = {a + b: n for (a, b), n in get_stats(words).items()}
    assert table == {"lo": 7, "ow": 7, "w</w>": 5, "we": 8, "er": 2, "r</w>": 2, "ne": 6, "ew": 6, "es": 9,
                     "st": 9, "t</w>": 9, "wi": 3, "id": 3, "de": 3}


def test_first_step_merges_es_and_vocabulary_as_printed():
    # es, st and t</w> all occur 9 times; the first one counted wins. The vocabulary becomes
    # {"l","o","w","e","r","n","es","t","i","d","</w>"}: "s" is gone (the 0 of +1/0/-1).
    bpe = fitted(1000, 1)
    assert bpe.merges == [("e", "s")]
    assert set(bpe.vocab[4:]) == {"l", "o", "w", "e", "r", "n", "es", "t", "i", "d", "</w>"}


def test_specials_are_inserted_in_front_one_after_another(tmp_path):
    out = tmp_path / "vocab.txt"
    vocab = BPETokenizer(1000).fit(EXAMPLE, max_steps=3, out_fn=out)
    text = out.read_bytes().decode("utf-8")
    assert text.split("\n")[:4] == ["<MASK>", "<END>", "<PAD>", "<UNK>"]
    assert vocab[:4] == [("<MASK>", 99999), ("<END>", 99999), ("<PAD>", 99999), ("<UNK>", 99999)]
    assert not text.endswith("\n") and text == "\n".join(t for t, _ in vocab)


def test_training_stops_at_vocab_size_after_at_least_one_step():
    # The alphabet alone (11 symbols) is larger than vocab_size: one step, then stop.
    bpe = fitted(5, 100)
    assert bpe.merges == [("e", "s")]
    # Otherwise: stop as soon as the words use vocab_size symbols (11 after the first step, then
    # never as many again: 10 10 9 9 9 9 9 10 9 8 7 6 5 4), or when no pair is left.
    assert len(fitted(11, 100).merges) == 1
    assert len(fitted(10, 100).merges) == 1
    bpe = fitted(12, 100)
    assert len(bpe.merges) == 15 and bpe.vocab[4:] == ["newest</w>", "low</w>", "widest</w>", "lower</w>"]
    assert len(fitted(12, 9).merges) == 9


def test_tokenize_longest_sub_token_and_unknown():
    bpe = fitted(1000, 3)  # merges es, est, est</w>
    assert bpe.tokenize("Lowest newest") == ["l", "o", "w", "est</w>", "n", "e", "w", "est</w>"]
    assert bpe.tokenize("lox") == ["l", "o", "<UNK>", "</w>"]  # "x" was never seen
    # "s" and "t" were merged away (into est</w>): without the marker they are unknown.
    assert bpe.tokenize("lowest", add_post=None) == ["l", "o", "w", "e", "<UNK>", "<UNK>"]


def test_encode_decode_ids_are_lines():
    bpe = fitted(1000, 3)
    ids = bpe.encode("lowest newest")
    assert [bpe.vocab[i] for i in ids] == bpe.tokenize("lowest newest")
    assert bpe.decode(ids) == "lowest newest "  # each </w> becomes a space
    assert bpe.decode([ids[:4], ids[4:]]) == ["lowest ", "newest "]  # the document's batch form
    assert bpe.encode("x") == [bpe.vocab.index("<UNK>"), bpe.vocab.index("</w>")]


def test_the_end_of_word_marker_can_be_merged_away():
    # Every </w> merged: a word's lone marker is then unknown, as the document's tokenize has it.
    bpe = BPETokenizer(100)
    bpe.fit(["ab ab"], max_steps=10, out_fn=None)
    assert bpe.merges == [("a", "b"), ("ab", "</w>")] and bpe.vocab[4:] == ["ab</w>"]
    assert bpe.tokenize("ab") == ["ab</w>"]
    assert bpe.tokenize("abab") == ["<UNK>", "<UNK>", "ab</w>"]
    assert bpe.tokenize("a") == ["<UNK>", "<UNK>"]  # "a", then the lone marker


def test_lone_surrogates_read_as_replacement_characters(tmp_path):
    # vocab.txt is UTF-8, where a lone surrogate has no form: it is read as U+FFFD, in training
    # and in tokenizing alike (the document's code would fail writing the file).
    bpe = BPETokenizer(1000)
    bpe.fit(["a\ud800 b"], max_steps=0, out_fn=tmp_path / "v.txt")
    assert "\ufffd" in bpe.vocab and (tmp_path / "v.txt").read_text(encoding="utf-8").count("\ufffd") == 1
    assert bpe.tokenize("\ud800") == ["\ufffd", "</w>"]


def test_wordpunct_and_options():
    assert wordpunct_tokenize("Don't stop-me now...") == ["Don", "'", "t", "stop", "-", "me", "now", "..."]
    bpe = BPETokenizer(50, lowercase=False, basic_tokenizer=str.split)
    bpe.fit(["Hi, hi, hi!"] * 3, out_fn=None)
    assert "Hi,</w>" in bpe.vocab and bpe.tokenize("Hi,") == ["Hi,</w>"]


def test_docstring_examples():
    for module in (bpe_tokenizer, reference):
        assert doctest.testmod(module).failed == 0


def test_errors():
    with pytest.raises(InvalidInputError, match="fit"):
        BPETokenizer().tokenize("not fitted")
    with pytest.raises(InvalidInputError, match="vocab_size"):
        BPETokenizer(-1)
    with pytest.raises(InvalidInputError, match="empty"):
        BPETokenizer().fit([], out_fn=None)
    with pytest.raises(InvalidInputError, match="not NoneType"):
        BPETokenizer().fit(None, out_fn=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="cannot write"):
        BPETokenizer().fit(["a"], out_fn="/nonexistent-folder/vocab.txt")
    bpe = fitted(1000, 3)
    with pytest.raises(UnknownIdError):
        bpe.decode([10_000])
    with pytest.raises(UnknownIdError):
        bpe.decode([-1])


# -- against the transcription of the document's algorithm -----------------------------------------

def check_against_reference(sentences, vocab_size: int, max_steps: int, tmp_path) -> None:
    out = tmp_path / "vocab.txt"
    bpe = BPETokenizer(vocab_size)
    bpe.fit(sentences, max_steps=max_steps, out_fn=out)
    counts: dict = {}
    for s in sentences:
        for w in wordpunct_tokenize(s.lower()):
            counts[w] = counts.get(w, 0) + 1
    vocab, merges = reference.fit(counts.items(), vocab_size, max_steps)
    assert bpe.merges == merges
    assert out.read_bytes() == "\n".join(vocab).encode("utf-8")
    text = " ".join(sentences[:50])
    assert bpe.tokenize(text) == reference.tokenize(wordpunct_tokenize(text.lower()), vocab)
    assert bpe.encode(text) == [vocab.index(t) for t in bpe.tokenize(text)]


@settings(max_examples=120, deadline=None)
@given(sentences=st.lists(st.text(alphabet="abcab cd,.中文 ", max_size=30), min_size=1, max_size=12)
       .filter(lambda ss: any(wordpunct_tokenize(s) for s in ss)),
       vocab_size=st.integers(1, 30), max_steps=st.integers(0, 40))
def test_generated_corpora_match_the_reference(sentences, vocab_size, max_steps, tmp_path_factory):
    check_against_reference(sentences, vocab_size, max_steps, tmp_path_factory.mktemp("v"))


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet="aAb_0 .,'-\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x00é", max_size=60))
def test_tokenize_of_ascii_text_in_one_native_call_is_the_documents(text):
    # Plain ASCII text is cut natively (WordPunct) in one call: the same words as Python's re,
    # including the ASCII separators \x1c-\x1f that only Python counts as whitespace.
    bpe = fitted(1000, 8, ["ab a_b 0a b.b, a-a ab'"])
    expected = reference.tokenize(wordpunct_tokenize(text.lower()), bpe.vocab)
    assert bpe.tokenize(text) == expected
    assert bpe.encode(text) == [bpe.vocab.index(t) for t in expected]


def test_shakespeare_slice_matches_the_reference(tmp_path):
    text = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 20_000)
    check_against_reference(text.split("\n"), 300, 400, tmp_path)


@pytest.mark.slow
def test_shakespeare_and_chinese_match_the_reference(tmp_path):
    text = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 120_000)
    check_against_reference(text.split("\n"), 600, 10_000, tmp_path)
    zh = read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 30_000)
    check_against_reference(re.split(r"[\n。]", zh), 800, 500, tmp_path)
