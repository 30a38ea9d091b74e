"""Unicode normalization forms (NFC, NFD, NFKC, NFKD) and lowercasing, with offsets.

To keep offsets exact, text is normalized in units of one character plus the combining marks
that follow it; each unit's output points at the unit. In the rare text where composition
crosses such units, the whole text is normalized at once and every character points at the
whole input (the text is still exact; offsets become coarse).
"""

from __future__ import annotations

import unicodedata
from typing import Iterator, Literal, Tuple, Type

from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer

__all__ = ["NFC", "NFD", "NFKC", "NFKD", "Lowercase"]


def _combining_units(text: str) -> Iterator[Tuple[int, int]]:
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or unicodedata.combining(text[i]) == 0:
            yield (start, i)
            start = i


_Form = Literal["NFC", "NFD", "NFKC", "NFKD"]


class _UnicodeForm(Normalizer):
    """One Unicode normalization form; the subclass's ``type_name`` names the form."""

    type_name: _Form

    def normalize(self, text: NormalizedString) -> NormalizedString:
        form = self.type_name
        s = text.text
        if unicodedata.is_normalized(form, s):
            return text
        result = text.map_units(_combining_units(s), lambda u: unicodedata.normalize(form, u))
        if result.text == unicodedata.normalize(form, s):
            return result
        return text.map_units([(0, len(s))], lambda u: unicodedata.normalize(form, u))


def _form(name: _Form, doc: str) -> Type[_UnicodeForm]:
    """The normalizer class of one form (they differ only by name)."""
    return NORMALIZERS.register(
        type(name, (_UnicodeForm,), {"type_name": name, "__doc__": doc, "__module__": __name__}))


NFC = _form("NFC", """Canonical composition: ``NFC().normalize_str("e\\u0301") == "é"``.""")
NFD = _form("NFD", """Canonical decomposition.""")
NFKC = _form("NFKC", """Compatibility composition (``ﬁ`` -> ``fi``, full-width -> ASCII).

    Example:
        >>> NFKC().normalize_str("ｃｉｙｕａｎ")
        'ciyuan'
    """)
NFKD = _form("NFKD", """Compatibility decomposition.""")


@NORMALIZERS.register
class Lowercase(Normalizer):
    """Lowercase every character (``str.lower``), keeping each output character's source.

    Example:
        >>> Lowercase().normalize_str("Ciyuan İ")
        'ciyuan i̇'
    """

    type_name = "Lowercase"

    def normalize(self, text: NormalizedString) -> NormalizedString:
        s = text.text
        if s.islower() or not any(c.isupper() or c.istitle() for c in s):
            lowered = s.lower()
            if lowered == s:
                return text
        return text.map_units(((i, i + 1) for i in range(len(s))), str.lower)
