"""The splitting patterns of the well-known tokenizers.

Each has a hand-written scanner in the native core that splits exactly as the ``regex`` module
does with the pattern; :class:`~ciyuan.pre_tokenizers.Split` picks the scanner automatically when
given one of these names or pattern strings.
"""

from __future__ import annotations

from typing import Dict, Optional

from ciyuan._onig import to_onig

__all__ = [
    "GPT2_PATTERN",
    "GPT2_ORIGINAL_PATTERN",
    "CL100K_PATTERN",
    "O200K_PATTERN",
    "WORD_PUNCT_PATTERN",
    "WHITESPACE_PATTERN",
    "NAMED_PATTERNS",
    "EQUIVALENT_PATTERNS",
    "LLAMA3_PATTERN",
    "QWEN2_PATTERN",
    "FULL_COVERAGE",
    "native_name",
    "hf_native_name",
]

#: GPT-2 / r50k_base / p50k_base, in tiktoken's faster but equivalent form.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
#: GPT-2's pattern as released in encoder.py (splits identically).
GPT2_ORIGINAL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
#: cl100k_base (GPT-3.5 / GPT-4).
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""  # noqa: E501 (one pattern, one line)
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
#: Llama 3 (its tokenizer.json and Meta's tiktoken code): cl100k's first, non-possessive
#: spelling. It is not cl100k_base's current pattern: at a whitespace run that ends the text and
#: holds a newline, cl100k's ``\s++$`` takes the whole run, this one stops at the last newline.
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""  # noqa: E501
)
#: Qwen2 / Qwen2.5 / Qwen3: Llama 3's pattern with one digit per piece.
QWEN2_PATTERN = LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")

#: Name -> pattern, for every pattern with a native scanner (and the tiktoken aliases). The names
#: are the native scanners' own (``_core.parse_pattern`` reads them: the one parser of names).
NAMED_PATTERNS: Dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "r50k_base": GPT2_PATTERN,
    "p50k_base": GPT2_PATTERN,
    "cl100k_base": CL100K_PATTERN,
    "o200k_base": O200K_PATTERN,
    "wordpunct": WORD_PUNCT_PATTERN,
    "whitespace": WHITESPACE_PATTERN,
    "llama3": LLAMA3_PATTERN,
    "qwen2": QWEN2_PATTERN,
}


#: Pattern strings that split exactly as a named pattern does, under other spellings.
#: (cl100k_base as ciyuan writes it in tokenizer.json: Oniguruma reads "{1,3}+" as a repeated
#: repeat, and the plain "{1,3}" closing its alternative matches as the possessive one does.)
EQUIVALENT_PATTERNS: Dict[str, str] = {GPT2_ORIGINAL_PATTERN: "gpt2",
                                       CL100K_PATTERN.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}"): "cl100k_base"}

#: The scanners whose matches cover every character of any text (no gaps), so that their
#: matches are exactly the pieces of Hugging Face's ``Split(..., behavior="Isolated")``.
FULL_COVERAGE = frozenset({"gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base", "llama3", "qwen2"})

# Pattern string -> a name of its scanner (the first name of each pattern).
_NAME_BY_PATTERN: Dict[str, str] = {**{p: n for n, p in reversed(NAMED_PATTERNS.items())}, **EQUIVALENT_PATTERNS}


def native_name(name_or_pattern: str) -> Optional[str]:
    r"""The native scanner's name for a pattern name or pattern string, or None if there is none.

    Example:
        >>> native_name("r50k_base"), native_name(WORD_PUNCT_PATTERN), native_name(r"\d+")
        ('r50k_base', 'wordpunct', None)
    """
    if name_or_pattern in NAMED_PATTERNS:
        return name_or_pattern
    return _NAME_BY_PATTERN.get(name_or_pattern)


# tokenizer.json (Oniguruma) spelling of each pattern -> its scanner's name.
_NAME_BY_HF_PATTERN: Dict[str, str] = {to_onig(p): n for p, n in _NAME_BY_PATTERN.items()}


def hf_native_name(source: str) -> Optional[str]:
    r"""The native scanner's name for a tokenizer.json ``{"Regex": source}`` (read as Oniguruma
    reads it), or None.

    Example:
        >>> hf_native_name(GPT2_ORIGINAL_PATTERN), hf_native_name(to_onig(CL100K_PATTERN))
        ('gpt2', 'cl100k_base')
    """
    return _NAME_BY_HF_PATTERN.get(source)
