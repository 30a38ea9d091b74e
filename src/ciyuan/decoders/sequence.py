"""Hugging Face's decoder Sequence: decoders applied one after the other to the list of token
strings (Llama 2: Replace ``▁`` -> space, ByteFallback, Fuse, Strip one leading space)."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping
from typing import Sequence as Seq

from ciyuan.decoders.base import DECODERS, Decoder, TokenDecoder
from ciyuan.errors import ModelError

__all__ = ["Sequence"]


@DECODERS.register
class Sequence(TokenDecoder):
    """A chain of decoders over token strings.

    Example:
        >>> from ciyuan.decoders import ByteFallback, Fuse, Replace, Strip
        >>> d = Sequence([Replace("▁", " "), ByteFallback(), Fuse(), Strip(" ", 1, 0)])
        >>> d.decode_tokens(["▁Hello", "<0x21>", "▁", "<0xE4>", "<0xB8>", "<0xAD>"])
        'Hello! 中'
    """

    type_name = "Sequence"

    def __init__(self, decoders: Seq[Decoder]) -> None:
        if isinstance(decoders, (str, bytes)) or not all(isinstance(d, Decoder) for d in decoders):
            raise ModelError("a decoder Sequence takes a list of decoders")
        self.decoders: List[Decoder] = list(decoders)

    def decode_chain(self, tokens: List[str]) -> List[str]:
        for d in self.decoders:
            tokens = d.decode_chain(tokens)
        return tokens

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "decoders": [d.to_dict() for d in self.decoders]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Sequence":
        parts = data.get("decoders")
        if not isinstance(parts, list):
            raise ModelError("a decoder Sequence needs 'decoders', a list")
        return cls([DECODERS.from_dict(d) for d in parts])

    def __repr__(self) -> str:
        return f"Sequence({self.decoders!r})"
