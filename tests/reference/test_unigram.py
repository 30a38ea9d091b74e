"""The plain-Python Unigram / SentencePiece BPE encoder (ciyuan.reference.unigram) against
sentencepiece itself on generated piece tables (models built as protobufs with identity
normalization, so both sides see the same text), and the forward-backward identities."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan.reference import unigram as ref

pytest.importorskip("sentencepiece")

from tests.parity.spm_tables import BASE, CHARS, models, processor  # noqa: E402


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.text(CHARS + "☃x", min_size=1, max_size=14), st.sampled_from([1, 2]))
def test_encoders_match_sentencepiece(model, text, model_type):
    pieces, fallback = model
    sp = processor(pieces, model_type, fallback)
    table = ref.Table(pieces, byte_fallback=fallback)
    norm = text.replace(" ", "▁")
    got = ref.viterbi(norm, table) if model_type == 1 else ref.spm_bpe_encode(norm, table)
    assert [table.ids[p] for p, _, _ in got] == sp.encode(text)


def test_user_defined_score_and_unknown_score():
    table = ref.Table(BASE + [("ab", -50.0, ref.USER_DEFINED), ("a", 1.05, ref.NORMAL), ("b", -1.0, ref.NORMAL)])
    assert table.lattice_score(3) == pytest.approx(0.1)
    assert [p for p, _, _ in ref.viterbi("ab", table)] == ["ab"]
    assert table.unk_score == pytest.approx(-11.0)


def test_marginals_cover_each_character_once():
    table = ref.Table(BASE + [("▁a", -1.0, 1), ("b", -2.0, 1), ("▁ab", -2.5, 1), ("a", -3.0, 1), ("▁", -1.5, 1)])
    text = "▁abab☃"
    marg = ref.marginals(text, table, alpha=0.7)
    for pos in range(len(text)):
        assert sum(p for (s, e, _), p in marg.items() if s <= pos < e) == pytest.approx(1.0)
    probs = ref.segmentation_probabilities(text, table, 0.7)
    assert sum(probs.values()) == pytest.approx(1.0)
    # FFBS draws from the same distribution: a fixed-seed run, each frequency within 4.5 sd.
    rng = random.Random(5)
    n = 3000
    counts: dict = {}
    for _ in range(n):
        key = tuple(p for p, _, _ in ref.sample(text, table, 0.7, rng))
        counts[key] = counts.get(key, 0) + 1
    for key, p in probs.items():
        assert abs(counts.get(key, 0) / n - p) <= 4.5 * math.sqrt(p * (1 - p) / n) + 1e-9
