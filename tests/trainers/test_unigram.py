"""UnigramTrainer and the native Unigram trainer: options, determinism, meta pieces, the
SentencePiece BPE type, and the native steps against ciyuan.reference.unigram."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ciyuan import _core
from ciyuan.errors import InvalidInputError
from ciyuan.reference import unigram as ref
from ciyuan.trainers import TRAINERS, SentencePieceBPETrainer, UnigramTrainer

SPACE = "\u2581"


def corpus(n: int = 400, seed: int = 1) -> list:
    rng = random.Random(seed)
    stems = ["low", "new", "wid", "talk", "walk", "read", "play", "un", "re", "tion", "表", "示", "数", "字"]
    ends = ["", "er", "est", "ing", "ed", "s", "ly"]
    lines = []
    for _ in range(n):
        words = [rng.choice(stems) + rng.choice(ends) for _ in range(rng.randint(1, 8))]
        if rng.random() < 0.3:
            words.append(str(rng.randint(0, 99999)))
            words.append(f"{rng.randint(0, 9)}.{rng.randint(0, 9)}")
        lines.append(" ".join(words))
    return lines


def learn(trainer: UnigramTrainer, lines: list):
    return trainer.learn(trainer.count_words(lines))


def test_meta_pieces_and_ids_as_sentencepiece():
    learned = learn(UnigramTrainer(vocab_size=80), corpus())
    assert learned.pieces[:3] == ["<unk>", "<s>", "</s>"]
    assert learned.types[:3] == [2, 3, 3]
    assert learned.unk_id == 0
    assert len(learned.pieces) <= 80
    assert all(t == 1 for t in learned.types[3:])
    assert len(set(learned.pieces)) == len(learned.pieces)


def test_byte_fallback_trains_byte_pieces():
    learned = learn(UnigramTrainer(vocab_size=400, byte_fallback=True), corpus())
    assert learned.pieces[3:259] == [f"<0x{b:02X}>" for b in range(256)]
    assert set(learned.types[3:259]) == {6}
    assert learned.byte_fallback


def test_user_defined_symbols_come_after_control_and_are_never_inside_pieces():
    lines = [line + " <sep> x<sep>y" for line in corpus()]
    learned = learn(UnigramTrainer(vocab_size=100, user_defined_symbols=["<sep>"]), lines)
    assert learned.pieces[3] == "<sep>" and learned.types[3] == 4
    assert not any("<sep>" in p or "sep" in p for p in learned.pieces[4:])


def test_character_coverage_drops_rare_characters():
    lines = corpus() + ["zebra\u2603"]  # the snowman is one character in thousands
    full = learn(UnigramTrainer(vocab_size=100, character_coverage=1.0), lines)
    part = learn(UnigramTrainer(vocab_size=100, character_coverage=0.99), lines)
    assert "\u2603" in full.required_chars
    assert "\u2603" not in part.required_chars
    assert not any("\u2603" in p for p in part.pieces)


def test_split_digits_and_numbers():
    lines = corpus()
    split = learn(UnigramTrainer(vocab_size=120, split_digits=True), lines)
    assert not any(any(c.isdigit() for c in p) and len(p) > 1 for p in split.pieces)  # "▁1" neither
    plain = learn(UnigramTrainer(vocab_size=120), lines)
    assert not any(any(c.isdigit() for c in p) and any(c.isalpha() for c in p) for p in plain.pieces)
    assert any(any(c.isdigit() for c in p) and "." in p for p in plain.pieces)  # digits are "common" script
    mixed = learn(UnigramTrainer(vocab_size=160, split_by_number=False), [line + " low1 low1" for line in lines])
    assert any(any(c.isdigit() for c in p) and any(c.isalpha() for c in p) for p in mixed.pieces)


def test_pieces_keep_to_one_script_and_whitespace_at_the_start():
    learned = learn(UnigramTrainer(vocab_size=120), corpus())
    for p in learned.pieces[3:]:
        assert SPACE not in p[1:]
        body = p.lstrip(SPACE)
        assert not (any("a" <= c <= "z" for c in body) and any(ord(c) > 0x3000 for c in body)), p


def test_whitespace_as_suffix():
    learned = learn(UnigramTrainer(vocab_size=100, treat_whitespace_as_suffix=True), corpus())
    assert any(p.endswith(SPACE) and len(p) > 1 for p in learned.pieces)
    assert not any(SPACE in p[:-1] for p in learned.pieces[3:])


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_same_result_on_any_thread_count(model_type):
    lines = corpus(1500, seed=7)
    results = [learn(UnigramTrainer(vocab_size=150, model_type=model_type, threads=t), lines) for t in (1, 2, 3)]
    assert results[0].pieces == results[1].pieces == results[2].pieces
    assert results[0].scores == results[1].scores == results[2].scores


def test_sentencepiece_bpe_order_and_scores():
    learned = learn(SentencePieceBPETrainer(vocab_size=60), corpus())
    normal = [i for i, t in enumerate(learned.types) if t == 1]
    scores = [learned.scores[i] for i in normal]
    assert scores == [-float(k) for k in range(len(normal))]
    chars = learned.required_chars
    assert [learned.pieces[i] for i in normal[-len(chars):]] == chars  # characters last, most frequent first


def test_scores_are_log_probabilities_best_first():
    learned = learn(UnigramTrainer(vocab_size=100), corpus())
    scores = learned.scores[3:]
    assert scores == sorted(scores, reverse=True)
    assert all(s < 0 for s in scores)


def test_to_dict_round_trip_and_registry():
    t = UnigramTrainer(vocab_size=123, split_digits=True, byte_fallback=True, user_defined_symbols=["<a>"])
    again = TRAINERS.from_dict(t.to_dict())
    assert isinstance(again, UnigramTrainer) and again.to_dict() == t.to_dict()
    b = TRAINERS.from_dict(SentencePieceBPETrainer(vocab_size=99).to_dict())
    assert isinstance(b, SentencePieceBPETrainer) and b.model_type == "bpe"


@pytest.mark.parametrize("options", [
    dict(model_type="wordpiece"), dict(character_coverage=0.0), dict(character_coverage=1.5),
    dict(shrinking_factor=1.0), dict(num_sub_iterations=0), dict(max_piece_length=0),
    dict(user_defined_symbols=["a", "a"]), dict(user_defined_symbols=[""]), dict(unk_id=-1),
    dict(bos_id=0), dict(pad_id=7), dict(user_defined_symbols=["<s>"]),
])
def test_bad_options_raise(options):
    with pytest.raises(InvalidInputError):
        UnigramTrainer(vocab_size=100, **options)


def test_vocab_too_small_or_empty_corpus_raises():
    with pytest.raises(InvalidInputError, match="room"):
        learn(UnigramTrainer(vocab_size=200, byte_fallback=True), corpus())
    with pytest.raises(InvalidInputError, match="required characters"):
        learn(UnigramTrainer(vocab_size=8), corpus())
    with pytest.raises(InvalidInputError, match="empty"):
        UnigramTrainer(vocab_size=50).learn(UnigramTrainer(vocab_size=50).count_words([""]))


def test_input_sentence_size_samples_deterministically():
    lines = corpus(300)
    t = UnigramTrainer(vocab_size=60, input_sentence_size=50, seed=3)
    a, b = t._sample(lines), t._sample(lines)
    assert a == b and len(a) == 50 and all(line in lines for line in a)
    assert UnigramTrainer(vocab_size=60, input_sentence_size=50, seed=4)._sample(lines) != a
    assert learn(t, lines).pieces == learn(t, lines).pieces


def test_progress_bar(capsys):
    learn(UnigramTrainer(vocab_size=80, show_progress=True), corpus())
    assert "training Unigram" in capsys.readouterr().err


# -- the native steps against the reference -------------------------------------------------------

words_strategy = st.dictionaries(st.text(alphabet="abcd\u2581", min_size=1, max_size=9), st.integers(1, 5),
                                 min_size=1, max_size=12)


def seed_model(words):
    subs = ref.seeds(words, 6)
    chars = sorted({c for w in words for c in w})
    pieces = chars + sorted(subs)
    raw = [1.0] * len(chars) + [float(subs[s]) for s in sorted(subs)]
    total = sum(raw)
    return pieces, [math.log(r / total) for r in raw]


@settings(max_examples=60, deadline=None)
@given(words_strategy)
def test_seeds_match_reference(words):
    native = dict(_core.unigram_seeds(list(words), list(words.values()), 6, 10**6))
    assert native == ref.seeds(words, 6)


@settings(max_examples=60, deadline=None)
@given(words_strategy, st.integers(1, 3))
def test_em_step_matches_reference(words, threads):
    pieces, scores = seed_model(words)
    native, obj = _core.unigram_expected_counts(list(words), list(words.values()), pieces, scores, threads)
    expected, ref_obj = ref.expected_counts(words, pieces, scores)
    assert native == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert obj == pytest.approx(ref_obj, rel=1e-9)
    keep, new = _core.unigram_m_step(native)
    ref_keep, ref_new = ref.m_step(expected)
    assume(all(abs(c - 0.5) > 1e-9 for c in expected))
    assert list(keep) == ref_keep
    assert new == pytest.approx(ref_new, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(words_strategy, st.floats(0.3, 0.9))
def test_pruning_matches_reference(words, share):
    pieces, scores = seed_model(words)
    native, _ = _core.unigram_expected_counts(list(words), list(words.values()), pieces, scores, 1)
    keep, new = _core.unigram_m_step(native)
    pieces, scores = [pieces[i] for i in keep], list(new)
    size = max(1, int(len(pieces) * share))
    ref_keep, losses = ref.prune(words, pieces, scores, size)
    ordered = sorted(losses.values(), reverse=True)
    assume(all(abs(a - b) > 1e-9 for a, b in zip(ordered, ordered[1:])))  # no near-ties at the cut
    assert list(_core.unigram_prune(list(words), list(words.values()), pieces, scores, size, 2)) == ref_keep
