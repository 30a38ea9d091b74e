"""Hugging Face's regular expressions (Oniguruma, Ruby syntax) on the ``regex`` module.

tokenizer.json patterns (``Split``, ``Replace``) are Oniguruma's. Most of the syntax means the
same in the ``regex`` module; :func:`translate` rewrites what does not:

* ``X{n,m}+`` is *not* possessive in Ruby syntax: it is ``(?:X{n,m})+`` (an interval repeated).
  tiktoken-style patterns copied into tokenizer.json (``\\p{N}{1,3}+``) rely on this.
* ``^`` and ``$`` match at every line start and end in Ruby (``regex.MULTILINE``); ``\\Z`` also
  matches before a final newline, ``\\z`` only at the end.
* ``(?m)`` is Ruby's "dot matches newline" (``(?s)``).
* ``\\w``: Oniguruma's includes ``¹²³¼½¾`` and not the joiners U+200C/U+200D, the ``regex``
  module's the reverse: it is spelled out as properties both ways (``\\W`` inside a class is
  left as it is).

Other differences are not rewritten: Unicode property tables (Oniguruma's are Unicode 16,
the ``regex`` module's newer; only characters assigned or changed since differ) and Ruby-only
syntax (``\\h``, nested classes ``[a-[b]]``, ``&&`` in classes), which fail or differ.

Example:
    >>> translate(r"\\p{N}{1,3}+|$")
    '(?:\\\\p{N}{1,3})+|$'
"""

from __future__ import annotations

import functools
from typing import Any, List

import regex

__all__ = ["translate", "to_onig", "compile_onig"]


def _class_end(p: str, i: int) -> int:
    """Index after the character class that opens at ``p[i] == "["``."""
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":  # a leading ] is literal
        j += 1
    depth = 1
    while j < len(p) and depth:
        if p[j] == "\\":
            j += 2
            continue
        if p[j] == "[":
            depth += 1
        elif p[j] == "]":
            depth -= 1
        j += 1
    return j


def _escape_end(p: str, i: int) -> int:
    """Index after the escape that starts at ``p[i] == "\\\\"``."""
    j = i + 2
    if j <= len(p) and p[i + 1] in "pPxku" and j < len(p) and p[j] == "{":
        close = p.find("}", j)
        return len(p) if close < 0 else close + 1
    return j


def translate(pattern: str) -> str:
    """``pattern`` (Oniguruma, Ruby syntax) rewritten for the ``regex`` module (with MULTILINE)."""
    return _rewrite(pattern, to_onig=False)


def to_onig(pattern: str) -> str:
    """The reverse: a ``regex`` module pattern (no flags) spelled so that Oniguruma (Ruby syntax)
    matches the same (for tokenizer.json): ``X{n,m}+`` becomes the atomic ``(?>X{n,m})``, ``$``
    ``(?=\\n?\\z)``, ``^`` ``\\A`` and ``\\Z`` ``\\z``.

    Example:
        >>> to_onig(r"\\p{N}{1,3}+|\\s+$")
        '(?>\\\\p{N}{1,3})|\\\\s+(?=\\\\n?\\\\z)'
    """
    return _rewrite(pattern, to_onig=True)


# \w differs: measured against Hugging Face on every code point, Oniguruma's is
# Alphabetic|Mark|Decimal_Number|Connector_Punctuation plus the Latin-1 digits ``¹²³¼½¾``; the
# regex module's is the same without those six, with Join_Control (U+200C, U+200D).
_ONIG_WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\xb2\xb3\xb9\xbc-\xbe"
_REGEX_WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}"


def _rewrite_class(text: str, to_onig: bool) -> str:
    """A character class with its ``\\w`` spelled out for the other engine."""
    word = _REGEX_WORD if to_onig else _ONIG_WORD
    out: List[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\":
            j = _escape_end(text, i)
            out.append(word if text[i:j] == "\\w" else text[i:j])
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _rewrite(pattern: str, to_onig: bool) -> str:
    out: List[str] = []
    atom_start = -1  # index in out of the last atom (what a quantifier applies to)
    groups: List[int] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            j = _escape_end(pattern, i)
            token = pattern[i:j]
            if token in ("\\w", "\\W"):
                token = ("[" if token == "\\w" else "[^") + (_REGEX_WORD if to_onig else _ONIG_WORD) + "]"
            elif to_onig:
                token = r"\z" if token == "\\Z" else token
            elif token == "\\Z":
                token = r"(?=\n?\Z)"
            elif token == "\\z":
                token = r"\Z"
            atom_start = len(out)
            out.append(token)
            i = j
        elif c == "[":
            j = _class_end(pattern, i)
            atom_start = len(out)
            out.append(_rewrite_class(pattern[i:j], to_onig))
            i = j
        elif c == "(":
            if not to_onig and pattern.startswith("(?m", i) and i + 3 < n and pattern[i + 3] in "):":
                out.append("(?s")
                i += 3
            else:
                out.append("(")
                i += 1
            groups.append(len(out) - 1)
        elif c == ")":
            out.append(")")
            atom_start = groups.pop() if groups else -1
            i += 1
        elif c == "{":
            m = regex.match(r"\{(\d*)(,(\d*))?\}", pattern[i:])
            if m is None or not (m.group(1) or m.group(3)):
                out.append(c)  # a literal brace
                atom_start = len(out) - 1
                i += 1
                continue
            quantifier = m.group(0)
            j = i + len(quantifier)
            if j < n and pattern[j] == "+" and atom_start >= 0:
                atom = "".join(out[atom_start:])
                del out[atom_start:]
                if to_onig:  # possessive in the regex module: an atomic group in Ruby
                    out.append(f"(?>{atom}{quantifier})")
                    i = j + 1
                else:  # Ruby: an interval followed by + repeats the interval (not possessive)
                    out.append(f"(?:{atom}{quantifier})")
                    i = j  # the + stays, applied to the group
            else:
                out.append(quantifier)
                i = j
        elif to_onig and c in "^$":
            out.append(r"\A" if c == "^" else r"(?=\n?\z)")
            i += 1
        else:
            if c not in "*+?|":
                atom_start = len(out)
            out.append(c)
            i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def compile_onig(pattern: str) -> Any:
    """``pattern`` compiled as Hugging Face runs it (see :func:`translate`); ``regex.error`` if invalid."""
    return regex.compile(translate(pattern), regex.MULTILINE)
