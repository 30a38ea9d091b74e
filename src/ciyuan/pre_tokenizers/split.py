"""Split text by a pattern, as Hugging Face's ``Split`` pre-tokenizer does.

The pattern (a regular expression, or a literal string) cuts the text into matches and the
gaps between them; ``behavior`` says what becomes of the matches:

========================  ====================================================================
``Isolated`` (default)    every match and every gap is a piece (nothing is dropped)
``Removed``               the gaps are the pieces; the matches are dropped
``MergedWithPrevious``    a match joins the piece before it (pieces end where matches end)
``MergedWithNext``        a match joins the piece after it (pieces start where matches start)
``Contiguous``            adjacent matches form one piece; gaps are pieces
========================  ====================================================================

``invert=True`` swaps the roles of matches and gaps first. Empty pieces are never produced.
The well-known patterns (GPT-2, cl100k_base, o200k_base, ...) cover every character of any
text, so with ``Isolated`` their pieces are their matches: those run on hand-written native
scanners; any other pattern runs on the ``regex`` module. Cost: one scan, O(n).

``WordPunct``/``Whitespace`` and ``WhitespaceSplit`` keep only the matches of their fixed
patterns: they drop whitespace by definition (as Hugging Face's do).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import regex

from ciyuan import _core
from ciyuan._onig import compile_onig, to_onig
from ciyuan.errors import InvalidInputError, ModelError
from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span
from ciyuan.pre_tokenizers.behavior import BEHAVIORS, Behavior, apply_behavior, check_behavior
from ciyuan.pre_tokenizers.patterns import FULL_COVERAGE, NAMED_PATTERNS, hf_native_name, native_name

__all__ = ["Split", "WordPunct", "Whitespace", "WhitespaceSplit", "BEHAVIORS"]

#: The pattern as Hugging Face's tokenizer.json holds it: ``{"Regex": ...}`` or ``{"String": ...}``.
HfPattern = Mapping[str, str]


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


def _literal_matches(text: str, literal: str) -> List[Span]:
    """Non-overlapping occurrences of ``literal``, left to right."""
    spans: List[Span] = []
    at = text.find(literal)
    while at >= 0:
        spans.append((at, at + len(literal)))
        at = text.find(literal, at + len(literal))
    return spans


def _parse_pattern(pattern: Union[str, HfPattern]) -> Tuple[str, str, Optional[str]]:
    """(source, its kind, native scanner name) of a ciyuan pattern (a name or a ``regex``
    module pattern: kind ``"regex"``) or of Hugging Face's ``{"Regex": ...}`` (an Oniguruma
    pattern: ``"Regex"``) / ``{"String": ...}`` (a literal: ``"String"``)."""
    if isinstance(pattern, str):
        if not pattern:
            raise InvalidInputError("Split needs a non-empty pattern string or pattern name")
        return NAMED_PATTERNS.get(pattern, pattern), "regex", native_name(pattern)
    if isinstance(pattern, Mapping) and len(pattern) == 1:
        (kind, source), = pattern.items()
        if kind in ("Regex", "String") and isinstance(source, str):
            if kind == "String":
                return source, kind, None
            return source, kind, hf_native_name(source)
    raise ModelError(f'a Split pattern is a string, {{"Regex": "..."}} or {{"String": "..."}}, not {pattern!r}')


@PRE_TOKENIZERS.register
class Split(PreTokenizer):
    """Pre-tokenizer that cuts text by ``pattern`` (Hugging Face's ``Split``).

    Args:
        pattern: a regular expression, one of the names ``"gpt2"``, ``"cl100k_base"``,
            ``"o200k_base"``, ``"qwen2"``, ``"wordpunct"``, ``"whitespace"``, or Hugging Face's
            ``{"Regex": "..."}`` / ``{"String": "..."}`` (a literal).
        behavior: what becomes of the matches (see the module docstring).
        invert: split on the text the pattern does not match.

    Example:
        >>> Split("cl100k_base").pre_tokenize_str("Hello world!")
        [('Hello', (0, 5)), (' world', (5, 11)), ('!', (11, 12))]
        >>> Split({"String": "-"}, behavior="Removed").pre_tokenize_str("a-b")
        [('a', (0, 1)), ('b', (2, 3))]
    """

    type_name = "Split"
    options: Tuple[str, ...] = ("pattern", "behavior", "invert")

    def __init__(self, pattern: Union[str, HfPattern], behavior: Behavior = "Isolated", invert: bool = False) -> None:
        source, kind, native = _parse_pattern(pattern)
        self.behavior: Behavior = check_behavior(behavior)
        if not isinstance(invert, bool):
            raise ModelError(f"Split's invert must be true or false, got {invert!r}")
        self.invert = invert
        #: The pattern as given: a name, a regular expression, or ``{"String": ...}``/``{"Regex": ...}``.
        self.pattern: Union[str, HfPattern] = pattern if isinstance(pattern, str) else dict(pattern)
        #: The pattern's text: a ``regex`` module pattern, an Oniguruma one or a literal (``kind``).
        self.source = source
        self.kind = kind
        self.literal = kind == "String"
        self._scanner = native
        # The pieces are the scanner's matches only when every character is matched.
        plain = behavior == "Isolated" and not invert
        self.native_pattern: Optional[str] = native if plain and native in FULL_COVERAGE else None
        self._regex: Optional[Any] = None
        if not self.literal:
            try:  # tokenizer.json's patterns are Oniguruma's: read as Hugging Face reads them
                self._regex = compile_onig(source) if kind == "Regex" else regex.compile(source)
            except regex.error as e:
                raise InvalidInputError(f"invalid pre-tokenizer pattern {source!r}: {e}") from None
        elif not source:
            raise ModelError("a Split pattern {\"String\": \"\"} matches nothing; give a non-empty string")

    def matches(self, text: str) -> List[Span]:
        """Character spans of the pattern's matches in ``text`` (gaps not included)."""
        if self._scanner is not None:
            return _byte_to_char_spans(text, _core.split_pieces(self._scanner, text))
        if self.literal:
            return _literal_matches(text, self.source)
        assert self._regex is not None
        return [m.span() for m in self._regex.finditer(text)]

    def split(self, text: str) -> List[Span]:
        """Character spans [start, end) of the pieces of ``text``."""
        found = self.matches(text)
        if self.native_pattern is not None:
            return found
        return apply_behavior(len(text), found, self.behavior, self.invert)

    def to_dict(self) -> Dict[str, Any]:
        """Hugging Face's form: ``{"type": "Split", "pattern": {"Regex": ...}, "behavior": ..., "invert": ...}``."""
        if self.kind == "regex":  # spelled so that Oniguruma matches what the regex module does
            pattern = {"Regex": to_onig(self.source)}
        else:
            pattern = {self.kind: self.source}
        return {"type": self.type_name, "pattern": pattern, "behavior": self.behavior, "invert": self.invert}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Split":
        """Hugging Face's form, or ciyuan's older ``{"type": "Split", "pattern": "gpt2"}``."""
        if "pattern" not in data:
            raise ModelError("a Split pre-tokenizer needs a 'pattern'")
        # A str: ciyuan's own files before tokenizer.json (a name or a regex).
        return cls(data["pattern"], data.get("behavior", "Isolated"), data.get("invert", False))

    def __repr__(self) -> str:
        extra = "" if self.behavior == "Isolated" else f", behavior={self.behavior!r}"
        extra += ", invert=True" if self.invert else ""
        return f"{type(self).__name__}({self.pattern!r}{extra})"


class _FixedSplit(Split):
    """Pieces are the matches of a pattern fixed by the class (``fixed_pattern``), the rest
    (whitespace) dropped: described by its type alone."""

    fixed_pattern = ""
    options = ()

    def __init__(self) -> None:
        super().__init__(self.fixed_pattern, "Isolated")
        self.native_pattern = self._scanner

    def split(self, text: str) -> List[Span]:
        return self.matches(text)

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "_FixedSplit":
        return cls()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@PRE_TOKENIZERS.register
class WordPunct(_FixedSplit):
    """Words and runs of punctuation: ``\\w+|[^\\w\\s]+`` (whitespace is dropped).

    Hugging Face calls it ``Whitespace`` (see :class:`Whitespace`, the same split).

    Example:
        >>> WordPunct().pre_tokenize_str("Hi, you!")
        [('Hi', (0, 2)), (',', (2, 3)), ('you', (4, 7)), ('!', (7, 8))]
    """

    type_name = "WordPunct"
    fixed_pattern = "wordpunct"


@PRE_TOKENIZERS.register
class Whitespace(_FixedSplit):
    """Hugging Face's ``Whitespace``: words and runs of punctuation, ``\\w+|[^\\w\\s]+``.

    Example:
        >>> Whitespace().pre_tokenize_str("Hi, you!")
        [('Hi', (0, 2)), (',', (2, 3)), ('you', (4, 7)), ('!', (7, 8))]
    """

    type_name = "Whitespace"
    fixed_pattern = "wordpunct"


@PRE_TOKENIZERS.register
class WhitespaceSplit(_FixedSplit):
    """Runs of non-whitespace: split on whitespace, which is dropped (Hugging Face's
    ``WhitespaceSplit``).

    Example:
        >>> WhitespaceSplit().pre_tokenize_str("low  lower")
        [('low', (0, 3)), ('lower', (5, 10))]
    """

    type_name = "WhitespaceSplit"
    fixed_pattern = "whitespace"
