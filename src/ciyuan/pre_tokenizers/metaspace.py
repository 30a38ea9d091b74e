"""Hugging Face's ``Metaspace`` pre-tokenizer: spaces become ``▁`` (SentencePiece's view of text).

Every space is replaced by ``replacement``; then, by ``prepend_scheme``, one ``replacement``
is put in front of the text when it does not already start with one: ``"always"`` (every
text, and every segment between special tokens), ``"first"`` (only a text that starts the
input) or ``"never"``. With ``split``, each piece starts at a ``replacement`` (it joins the
word after it). Each replaced character keeps its original span; the prepended one points at
the first character. Cost: O(n).
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Mapping, Tuple

from ciyuan.errors import ModelError
from ciyuan.normalizers.base import NormalizedString
from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span
from ciyuan.pre_tokenizers.behavior import apply_behavior

__all__ = ["Metaspace"]

PrependScheme = Literal["always", "first", "never"]
_SCHEMES = ("always", "first", "never")


@PRE_TOKENIZERS.register
class Metaspace(PreTokenizer):
    """Hugging Face's ``Metaspace``.

    Args:
        replacement: the one character that stands for a space.
        prepend_scheme: ``"always"``, ``"first"`` or ``"never"`` (see the module docstring).
        split: cut the text before each ``replacement``.

    Example:
        >>> Metaspace().pre_tokenize_str("Hello  world")
        [('▁Hello', (0, 5)), ('▁', (5, 6)), ('▁world', (6, 12))]
    """

    type_name = "Metaspace"
    options = ("replacement", "prepend_scheme", "split")

    def __init__(self, replacement: str = "\u2581", prepend_scheme: PrependScheme = "always",
                 split: bool = True) -> None:
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise ModelError(f"Metaspace's replacement must be one character, got {replacement!r}")
        if prepend_scheme not in _SCHEMES:
            raise ModelError(f"Metaspace's prepend_scheme must be one of {', '.join(_SCHEMES)}, got {prepend_scheme!r}")
        if not isinstance(split, bool):
            raise ModelError(f"Metaspace's split must be true or false, got {split!r}")
        self.replacement = replacement
        self.prepend_scheme: PrependScheme = prepend_scheme
        self.split_pieces = split

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "replacement": self.replacement, "prepend_scheme": self.prepend_scheme,
                "split": self.split_pieces}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Metaspace":
        """tokenizer.json's form; files older than tokenizers 0.19 say ``add_prefix_space`` instead of
        ``prepend_scheme`` (and may name the replacement's string ``str_rep``)."""
        scheme = data.get("prepend_scheme")
        if scheme is None:
            scheme = "always" if data.get("add_prefix_space", True) else "never"
        return cls(data.get("replacement", "\u2581"), scheme, data.get("split", True))  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return (f"Metaspace(replacement={self.replacement!r}, prepend_scheme={self.prepend_scheme!r}, "
                f"split={self.split_pieces!r})")

    def split(self, text: str) -> List[Span]:
        """Pieces of an already replaced text: each starts at a ``replacement``."""
        if not self.split_pieces:
            return [(0, len(text))] if text else []
        r = self.replacement
        return apply_behavior(len(text), [(i, i + 1) for i, c in enumerate(text) if c == r], "MergedWithNext")

    def pre_tokenize(self, text: NormalizedString, offset: int = 0) -> Tuple[NormalizedString, List[Span]]:
        if " " in text.text:
            text = NormalizedString(text.original, text.text.replace(" ", self.replacement), text.all_spans())
        # "first": only where the input starts (not after a special token, nor a later piece).
        prepend = self.prepend_scheme == "always" or (
            self.prepend_scheme == "first" and bool(text.text) and offset + text.original_span(0, 1)[0] == 0)
        if prepend and not text.text.startswith(self.replacement):
            text = text.prepend(self.replacement)
        return text, self.split(text.text)
