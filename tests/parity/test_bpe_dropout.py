"""BPE-dropout against Hugging Face tokenizers' BPE(dropout=p): its frequencies of segmentations
follow the exact distribution of ciyuan's reference (which the native model is held to in
tests/models/test_bpe_dropout.py). Hugging Face's generator cannot be seeded; the bound (six
standard deviations per outcome) makes a chance failure rarer than one run in 10^7, while the
distribution of merges skipped independently at each step differs by 20 standard deviations."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from tests.models.test_bpe_dropout import MERGES, exact_distribution, small_vocab

tokenizers = pytest.importorskip("tokenizers")


@pytest.mark.parametrize(("word", "p"), [("lower", 0.3), ("newest", 0.5), ("rerere", 0.2)])
def test_hugging_face_dropout_follows_the_reference_distribution(word, p):
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(small_vocab(), MERGES, dropout=p))
    n = 20_000
    counts = Counter(tuple(e.tokens) for e in hf.encode_batch([word] * n))
    expected = exact_distribution(word, p)
    assert set(counts) <= set(expected)
    for outcome, prob in expected.items():
        bound = 6 * math.sqrt(prob * (1 - prob) / n) + 1 / n
        assert abs(counts[outcome] / n - prob) <= bound, (outcome, counts[outcome] / n, prob)
