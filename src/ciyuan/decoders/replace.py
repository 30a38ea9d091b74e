"""Hugging Face's Replace decoder: every match of a pattern in each token replaced by
``content`` (Llama 2's ``▁`` -> space).

The pattern is ``{"String": "..."}`` (the text itself) or ``{"Regex": "..."}`` (a regular
expression, run with the ``regex`` module: Oniguruma's syntax for the patterns tokenizers use).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Union

from ciyuan.decoders.base import DECODERS, TokenDecoder
from ciyuan.errors import ModelError

__all__ = ["Replace"]


@DECODERS.register
class Replace(TokenDecoder):
    """Replace ``pattern`` by ``content`` in each token.

    Args:
        pattern: a string (replaced as it is), or Hugging Face's ``{"String": s}`` /
            ``{"Regex": r}``.
        content: the replacement (taken literally).

    Example:
        >>> Replace("▁", " ").decode_chain(["▁Hello", "▁wor", "ld"])
        [' Hello', ' wor', 'ld']
        >>> Replace({"Regex": "a+"}, "-").decode_chain(["caaab"])
        ['c-b']
    """

    type_name = "Replace"

    def __init__(self, pattern: Union[str, Mapping[str, str]], content: str) -> None:
        if isinstance(pattern, str):
            pattern = {"String": pattern}
        if not isinstance(pattern, Mapping) or len(pattern) != 1 or not isinstance(content, str):
            raise ModelError('Replace needs a pattern ("text", {"String": ...} or {"Regex": ...}) and a str content')
        (kind, source), = pattern.items()
        if kind not in ("String", "Regex") or not isinstance(source, str):
            raise ModelError(f'Replace\'s pattern must be {{"String": str}} or {{"Regex": str}}, got {dict(pattern)!r}')
        self.pattern: Dict[str, str] = {kind: source}
        self.content = content
        try:
            import regex

            self._regex: Any = regex.compile(source if kind == "Regex" else regex.escape(source))
        except ImportError:  # pragma: no cover - regex is a dependency
            self._regex = re.compile(source if kind == "Regex" else re.escape(source))
        except Exception as e:
            raise ModelError(f"Replace's pattern {source!r} is not a valid regular expression: {e}") from None

    def decode_chain(self, tokens: List[str]) -> List[str]:
        content = self.content
        return [self._regex.sub(lambda _: content, t) for t in tokens]

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "pattern": dict(self.pattern), "content": self.content}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Replace":
        if "pattern" not in data or "content" not in data:
            raise ModelError("a Replace decoder needs 'pattern' and 'content'")
        return cls(data["pattern"], data["content"])
