"""Pre-tokenizers: split (normalized) text into pieces that the model encodes one by one."""

from __future__ import annotations

from typing import Any, Dict

from ciyuan.errors import ModelError
from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS
from ciyuan.pre_tokenizers.split import Split, WhitespaceSplit, WordPunct
from ciyuan.pre_tokenizers.chinese_words import ChineseWords
from ciyuan.pre_tokenizers.bert import BertPreTokenizer
from ciyuan.pre_tokenizers.zh_sentence import ZhSentence

__all__ = ["Split", "WordPunct", "WhitespaceSplit", "ZhSentence", "ChineseWords", "BertPreTokenizer", "NAMED_PATTERNS", "from_dict"]


def from_dict(data: Dict[str, Any]) -> Any:
    """Rebuild a pre-tokenizer from its ``to_dict`` form."""
    kind = data.get("type")
    if kind == "Split":
        return Split(data["pattern"])
    if kind == "WordPunct":
        return WordPunct()
    if kind == "WhitespaceSplit":
        return WhitespaceSplit()
    if kind == "ZhSentence":
        return ZhSentence(data.get("punctuation", ZhSentence().punctuation), data.get("keep_punctuation", True))
    if kind == "BertPreTokenizer":
        return BertPreTokenizer()
    if kind == "ChineseWords":
        return ChineseWords.from_dict(data)
    raise ModelError(
        f"unknown pre-tokenizer type {kind!r}; expected Split, WordPunct, WhitespaceSplit, ZhSentence, ChineseWords or BertPreTokenizer"
    )
