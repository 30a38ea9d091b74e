"""The WordPiece trainer (likelihood criterion) against reference/wordpiece.py, its options,
determinism and bad input; the reference encoder."""

from __future__ import annotations

import doctest
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ciyuan.reference.wordpiece
import ciyuan.trainers.word_level
import ciyuan.trainers.wordpiece
from ciyuan import InvalidInputError, pre_tokenizers
from ciyuan.reference.wordpiece import train_wordpiece
from ciyuan.trainers import WordPieceTrainer, from_dict
from tests.conftest import shared

COURSE = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}


def native(words, vocab_size=0, **options):
    """The native trainer on pre-counted words: (tokens, merges)."""
    trainer = WordPieceTrainer(vocab_size, special_tokens=options.pop("special_tokens", ()), unk_token=None, **options)
    tokens = trainer.train_vocab(words)
    return tokens, trainer.merges


def reference(words, vocab_size=0, **options):
    prefix = options.pop("continuing_subword_prefix", "##")
    return train_wordpiece(words, vocab_size=vocab_size or None, prefix=prefix, **options)


def test_doctests():
    for module in (ciyuan.reference.wordpiece, ciyuan.trainers.wordpiece, ciyuan.trainers.word_level):
        assert doctest.testmod(module).failed == 0


def test_course_example():
    # The first merge of the likelihood criterion on the classic example: ##g ##s scores
    # 5 / (20 * 5) = 1/20, above p ##u (17 / (17 * 36)) and the rest.
    tokens, merges = reference(COURSE, max_merges=4)
    assert merges == [("##g", "##s"), ("p", "##u"), ("h", "##u"), ("b", "##u")]
    assert tokens[:14] == ["b", "g", "h", "n", "p", "s", "u", "##b", "##g", "##h", "##n", "##p", "##s", "##u"]
    assert native(COURSE, max_merges=4) == (tokens, merges)


def test_ids_specials_alphabet_prefixed_then_merges():
    trainer = WordPieceTrainer(9, special_tokens=["[UNK]", "[PAD]"])
    assert trainer.train_vocab({"ab": 3}) == ["[UNK]", "[PAD]", "a", "b", "##a", "##b", "ab"]
    assert trainer.report.stop_reason == "no pair left to merge"
    assert trainer.merges == [("a", "##b")]


def test_prefix_joining():
    tokens, merges = native({"abc": 4, "xbc": 1}, max_merges=3)
    assert merges[0] == ("##b", "##c") and "##bc" in tokens
    assert set(tokens) >= {"abc", "xbc"} or "a" in tokens
    tokens, _ = native({"abc": 4}, continuing_subword_prefix="")
    assert tokens[-1] == "abc"


def test_ties_higher_count_then_smaller_ids():
    # Every pair scores 1/2 here: a ##b (2 / (2 * 2)) wins on its higher count, then c ##d
    # and x ##d (1 / (1 * 2)) go by the smaller ids.
    words = {"xd": 1, "cd": 1, "ab": 2}
    tokens, merges = native(words, max_merges=3)
    assert merges == [("a", "##b"), ("c", "##d"), ("x", "##d")]
    assert (tokens, merges) == reference(words, max_merges=3)


def test_min_frequency_and_max_token_length():
    words = {"abcd": 3, "xy": 1, "zz": 2}
    tokens, merges = native(words, min_frequency=2)
    assert ("x", "##y") not in merges and "abcd" in tokens
    assert (tokens, merges) == reference(words, min_frequency=2)
    tokens, merges = native(words, max_token_length=2)
    assert max(len(t.replace("##", "")) for t in tokens) == 2
    assert (tokens, merges) == reference(words, max_token_length=2)


def test_limit_and_initial_alphabet():
    words = {"aab": 5, "c": 1}
    tokens, merges = native(words, limit_alphabet=2, initial_alphabet=["z"])
    assert tokens[:4] == ["a", "z", "##a", "##z"]
    assert (tokens, merges) == reference(words, limit_alphabet=2, initial_alphabet=["z"])


def test_order_of_words_does_not_matter():
    words = {f"w{i}{'ab' * (i % 5)}": (i * 7) % 11 + 1 for i in range(200)}
    items = list(words.items())
    random.Random(0).shuffle(items)
    assert native(words, max_merges=120) == native(dict(items), max_merges=120)


def test_threads_do_not_matter():
    path = shared("corpora", "en", "taylorswift.txt")
    vocabs = [WordPieceTrainer(1500, threads=t).train_vocab(path, pre_tokenizers.WordPunct()) for t in (1, 2, 3)]
    assert vocabs[0] == vocabs[1] == vocabs[2]


# -- against the reference trainer ---------------------------------------------------------------

def counted(path, pre):
    trainer = WordPieceTrainer(1000)
    return {w.decode(): n for w, n in trainer.count_words(path, pre).words()}


@pytest.mark.slow
@pytest.mark.parametrize("options", [
    dict(vocab_size=1000, special_tokens=["[PAD]", "[UNK]"]),
    dict(vocab_size=700, min_frequency=3, limit_alphabet=50, max_token_length=6),
])
def test_reference_tinyshakespeare(options):
    words = counted(shared("corpora", "en", "tinyshakespeare.txt"), pre_tokenizers.WordPunct())
    assert native(words, **dict(options)) == reference(words, **dict(options))


def test_reference_taylorswift():
    words = counted(shared("corpora", "en", "taylorswift.txt"), pre_tokenizers.WordPunct())
    assert native(words, 600) == reference(words, 600)


def test_reference_chinese():
    text = shared("zh-bpe-sample", "smalltrain.txt").read_text(encoding="utf-8").replace(" ", "")
    trainer = WordPieceTrainer(0)
    words = {w.decode(): n for w, n in trainer.count_words(text.split("\n"), pre_tokenizers.ZhSentence()).words()}
    assert native(words, max_merges=300) == reference(words, max_merges=300)


words_strategy = st.dictionaries(st.text(alphabet="abcab#中文", min_size=1, max_size=10), st.integers(1, 30),
                                 min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(words=words_strategy, merges=st.integers(0, 60), min_frequency=st.integers(0, 4),
       prefix=st.sampled_from(["##", "", "@"]), limit=st.sampled_from([None, 2, 4]),
       max_len=st.sampled_from([None, 2, 3]), initial=st.sampled_from([(), ("z", "a")]))
def test_reference_generated(words, merges, min_frequency, prefix, limit, max_len, initial):
    options = dict(max_merges=merges, min_frequency=min_frequency, continuing_subword_prefix=prefix,
                   limit_alphabet=limit, max_token_length=max_len, initial_alphabet=initial)
    assert native(words, **dict(options)) == reference(words, **dict(options))


@settings(max_examples=60, deadline=None)
@given(words=words_strategy, extra=st.integers(0, 30))
def test_reference_generated_vocab_size(words, extra):
    alphabet = len({c for w in words for c in w})
    size = 2 * alphabet + 1 + extra
    ours = native(words, size, special_tokens=["[UNK]"])
    assert ours == reference(words, size, special_tokens=["[UNK]"])
    assert len(ours[0]) <= size


# -- bad input -----------------------------------------------------------------------------------

def test_empty_corpus():
    with pytest.raises(InvalidInputError, match="empty"):
        WordPieceTrainer(100).train_vocab([])
    with pytest.raises(InvalidInputError, match="empty"):
        WordPieceTrainer(100, criterion="frequency").train_vocab(["   "], pre_tokenizers.WhitespaceSplit())


def test_vocab_size_below_alphabet():
    with pytest.raises(InvalidInputError, match="vocab_size 8 is smaller than the 9 tokens"):
        WordPieceTrainer(8).train_vocab({"ab": 1})  # 5 specials + a b ##a ##b
    with pytest.raises(InvalidInputError, match="vocab_size"):
        WordPieceTrainer(6, criterion="frequency").train_vocab({"abc": 1})


def test_bad_options():
    with pytest.raises(InvalidInputError, match="criterion"):
        WordPieceTrainer(criterion="bayes")
    with pytest.raises(InvalidInputError, match="prefix"):
        WordPieceTrainer(criterion="frequency", continuing_subword_prefix="")
    with pytest.raises(InvalidInputError, match="unk_token"):
        WordPieceTrainer(special_tokens=["[PAD]"])
    with pytest.raises(InvalidInputError, match="vocab_size"):
        WordPieceTrainer(-1)
    with pytest.raises(InvalidInputError, match="twice"):
        WordPieceTrainer(special_tokens=["[UNK]", "[UNK]"])
    with pytest.raises(TypeError):
        WordPieceTrainer(frobnicate=True)  # type: ignore[call-arg]


def test_counts_too_large_for_exact_scores():
    with pytest.raises(InvalidInputError, match="too large"):
        WordPieceTrainer(100).train_vocab({"ab": 1 << 41})
    assert WordPieceTrainer(100).train_vocab({"ab": (1 << 40)})[-1] == "ab"


def test_to_dict_round_trip():
    trainer = WordPieceTrainer(500, criterion="frequency", min_frequency=2, limit_alphabet=100,
                               continuing_subword_prefix="@@", special_tokens=["<unk>"], unk_token="<unk>")
    again = from_dict(trainer.to_dict())
    assert isinstance(again, WordPieceTrainer) and again.to_dict() == trainer.to_dict()


# -- random corpora against the reference trainer --------------------------------------------------

@pytest.mark.parametrize("seed", range(12))
def test_reference_random_corpora_to_exhaustion(seed):
    # Skewed counts over a small alphabet: many symbols' counts fall and rise again, which
    # exercises the dirty-symbol refresh (a wrong bound would pick a different pair).
    rng = random.Random(seed)
    letters = "abcdef"[: rng.randint(2, 6)]
    words = {}
    for _ in range(rng.randint(20, 300)):
        word = "".join(rng.choice(letters) for _ in range(rng.randint(1, 12)))
        words[word] = words.get(word, 0) + int(rng.paretovariate(1.2))
    options = dict(min_frequency=rng.choice([0, 0, 2]), max_token_length=rng.choice([None, 4]))
    assert native(words, **dict(options)) == reference(words, **dict(options))


def test_train_builds_the_model_from_the_vocabulary(monkeypatch):
    # The model classes live in ciyuan.models (written separately); train() hands them the
    # vocabulary in id order and the options, as the model interface specifies.
    import ciyuan.models

    made = []

    class Fake:
        def __init__(self, vocab, **options):
            made.append((list(vocab), options))

    monkeypatch.setattr(ciyuan.models, "WordPiece", Fake, raising=False)
    trainer = WordPieceTrainer(20, special_tokens=["[UNK]"], continuing_subword_prefix="@@",
                               max_input_chars_per_word=50)
    assert isinstance(trainer.train(COURSE), Fake)
    vocab, options = made[0]
    assert vocab == trainer.train_vocab(COURSE) and vocab[0] == "[UNK]" and "@@s" in vocab
    assert options == dict(unk_token="[UNK]", continuing_subword_prefix="@@", max_input_chars_per_word=50)


def test_show_progress(capsys):
    trainer = WordPieceTrainer(40, show_progress=True)
    trainer.train_vocab(COURSE)
    err = capsys.readouterr().err
    assert "training WordPiece" in err and "merges" in err
    assert "merges" in repr(trainer.report)
