"""Long pieces merged in windows (bpe.cc, encode_piece_windowed; spm_bpe.cc for SentencePiece
BPE): the same tokens as one merge loop over the whole piece, with memory bounded by a window.

The native core merges a piece of more than two windows (64 KiB each) window by window and
checks every seam; CIYUAN_BPE_WINDOW, read when a model is built, sets a window of a few bytes
here so that ordinary texts cross many seams. The windows rest on a property of BPE (see
``ciyuan.reference.bpe``), so the reference's windows are held to the reference's single loop
too, on random vocabularies.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from typing import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ciyuan
from ciyuan.models import BPE
from ciyuan.reference import bpe as ref
from tests.conftest import ENCODINGS, shared
from tests.models.test_bpe_random_vocab import ALPHABET, random_vocab


@contextmanager
def window_of(size: int) -> Iterator[None]:
    """Models built inside merge pieces longer than 2 * size bytes in windows of size bytes."""
    old = os.environ.get("CIYUAN_BPE_WINDOW")
    os.environ["CIYUAN_BPE_WINDOW"] = str(size)
    try:
        yield
    finally:
        if old is None:
            del os.environ["CIYUAN_BPE_WINDOW"]
        else:
            os.environ["CIYUAN_BPE_WINDOW"] = old


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(5, 120), window=st.integers(1, 7),
       texts=st.lists(st.text(ALPHABET, max_size=60), max_size=12))
def test_windows_equal_one_merge_loop_on_random_vocabularies(seed, size, window, texts):
    ranks, merges = random_vocab(seed, size)  # each token made by one merge
    merge_ranks = {m: i for i, m in reversed(list(enumerate(merges)))}
    with window_of(window):
        by_merges = ciyuan.Tokenizer(BPE(ranks, merges, byte_level=True))
        by_rank = ciyuan.Tokenizer(BPE(ranks, byte_level=True, rank_by_token=True))
    for text in texts:
        data = text.encode()
        whole_by_merges = ref.encode_piece_by_merges(data, ranks, merge_ranks)
        whole_by_rank = ref.encode_piece_by_token_rank(data, ranks)
        assert by_merges.encode_ids(text) == whole_by_merges
        assert by_rank.encode_ids(text) == whole_by_rank
        # The reference's own windows: the property the native windows rest on.
        parts = ref.encode_in_windows(
            data, lambda span: ref._merge_loop([bytes([b]) for b in span], lambda a, b: merge_ranks.get((a, b))),
            window)
        assert [ranks[p] for p in parts] == whole_by_merges


@settings(max_examples=300, deadline=None)
@given(ranks=st.dictionaries(st.text("ab", min_size=2, max_size=5).map(str.encode), st.integers(0, 3), max_size=20),
       text=st.text("ab", max_size=40), window=st.integers(1, 6))
def test_windows_hold_with_ranks_that_tie(ranks, text, window) -> None:
    """SentencePiece ranks merges by float scores, which may tie between different pieces (the
    leftmost goes first): the reference's windows equal its single loop on such ranks too."""
    def merge(span: bytes) -> list:
        return ref._merge_loop([bytes([b]) for b in span], lambda a, b: ranks.get(a + b))

    data = text.encode()
    assert ref.encode_in_windows(data, merge, window) == merge(data)


def test_a_token_made_by_two_pairs_is_still_exact() -> None:
    """A merges list that makes one token twice gets no windows (their property needs one
    maker per token); its pieces still encode as the reference does."""
    ranks = {bytes([b]): b for b in range(256)}
    for token in (b"ab", b"bc", b"abc"):
        ranks[token] = len(ranks)
    merges = [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")]
    merge_ranks = {m: i for i, m in enumerate(merges)}
    with window_of(1):
        tok = ciyuan.Tokenizer(BPE(ranks, merges, byte_level=True))
    for text in ("abc" * 7, "ab" * 9 + "c", "a" + "bc" * 8, "cabcbabcabca"):
        assert tok.encode_ids(text) == ref.encode_piece_by_merges(text.encode(), ranks, merge_ranks)


def _texts_with_long_pieces() -> list:
    texts = ["a" * 3000, "ab" * 1500, "abcdefghijklmnopqrstuvwxyz" * 100, "中" * 2000, "中文字词元" * 300,
             "(" * 2000, " " * 2000, "1" * 2000, "\r\n" * 1000, "😀" * 500, "👨‍👩‍👧" * 300, "ञ्चि" * 500,
             "é" * 1000 + "e\u0301" * 500]
    for name in (("corpora", "en", "tinyshakespeare.txt"), ("corpora", "multi", "emoji.txt"),
                 ("corpora", "zh", "jinyong_16novels.txt"), ("corpora", "multi", "udhr", "007.txt")):
        path = shared(*name)
        if path.exists():
            with open(path, encoding="utf-8", errors="replace") as f:
                block = f.read(60_000)
            texts += block.split("\n")
            texts.append(block.replace(" ", "").replace("\n", ""))  # one long piece of real text
    return texts


@pytest.mark.slow
@pytest.mark.parametrize("window", [2, 5, 64])
def test_windows_give_tiktoken_ids(window: int, tiktoken_encodings) -> None:
    """The three OpenAI encodings, built with small windows, against tiktoken: real lines,
    the lines' text without its spaces (long pieces of real text), and pathological runs."""
    with window_of(window):
        made = {
            "gpt2": ciyuan.Tokenizer.from_gpt2(shared("tokenizers", "gpt2", "encoder.json"),
                                               shared("tokenizers", "gpt2", "vocab.bpe")),
            "cl100k_base": ciyuan.Tokenizer.from_tiktoken(
                shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"), "cl100k_base"),
            "o200k_base": ciyuan.Tokenizer.from_tiktoken(
                shared("tokenizers", "tiktoken", "o200k_base.tiktoken"), "o200k_base"),
        }
    texts = _texts_with_long_pieces()
    for name in ENCODINGS:
        for text in texts:
            assert made[name].encode_ids(text) == tiktoken_encodings[name].encode_ordinary(text), (name, text[:60])
        assert made[name].count_tokens(texts[0]) == len(tiktoken_encodings[name].encode_ordinary(texts[0]))


@pytest.mark.slow
@pytest.mark.parametrize("window", [1, 3, 16])
def test_sentencepiece_bpe_windows_give_sentencepiece_ids(window: int) -> None:
    """SentencePiece BPE (Llama 2: byte fallback; the test model) merges long runs of
    characters in windows too (spm_bpe.cc); with windows of a few characters its ids equal the
    sentencepiece library's on real lines, the lines without spaces, and runs."""
    spm = pytest.importorskip("sentencepiece")
    texts = _texts_with_long_pieces()
    for name in ("llama2.model", "spm-test.model"):
        path = shared("tokenizers", "sentencepiece", name)
        with window_of(window):
            tok = ciyuan.Tokenizer.from_file(path)
        peer = spm.SentencePieceProcessor(model_file=str(path))
        for text in texts:
            assert tok.encode_ids(text) == peer.encode(text), (name, text[:60])


_PEAK = """
import resource, sys
import ciyuan
tok = ciyuan.Tokenizer.from_tiktoken(sys.argv[1], "cl100k_base")
text = "a" * 20_000_000
tok.count_tokens("warm up")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
count = tok.count_tokens(text)
print(count, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


@pytest.mark.slow
def test_memory_of_one_long_piece_is_bounded() -> None:
    """20 MB of one letter is one piece for cl100k. One merge loop over it took ~43 bytes per
    byte (860 MB); in windows it is the text's UTF-8 copy and the tokens (12 bytes each, one per
    8 letters here), under 4 bytes per byte of text."""
    path = shared("tokenizers", "tiktoken", "cl100k_base.tiktoken")
    env = {k: v for k, v in os.environ.items() if k != "CIYUAN_BPE_WINDOW"}
    if env.get("CIYUAN_SANITIZED"):
        pytest.skip("ASan's shadow memory and quarantine change the peak this test measures")
    done = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, env=env,
                          check=True)
    count, grown = map(int, done.stdout.split())
    assert count == 2_500_000
    assert grown < 4 * 20_000_000, f"peak RSS grew by {grown / 1e6:.0f} MB for a 20 MB piece"


def test_the_default_window_equals_one_merge_loop() -> None:
    """Without CIYUAN_BPE_WINDOW (64 KiB windows), a piece of a dozen windows encodes as one
    merge loop over it (a window larger than the piece)."""
    ranks, merges = random_vocab(7, 60)
    text = ("ab中文字词元😀é" * 40_000)[:300_000]
    default = ciyuan.Tokenizer(BPE(ranks, merges, byte_level=True)).encode_ids(text)
    with window_of(10**9):
        whole = ciyuan.Tokenizer(BPE(ranks, merges, byte_level=True)).encode_ids(text)
    assert default == whole
