"""Pre-tokenizers: split (normalized) text into pieces that the model encodes one by one.

The contract is :class:`~ciyuan.pre_tokenizers.base.PreTokenizer`; :func:`from_dict` rebuilds
any registered pre-tokenizer from its ``to_dict()`` form.
"""

from __future__ import annotations

from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer
from ciyuan.pre_tokenizers.bert import BertPreTokenizer
from ciyuan.pre_tokenizers.chinese_words import ChineseWords
from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS
from ciyuan.pre_tokenizers.split import Split, WhitespaceSplit, WordPunct
from ciyuan.pre_tokenizers.zh_sentence import ZhSentence

__all__ = ["PreTokenizer", "Split", "WordPunct", "WhitespaceSplit", "ZhSentence", "ChineseWords", "BertPreTokenizer",
           "NAMED_PATTERNS", "PRE_TOKENIZERS", "from_dict"]

#: Rebuild a pre-tokenizer from its ``to_dict()`` form.
from_dict = PRE_TOKENIZERS.from_dict
