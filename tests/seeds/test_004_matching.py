"""Document 004 (../shared/seeds/004_*.txt): forward / backward maximum matching with its printed
outputs, and WordPiece by PMI with FMM encoding - held against ciyuan.reference and a
transcription of the document's rule, on generated and real (SIGHAN 2005, Shakespeare) data."""

from __future__ import annotations

from typing import Collection, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan.errors import InvalidInputError
from ciyuan.reference import segment as ref_segment
from ciyuan.reference.wordpiece import encode_word, fmm_word, train_wordpiece
from ciyuan.segment import Dictionary, Segmenter
from ciyuan.textbook import backward_max_matching, forward_max_matching, train_wordpiece_pmi, wordpiece_encode
from tests.conftest import read_prefix, shared
from tests.seeds.wordpiece_helpers import replay

DOC_DICTIONARY = {"大模型", "学习", "模型", "我要", "要"}


# -- the document's rule, transcribed (the loop as its text states it) -----------------------------


def doc_fmm(sentence: str, dictionary: Collection[str], max_len: int = 6) -> List[str]:
    """From the left: lengths max_len..1 (those that fit), the first that is a word; else one
    character."""
    out, i = [], 0
    while i < len(sentence):
        size = next((n for n in range(max_len, 0, -1)
                     if i + n <= len(sentence) and sentence[i:i + n] in dictionary), 1)
        out.append(sentence[i:i + size])
        i += size
    return out


def doc_bmm(sentence: str, dictionary: Collection[str], max_len: int = 6) -> List[str]:
    """From the right: lengths max_len..1 (those that fit) of the word ending here; else one
    character; the words come out in text order."""
    out: List[str] = []
    j = len(sentence)
    while j > 0:
        size = next((n for n in range(max_len, 0, -1) if j - n >= 0 and sentence[j - n:j] in dictionary), 1)
        out.insert(0, sentence[j - size:j])
        j -= size
    return out


# -- the printed outputs ----------------------------------------------------------------------------


def test_fmm_document_example(capsys):
    print("/".join(forward_max_matching("我要学习大模型", DOC_DICTIONARY)))
    assert capsys.readouterr().out == "我要/学习/大模型\n"


def test_bmm_document_example(capsys):
    print("/".join(backward_max_matching("我要学习大模型", DOC_DICTIONARY)))
    assert capsys.readouterr().out == "我要/学习/大模型\n"


def test_results_are_lists_and_any_collection_is_a_dictionary():
    expected = ["我要", "学习", "大模型"]
    for d in (DOC_DICTIONARY, sorted(DOC_DICTIONARY), frozenset(DOC_DICTIONARY), dict.fromkeys(DOC_DICTIONARY, 1),
              (w for w in DOC_DICTIONARY), Dictionary(DOC_DICTIONARY)):
        assert forward_max_matching("我要学习大模型", d) == expected
    assert backward_max_matching("我要学习大模型", list(DOC_DICTIONARY)) == expected
    assert forward_max_matching("", DOC_DICTIONARY) == []


def test_fmm_and_bmm_differ_where_the_textbook_says():
    words = {"研究", "研究生", "生命", "起源"}
    assert forward_max_matching("研究生命起源", words) == ["研究生", "命", "起源"]
    assert backward_max_matching("研究生命起源", words) == ["研究", "生命", "起源"]


def test_max_len_smaller_than_the_longest_word():
    assert forward_max_matching("我要学习大模型", DOC_DICTIONARY, max_len=2) == ["我要", "学习", "大", "模型"]
    assert backward_max_matching("我要学习大模型", DOC_DICTIONARY, max_len=2) == ["我要", "学习", "大", "模型"]
    # Length 1 only: the one-character word "要" and unmatched characters alike.
    assert forward_max_matching("我要学习大模型", DOC_DICTIONARY, max_len=1) == list("我要学习大模型")


def test_where_the_native_segmenter_differs_the_document_wins():
    """ciyuan.segment's default mode joins ASCII letters and its baseline mode drops whitespace;
    the document does neither: every unmatched character is a word, whitespace included."""
    words = {"ab", "我要"}
    text = "我要 xyz\tab"
    assert Segmenter(Dictionary(words), "fmm").lcut(text) == ["我要", " ", "xyz", "\t", "ab"]
    assert Segmenter(Dictionary(words), "fmm", baseline=True).lcut(text) == ["我要", "x", "y", "z", "ab"]
    expected = ["我要", " ", "x", "y", "z", "\t", "ab"]
    assert forward_max_matching(text, words) == backward_max_matching(text, words) == expected == doc_fmm(text, words)
    # The native default max_word_len is the dictionary's longest word; here it is the argument.
    assert forward_max_matching("我要要", {"我要要", "我要"}, max_len=2) == ["我要", "要"]


def test_dictionaries_the_native_segmenter_cannot_hold():
    # A word with whitespace: the document matches it; so does the plain-Python path.
    words = {"New York", "大"}
    assert forward_max_matching("New York大", words, max_len=8) == ["New York", "大"]
    assert backward_max_matching("a New York", words, max_len=8) == ["a", " ", "New York"]
    assert forward_max_matching("New York", words) == list("New York")  # 8 characters > max_len
    # Empty words never match (the document tries lengths 1..max_len).
    assert forward_max_matching("ab", {"", "a"}) == ["a", "b"]
    # A lone surrogate in the sentence.
    assert forward_max_matching("我要\ud800", DOC_DICTIONARY) == ["我要", "\ud800"]


def test_bad_arguments():
    with pytest.raises(InvalidInputError, match="max_len"):
        forward_max_matching("我要", DOC_DICTIONARY, max_len=0)
    with pytest.raises(InvalidInputError, match="single string"):
        forward_max_matching("我要", "我要")
    with pytest.raises(InvalidInputError, match="must be str"):
        backward_max_matching("我要", {1, 2})
    with pytest.raises(InvalidInputError, match="sentence"):
        forward_max_matching(b"x", DOC_DICTIONARY)  # type: ignore[arg-type]


# -- generated sentences and dictionaries -----------------------------------------------------------

# Few characters, so that words match often: Han, ASCII letters, whitespace (ASCII and not),
# punctuation, and a character outside the BMP.
ALPHABET = "我要学习大模型ab. \t\u3000\x1c，𠀀"
texts = st.text(alphabet=ALPHABET, max_size=40)
no_space_words = st.sets(st.text(alphabet="我要学习大模型ab.，𠀀", min_size=1, max_size=5), max_size=15)


@settings(max_examples=300, deadline=None)
@given(texts, no_space_words, st.integers(1, 8))
def test_max_matching_is_the_documents_rule(text, words, max_len):
    fmm = forward_max_matching(text, words, max_len)
    bmm = backward_max_matching(text, words, max_len)
    assert fmm == ref_segment.fmm(text, words, max_len) == doc_fmm(text, words, max_len)
    assert bmm == ref_segment.bmm(text, words, max_len) == doc_bmm(text, words, max_len)
    assert "".join(fmm) == "".join(bmm) == text
    assert forward_max_matching(text, Dictionary(words), max_len) == fmm


@settings(max_examples=100, deadline=None)
@given(texts, st.sets(st.text(alphabet=ALPHABET, min_size=1, max_size=5), max_size=15), st.integers(1, 8))
def test_max_matching_with_whitespace_in_words(text, words, max_len):
    assert forward_max_matching(text, words, max_len) == doc_fmm(text, words, max_len)
    assert backward_max_matching(text, words, max_len) == doc_bmm(text, words, max_len)


# -- real data: the SIGHAN 2005 training word lists and test texts ----------------------------------


def _sighan(corpus: str, lines: int = 0):
    words = shared("sighan2005", f"{corpus}_training_words.utf8").read_text("utf-8").split()
    text = shared("sighan2005", f"{corpus}_test.utf8").read_text("utf-8").splitlines()
    return set(words), text[:lines] if lines else text


def _check_sighan(words, lines, max_len, transcription=True):
    d = Dictionary(words)
    for line in lines:
        fmm = forward_max_matching(line, d, max_len)
        bmm = backward_max_matching(line, d, max_len)
        assert fmm == ref_segment.fmm(line, words, max_len), line
        assert bmm == ref_segment.bmm(line, words, max_len), line
        if transcription:
            assert fmm == doc_fmm(line, words, max_len) and bmm == doc_bmm(line, words, max_len), line


@pytest.mark.parametrize("corpus", ["pku", "msr"])
def test_sighan_slice(corpus):
    words, lines = _sighan(corpus, 150)
    for max_len in (6, 2):
        _check_sighan(words, lines, max_len)
    # A set straight from the file works as well as a prebuilt Dictionary.
    assert forward_max_matching(lines[3], words) == ref_segment.fmm(lines[3], words, 6)


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["pku", "msr"])
def test_sighan_whole_test_files(corpus):
    words, lines = _sighan(corpus)
    longest = max(len(w) for w in words)
    _check_sighan(words, lines, 6)
    _check_sighan(words, lines, longest, transcription=False)


# -- WordPiece by PMI -------------------------------------------------------------------------------

HF_CORPUS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}


def _check_every_step_maximises_pmi(counts, vocab, merges):
    ids = {t: i for i, t in enumerate(vocab)}
    steps = list(replay(counts, merges))
    for step in steps[:-1]:
        best = max(step.pmi(p) for p in step.pairs)
        assert step.pmi(step.chosen) == best, step.chosen
        # Ties (none named by the document): the pair seen more often, then the smaller ids.
        tied = [p for p in step.pairs if step.pmi(p) == best]
        assert min(tied, key=lambda p: (-step.pairs[p], ids[p[0]], ids[p[1]])) == step.chosen
    return steps[-1]


def test_wordpiece_pmi_worked_corpus():
    vocab, merges = train_wordpiece_pmi(HF_CORPUS)
    assert merges[:4] == [("##g", "##s"), ("p", "##u"), ("h", "##u"), ("b", "##u")]
    final = _check_every_step_maximises_pmi(HF_CORPUS, vocab, merges)
    assert not final.pairs  # with no limit, training runs until every word is one token
    assert vocab[:14] == [*"bghnpsu", *["##" + c for c in "bghnpsu"]]
    assert set(vocab[14:]) >= set(HF_CORPUS)
    assert wordpiece_encode("hugs pug bug", vocab) == ["hugs", "pug", "bu", "##g"]


def test_wordpiece_pmi_limits_and_corpus_forms():
    texts = ["hug hug pug", "pun bun hugs"]
    by_texts = train_wordpiece_pmi(texts, num_merges=3)
    assert by_texts == train_wordpiece_pmi(" ".join(texts), num_merges=3) \
        == train_wordpiece_pmi({"hug": 2, "pug": 1, "pun": 1, "bun": 1, "hugs": 1}, num_merges=3)
    assert len(by_texts.merges) == 3
    sized = train_wordpiece_pmi(texts, vocab_size=18, special_tokens=["[UNK]"])
    assert len(sized.vocab) == 18 and sized.vocab[0] == "[UNK]"
    with pytest.raises(InvalidInputError, match="vocab_size"):
        train_wordpiece_pmi(texts, vocab_size=3)


words_st = st.text(alphabet="abcd#", min_size=1, max_size=7)
corpora = st.dictionaries(words_st, st.integers(1, 9), min_size=1, max_size=10)


@settings(max_examples=150, deadline=None)
@given(corpora, st.integers(0, 25))
def test_wordpiece_pmi_generated(counts, num_merges):
    vocab, merges = train_wordpiece_pmi(counts, num_merges=num_merges)
    assert (vocab, merges) == train_wordpiece(counts, max_merges=num_merges)
    final = _check_every_step_maximises_pmi(counts, vocab, merges)
    assert len(merges) == num_merges or not final.pairs


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abcd#x\x1c", min_size=1, max_size=5), max_size=20),
       st.lists(st.text(alphabet="abcd#x \t\x1c\x85\u3000", max_size=12), max_size=6))
def test_wordpiece_encode_is_fmm_over_the_vocabulary(vocab, texts):
    vocab_set = set(vocab)
    for text in texts:
        expected = [p for w in text.split() for p in fmm_word(w, vocab_set)]
        assert wordpiece_encode(text, vocab) == expected
        bert = [p for w in text.split() for p in encode_word(w, vocab_set, max_input_chars_per_word=10 ** 9)]
        assert wordpiece_encode(text, vocab, unk_token="[UNK]") == bert


def test_wordpiece_encode_unmatched_characters():
    vocab = ["un", "##aff", "##able", "a"]
    assert wordpiece_encode("unaffable", vocab) == ["un", "##aff", "##able"]
    assert wordpiece_encode("unzaffable zun", vocab) == ["un", "##z", "##aff", "##able", "z", "##u", "##n"]
    assert wordpiece_encode("unzaffable a", vocab, unk_token="[UNK]") == ["[UNK]", "a"]
    assert wordpiece_encode("  ", vocab) == []
    assert wordpiece_encode("ab\ud800", ["a"]) == ["a", "##b", "##\ud800"]
    with pytest.raises(InvalidInputError):
        wordpiece_encode("a", "abc")


@pytest.fixture(scope="module")
def shakespeare_slice():
    return read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 40_000)


def test_wordpiece_pmi_real_slice(shakespeare_slice):
    train_part, test_part = shakespeare_slice[:30_000], shakespeare_slice[30_000:]
    counts = {}
    for w in train_part.split():
        counts[w] = counts.get(w, 0) + 1
    vocab, merges = train_wordpiece_pmi(train_part.splitlines(), num_merges=80)
    assert len(merges) == 80
    assert (vocab, merges) == train_wordpiece(counts, max_merges=80)
    _check_every_step_maximises_pmi(counts, vocab, merges)
    vocab_set = set(vocab)
    assert wordpiece_encode(test_part, vocab) == [p for w in test_part.split() for p in fmm_word(w, vocab_set)]
