"""Decoders: token bytes -> text (the last stage of decoding)."""

from __future__ import annotations

from typing import Any, Dict, Union

from ciyuan.decoders.bpe_suffix import BPESuffix
from ciyuan.decoders.byte_level import ByteLevel
from ciyuan.decoders.wordpiece import CharLevel, WordLevel, WordPiece
from ciyuan.errors import ModelError

__all__ = ["ByteLevel", "BPESuffix", "WordPiece", "WordLevel", "CharLevel", "Decoder", "from_dict"]

Decoder = Union[ByteLevel, BPESuffix, WordPiece, WordLevel, CharLevel]


def from_dict(data: Dict[str, Any]) -> Decoder:
    """Rebuild a decoder from its ``to_dict`` form."""
    kind = data.get("type")
    if kind == "ByteLevel":
        return ByteLevel(data.get("errors", "replace"))
    if kind == "BPESuffix":
        return BPESuffix(data.get("suffix", "</w>"))
    if kind == "WordPiece":
        return WordPiece(data.get("prefix", "##"), data.get("cleanup", True))
    if kind == "WordLevel":
        return WordLevel(data.get("separator", " "))
    if kind == "CharLevel":
        return CharLevel(data.get("separator", ""))
    raise ModelError(f"unknown decoder type {kind!r}; expected ByteLevel, BPESuffix, WordPiece, WordLevel or CharLevel")
