"""Pre-tokenizers: split (normalized) text into pieces that the model encodes one by one.

The contract is :class:`~ciyuan.pre_tokenizers.base.PreTokenizer`; :func:`from_dict` rebuilds
any registered pre-tokenizer from its ``to_dict()`` form, which for every component Hugging Face
also has is the form tokenizer.json holds (same ``"type"``, same fields).
"""

from __future__ import annotations

from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer
from ciyuan.pre_tokenizers.bert import BertPreTokenizer
from ciyuan.pre_tokenizers.byte_level import ByteLevel
from ciyuan.pre_tokenizers.char_delimiter import CharDelimiterSplit
from ciyuan.pre_tokenizers.chinese_words import ChineseWords
from ciyuan.pre_tokenizers.digits import Digits
from ciyuan.pre_tokenizers.metaspace import Metaspace
from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS
from ciyuan.pre_tokenizers.punctuation import Punctuation
from ciyuan.pre_tokenizers.sequence import Sequence
from ciyuan.pre_tokenizers.split import Split, Whitespace, WhitespaceSplit, WordPunct
from ciyuan.pre_tokenizers.unicode_scripts import UnicodeScripts
from ciyuan.pre_tokenizers.zh_sentence import ZhSentence

__all__ = ["PreTokenizer", "Split", "WordPunct", "Whitespace", "WhitespaceSplit", "ZhSentence", "ChineseWords",
           "BertPreTokenizer", "ByteLevel", "Metaspace", "Punctuation", "Digits", "CharDelimiterSplit", "Sequence",
           "UnicodeScripts",
           "NAMED_PATTERNS", "PRE_TOKENIZERS", "from_dict"]

#: Rebuild a pre-tokenizer from its ``to_dict()`` form.
from_dict = PRE_TOKENIZERS.from_dict
