"""Hugging Face's ``Nmt`` normalizer (SentencePiece's NMT clean-up, without NFKC).

Control characters are removed (U+0001-U+0008, U+000B, U+000E-U+001F, U+007F, U+008F,
U+009F) and a few separators become a space (tab, line feed, form feed, carriage return,
U+1680, U+200B-U+200F, U+2028, U+2029, U+2581, U+FEFF, U+FFFD). Every kept character keeps
its span. Cost: O(n).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer

__all__ = ["Nmt"]

_REMOVED = [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F]
_SPACED = [0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD]
_TABLE: Dict[int, Optional[str]] = {**dict.fromkeys(_REMOVED), **dict.fromkeys(_SPACED, " ")}


@NORMALIZERS.register
class Nmt(Normalizer):
    """Remove control characters and turn separators into spaces, as Hugging Face's ``Nmt``.

    Example:
        >>> Nmt().normalize_str("a\\x01b\\tc")
        'ab c'
    """

    type_name = "Nmt"

    def normalize(self, text: NormalizedString) -> NormalizedString:
        s = text.text
        out = s.translate(_TABLE)
        if out == s:
            return text
        spans = text.all_spans()
        kept: List[Tuple[int, int]] = [spans[i] for i, c in enumerate(s) if _TABLE.get(ord(c), c) is not None]
        return NormalizedString(text.original, out, kept)
