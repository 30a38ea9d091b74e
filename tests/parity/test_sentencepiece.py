"""Whole SentencePiece pipelines from the shared .model files against sentencepiece: ids,
pieces, offsets (sentencepiece's byte begin/end as characters) and decoded text, on real
corpora (a fast subset; whole corpora are slow) and on generated text (whitespace runs,
control characters, emoji, unassigned code points)."""

from __future__ import annotations

import functools
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from tests.conftest import read_prefix, shared

spm = pytest.importorskip("sentencepiece")

MODELS = ["llama2", "albert", "spm-test", "spm-test-ja"]
CORPORA = [("en", "tinyshakespeare.txt", None), ("en", "taylorswift.txt", None),
           ("zh", "jinyong_16novels.txt", 2 << 20),
           ("multi", "wagahaiwa.ja.txt", None), ("multi", "udhr_sample.txt", None), ("multi", "emoji.txt", None)]


@functools.lru_cache(maxsize=None)
def pair(name):
    path = shared("tokenizers", "sentencepiece", f"{name}.model")
    return Tokenizer.from_file(path), spm.SentencePieceProcessor(model_file=str(path))


def lines_of(folder, file, limit):
    path = shared("corpora", folder, file)
    text = read_prefix(path, limit) if limit else path.read_text(encoding="utf-8")
    return text.splitlines()


def check(tok, sp, text):
    ref = sp.encode_as_proto(text)
    enc = tok.encode(text)
    assert enc.ids == [p.id for p in ref.pieces], text
    # sentencepiece's piece of an unknown token is the text it covers; ciyuan's token is the
    # unknown piece itself (sentencepiece's id_to_piece).
    assert enc.tokens == [sp.id_to_piece(p.id) for p in ref.pieces], text
    data = text.encode("utf-8")
    chars = [len(data[:p.begin].decode("utf-8")) for p in ref.pieces], \
        [len(data[:p.end].decode("utf-8")) for p in ref.pieces]
    assert enc.offsets == list(zip(*chars)), text
    assert tok.decode(enc.ids) == sp.decode(enc.ids), text


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("folder, file, limit", CORPORA)
def test_first_lines_as_sentencepiece(name, folder, file, limit):
    tok, sp = pair(name)
    for line in lines_of(folder, file, limit or 1 << 20)[:300]:
        check(tok, sp, line)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("folder, file, limit", CORPORA)
def test_whole_corpora_as_sentencepiece(name, folder, file, limit):
    tok, sp = pair(name)
    lines = lines_of(folder, file, limit)
    assert tok.encode_batch_ids(lines) == sp.encode(lines)
    for line in lines[::7]:
        check(tok, sp, line)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_all_of_gutenberg_as_sentencepiece(name):
    # Every line of the 105 MB English corpus against one of the models: slices of ~4 MB (the id
    # lists of the whole file would take gigabytes), dealt out to the models in turn, so each
    # model meets a quarter of the corpus from all through it. (sentencepiece's side is 80% of
    # the time, ~6 MB/s on two threads: the whole file for each model took 3 minutes of the suite.)
    tok, sp = pair(name)
    turn = MODELS.index(name)
    with shared("corpora", "en", "gutenberg_100mb.txt").open(encoding="utf-8") as f:
        for k in itertools.count():
            lines = f.readlines(4 << 20)
            if not lines:
                break
            if k % len(MODELS) != turn:
                continue
            lines = [line.rstrip("\n") for line in lines]
            assert tok.encode_batch_ids(lines, threads=2) == sp.encode(lines, num_threads=2)


PIECES = st.one_of(
    st.sampled_from([" ", "  ", "\t", "\n", "\u3000", "\x00", "\x01", "\x7f", "\u200b", "\ufeff", "▁", "\ufffd",
                     "😀", "👍🏽", "\u0378", "\U000e0001", "\U0010fffd", "K\u0301", "ﬁ", "Ａ", "～", "<s>", "<unk>"]),
    st.characters(blacklist_categories=("Cs",)),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=6))
TEXT = st.lists(PIECES, max_size=20).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from(MODELS))
def test_generated_text_as_sentencepiece(text, name):
    tok, sp = pair(name)
    check(tok, sp, text)


# Ids alone (encode_ids, encode_batch_ids) skip the normalizer's alignment and the mapping of
# spans to the original text: they must give the ids of encode, and sentencepiece's.
CJK_PIECES = st.one_of(
    st.sampled_from(["中", "文", "\uf900", "\ufa11", "，", "。", "「", "Ａ", "ｶ", "ﾞ", "カ", "\u3099", "\u0301", "e",
                     " ", "   ", "\u3000", "(", ")", "\"", "-", ".", "–", "£", "€", "…", "😀", "한", "ﬁ", "\x00"]),
    st.characters(blacklist_categories=("Cs",)),
    st.characters(min_codepoint=0x3000, max_codepoint=0xffef, blacklist_categories=("Cs",)),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=6))
CJK_TEXTS = st.lists(st.lists(CJK_PIECES, max_size=20).map("".join), max_size=8)


@settings(max_examples=300, deadline=None)
@given(CJK_TEXTS, st.sampled_from(MODELS))
def test_ids_alone_as_sentencepiece(texts, name):
    tok, sp = pair(name)
    want = sp.encode(texts)
    assert tok.encode_batch_ids(texts, threads=1) == want
    assert [e.ids for e in tok.encode_batch(texts)] == want
    assert [tok.encode_ids(t) for t in texts] == want


@pytest.mark.parametrize("name", MODELS)
def test_ids_alone_of_real_corpora(name):
    tok, sp = pair(name)
    lines = [line for folder, file, limit in CORPORA for line in lines_of(folder, file, limit or 1 << 20)[:500]]
    want = sp.encode(lines)
    assert tok.encode_batch_ids(lines, threads=1) == want
    assert [e.ids for e in tok.encode_batch(lines, threads=1)] == want
