"""Split text into pieces by a regular expression: the pieces are the pattern's matches.

The well-known patterns (GPT-2, cl100k_base, o200k_base, words/punctuation, whitespace) run on
hand-written native scanners; any other pattern runs on the ``regex`` module. Both give the
same pieces as ``regex.finditer(pattern, text)``.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import regex

from ciyuan import _core
from ciyuan.errors import InvalidInputError
from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span
from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS, native_name

__all__ = ["Split", "WordPunct", "WhitespaceSplit"]


def _byte_to_char_spans(text: str, spans: List[Span]) -> List[Span]:
    if text.isascii():
        return spans
    # Character index of every byte offset that starts a character (and of the end).
    char_of: Dict[int, int] = {}
    at = 0
    for i, c in enumerate(text):
        char_of[at] = i
        at += len(c.encode("utf-8", "surrogatepass"))
    char_of[at] = len(text)
    return [(char_of[s], char_of[e]) for s, e in spans]


@PRE_TOKENIZERS.register
class Split(PreTokenizer):
    """Pre-tokenizer whose pieces are the matches of ``pattern``.

    Args:
        pattern: a pattern string, or one of the names ``"gpt2"``, ``"cl100k_base"``,
            ``"o200k_base"``, ``"wordpunct"``, ``"whitespace"``.

    Example:
        >>> Split("cl100k_base").pre_tokenize_str("Hello world!")
        [('Hello', (0, 5)), (' world', (5, 11)), ('!', (11, 12))]
    """

    type_name = "Split"
    options: Tuple[str, ...] = ("pattern",)

    def __init__(self, pattern: str) -> None:
        if not isinstance(pattern, str) or not pattern:
            raise InvalidInputError("Split needs a non-empty pattern string or pattern name")
        self.pattern = pattern
        self.native_pattern: Optional[str] = native_name(pattern)
        source = NAMED_PATTERNS.get(pattern, pattern)
        try:
            self._regex = regex.compile(source)
        except regex.error as e:
            raise InvalidInputError(f"invalid pre-tokenizer pattern {pattern!r}: {e}") from None

    def split(self, text: str) -> List[Span]:
        """Character spans [start, end) of the pieces of ``text``."""
        if self.native_pattern is not None:
            return _byte_to_char_spans(text, _core.split_pieces(self.native_pattern, text))
        return [m.span() for m in self._regex.finditer(text)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.pattern!r})"


class _FixedSplit(Split):
    """A Split whose pattern is fixed by the class (``fixed_pattern``): described by its type alone."""

    fixed_pattern = ""
    options = ()

    def __init__(self) -> None:
        super().__init__(self.fixed_pattern)


@PRE_TOKENIZERS.register
class WordPunct(_FixedSplit):
    """Words and runs of punctuation: ``\\w+|[^\\w\\s]+`` (whitespace is dropped).

    Example:
        >>> WordPunct().pre_tokenize_str("Hi, you!")
        [('Hi', (0, 2)), (',', (2, 3)), ('you', (4, 7)), ('!', (7, 8))]
    """

    type_name = "WordPunct"
    fixed_pattern = "wordpunct"


@PRE_TOKENIZERS.register
class WhitespaceSplit(_FixedSplit):
    """Runs of non-whitespace: split on whitespace, which is dropped.

    Example:
        >>> WhitespaceSplit().pre_tokenize_str("low  lower")
        [('low', (0, 3)), ('lower', (5, 10))]
    """

    type_name = "WhitespaceSplit"
    fixed_pattern = "whitespace"
