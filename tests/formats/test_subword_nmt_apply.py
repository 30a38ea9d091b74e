"""SubwordNmt against subword-nmt's own apply_bpe.BPE (and the reference twin), line for line."""

from __future__ import annotations

import io
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan.errors import InvalidInputError
from ciyuan.formats.subword_nmt import BpeCodes, parse_codes
from ciyuan.formats.subword_nmt_apply import SubwordNmt
from ciyuan.reference.subword_nmt import apply_line
from tests.conftest import read_prefix, shared

apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")
learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")


def learn(lines, symbols):
    out = io.StringIO()
    learn_bpe.learn_bpe(lines, out, symbols)
    return out.getvalue()


def theirs(codes_text, **kw):
    return apply_bpe.BPE(io.StringIO(codes_text), **kw)


@pytest.fixture(scope="module")
def slice_lines():
    return read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 120_000).splitlines(keepends=True)


@pytest.fixture(scope="module")
def slice_codes(slice_lines):
    return learn(slice_lines, 800)


@pytest.fixture(scope="module")
def slice_vocab(slice_lines):
    counts = {}
    for line in slice_lines:
        for w in line.strip("\r\n ").split(" "):
            if w:
                counts[w] = counts.get(w, 0) + 1
    return counts


def assert_same(ours, peer, lines, **kw):
    for line in lines:
        assert ours.process_line(line, **kw) == peer.process_line(line, **kw), line


def test_plain(slice_lines, slice_codes):
    assert_same(SubwordNmt(parse_codes(slice_codes)), theirs(slice_codes), slice_lines)


@pytest.mark.parametrize("threshold", [1, 3, 20])
def test_vocabulary_threshold(slice_lines, slice_codes, slice_vocab, threshold):
    vocab = {w for w, n in slice_vocab.items() if n >= threshold}
    assert_same(SubwordNmt(parse_codes(slice_codes), vocab=vocab), theirs(slice_codes, vocab=vocab), slice_lines)


def test_glossaries_and_merges(slice_lines, slice_codes):
    glossaries = ["[A-Z]+", "th", "[0-9]+", "ing"]
    for merges in (-1, 0, 1, 50, 300):
        ours = SubwordNmt(parse_codes(slice_codes), merges=merges, glossaries=glossaries, separator="￭")
        peer = theirs(slice_codes, merges=merges, glossaries=glossaries, separator="￭")
        assert_same(ours, peer, slice_lines[:400])


def test_version_01_codes(slice_lines):
    # Learned as 0.1 would be: "</w>" a symbol of its own, merged by pairs such as "e </w>".
    body = "t h\nth e\ne </w>\nthe </w>\na n\nan d\nand </w>\ns </w>\no u\nou r\n"
    assert_same(SubwordNmt(parse_codes(body)), theirs(body), slice_lines[:300])
    vocab = {"th@@", "e", "an@@", "d"}
    assert_same(SubwordNmt(parse_codes(body), vocab=vocab), theirs(body, vocab=vocab), slice_lines[:300])


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_dropout_seeded(slice_lines, slice_codes, seed):
    ours = SubwordNmt(parse_codes(slice_codes))
    peer = theirs(slice_codes)
    random.seed(seed)
    expected = [peer.process_line(line, 0.1) for line in slice_lines[:300]]
    rng = random.Random(seed)
    assert [ours.process_line(line, 0.1, rng) for line in slice_lines[:300]] == expected
    # Dropout 1 merges nothing: every word is its characters.
    assert ours.process_line("hello", 1.0, rng) == "h@@ e@@ l@@ l@@ o"


def test_whitespace_of_lines(slice_codes):
    ours, peer = SubwordNmt(parse_codes(slice_codes)), theirs(slice_codes)
    for line in ["", "\n", "  \n", " the  king \n", "\tthe\tking\t\n", "the\r\n", "a", "  x", "x  "]:
        assert ours.process_line(line) == peer.process_line(line), repr(line)


def test_bad_arguments(slice_codes):
    with pytest.raises(InvalidInputError, match="glossary"):
        SubwordNmt(parse_codes(slice_codes), glossaries=["(unclosed"])
    with pytest.raises(InvalidInputError, match="merges"):
        SubwordNmt(parse_codes(slice_codes), merges=-2)


_TEXT = st.text(alphabet=st.sampled_from(list("theaonsirdTHE '\t.,!?\n\r") + ["é", "词", "\u00a0"]), max_size=60)


@given(_TEXT)
@settings(max_examples=300, deadline=None)
def test_hypothesis_against_subword_nmt_and_reference(slice_codes, text):
    codes = parse_codes(slice_codes)
    ours, peer = _cached(slice_codes)
    assert ours.process_line(text) == peer.process_line(text)
    if len(text) < 30:
        assert apply_line(text, codes.merges, codes.version) == peer.process_line(text)


@given(_TEXT, st.sets(st.sampled_from(["th@@", "e", "the", "a@@", "n", "on@@", "s", "in@@", "t@@", "he"])))
@settings(max_examples=200, deadline=None)
def test_hypothesis_vocabulary(slice_codes, text, vocab):
    codes = parse_codes(slice_codes)
    peer = theirs(slice_codes, vocab=vocab)
    assert SubwordNmt(codes, vocab=vocab).process_line(text) == peer.process_line(text)
    if len(text) < 30:
        assert apply_line(text, codes.merges, codes.version, vocab=vocab) == peer.process_line(text)


_PAIRS = {}


def _cached(codes_text):
    if codes_text not in _PAIRS:
        _PAIRS[codes_text] = (SubwordNmt(parse_codes(codes_text)), theirs(codes_text))
    return _PAIRS[codes_text]


def test_made_up_codes_reference_agrees():
    # Codes no learner writes (a later merge of lower rank, duplicates): still subword-nmt's output.
    body = "#version: 0.2\nb c</w>\na b\nab c</w>\na bc</w>\na b\nc c\ncc c</w>\n"
    words = "abc abbc aaabc ccc cccc abcabc a b c"
    codes = parse_codes(body)
    for vocab in (None, {"a@@", "b"}, {"ab@@", "c"}):
        peer = theirs(body, vocab=vocab)
        assert SubwordNmt(codes, vocab=vocab).process_line(words) == peer.process_line(words)
        assert apply_line(words, codes.merges, codes.version, vocab=vocab) == peer.process_line(words)


def test_bpe_codes_object_and_doc_example():
    bpe = SubwordNmt(BpeCodes([("a", "b"), ("ab", "c</w>")]), glossaries=["USA"])
    assert bpe.segment("abcUSAabc") == theirs("#version: 0.2\na b\nab c</w>\n", glossaries=["USA"]).segment(
        "abcUSAabc")


def test_native_path_is_used_and_agrees(slice_lines, slice_codes, slice_vocab):
    codes = parse_codes(slice_codes)
    native = SubwordNmt(codes)
    assert native._native is not None  # learned codes: the native BPE's merge order is subword-nmt's
    python = SubwordNmt(codes)
    python._native = None
    lines = slice_lines[:800] + ["Zebra ǅungla 词元 x\n", "  naïve  café\t\n"]
    assert list(native.process_lines(lines)) == list(python.process_lines(lines))
    vocab = {w for w, n in slice_vocab.items() if n >= 3}
    assert list(SubwordNmt(codes, vocab=vocab).process_lines(lines)) == [
        theirs(slice_codes, vocab=vocab).process_line(line) for line in lines]
    # Codes where a merge uses a token before the merge that makes it: the Python loop.
    assert SubwordNmt(parse_codes("#version: 0.2\nab c</w>\na b\n"))._native is None
    # Codes 0.1 go native too ("</w>" a symbol of its own).
    body = "t h\nth e\ne </w>\nthe </w>\na n\n"
    ours = SubwordNmt(parse_codes(body))
    assert ours._native is not None
    assert list(ours.process_lines(lines)) == [theirs(body).process_line(line) for line in lines]


@given(st.lists(_TEXT, max_size=8))
@settings(max_examples=100, deadline=None)
def test_hypothesis_batches(slice_codes, lines):
    ours, peer = _cached(slice_codes)
    assert list(ours.process_lines(lines)) == [peer.process_line(line) for line in lines]
