"""Several normalizers applied in order."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence as SequenceT

from ciyuan.normalizers.base import NormalizedString, Normalizer

__all__ = ["Sequence"]


class Sequence(Normalizer):
    """Apply ``normalizers`` one after another.

    Example:
        >>> from ciyuan.normalizers import NFKC, Lowercase
        >>> Sequence([NFKC(), Lowercase()]).normalize_str("ＡＢＣ")
        'abc'
    """

    type_name = "Sequence"

    def __init__(self, normalizers: SequenceT[Normalizer]) -> None:
        self.normalizers: List[Normalizer] = list(normalizers)

    def normalize(self, text: NormalizedString) -> NormalizedString:
        for n in self.normalizers:
            text = n.normalize(text)
        return text

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "normalizers": [n.to_dict() for n in self.normalizers]}

    def __repr__(self) -> str:
        return f"Sequence({self.normalizers!r})"
