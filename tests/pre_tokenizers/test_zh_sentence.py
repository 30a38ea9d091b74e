"""The ZhSentence pre-tokenizer, alone and inside a trained Tokenizer."""

from __future__ import annotations

from ciyuan import Tokenizer, pre_tokenizers
from ciyuan.trainers import BpeTrainer


def test_zh_sentence_pre_tokenizer():
    zh = pre_tokenizers.ZhSentence()
    assert zh.pre_tokenize_str("你好 世界，我们, 走。") == [
        ("你好", (0, 2)), ("世界", (3, 5)), ("，", (5, 6)), ("我们", (6, 8)), (",", (8, 9)), ("走", (10, 11)),
        ("。", (11, 12))]
    assert pre_tokenizers.from_dict(zh.to_dict()) == zh
    pieces = pre_tokenizers.ZhSentence(keep_punctuation=False).pre_tokenize_str("甲，乙。")
    assert [p for p, _ in pieces] == ["甲", "乙"]
    tok = Tokenizer.train(["我们的生活，我们的工作。"] * 5, BpeTrainer(40), pre_tokenizer=zh)
    assert tok.encode("我们的工作").tokens[0].startswith("我们")
    assert Tokenizer.from_dict(tok.to_dict()).encode("我们的").ids == tok.encode("我们的").ids
