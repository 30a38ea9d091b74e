"""Hugging Face's Strip decoder: up to ``start`` copies of ``content`` taken off the front of
each token, and up to ``stop`` off its end (Llama 2 strips the one space that ``▁`` became at
the start of the text)."""

from __future__ import annotations

from typing import List

from ciyuan.decoders.base import DECODERS, TokenDecoder
from ciyuan.errors import ModelError

__all__ = ["Strip"]


@DECODERS.register
class Strip(TokenDecoder):
    """Strip ``content`` (one character) from the ends of each token.

    Example:
        >>> Strip(" ", 1, 0).decode_chain(["  Hello world "])
        [' Hello world ']
    """

    type_name = "Strip"
    options = ("content", "start", "stop")

    def __init__(self, content: str = " ", start: int = 0, stop: int = 0) -> None:
        if not isinstance(content, str) or len(content) != 1:
            raise ModelError(f"Strip's content must be one character, got {content!r}")
        for name, value in (("start", start), ("stop", stop)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ModelError(f"Strip's {name} must be a non-negative integer, got {value!r}")
        self.content = content
        self.start = start
        self.stop = stop

    def decode_chain(self, tokens: List[str]) -> List[str]:
        out: List[str] = []
        for token in tokens:
            begin = 0
            while begin < min(self.start, len(token)) and token[begin] == self.content:
                begin += 1
            end = len(token)
            # Hugging Face fails when the two cuts cross (a token of nothing but content);
            # here such a token becomes empty.
            while len(token) - end < self.stop and end > begin and token[end - 1] == self.content:
                end -= 1
            out.append(token[begin:end])
        return out
