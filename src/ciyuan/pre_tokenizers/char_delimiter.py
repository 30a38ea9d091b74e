"""Hugging Face's ``CharDelimiterSplit``: split on one character, which is dropped."""

from __future__ import annotations

from typing import List

from ciyuan.errors import ModelError
from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span
from ciyuan.pre_tokenizers.behavior import apply_behavior

__all__ = ["CharDelimiterSplit"]


@PRE_TOKENIZERS.register
class CharDelimiterSplit(PreTokenizer):
    """Split on ``delimiter`` (removed), as Hugging Face's ``CharDelimiterSplit``.

    Example:
        >>> CharDelimiterSplit("|").pre_tokenize_str("a|b||c")
        [('a', (0, 1)), ('b', (2, 3)), ('c', (5, 6))]
    """

    type_name = "CharDelimiterSplit"
    options = ("delimiter",)

    def __init__(self, delimiter: str) -> None:
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ModelError(f"CharDelimiterSplit's delimiter must be one character, got {delimiter!r}")
        self.delimiter = delimiter

    def split(self, text: str) -> List[Span]:
        """Character spans [start, end) of the pieces of ``text``."""
        d = self.delimiter
        return apply_behavior(len(text), [(i, i + 1) for i, c in enumerate(text) if c == d], "Removed")
