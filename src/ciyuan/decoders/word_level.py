"""Decode whole-word and single-character tokens: join them with a separator (a space between
words, nothing between characters).

Example:
    >>> WordLevel().decode([b"hello", b"world"])
    'hello world'
    >>> CharLevel().decode([b"\\xe8\\xaf\\x8d", b"\\xe5\\x85\\x83"])
    '词元'
"""

from __future__ import annotations

from typing import List, Optional

from ciyuan.decoders.base import DECODERS, Decoder
from ciyuan.errors import ModelError

__all__ = ["WordLevel", "CharLevel"]


@DECODERS.register
class WordLevel(Decoder):
    """Join whole-word tokens with a space (or ``separator``).

    It reads token strings (``reads_tokens``): joined by a space, it is also what Hugging Face
    does with a tokenizer.json that has no decoder (``" ".join(tokens)``, whatever the model).
    """

    type_name = "WordLevel"
    options = ("separator",)
    default_separator = " "
    reads_tokens = True

    def __init__(self, separator: Optional[str] = None) -> None:
        if separator is not None and not isinstance(separator, str):  # e.g. a tokenizer.json field of the wrong type
            raise ModelError(f"the decoder's separator must be a string, not {type(separator).__name__}")
        self.separator = self.default_separator if separator is None else separator

    def decode(self, tokens: List[bytes]) -> str:
        return self.separator.join(t.decode("utf-8", "replace") for t in tokens)

    def decode_chain(self, tokens: List[str]) -> List[str]:
        return [self.separator.join(tokens)]


@DECODERS.register
class CharLevel(WordLevel):
    """Join character tokens with nothing between them (or ``separator``)."""

    type_name = "CharLevel"
    default_separator = ""
