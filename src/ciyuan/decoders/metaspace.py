"""Hugging Face's Metaspace decoder: the ``▁`` that stood for spaces become spaces again, and
the first token loses its ``▁`` (the space the pre-tokenizer prepended) unless nothing was
prepended (``prepend_scheme="never"``)."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping

from ciyuan.decoders.base import DECODERS, TokenDecoder
from ciyuan.errors import ModelError

__all__ = ["Metaspace"]

_SCHEMES = ("always", "first", "never")


@DECODERS.register
class Metaspace(TokenDecoder):
    """``replacement`` back to spaces (Hugging Face's ``decoders.Metaspace``).

    Args:
        replacement: the one character that stands for a space (``"▁"``).
        prepend_scheme: ``"always"``, ``"first"`` or ``"never"``: with the first two, every
            ``replacement`` of the first token is dropped instead of becoming a space.
        split: kept for Hugging Face's form (the pre-tokenizer's option; decoding ignores it).

    Example:
        >>> Metaspace().decode_tokens(["▁Hello", "▁wor", "ld"])
        'Hello world'
        >>> Metaspace(prepend_scheme="never").decode_tokens(["▁Hello"])
        ' Hello'
    """

    type_name = "Metaspace"
    options = ("replacement", "prepend_scheme", "split")

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise ModelError(f"the Metaspace replacement must be one character, got {replacement!r}")
        if prepend_scheme not in _SCHEMES:
            raise ModelError(f"prepend_scheme must be one of {', '.join(_SCHEMES)}, got {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = bool(split)

    def decode_chain(self, tokens: List[str]) -> List[str]:
        out = [t.replace(self.replacement, " ") for t in tokens]
        if out and self.prepend_scheme != "never":
            out[0] = tokens[0].replace(self.replacement, "")
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Metaspace":
        """Hugging Face's form; the older ``add_prefix_space`` (true: ``"always"``, false:
        ``"never"``) and ``str_rep`` keys too."""
        scheme = data.get("prepend_scheme")
        if scheme is None:
            scheme = "always" if data.get("add_prefix_space", True) else "never"
        replacement = data.get("replacement", data.get("str_rep", "\u2581"))
        return cls(replacement=replacement, prepend_scheme=scheme, split=data.get("split", True))

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "replacement": self.replacement, "prepend_scheme": self.prepend_scheme,
                "split": self.split}
