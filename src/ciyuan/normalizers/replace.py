"""Hugging Face's ``Replace`` and ``Prepend`` normalizers.

``Replace`` replaces every match of a pattern (``{"String": ...}``, a literal, or
``{"Regex": ...}``, an Oniguruma pattern read as Hugging Face reads it, see ``ciyuan._onig``) by
``content``, left to right, without overlaps. As in Hugging Face, the replacement's characters
all point at the last character of the match they replace (an empty match: at the character
before it). ``Prepend`` puts a string in front of a non-empty text, pointing at its first
character. Cost: O(n).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Tuple, Union

import regex

from ciyuan._onig import compile_onig, to_onig
from ciyuan.errors import InvalidInputError, ModelError
from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer

__all__ = ["Replace", "Prepend"]

Span = Tuple[int, int]


@NORMALIZERS.register
class Replace(Normalizer):
    """Replace each match of ``pattern`` by ``content``.

    Args:
        pattern: a literal string, or Hugging Face's ``{"String": ...}`` / ``{"Regex": ...}``.
        content: the replacement (may be empty).

    Example:
        >>> Replace(" ", "\u2581").normalize_str("a b")
        'a▁b'
        >>> Replace({"Regex": " {2,}"}, " ").normalize_str("a   b")
        'a b'
    """

    type_name = "Replace"

    def __init__(self, pattern: Union[str, Mapping[str, str]], content: str) -> None:
        if isinstance(pattern, str):
            pattern = {"String": pattern}
        if not (isinstance(pattern, Mapping) and len(pattern) == 1 and next(iter(pattern)) in ("String", "Regex")
                and isinstance(next(iter(pattern.values())), str)):
            raise ModelError('a Replace pattern is a string, {"String": "..."} or {"Regex": "..."}, '
                             f"not {pattern!r}")
        if not isinstance(content, str):
            raise ModelError(f"Replace's content must be a string, got {content!r}")
        (self.kind, self.source), = pattern.items()
        self.content = content
        self._regex: Any = None
        if self.kind == "Regex":
            try:
                self._regex = compile_onig(self.source)
            except regex.error as e:
                raise InvalidInputError(f"invalid Replace pattern {self.source!r}: {e}") from None
        elif not self.source:
            raise ModelError('a Replace pattern {"String": ""} matches nothing; give a non-empty string')

    def _matches(self, text: str) -> List[Span]:
        if self._regex is not None:
            return [m.span() for m in self._regex.finditer(text)]
        spans: List[Span] = []
        at = text.find(self.source)
        while at >= 0:
            spans.append((at, at + len(self.source)))
            at = text.find(self.source, at + len(self.source))
        return spans

    def normalize(self, text: NormalizedString) -> NormalizedString:
        s = text.text
        found = self._matches(s)
        if not found:
            return text
        dest: List[Tuple[str, int]] = []
        at = 0
        for start, end in found:
            dest.extend((c, 0) for c in s[at:start])
            if end > start:
                dest.append(("", -(end - start)))  # the match removed, then the content inserted
            dest.extend((c, 1) for c in self.content)
            at = end
        dest.extend((c, 0) for c in s[at:])
        return text.transform(dest)

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "pattern": {self.kind: self.source}, "content": self.content}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Replace":
        if "pattern" not in data or "content" not in data:
            raise ModelError("a Replace normalizer needs 'pattern' and 'content'")
        return cls(data["pattern"], data["content"])

    @classmethod
    def from_regex(cls, pattern: str, content: str) -> "Replace":
        """A Replace by a ``regex`` module pattern (stored in Oniguruma's spelling)."""
        return cls({"Regex": to_onig(pattern)}, content)

    def __repr__(self) -> str:
        return f"Replace({{{self.kind!r}: {self.source!r}}}, {self.content!r})"


@NORMALIZERS.register
class Prepend(Normalizer):
    """Put ``prepend`` in front of a non-empty text.

    Example:
        >>> Prepend("\u2581").normalize_str("hi"), Prepend("\u2581").normalize_str("")
        ('▁hi', '')
    """

    type_name = "Prepend"
    options = ("prepend",)

    def __init__(self, prepend: str) -> None:
        if not isinstance(prepend, str):
            raise ModelError(f"Prepend's prepend must be a string, got {prepend!r}")
        self.prepend = prepend

    def normalize(self, text: NormalizedString) -> NormalizedString:
        return text.prepend(self.prepend)
