"""Decode whole-word and single-character tokens: join them with a separator (a space between
words, nothing between characters)."""

from __future__ import annotations

from typing import List

from ciyuan.decoders.base import DECODERS, Decoder

__all__ = ["WordLevel", "CharLevel"]


@DECODERS.register
class WordLevel(Decoder):
    """Join whole-word tokens with a space.

    Example:
        >>> WordLevel().decode([b"hello", b"world"])
        'hello world'
    """

    type_name = "WordLevel"
    options = ("separator",)

    def __init__(self, separator: str = " ") -> None:
        self.separator = separator

    def decode(self, tokens: List[bytes]) -> str:
        return self.separator.join(t.decode("utf-8", "replace") for t in tokens)


@DECODERS.register
class CharLevel(WordLevel):
    """Join character tokens with nothing between them.

    Example:
        >>> CharLevel().decode([b"\\xe8\\xaf\\x8d", b"\\xe5\\x85\\x83"])
        '词元'
    """

    type_name = "CharLevel"

    def __init__(self, separator: str = "") -> None:
        super().__init__(separator)

    def __repr__(self) -> str:
        return "CharLevel()" if self.separator == "" else f"CharLevel(separator={self.separator!r})"
