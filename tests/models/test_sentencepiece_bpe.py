"""SentencePiece's BPE model: score-ordered merges, ties, user-defined and unused pieces, unknown
runs, byte fallback and BPE-dropout, against the plain-Python reference
(ciyuan.reference.unigram.spm_bpe_encode) on hand-made and generated piece tables."""

from __future__ import annotations

import collections
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan.errors import InvalidInputError, ModelError
from ciyuan.models import MODELS, SentencePieceBPE
from ciyuan.models.pieces import byte_piece
from ciyuan.reference import unigram as ref
from tests.parity.spm_tables import CHARS, build, models

BYTES = [(byte_piece(b), 0.0) for b in range(256)]


def tokens(model, text):
    data = model.make_encoder().encode(text, b"")
    return [(model.pieces[i], s, e) for i, (s, e) in zip(data.ids, data.char_offsets(text))]


def table_of(model):
    return ref.Table([(p, s, int(t)) for p, s, t in zip(model.pieces, model.scores, model.types)],
                     byte_fallback=model.byte_fallback)


def test_highest_score_merges_first_leftmost_on_ties():
    m = SentencePieceBPE([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("c", -1.0), ("ab", -1.0), ("bc", -1.0),
                          ("abc", -5.0)], unk_id=0)
    assert [p for p, _, _ in tokens(m, "abc")] == ["abc"]
    m = SentencePieceBPE([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("c", -1.0), ("ab", -2.0), ("bc", -1.0)],
                         unk_id=0)
    assert [p for p, _, _ in tokens(m, "abc")] == ["a", "bc"]
    m = SentencePieceBPE([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.0)], unk_id=0)
    assert [p for p, _, _ in tokens(m, "aba")] == ["ab", "a"]


def test_user_defined_pieces_are_frozen_symbols():
    m = SentencePieceBPE([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", 0.0), ("c", -1.0), ("abc", -2.0),
                          ("bc", -3.0)], unk_id=0, types=[2, 1, 1, 4, 1, 1, 1])
    assert [p for p, _, _ in tokens(m, "abc")] == ["ab", "c"]


def test_unused_pieces_are_taken_apart_again():
    m = SentencePieceBPE([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.0), ("c", -1.0), ("abc", -2.0)],
                         unk_id=0, types=[2, 1, 1, 5, 1, 1])
    assert [p for p, _, _ in tokens(m, "ababc")] == ["a", "b", "abc"]
    # An unused character that never merged is unknown.
    m = SentencePieceBPE([("<unk>", 0.0), ("a", -1.0), ("b", -1.0)], unk_id=0, types=[2, 1, 5])
    assert [p for p, _, _ in tokens(m, "abb")] == ["a", "<unk>"]


def test_unknown_runs_and_byte_fallback():
    m = SentencePieceBPE([("<unk>", 0.0), ("a", -1.0), ("b", -2.0), ("ab", -3.0)], unk_id=0)
    assert tokens(m, "a☃☃b☃ab") == [("a", 0, 1), ("<unk>", 1, 3), ("b", 3, 4), ("<unk>", 4, 5), ("ab", 5, 7)]
    m = SentencePieceBPE([("<unk>", 0.0)] + BYTES + [("a", -1.0)], unk_id=0, byte_fallback=True)
    assert [p for p, _, _ in tokens(m, "a☃")] == ["a", "<0xE2>", "<0x98>", "<0x83>"]
    with pytest.raises(InvalidInputError):
        SentencePieceBPE([("a", -1.0)]).make_encoder().encode("b", b"")


def test_bad_tables_and_serialization():
    with pytest.raises(ModelError, match="two ids"):
        SentencePieceBPE([("<unk>", 0.0), ("x", -1.0), ("x", -1.0)], unk_id=0)
    with pytest.raises(ModelError, match="unk_id"):
        SentencePieceBPE([("<unk>", 0.0)], unk_id=-1)
    m = SentencePieceBPE([("<unk>", 0.0)] + BYTES + [("▁a", -1.0)], unk_id=0, byte_fallback=True)
    again = MODELS.from_dict(m.to_dict())
    assert again == m and again.byte_fallback and type(again) is SentencePieceBPE


def test_dropout_skips_merges_with_probability_alpha():
    m = SentencePieceBPE([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.0)], unk_id=0)
    ab = m.token_to_id("ab")
    assert [i for i, _, _ in m._native.sample("ab", 0.0, -1, 3)] == [ab]
    assert [i for i, _, _ in m._native.sample("ab", 1.0, -1, 3)] == [1, 2]
    n, alpha = 4000, 0.3
    merged = sum(m._native.sample("ab", alpha, -1, seed)[0][0] == ab for seed in range(n))
    assert abs(merged / n - (1 - alpha)) <= 4.5 * math.sqrt(alpha * (1 - alpha) / n)
    # "aab" with "aa" and "ab" pieces: "ab" (higher) is tried first; skipped, "aa" is tried.
    m = SentencePieceBPE([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.0), ("aa", -2.0)], unk_id=0)
    counts = collections.Counter(tuple(m.pieces[i] for i, _, _ in m._native.sample("aab", alpha, -1, s))
                                 for s in range(n))
    exact = {("a", "ab"): 1 - alpha, ("aa", "b"): alpha * (1 - alpha), ("a", "a", "b"): alpha * alpha}
    assert set(counts) == set(exact)
    for key, p in exact.items():
        assert abs(counts[key] / n - p) <= 4.5 * math.sqrt(p * (1 - p) / n), key
    assert m._native.sample("aab▁aab", 0.5, -1, 11) == m._native.sample("aab▁aab", 0.5, -1, 11)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.text(CHARS + "☃x", max_size=24))
def test_merges_match_the_reference(drawn, text):
    model = build(SentencePieceBPE, drawn)
    assert tokens(model, text) == ref.spm_bpe_encode(text, table_of(model))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.text(CHARS + "☃x", max_size=40))
def test_words_cut_at_frozen_symbols_match_the_reference(drawn, text):
    # Without UNUSED pieces the native loop merges the runs between frozen symbols (characters
    # in no longer piece, user-defined pieces) one by one; the tokens must be those of one
    # merge loop over the whole text.
    pieces, fallback = drawn
    pieces = [(p, s, ref.NORMAL if t == ref.UNUSED else t) for p, s, t in pieces]
    model = build(SentencePieceBPE, (pieces, fallback))
    assert tokens(model, text) == ref.spm_bpe_encode(text, table_of(model))
