"""Hugging Face's ``Strip`` and ``StripAccents``: characters removed, the rest keeping their spans.

``Strip`` removes whitespace (Rust's ``char::is_whitespace``, which the ``regex`` module's
``\\s`` equals) at the start and/or the end. ``StripAccents`` removes every combining mark
(Hugging Face's own class, from ``hf_tables.py``); it does not decompose first: put ``NFD``
or ``NFKD`` before it, as Hugging Face's pipelines do. Cost: O(n).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping

import regex

from ciyuan.errors import ModelError
from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer
from ciyuan.normalizers.hf_tables import COMBINING_MARKS

__all__ = ["Strip", "StripAccents"]

_MARKS = regex.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in COMBINING_MARKS) + "]")
_LEADING = regex.compile(r"^\s+")
_TRAILING = regex.compile(r"\s+$")


def _keep(text: NormalizedString, keep: List[int]) -> NormalizedString:
    """Only the characters at the indices ``keep`` (in order), with their spans."""
    spans = text.all_spans()
    return NormalizedString(text.original, "".join(text.text[i] for i in keep), [spans[i] for i in keep])


@NORMALIZERS.register
class Strip(Normalizer):
    """Remove whitespace on the left and/or the right.

    Example:
        >>> Strip().normalize_str("  hi  "), Strip(right=False).normalize_str("  hi  ")
        ('hi', 'hi  ')
    """

    type_name = "Strip"

    def __init__(self, left: bool = True, right: bool = True) -> None:
        if not isinstance(left, bool) or not isinstance(right, bool):
            raise ModelError(f"Strip's left and right must be true or false, got {left!r}, {right!r}")
        self.left = left
        self.right = right

    def to_dict(self) -> Dict[str, Any]:
        """tokenizer.json's form: ``{"type": "Strip", "strip_left": ..., "strip_right": ...}``."""
        return {"type": self.type_name, "strip_left": self.left, "strip_right": self.right}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Strip":
        return cls(data.get("strip_left", data.get("left", True)), data.get("strip_right", data.get("right", True)))

    def __repr__(self) -> str:
        return f"Strip(left={self.left!r}, right={self.right!r})"

    def normalize(self, text: NormalizedString) -> NormalizedString:
        s = text.text
        start, end = 0, len(s)
        if self.left and (m := _LEADING.search(s)) is not None:
            start = m.end()
        if self.right and start < end and (m := _TRAILING.search(s, start)) is not None:
            end = m.start()
        if (start, end) == (0, len(s)):
            return text
        return text.slice(start, end)


@NORMALIZERS.register
class StripAccents(Normalizer):
    """Remove combining marks (after ``NFD``: accents).

    Example:
        >>> StripAccents().normalize_str("e\\u0301te\\u0301")
        'ete'
    """

    type_name = "StripAccents"

    def normalize(self, text: NormalizedString) -> NormalizedString:
        s = text.text
        if _MARKS.search(s) is None:
            return text
        return _keep(text, [i for i, c in enumerate(s) if _MARKS.match(c) is None])
