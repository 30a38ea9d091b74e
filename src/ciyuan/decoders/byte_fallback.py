"""Hugging Face's ByteFallback and Fuse decoders.

``ByteFallback`` turns runs of byte tokens ``<0xXX>`` (what byte fallback gives for a character
the vocabulary lacks) back into text: a run that is valid UTF-8 becomes its text, any other run
one U+FFFD per byte. ``Fuse`` joins all tokens into one string (so that a later step, such as
``Strip``, sees the whole text).
"""

from __future__ import annotations

from typing import List, Optional

from ciyuan.decoders.base import DECODERS, TokenDecoder

__all__ = ["ByteFallback", "Fuse", "byte_of_token"]

_HEX = frozenset("0123456789abcdefABCDEF")


def byte_of_token(token: str) -> Optional[int]:
    """The byte a token ``<0xXX>`` stands for, or None. As Hugging Face reads it: six
    characters, and the two after ``<0x`` a hexadecimal number of either case (a ``+`` sign
    before one digit too, as Rust's parser allows).

    Example:
        >>> byte_of_token("<0x0A>"), byte_of_token("<0xe4>"), byte_of_token("<0x1>")
        (10, 228, None)
    """
    if len(token) != 6 or not token.startswith("<0x") or not token.endswith(">"):
        return None
    digits = token[3:5]
    if digits[0] == "+":
        digits = digits[1:]
    if not digits or not set(digits) <= _HEX:
        return None
    return int(digits, 16)


@DECODERS.register
class ByteFallback(TokenDecoder):
    """Byte tokens back to text.

    Example:
        >>> ByteFallback().decode_chain(["a", "<0xE4>", "<0xB8>", "<0xAD>", "<0xFF>", "b"])
        ['a', '中', '�', 'b']
    """

    type_name = "ByteFallback"

    def decode_chain(self, tokens: List[str]) -> List[str]:
        out: List[str] = []
        run = bytearray()

        def flush() -> None:
            if run:
                try:
                    out.append(run.decode("utf-8"))
                except UnicodeDecodeError:
                    out.extend("\ufffd" * len(run))
                run.clear()

        for token in tokens:
            b = byte_of_token(token)
            if b is None:
                flush()
                out.append(token)
            else:
                run.append(b)
        flush()
        return out


@DECODERS.register
class Fuse(TokenDecoder):
    """All tokens as one string.

    Example:
        >>> Fuse().decode_chain(["a", "b", "c"])
        ['abc']
    """

    type_name = "Fuse"

    def decode_chain(self, tokens: List[str]) -> List[str]:
        return ["".join(tokens)]
