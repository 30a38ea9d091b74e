"""Hugging Face's ``Digits`` pre-tokenizer: numbers apart from the rest of the text.

A digit is any numeric character (Unicode categories Nd, Nl and No: ``7``, ``٣``, ``½``, ``Ⅻ``),
as Rust's ``char::is_numeric``. Runs of digits are one piece (``individual_digits=False``)
or each digit is its own piece. Cost: O(n).
"""

from __future__ import annotations

from typing import List

import regex

from ciyuan.errors import ModelError
from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span
from ciyuan.pre_tokenizers.behavior import apply_behavior

__all__ = ["Digits"]

_DIGIT = regex.compile(r"\p{N}")


@PRE_TOKENIZERS.register
class Digits(PreTokenizer):
    """Split numbers from the rest (Hugging Face's ``Digits``).

    Args:
        individual_digits: each digit is a piece of its own (else a run of digits is one).

    Example:
        >>> Digits().pre_tokenize_str("ab123c")
        [('ab', (0, 2)), ('123', (2, 5)), ('c', (5, 6))]
        >>> [p for p, _ in Digits(individual_digits=True).pre_tokenize_str("a12")]
        ['a', '1', '2']
    """

    type_name = "Digits"
    options = ("individual_digits",)

    def __init__(self, individual_digits: bool = False) -> None:
        if not isinstance(individual_digits, bool):
            raise ModelError(f"Digits' individual_digits must be true or false, got {individual_digits!r}")
        self.individual_digits = individual_digits

    def split(self, text: str) -> List[Span]:
        """Character spans [start, end) of the pieces of ``text``."""
        found = [m.span() for m in _DIGIT.finditer(text)]
        return apply_behavior(len(text), found, "Isolated" if self.individual_digits else "Contiguous")
