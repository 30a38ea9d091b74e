"""WordLevelTrainer (against Hugging Face's WordLevelTrainer) and CharLevelTrainer."""

from __future__ import annotations

import json
from typing import List

import pytest

from ciyuan import InvalidInputError, pre_tokenizers
from ciyuan.trainers import CharLevelTrainer, WordLevelTrainer, from_dict
from tests.conftest import shared


def hf_word_level_vocab(path, **options) -> List[str]:
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.train([str(path)], tokenizers.trainers.WordLevelTrainer(show_progress=False, **options))
    vocab = json.loads(tok.to_str())["model"]["vocab"]
    return sorted(vocab, key=vocab.get)


@pytest.mark.parametrize("options", [
    dict(vocab_size=5000, min_frequency=2, special_tokens=["[UNK]", "[PAD]"]),
    dict(vocab_size=100000, special_tokens=["[UNK]"]),   # every word: the count ties ordered by text
    dict(vocab_size=800, min_frequency=40, special_tokens=["[UNK]"]),  # min_frequency stops it first
])
def test_same_vocabulary_as_hf(options):
    path = shared("corpora", "en", "tinyshakespeare.txt")
    hf = hf_word_level_vocab(path, **options)
    ours = WordLevelTrainer(**options).train_vocab(path, pre_tokenizers.WordPunct())
    assert ours == hf


def test_order_count_then_text_and_min_frequency():
    words = {"the": 25, "roses": 22, "are": 25, "red": 12, "violets": 10, "blue": 16}
    trainer = WordLevelTrainer(5, special_tokens=[], unk_token=None)
    assert trainer.train_vocab(words) == ["are", "the", "roses", "blue", "red"]
    trainer = WordLevelTrainer(100, min_frequency=16, special_tokens=["[UNK]"])
    assert trainer.train_vocab(words) == ["[UNK]", "are", "the", "roses", "blue"]


def test_special_token_that_is_also_a_word_keeps_its_id():
    # Hugging Face lists such a word again after the specials (leaving a hole at the special's
    # id); ciyuan keeps one entry, at the special's id.
    trainer = WordLevelTrainer(10, special_tokens=["[UNK]", "the"])
    assert trainer.train_vocab({"the": 3, "a": 1}) == ["[UNK]", "the", "a"]


def test_char_level():
    trainer = CharLevelTrainer(4, special_tokens=["[UNK]"])
    assert trainer.train_vocab({"abba": 1, "cab": 2, "d": 1}) == ["[UNK]", "a", "b", "c"]
    assert CharLevelTrainer(100, min_frequency=2).train_vocab(["hello", "héllo"]) == ["[UNK]", "l", "h", "o"]
    text = shared("corpora", "en", "tinyshakespeare.txt")
    vocab = CharLevelTrainer(1000).train_vocab(text)
    chars = set(text.read_text(encoding="utf-8"))
    assert set(vocab[1:]) == chars and vocab[1] == " "
    # Counted natively character by character, or through the word counter: the same.
    trainer = CharLevelTrainer(1000)
    assert trainer.words_to_vocab(trainer.count_words(text)) == vocab
    lines = text.read_text(encoding="utf-8").split("\n")
    trainer = CharLevelTrainer(30, lowercase=True)
    assert trainer.train_vocab(iter(lines)) == trainer.words_to_vocab(trainer.count_words(lines))
    assert CharLevelTrainer(1000, lowercase=True).train_vocab(text) == CharLevelTrainer(1000).train_vocab(
        [text.read_text(encoding="utf-8").lower()])


def test_threads_do_not_matter():
    path = shared("corpora", "en", "taylorswift.txt")
    one = WordLevelTrainer(2000, threads=1).train_vocab(path, pre_tokenizers.WordPunct())
    two = WordLevelTrainer(2000, threads=2).train_vocab(path, pre_tokenizers.WordPunct())
    assert one == two


def test_bad_input():
    with pytest.raises(InvalidInputError, match="empty"):
        WordLevelTrainer().train_vocab([])
    with pytest.raises(InvalidInputError, match="empty"):
        CharLevelTrainer().train_vocab([""])
    with pytest.raises(InvalidInputError, match="vocab_size"):
        WordLevelTrainer(0)
    with pytest.raises(InvalidInputError, match="smaller than the 2 special tokens"):
        WordLevelTrainer(1, special_tokens=["[UNK]", "[PAD]"])
    with pytest.raises(InvalidInputError, match="unk_token"):
        CharLevelTrainer(special_tokens=["<pad>"])
    with pytest.raises(InvalidInputError, match="min_frequency"):
        WordLevelTrainer(min_frequency=-1)
    with pytest.raises(TypeError):
        WordLevelTrainer(criterion="x")  # type: ignore[call-arg]


def test_to_dict_round_trip():
    for trainer in (WordLevelTrainer(123, min_frequency=2, special_tokens=["<unk>"], unk_token="<unk>"),
                    CharLevelTrainer(77, lowercase=True)):
        again = from_dict(trainer.to_dict())
        assert type(again) is type(trainer) and again.to_dict() == trainer.to_dict()


def test_train_builds_the_models(monkeypatch):
    import ciyuan.models

    class Fake:
        def __init__(self, vocab, **options):
            self.vocab, self.options = list(vocab), options

    monkeypatch.setattr(ciyuan.models, "WordLevel", Fake, raising=False)
    monkeypatch.setattr(ciyuan.models, "CharLevel", Fake, raising=False)
    model = WordLevelTrainer(10).train({"b": 1, "a": 1})
    assert model.vocab == ["[UNK]", "a", "b"] and model.options == {"unk_token": "[UNK]"}
    model = CharLevelTrainer(10, special_tokens=[], unk_token=None).train({"ba": 2})
    assert model.vocab == ["a", "b"] and model.options == {"unk_token": None}
