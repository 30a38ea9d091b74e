"""WordPiece, word-level and character-level tokenizers end to end: training through
``Tokenizer.train``, saving and loading, pairs, truncation and padding, decoding."""

from __future__ import annotations

import pytest

import ciyuan
from ciyuan.trainers import CharLevelTrainer, WordLevelTrainer, WordPieceTrainer

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "A quick brown dog outpaces a quick fox!",
    "Foxes and dogs: the quickest jumpers, the laziest sleepers.",
    "词元是文本的最小单位。",
] * 20


@pytest.mark.parametrize("criterion", ["likelihood", "frequency"])
def test_trained_wordpiece_is_a_bert_tokenizer(tmp_path, criterion):
    tok = ciyuan.Tokenizer.train(TEXTS, WordPieceTrainer(200, criterion=criterion, lowercase=True))
    enc = tok.encode("The quick fox", "lazy dogs")
    assert enc.tokens[0] == "[CLS]" and enc.tokens.count("[SEP]") == 2
    assert enc.type_ids == [0] * (enc.tokens.index("[SEP]") + 1) + [1] * (len(enc) - enc.tokens.index("[SEP]") - 1)
    assert tok.decode(enc.ids, skip_special_tokens=True) == "the quick fox lazy dogs"
    # Every character of the training text is known: nothing becomes [UNK].
    assert "[UNK]" not in tok.encode(TEXTS[2]).tokens
    path = tmp_path / "wp.json"
    tok.enable_truncation(8, stride=2)
    tok.enable_padding(pad_to_multiple_of=4)
    tok.save(path)
    again = ciyuan.Tokenizer.from_file(path)
    for text in TEXTS[:4]:
        a, b = tok.encode(text), again.encode(text)
        assert (a.ids, a.offsets, a.attention_mask) == (b.ids, b.offsets, b.attention_mask)
        assert [o.ids for o in a.overflowing] == [o.ids for o in b.overflowing]
    assert again.to_dict() == tok.to_dict()


def test_word_and_char_level_tokenizers(tmp_path):
    words = ciyuan.Tokenizer.train(TEXTS, WordLevelTrainer(30, min_frequency=2))
    enc = words.encode("the quick zebra")
    assert enc.tokens == ["the", "quick", "[UNK]"]
    assert enc.offsets == [(0, 3), (4, 9), (10, 15)]
    assert words.decode(words.encode("the quick fox").ids) == "the quick fox"
    chars = ciyuan.Tokenizer.train(TEXTS, CharLevelTrainer(100))
    enc = chars.encode("词元 fox?")
    assert enc.tokens == ["词", "元", " ", "f", "o", "x", "[UNK]"]
    assert chars.decode(chars.encode("the fox").ids) == "the fox"
    for tok in (words, chars):
        tok.save(tmp_path / "t.json")
        assert ciyuan.Tokenizer.from_file(tmp_path / "t.json").encode("the fox").ids == tok.encode("the fox").ids
