"""Decode SentencePiece tokens as sentencepiece does.

Each piece's ``▁`` becomes a space; the space the normalizer put in front (``add_dummy_prefix``)
is taken off the first piece that has text (with ``remove_extra_whitespaces`` from every piece
until some text is out); runs of byte pieces (``<0xE4>``...) are joined and read as UTF-8, each
byte that does not start a valid character giving U+FFFD; control pieces (``<s>``) give
nothing; the unknown piece gives ``unk_surface`` (`` ⁇ ``).

The decoder reads each id's bytes: a control piece has none, a byte piece one byte (a one-byte
normal piece reads the same either way), the unknown piece its text (``unk_piece``).
"""

from __future__ import annotations

from typing import List

from ciyuan.decoders.base import DECODERS, Decoder
from ciyuan.errors import ModelError

__all__ = ["SentencePiece"]

_SPACE = "\u2581"


def _decode_bytes(data: bytes) -> str:
    """Bytes as UTF-8, each byte that does not start a valid character -> U+FFFD."""
    return data.decode("utf-8", "replace") if data.isascii() else _decode_each(data)


def _decode_each(data: bytes) -> str:
    out: List[str] = []
    i = 0
    while i < len(data):
        b = data[i]
        n = 1 if b < 0x80 else 2 if 0xC0 <= b < 0xE0 else 3 if 0xE0 <= b < 0xF0 else 4 if 0xF0 <= b < 0xF8 else 0
        chunk = data[i:i + n] if n else b""
        try:
            if len(chunk) != n or not n:
                raise UnicodeDecodeError("utf-8", data, i, i + 1, "invalid")
            out.append(chunk.decode("utf-8"))
            i += n
        except UnicodeDecodeError:
            out.append("\ufffd")
            i += 1
    return "".join(out)


@DECODERS.register
class SentencePiece(Decoder):
    """sentencepiece's decoding of pieces.

    Args:
        unk_piece: the unknown piece's text (decoded as ``unk_surface``).
        unk_surface: what the unknown piece decodes to.
        add_dummy_prefix, remove_extra_whitespaces: the normalizer's options (a leading space
            is removed when either is on).

    Example:
        >>> SentencePiece().decode([b"\\xe2\\x96\\x81Hello", b"\\xe2\\x96\\x81w", b"orld", b"\\xe4", b"\\xb8\\xad"])
        'Hello world中'
    """

    type_name = "SentencePiece"
    options = ("unk_piece", "unk_surface", "add_dummy_prefix", "remove_extra_whitespaces")

    def __init__(self, unk_piece: str = "<unk>", unk_surface: str = " \u2047 ", add_dummy_prefix: bool = True,
                 remove_extra_whitespaces: bool = True) -> None:
        if not isinstance(unk_piece, str) or not isinstance(unk_surface, str):
            raise ModelError("unk_piece and unk_surface must be strings")
        self.unk_piece = unk_piece
        self.unk_surface = unk_surface
        self.add_dummy_prefix = bool(add_dummy_prefix)
        self.remove_extra_whitespaces = bool(remove_extra_whitespaces)

    def decode(self, tokens: List[bytes]) -> str:
        unk = self.unk_piece.encode("utf-8")
        strip = self.add_dummy_prefix or self.remove_extra_whitespaces
        out: List[str] = []
        pending = bytearray()  # a run of byte pieces
        at_start = True        # still expecting the dummy-prefix space
        start_seen = False     # the last piece gave up its leading space
        for data in tokens:
            if len(data) == 1:
                pending += data
                continue
            if pending:
                out.append(_decode_bytes(bytes(pending)))
                pending.clear()
            if start_seen or any(out):
                at_start = False
            start_seen = False
            if not data:  # a control piece
                continue
            if data == unk:
                out.append(self.unk_surface)
                continue
            piece = data.decode("utf-8", "replace")
            if at_start and strip and piece.startswith(_SPACE):
                piece = piece[1:]
                start_seen = not self.remove_extra_whitespaces
            out.append(piece.replace(_SPACE, " "))
        if pending:
            out.append(_decode_bytes(bytes(pending)))
        return "".join(out)
