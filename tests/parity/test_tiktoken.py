"""Ids identical to tiktoken (built from the same files) on every line of the real corpora."""

from __future__ import annotations

from typing import List

import pytest

from tests.conftest import ENCODINGS, read_prefix, shared


def assert_same_ids(tok, enc, texts: List[str], source: str) -> None:
    ours = tok.encode_batch_ids(texts, disallowed_special=())
    theirs = enc.encode_ordinary_batch(texts)
    if ours != theirs:
        for i, (a, b) in enumerate(zip(ours, theirs)):
            if a != b:
                pytest.fail(f"{source}: text {i} {texts[i][:200]!r} differs:\nciyuan   {a[:40]}\ntiktoken {b[:40]}")
    assert ours == theirs
    # decode(encode(x)) == x everywhere
    assert tok.decode_batch(ours[:2000]) == texts[:2000]


def corpus_lines(*parts: str, limit: int = 0) -> List[str]:
    path = shared(*parts)
    text = read_prefix(path, limit) if limit else path.read_text(encoding="utf-8")
    return text.split("\n")


FAST_CORPORA = [
    ("corpora", "en", "taylorswift.txt"),
    ("corpora", "multi", "emoji.txt"),
]
SLOW_CORPORA = [
    ("corpora", "en", "tinyshakespeare.txt"),
    ("corpora", "multi", "udhr_sample.txt"),
    ("corpora", "multi", "wagahaiwa.ja.txt"),
]


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("parts", FAST_CORPORA, ids=lambda p: p[-1])
def test_lines_small_corpora(ciyuan_tokenizers, tiktoken_encodings, name, parts):
    lines = corpus_lines(*parts)
    assert_same_ids(ciyuan_tokenizers[name], tiktoken_encodings[name], lines, parts[-1])


@pytest.mark.parametrize("name", ENCODINGS)
def test_whole_files(ciyuan_tokenizers, tiktoken_encodings, name):
    # Whole files, newlines and all: exercises the whitespace rules across line ends.
    texts = [shared("corpora", "en", "taylorswift.txt").read_text(encoding="utf-8"),
             read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 200_000),
             read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 300_000)]
    assert_same_ids(ciyuan_tokenizers[name], tiktoken_encodings[name], texts, "whole files")


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("parts", SLOW_CORPORA, ids=lambda p: p[-1])
def test_lines_corpora(ciyuan_tokenizers, tiktoken_encodings, name, parts):
    assert_same_ids(ciyuan_tokenizers[name], tiktoken_encodings[name], corpus_lines(*parts), parts[-1])


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
def test_lines_chinese_2mb(ciyuan_tokenizers, tiktoken_encodings, name):
    lines = corpus_lines("corpora", "zh", "jinyong_16novels.txt", limit=2_000_000)
    assert_same_ids(ciyuan_tokenizers[name], tiktoken_encodings[name], lines, "jinyong (2 MB)")


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
def test_lines_udhr_all_languages(ciyuan_tokenizers, tiktoken_encodings, name):
    folder = shared("corpora", "multi", "udhr")
    lines: List[str] = []
    for path in sorted(folder.glob("*.txt")):
        lines.extend(path.read_text(encoding="utf-8").split("\n"))
    assert_same_ids(ciyuan_tokenizers[name], tiktoken_encodings[name], lines, "udhr/*.txt")


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
def test_all_of_gutenberg(ciyuan_tokenizers, tiktoken_encodings, name):
    # All 105 MB, as documents of about 1 MB (every line, and the newlines between them: the
    # other corpora are compared line by line). Line by line, tiktoken's thread pool spends
    # minutes on its 2.5 million futures.
    path = shared("corpora", "en", "gutenberg_100mb.txt")
    with open(path, encoding="utf-8") as f:
        while True:
            docs = ["".join(f.readlines(1_000_000)) for _ in range(16)]
            docs = [d for d in docs if d]
            if not docs:
                break
            assert_same_ids(ciyuan_tokenizers[name], tiktoken_encodings[name], docs, "gutenberg_100mb")
