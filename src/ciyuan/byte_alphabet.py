"""GPT-2's printable alphabet for bytes.

Byte-level BPE works on raw bytes, but vocabulary files (``vocab.bpe``, ``encoder.json``,
Hugging Face ``tokenizer.json``) write each byte as a printable character so that tokens are
readable strings: printable Latin-1 bytes stand for themselves and the other 68 bytes map to
U+0100 onwards (the space becomes ``Ġ``, the newline ``Ċ``).

Example:
    >>> from ciyuan.byte_alphabet import bytes_to_printable, printable_to_bytes
    >>> bytes_to_printable(b" hello\\n")
    'ĠhelloĊ'
    >>> printable_to_bytes("Ġhello")
    b' hello'
"""

from __future__ import annotations

from typing import Dict

__all__ = ["BYTE_TO_CHAR", "CHAR_TO_BYTE", "bytes_to_printable", "printable_to_bytes"]


def _build() -> Dict[int, str]:
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


BYTE_TO_CHAR: Dict[int, str] = _build()
CHAR_TO_BYTE: Dict[str, int] = {c: b for b, c in BYTE_TO_CHAR.items()}
_TRANSLATE = {c: b for b, c in BYTE_TO_CHAR.items()}


# Latin-1 reads each byte as the character of the same number: the table maps that to GPT-2's.
_FROM_LATIN1 = str.maketrans(dict(BYTE_TO_CHAR))


def bytes_to_printable(data: bytes) -> str:
    """Write bytes in GPT-2's printable alphabet (one C-level pass, not a lookup per byte).

    Example:
        >>> bytes_to_printable(b" hi\\n")
        'ĠhiĊ'
    """
    return data.decode("latin-1").translate(_FROM_LATIN1)


def printable_to_bytes(text: str) -> bytes:
    """Read a token written in GPT-2's printable alphabet; raises KeyError on other characters."""
    return bytes([CHAR_TO_BYTE[c] for c in text])
