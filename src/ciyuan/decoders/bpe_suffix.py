"""Decode character-level BPE with an end-of-word suffix: the suffix marks a word's end, so it
becomes a space (and the final one is dropped)."""

from __future__ import annotations

from typing import List

from ciyuan.decoders.base import DECODERS, Decoder

__all__ = ["BPESuffix"]


@DECODERS.register
class BPESuffix(Decoder):
    """Join tokens, turning each ``suffix`` into a space.

    Example:
        >>> BPESuffix("</w>").decode([b"lo", b"w</w>", b"est</w>"])
        'low est'
    """

    type_name = "BPESuffix"
    options = ("suffix",)

    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def decode(self, tokens: List[bytes]) -> str:
        text = b"".join(tokens).decode("utf-8", "replace")
        return text.replace(self.suffix, " ").rstrip(" ") if self.suffix else text
