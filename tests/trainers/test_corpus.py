"""Words for training through the native BERT front end: the same words and counts as running
BertNormalizer and BertPreTokenizer in Python, from texts and from files."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan.normalizers import BertNormalizer
from ciyuan.pre_tokenizers import BertPreTokenizer, WhitespaceSplit
from ciyuan.trainers import WordPieceTrainer
from ciyuan.trainers.corpus import count_words
from tests.conftest import read_prefix, shared

TEXTS = [
    "Héllo, Wörld! naïve café — déjà vu.",
    "金庸的小说《射雕英雄传》非常好看。",
    "tab\there\x00nul\u200bzero-width\ufffdreplacement",
    "e\u0301\u0316 marks out of canonical order a\u0316\u0301",
    "İstanbul ΣΑΣ ǅ ﬁ",
    "",
]


def python_counts(texts, normalizer):
    counts: Counter = Counter()
    splitter = BertPreTokenizer()
    for text in texts:
        norm = normalizer.normalize_str(text) if normalizer is not None else text
        for s, e in splitter.split(norm):
            counts[norm[s:e]] += 1
    return counts


def native_counts(counter):
    return Counter({w.decode("utf-8"): n for w, n in counter.words()})


@pytest.mark.parametrize("options", [dict(lowercase=True), dict(lowercase=False),
                                     dict(strip_accents=True, lowercase=False),
                                     dict(clean_text=False, handle_chinese_chars=False)])
def test_same_words_as_the_python_stages(options):
    normalizer = BertNormalizer(**options)
    counter = WordPieceTrainer(100).count_words(TEXTS * 3, BertPreTokenizer(), normalizer)
    assert native_counts(counter) == python_counts(TEXTS * 3, normalizer)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=40), max_size=5), st.booleans())
def test_generated_text(texts, lowercase):
    normalizer = BertNormalizer(lowercase=lowercase)
    counter = WordPieceTrainer(100).count_words(texts, BertPreTokenizer(), normalizer)
    assert native_counts(counter) == python_counts(texts, normalizer)


def test_files_are_counted_line_by_line(tmp_path):
    text = read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 300_000) + "\n".join(TEXTS)
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    normalizer = BertNormalizer(lowercase=True)
    counter = WordPieceTrainer(100, lowercase=True).count_words(path, BertPreTokenizer(), normalizer)
    assert native_counts(counter) == python_counts(text.split("\n"), normalizer)


def test_lone_surrogates_read_as_replacement_characters():
    # Pre-counted words are read as texts are: a lone surrogate (no UTF-8 form) is U+FFFD.
    expected = [("a\ufffdb".encode(), 3)]
    high, low = "a" + chr(0xD800) + "b", "a" + chr(0xDFFF) + "b"
    assert count_words({high: 2, low: 1}).words() == expected
    assert count_words(["a\ud800b a\ud800b a\ud800b"], WhitespaceSplit()).words() == expected
