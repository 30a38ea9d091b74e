"""Normalizers: the first stage of a tokenizer pipeline (text -> normalized text + alignment)."""

from __future__ import annotations

from typing import Any, Dict

from ciyuan.errors import ModelError
from ciyuan.normalizers.base import NormalizedString, Normalizer
from ciyuan.normalizers.bert import BertNormalizer
from ciyuan.normalizers.sequence import Sequence
from ciyuan.normalizers.unicode import NFC, NFD, NFKC, NFKD, Lowercase

__all__ = ["NormalizedString", "Normalizer", "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Sequence", "BertNormalizer", "from_dict"]

_SIMPLE = {cls.type_name: cls for cls in (NFC, NFD, NFKC, NFKD, Lowercase)}


def from_dict(data: Dict[str, Any]) -> Normalizer:
    """Rebuild a normalizer from its :meth:`~Normalizer.to_dict` form."""
    kind = data.get("type")
    if kind in _SIMPLE:
        return _SIMPLE[kind]()
    if kind == "BertNormalizer":
        return BertNormalizer.from_dict(data)
    if kind == "Sequence":
        return Sequence([from_dict(d) for d in data.get("normalizers", [])])
    raise ModelError(f"unknown normalizer type {kind!r}; expected one of {sorted([*_SIMPLE, 'Sequence', 'BertNormalizer'])}")
