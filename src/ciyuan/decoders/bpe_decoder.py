"""Hugging Face's BPEDecoder: the end-of-word suffix (``</w>``) becomes a space, except in the
last token, where it goes."""

from __future__ import annotations

from typing import List

from ciyuan.decoders.base import DECODERS, TokenDecoder

__all__ = ["BPEDecoder"]


@DECODERS.register
class BPEDecoder(TokenDecoder):
    """``suffix`` -> space (nothing in the last token).

    Example:
        >>> BPEDecoder().decode_tokens(["lo", "w</w>", "est</w>"])
        'low est'
    """

    type_name = "BPEDecoder"
    options = ("suffix",)

    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def decode_chain(self, tokens: List[str]) -> List[str]:
        if not self.suffix:
            return list(tokens)
        last = len(tokens) - 1
        return [t.replace(self.suffix, "" if i == last else " ") for i, t in enumerate(tokens)]
