"""BERT's pre-tokenizer, identical to Hugging Face's ``BertPreTokenizer``.

Split on whitespace (which is dropped), and make every punctuation character a word of its own
(ASCII punctuation, which includes symbols such as ``$`` and ``^``, and the Unicode punctuation
categories). Character classes come from Hugging Face itself (see scripts/gen_bert_tables.py).
"""

from __future__ import annotations

from typing import List

from ciyuan import _core
from ciyuan._text import replace_surrogates_in_place
from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span

__all__ = ["BertPreTokenizer"]


@PRE_TOKENIZERS.register
class BertPreTokenizer(PreTokenizer):
    """Hugging Face's ``BertPreTokenizer``.

    Example:
        >>> BertPreTokenizer().pre_tokenize_str("Hello, world!")
        [('Hello', (0, 5)), (',', (5, 6)), ('world', (7, 12)), ('!', (12, 13))]
    """

    type_name = "BertPreTokenizer"
    # No native scanner (native_pattern stays None): the native path is the BERT front end, which
    # ciyuan.front_end picks when the normalizer is BertNormalizer or none (it normalizes and
    # splits in one pass).
    bert_words = True

    def split(self, text: str) -> List[Span]:
        """Character spans [start, end) of the words of ``text``."""
        try:
            return _core.bert_split(text)
        except UnicodeEncodeError:
            return _core.bert_split(replace_surrogates_in_place(text))
