"""Join the tokens' bytes and read them as UTF-8 (byte-level BPE, and any model whose tokens
simply concatenate)."""

from __future__ import annotations

from typing import List

from ciyuan.decoders.base import DECODERS, Decoder

__all__ = ["ByteLevel"]


@DECODERS.register
class ByteLevel(Decoder):
    """Concatenate token bytes and decode UTF-8; invalid sequences (a character cut between
    tokens) become U+FFFD with ``errors="replace"``, as tiktoken does.

    Example:
        >>> ByteLevel().decode([b"Hel", b"lo", b" \\xe4\\xb8", b"\\x96"])
        'Hello 世'
    """

    type_name = "ByteLevel"
    joins_bytes = True  # lets the tokenizer join bytes natively
    options = ("errors",)

    def __init__(self, errors: str = "replace") -> None:
        self.errors = errors

    def decode(self, tokens: List[bytes]) -> str:
        return b"".join(tokens).decode("utf-8", self.errors)
