"""SentencePiece's normalizer in plain Python: the tests' oracle for the native one.

At each position: the longest user-defined symbol is copied; else the longest rule key is
replaced by its value; else one character is copied. Spaces are then handled as sentencepiece
does: leading ones skipped, a run after a space dropped, trailing ones cut, ``" "`` written as
``▁``, and one ``▁`` added in front (or at the end with ``suffix``). Cost: O(n x longest key).

Returns the normalized text and, per normalized character, the original character it came from
(sentencepiece's ``norm_to_orig``, by characters): the span of normalized characters [a, b)
maps to the original [orig[a], orig[b]).

Example:
    >>> normalize("  a  b ", {})
    ('▁a▁b', [0, 2, 3, 5, 6])
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

SPACE = "\u2581"


def _step(text: str, i: int, rules: Dict[str, str], max_key: int, user: Sequence[str]) -> Tuple[str, int]:
    """(replacement, characters consumed) at text[i]."""
    for symbol in sorted(user, key=len, reverse=True):
        if symbol and text.startswith(symbol, i):
            return symbol, len(symbol)
    for n in range(min(max_key, len(text) - i), 0, -1):
        rep = rules.get(text[i:i + n])
        if rep is not None:
            return rep, n
    return text[i], 1


def normalize(text: str, rules: Dict[str, str], *, add_dummy_prefix: bool = True,
              remove_extra_whitespaces: bool = True, escape_whitespaces: bool = True, suffix: bool = False,
              user_defined_symbols: Sequence[str] = ()) -> Tuple[str, List[int]]:
    """(normalized text, orig) where orig has one entry per normalized character plus one."""
    max_key = max((len(k) for k in rules), default=0)
    space = SPACE if escape_whitespaces else " "
    out: List[str] = []
    orig: List[int] = []
    i = 0
    if remove_extra_whitespaces:  # leading spaces
        while i < len(text):
            rep, n = _step(text, i, rules, max_key, user_defined_symbols)
            if rep != " ":
                break
            i += n
    if i == len(text):
        return "", []
    consumed = i
    if add_dummy_prefix and not suffix:
        out.append(space)
        orig.append(consumed)
    prev_space = remove_extra_whitespaces
    while i < len(text):
        rep, n = _step(text, i, rules, max_key, user_defined_symbols)
        if prev_space:
            rep = rep.lstrip(" ")
        for c in rep:
            out.append(space if c == " " else c)
            orig.append(consumed)
        if rep:
            prev_space = rep.endswith(" ")
        consumed += n
        i += n
        if not remove_extra_whitespaces:
            prev_space = False
    if remove_extra_whitespaces:  # trailing spaces
        while out and out[-1] == space:
            out.pop()
            consumed = orig.pop()
    if add_dummy_prefix and suffix:
        out.append(space)
        orig.append(consumed)
    orig.append(consumed)
    return "".join(out), orig
