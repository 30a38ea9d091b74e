"""The Unigram model: Viterbi, unknown characters, byte fallback, user-defined pieces, n-best and
sampling against the plain-Python reference (ciyuan.reference.unigram), on hand-made and
generated piece tables; bad tables and ids; serialization."""

from __future__ import annotations

import collections
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan.errors import InvalidInputError, ModelError, UnknownIdError
from ciyuan.models import MODELS, PieceType, Unigram
from ciyuan.models.pieces import byte_piece
from ciyuan.reference import unigram as ref
from tests.parity.spm_tables import CHARS, build, models

BYTES = [(byte_piece(b), 0.0) for b in range(256)]


def tokens(model, text):
    """(piece, char start, char end) of the native encoding, as the reference gives them."""
    data = model.make_encoder().encode(text, b"")
    offsets = data.char_offsets(text)
    return [(model.pieces[i], s, e) for i, (s, e) in zip(data.ids, offsets)]


def table_of(model):
    return ref.Table([(p, s, int(t)) for p, s, t in zip(model.pieces, model.scores, model.types)],
                     byte_fallback=model.byte_fallback)


SMALL = Unigram([("<unk>", 0.0), ("▁a", -1.0), ("b", -2.0), ("▁ab", -2.5), ("a", -3.0), ("▁", -1.5)], unk_id=0)


def test_viterbi_picks_the_highest_sum():
    assert tokens(SMALL, "▁ab▁a") == [("▁ab", 0, 3), ("▁a", 3, 5)]
    assert tokens(SMALL, "▁bab") == [("▁", 0, 1), ("b", 1, 2), ("a", 2, 3), ("b", 3, 4)]


def test_ties_go_to_the_longest_last_piece():
    m = Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("c", -1.0), ("bc", -2.0)], unk_id=0)
    assert [p for p, _, _ in tokens(m, "ab")] == ["ab"]
    assert [p for p, _, _ in tokens(m, "abc")] == ["a", "bc"]
    assert [p for p, _, _ in tokens(m, "abcab")] == ["a", "bc", "ab"]


def test_consecutive_unknown_characters_are_one_token():
    m = Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -3.0)], unk_id=0)
    assert tokens(m, "a☃☃b☃") == [("a", 0, 1), ("<unk>", 1, 3), ("b", 3, 4), ("<unk>", 4, 5)]
    # The unknown node scores (lowest NORMAL score) - 10, one per character.
    assert m._native.unk_score == pytest.approx(-13.0)
    [(_, score)] = m._native.nbest("☃☃", 1)
    assert score == pytest.approx(-26.0)


def test_unused_pieces_are_never_matched():
    m = Unigram([("<unk>", 0.0), ("a", -1.0), ("☃", -1.0), ("x", -100.0)], unk_id=0,
                types=[2, 1, 5, 5])
    assert [p for p, _, _ in tokens(m, "a☃☃x")] == ["a", "<unk>"]


def test_byte_fallback_spells_unknown_characters_in_bytes():
    m = Unigram([("<unk>", 0.0)] + BYTES + [("a", -1.0)], unk_id=0, byte_fallback=True)
    assert m.types[1] == PieceType.BYTE and m.types[257] == PieceType.NORMAL
    got = tokens(m, "a☃")
    assert [p for p, _, _ in got] == ["a", "<0xE2>", "<0x98>", "<0x83>"]
    assert [(s, e) for _, s, e in got[1:]] == [(1, 2)] * 3  # each byte spans the whole character
    assert m.id_bytes(m.token_to_id("<0xE2>")) == b"\xe2"


def test_user_defined_pieces_score_a_tenth_per_byte():
    # "ab" user-defined scores 0.1 * 2 - 0.1 = 0.1 whatever its own score; "a" + "b" = v - 1.
    for v, want in ((1.05, ["ab"]), (1.2, ["a", "b"])):
        m = Unigram([("<unk>", 0.0), ("ab", -50.0), ("a", v), ("b", -1.0)], unk_id=0, types=[2, 4, 1, 1])
        assert [p for p, _, _ in tokens(m, "ab")] == want


def test_no_unknown_piece_makes_unknown_text_an_error():
    m = Unigram([("a", -1.0)])
    assert tokens(m, "aa") == [("a", 0, 1), ("a", 1, 2)]
    with pytest.raises(InvalidInputError, match="unk_id"):
        m.make_encoder().encode("ab", b"")


def test_id_bytes_by_type():
    m = Unigram([("<unk>", 0.0), ("<s>", 0.0), ("▁x", -1.0), ("[U]", 0.0), ("old", -2.0)] + BYTES, unk_id=0,
                byte_fallback=True, types=[2, 3, 1, 4, 5] + [6] * 256)
    assert [m.id_bytes(i) for i in range(6)] == [b"<unk>", b"", "▁x".encode(), b"[U]", b"old", b"\x00"]
    assert m.id_bytes(10_000) is None


def test_bad_tables_raise_model_errors():
    with pytest.raises(ModelError, match="two ids"):
        Unigram([("<unk>", 0.0), ("a", -1.0), ("a", -2.0)], unk_id=0)
    with pytest.raises(ModelError, match="unk_id"):
        Unigram([("<unk>", 0.0), ("a", -1.0)], unk_id=5)
    with pytest.raises(ModelError, match="<0x00>"):
        Unigram([("<unk>", 0.0), ("a", -1.0)], unk_id=0, byte_fallback=True)
    with pytest.raises(ModelError, match="UNKNOWN"):
        Unigram([("<unk>", 0.0), ("a", -1.0)], unk_id=0, types=[1, 1])
    with pytest.raises(ModelError, match="one unknown piece"):
        Unigram([("<unk>", 0.0), ("?", -1.0)], types=[2, 2])
    with pytest.raises(ModelError, match="pair"):
        Unigram(["a"])  # type: ignore[list-item]
    with pytest.raises(ModelError, match="empty"):
        Unigram([("", -1.0)])
    with pytest.raises(ModelError, match="PieceType"):
        Unigram([("a", -1.0)], types=[9])
    with pytest.raises(UnknownIdError):
        SMALL.id_to_token(99)
    with pytest.raises(UnknownIdError):
        SMALL.make_encoder().decode_bytes([1, 99])
    assert SMALL.id_bytes(-1) is None and SMALL.make_encoder().decode_bytes([1, 2]) == "▁ab".encode()


def test_serialization_round_trips():
    m = Unigram([("<unk>", 0.0), ("<s>", 0.0), ("▁x", -1.5), ("y", -2.25)], unk_id=0, types=[2, 3, 1, 4])
    d = m.to_dict()
    assert d["type"] == "Unigram" and d["types"] == [2, 3, 1, 4]
    again = MODELS.from_dict(d)
    assert again == m and again.unk_id == 0 and again.types[3] is PieceType.USER_DEFINED
    assert again.get_vocab() == {"<unk>": 0, "<s>": 1, "▁x": 2, "y": 3}


def test_nbest_order_and_scores_match_the_reference():
    text = "▁abab"
    t = table_of(SMALL)
    got = SMALL._native.nbest(text, 6)
    want = ref.nbest(text, t, 6)
    assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-4)
    assert got[0][0] == [(SMALL.token_to_id(p), len(text[:s].encode()), len(text[:e].encode()))
                         for p, s, e in ref.viterbi(text, t)]
    assert SMALL._native.nbest(text, 0) == []


def test_sampling_matches_the_exact_distribution():
    text = "▁abab"
    t = table_of(SMALL)
    alpha = 0.5
    exact = ref.segmentation_probabilities(text, t, alpha)
    counts: collections.Counter = collections.Counter()
    n = 4000
    for seed in range(n):
        counts[tuple(SMALL.pieces[i] for i, _, _ in SMALL._native.sample(text, alpha, -1, seed))] += 1
    assert set(counts) <= set(exact)
    # Deterministic (fixed seeds): each frequency within 4.5 standard deviations of its probability.
    for key, p in exact.items():
        assert abs(counts[key] / n - p) <= 4.5 * math.sqrt(p * (1 - p) / n) + 1e-9, key
    # nbest_size = 1 is Viterbi; k > 1 draws among the k best only.
    viterbi = [i for i, _, _ in SMALL._native.encode_tokens(text)]
    assert [i for i, _, _ in SMALL._native.sample(text, alpha, 1, 7)] == viterbi
    top2 = {tuple(i for i, _, _ in path) for path, _ in SMALL._native.nbest(text, 2)}
    assert {tuple(i for i, _, _ in SMALL._native.sample(text, alpha, 2, s)) for s in range(200)} == top2


def test_sampling_is_deterministic_for_a_seed():
    a = [SMALL._native.sample("▁ab▁ab▁abab", 0.2, -1, s) for s in range(20)]
    b = [SMALL._native.sample("▁ab▁ab▁abab", 0.2, -1, s) for s in range(20)]
    assert a == b and len({tuple(x) for x in a}) > 1


# -- generated tables against the reference -----------------------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.text(CHARS + "☃x", max_size=24))
def test_viterbi_matches_the_reference(drawn, text):
    model = build(Unigram, drawn)
    assert tokens(model, text) == ref.viterbi(text, table_of(model))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.text(CHARS + "☃", max_size=7))
def test_nbest_matches_the_reference(drawn, text):
    model = build(Unigram, drawn)
    t = table_of(model)
    want = ref.nbest(text, t, 5)
    got = model._native.nbest(text, 5)
    assert len(got) == len(want)
    assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-3)
    # The same paths, modulo order among equal scores (the last group may be cut at k).
    def groups(paths):
        out = []
        for toks, score in sorted(paths, key=lambda p: -p[1]):
            if out and abs(out[-1][0] - score) <= 1e-4:
                out[-1][1].append(tuple(toks))
            else:
                out.append((score, [tuple(toks)]))
        return [sorted(g) for _, g in out[:-1]]

    by_text = [([(model.pieces[i], s, e) for i, s, e in path], score) for path, score in got]
    byte_ref = [([(p, len(text[:s].encode()), len(text[:e].encode())) for p, s, e in path], score)
                for path, score in want]
    assert groups(by_text) == groups(byte_ref)


NEAR_TIE_SCORES = st.lists(st.sampled_from([-1.0, -2.0, -3.0, -1.0000001, -2.0000002, -0.9999999]), min_size=8,
                           max_size=8)


@pytest.mark.parametrize("vocabulary", [
    ["▁ab", "▁abc", "▁ba", "▁c", "▁abcab", "▁bcb"],
    # With unknown nodes (B, Z) in the cached words: their score enters the running total and
    # the margins.
    ["▁aB", "▁Bab", "▁BB", "▁cB", "▁abBab", "▁bBcb", "▁ZZZZZZZ"],
])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), scores=NEAR_TIE_SCORES)
def test_long_texts_with_near_ties_match_the_float_viterbi(vocabulary, data, scores):
    # Equal and nearly equal sums (within float rounding of a large running total): the cached
    # word segmentations must still be exactly what one float32 Viterbi over the text decides.
    words = data.draw(st.lists(st.sampled_from(vocabulary), min_size=50, max_size=400))
    pieces = ["▁a", "b", "▁ab", "c", "bc", "▁", "a", "▁b"]
    m = Unigram([("<unk>", 0.0)] + list(zip(pieces, scores)), unk_id=0)
    text = "".join(words)
    assert tokens(m, text) == ref.viterbi(text, table_of(m))


# -- the paths of the native Viterbi: long CJK runs, the word cache's limits -------------------

CJK = "的一是不了人我在有他这中大来上"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(CJK), st.floats(-12.0, -0.5)), min_size=1, max_size=8,
                unique_by=lambda x: x[0]),
       st.lists(st.tuples(st.text(CJK, min_size=2, max_size=4), st.floats(-12.0, -0.5)), max_size=12,
                unique_by=lambda x: x[0]),
       st.text(CJK + "☃ab", min_size=8, max_size=80), st.booleans())
def test_long_cjk_runs_with_unknown_characters_match_the_reference(singles, longer, text, byte_fallback):
    # Words longer than the cache's 16 bytes go through the Viterbi itself: characters in no
    # piece (unknown nodes, merged or spelled in bytes), characters that are only a piece alone
    # (no trie walk), and characters that start longer pieces, some without a piece alone.
    pieces = [("<unk>", 0.0)] + singles + [(p, s) for p, s in longer if p not in dict(singles)]
    m = Unigram(pieces + (BYTES if byte_fallback else []), unk_id=0, byte_fallback=byte_fallback)
    assert tokens(m, text) == ref.viterbi(text, table_of(m))
    assert tokens(m, "▁" + text) == ref.viterbi("▁" + text, table_of(m))


# Lower-case pieces only: a capital is an unknown node, as in albert.
CASED = Unigram([("<unk>", 0.0), ("▁", -2.0), ("a", -3.0), ("b", -3.5), ("c", -4.0), ("ab", -4.5), ("bc", -5.0),
                 ("▁ab", -5.5), ("é", -6.0), ("abc", -7.0)], unk_id=0)
CASED_BYTES = Unigram([("<unk>", 0.0), ("▁", -2.0), ("a", -3.0), ("b", -3.5), ("c", -4.0), ("ab", -4.5),
                       ("▁ab", -5.5), ("é", -6.0)] + BYTES, unk_id=0, byte_fallback=True)


@pytest.mark.parametrize("model", [CASED, CASED_BYTES], ids=["unk", "bytes"])
@pytest.mark.parametrize("word", [
    "▁aBc", "▁ABC", "▁AbAbAbA", "▁ABCDEFG", "▁abcabcab", "▁ABCDEFGHIJKLM", "▁ABCDEFGHIJKLMN",  # 3..16 bytes
    "▁ABCDEFGHIJKLMNO", "▁ABCDEFGHIJKLMNOP", "▁éÉéÉéÉé", "▁éÉéÉéÉéÉ", "▁AAAAAAA", "▁AAAAAAAA",  # 17+ bytes, 8/9 nodes
    "▁aAbBaA", "▁XaYbZcW", "▁XaYbZcWa", "▁XaYbZcWab",  # 7, 8, 9 pieces with unknown ones between
])
def test_words_near_the_cache_limits_match_the_reference(model, word):
    # Each word thrice (the first a miss that fills the cache, then hits), after a word ending in
    # an unknown character (an unknown token only merges within a word: "▁" starts the next).
    text = "▁abC" + word * 3 + "▁" + word[1:] * 2
    assert tokens(model, text) == ref.viterbi(text, table_of(model))
    # A fresh text after the cache is warm: a hit replays the same tokens.
    assert tokens(model, word + word) == ref.viterbi(word + word, table_of(model))


# -- sentencepiece's re-centring of the running score past +-100000 ---------------------------

# 2 + 2**-10: "ab" loses to "a" + "b" by 2**-10, a tie once sums round to 2**-7 (totals of 2**16
# and more); a re-centred total (back near 0) keeps the difference.
NEAR_TWO = -2.0009765625


@pytest.mark.parametrize("text, last", [
    # One long word (the Viterbi itself): -101000 before "ab" is past -100000, so the sums start
    # again from 0 there; at exactly -100000 they do not (the tie goes to "ab").
    ("x" * 101 + "ab", ["a", "b"]),
    ("x" * 100 + "ab", ["ab"]),
])
def test_long_sums_are_recentred_in_the_viterbi(text, last):
    m = Unigram([("<unk>", 0.0), ("x", -1000.0), ("a", -1.0), ("b", -1.0), ("ab", NEAR_TWO)], unk_id=0)
    got = [p for p, _, _ in tokens(m, text)]
    assert got == ["x"] * (len(text) - 2) + last
    assert tokens(m, text) == ref.viterbi(text, table_of(m))


@pytest.mark.parametrize("pieces, text", [
    # Re-centred where a word starts: "▁ab" is in the word cache from the first word, and its
    # path there ("▁a" "b") is again the best after the total of -101000 goes back to 0.
    ([("▁", -1.0)], "▁ab" + "▁x" * 101 + "▁ab▁ab"),
    # Re-centred inside a word: with no "▁" piece, "▁" is an unknown node (-1010), so in the
    # 100th "▁x" the position after "▁" is past -100000 while "▁x" already reaches the word's
    # end; the word's end is moved by the same amount and "▁ab" comes at a total near 0.
    ([], "▁x" * 100 + "▁ab"),
])
def test_long_sums_are_recentred_between_cached_words(pieces, text):
    m = Unigram([("<unk>", 0.0), ("▁x", -1000.0), ("▁a", -1.0), ("b", -1.0), ("▁ab", NEAR_TWO)] + pieces,
                unk_id=0)
    got = [p for p, _, _ in tokens(m, text)]
    assert got[-2:] == ["▁a", "b"] and "▁ab" not in got
    assert tokens(m, text) == ref.viterbi(text, table_of(m))


# Large scores (totals pass 100000 every 50 to 100 words) with near ties that the rounding at
# that size decides.
LARGE_NEAR_TIE_SCORES = st.lists(st.sampled_from([-1000.0, -2000.0, -1000.0009765625, -2000.001953125,
                                                  -999.9990234375, -1.0, -2.0, -2.0009765625]),
                                 min_size=9, max_size=9)


@pytest.mark.parametrize("space", ["▁", ""], ids=["words", "one-word"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), scores=LARGE_NEAR_TIE_SCORES)
def test_long_texts_with_large_scores_match_the_recentred_viterbi(space, data, scores):
    words = data.draw(st.lists(st.sampled_from(["▁ab", "▁abc", "▁ba", "▁c", "▁abcab", "▁bcb", "▁aB"]),
                               min_size=50, max_size=400))
    pieces = ["▁a", "b", "▁ab", "c", "bc", "▁", "a", "▁b", "ab"]
    m = Unigram([("<unk>", 0.0)] + list(zip(pieces, scores)), unk_id=0)
    text = "".join(words).replace("▁", space)
    assert tokens(m, text) == ref.viterbi(text, table_of(m))
