"""Decoders: token bytes -> text (the last stage of decoding)."""

from __future__ import annotations

from typing import Any, Dict, Union

from ciyuan.decoders.bpe_suffix import BPESuffix
from ciyuan.decoders.byte_level import ByteLevel
from ciyuan.errors import ModelError

__all__ = ["ByteLevel", "BPESuffix", "Decoder", "from_dict"]

Decoder = Union[ByteLevel, BPESuffix]


def from_dict(data: Dict[str, Any]) -> Decoder:
    """Rebuild a decoder from its ``to_dict`` form."""
    kind = data.get("type")
    if kind == "ByteLevel":
        return ByteLevel(data.get("errors", "replace"))
    if kind == "BPESuffix":
        return BPESuffix(data.get("suffix", "</w>"))
    raise ModelError(f"unknown decoder type {kind!r}; expected ByteLevel or BPESuffix")
