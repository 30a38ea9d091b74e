"""The splitting patterns of the well-known tokenizers.

Each has a hand-written scanner in the native core that splits exactly as the ``regex`` module
does with the pattern; :class:`~ciyuan.pre_tokenizers.Split` picks the scanner automatically when
given one of these names or pattern strings.
"""

from __future__ import annotations

from typing import Dict, Optional

__all__ = [
    "GPT2_PATTERN",
    "GPT2_ORIGINAL_PATTERN",
    "CL100K_PATTERN",
    "O200K_PATTERN",
    "WORD_PUNCT_PATTERN",
    "WHITESPACE_PATTERN",
    "NAMED_PATTERNS",
    "native_name",
]

#: GPT-2 / r50k_base / p50k_base, in tiktoken's faster but equivalent form.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
#: GPT-2's pattern as released in encoder.py (splits identically).
GPT2_ORIGINAL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
#: cl100k_base (GPT-3.5 / GPT-4).
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
#: o200k_base (GPT-4o).
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
#: Words and runs of punctuation (Hugging Face's ``Whitespace`` pre-tokenizer).
WORD_PUNCT_PATTERN = r"\w+|[^\w\s]+"
#: Runs of non-whitespace (split on whitespace).
WHITESPACE_PATTERN = r"\S+"

#: Name -> pattern, for every pattern with a native scanner (and the tiktoken aliases).
NAMED_PATTERNS: Dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "r50k_base": GPT2_PATTERN,
    "p50k_base": GPT2_PATTERN,
    "cl100k_base": CL100K_PATTERN,
    "o200k_base": O200K_PATTERN,
    "wordpunct": WORD_PUNCT_PATTERN,
    "whitespace": WHITESPACE_PATTERN,
}

# Pattern string -> the native scanner's name.
_NATIVE_BY_PATTERN: Dict[str, str] = {
    GPT2_PATTERN: "gpt2",
    GPT2_ORIGINAL_PATTERN: "gpt2",
    CL100K_PATTERN: "cl100k_base",
    O200K_PATTERN: "o200k_base",
    WORD_PUNCT_PATTERN: "wordpunct",
    WHITESPACE_PATTERN: "whitespace",
}
_NATIVE_ALIASES = {"r50k_base": "gpt2", "p50k_base": "gpt2"}


def native_name(name_or_pattern: str) -> Optional[str]:
    """The native scanner for a pattern name or pattern string, or None if there is none."""
    if name_or_pattern in NAMED_PATTERNS:
        return _NATIVE_ALIASES.get(name_or_pattern, name_or_pattern)
    return _NATIVE_BY_PATTERN.get(name_or_pattern)
