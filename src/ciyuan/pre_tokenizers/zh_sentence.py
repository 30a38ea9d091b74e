"""Split Chinese text into sentence pieces: the runs of text between sentence punctuation.

Chinese has no spaces between words, so a small Chinese BPE learns its units inside clauses:
the text is cut at ``，`` ``,`` ``。`` and the other sentence punctuation (each mark becomes a
piece of its own, or is dropped), and whitespace is dropped. Cost: one regex scan, O(n).
"""

from __future__ import annotations

from typing import List

import regex

from ciyuan.errors import InvalidInputError
from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span

__all__ = ["ZhSentence", "SENTENCE_PUNCTUATION"]

#: Full-width and ASCII marks that end a clause or sentence. ASCII ``.`` and ``:`` are left out:
#: they sit inside numbers and times ("29.6%", "10:30").
SENTENCE_PUNCTUATION = "，,。！？；：、!?;…"


@PRE_TOKENIZERS.register
class ZhSentence(PreTokenizer):
    """Pre-tokenizer: clauses between sentence punctuation, whitespace dropped.

    Args:
        punctuation: the characters that split (default :data:`SENTENCE_PUNCTUATION`).
        keep_punctuation: each mark is a piece of its own (True) or is dropped (False).

    Example:
        >>> ZhSentence().pre_tokenize_str("你好，世界。")
        [('你好', (0, 2)), ('，', (2, 3)), ('世界', (3, 5)), ('。', (5, 6))]
    """

    type_name = "ZhSentence"
    options = ("punctuation", "keep_punctuation")

    def __init__(self, punctuation: str = SENTENCE_PUNCTUATION, keep_punctuation: bool = True) -> None:
        if not isinstance(punctuation, str) or not punctuation:
            raise InvalidInputError("punctuation must be a non-empty string of characters")
        if any(c.isspace() for c in punctuation):
            raise InvalidInputError("whitespace is always dropped; leave it out of punctuation")
        self.punctuation = punctuation
        self.keep_punctuation = bool(keep_punctuation)
        marks = regex.escape(punctuation)
        # A run of ordinary characters, or one mark.
        self._regex = regex.compile(f"[^\\s{marks}]+|[{marks}]" if keep_punctuation else f"[^\\s{marks}]+")

    def split(self, text: str) -> List[Span]:
        """Character spans [start, end) of the pieces of ``text``."""
        return [m.span() for m in self._regex.finditer(text)]

    def __repr__(self) -> str:
        return f"ZhSentence(keep_punctuation={self.keep_punctuation})"
