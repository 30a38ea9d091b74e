"""Several normalizers applied in order."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping
from typing import Sequence as SequenceT

from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer

__all__ = ["Sequence"]


@NORMALIZERS.register
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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Sequence":
        return cls([NORMALIZERS.from_dict(d) for d in data.get("normalizers", [])])

    def __repr__(self) -> str:
        return f"Sequence({self.normalizers!r})"
