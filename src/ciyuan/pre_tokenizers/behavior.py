"""What a split does with the pattern's matches: Hugging Face's ``SplitDelimiterBehavior``.

A pattern cuts a text into matches and the gaps between them. :func:`apply_behavior` turns
that cut into pieces by one rule (see ``split.py``'s table). It is shared by ``Split``,
``Punctuation``, ``Digits``, ``CharDelimiterSplit`` and ``Metaspace``. Cost: O(number of
matches).

Example:
    >>> apply_behavior(5, [(1, 2), (2, 3)], "Contiguous")
    [(0, 1), (1, 3), (3, 5)]
    >>> apply_behavior(5, [(1, 2)], "MergedWithNext")
    [(0, 1), (1, 5)]
"""

from __future__ import annotations

from typing import List, Literal, Sequence, Tuple

from ciyuan.errors import ModelError

__all__ = ["Behavior", "BEHAVIORS", "check_behavior", "apply_behavior"]

Span = Tuple[int, int]
Behavior = Literal["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
BEHAVIORS: Tuple[str, ...] = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
# Hugging Face's Python API spells them in lower case ("merged_with_previous").
_ALIASES = {"removed": "Removed", "isolated": "Isolated", "merged_with_previous": "MergedWithPrevious",
            "merged_with_next": "MergedWithNext", "contiguous": "Contiguous"}


def check_behavior(behavior: str) -> Behavior:
    """``behavior`` in tokenizer.json's spelling (the Python API's lower-case one is accepted)."""
    name = _ALIASES.get(behavior, behavior) if isinstance(behavior, str) else behavior
    if name not in BEHAVIORS:
        raise ModelError(f"unknown split behavior {behavior!r}; expected one of {', '.join(BEHAVIORS)}")
    return name  # type: ignore[return-value]


def _cut(length: int, matches: Sequence[Span]) -> List[Tuple[int, int, bool]]:
    """The whole text as (start, end, is_match) parts, in order: gaps between the matches."""
    parts: List[Tuple[int, int, bool]] = []
    at = 0
    for start, end in matches:
        if start > at:
            parts.append((at, start, False))
        parts.append((start, end, True))
        at = end
    if at < length:
        parts.append((at, length, False))
    return parts


def apply_behavior(length: int, matches: Sequence[Span], behavior: Behavior, invert: bool = False) -> List[Span]:
    """The pieces of a text of ``length`` characters whose pattern matches are ``matches``
    (ordered, non-overlapping), by ``behavior``; empty pieces are left out."""
    if not matches and not invert:  # the common case in a Sequence's small pieces: one piece
        return [(0, length)] if length else []
    parts = [(s, e, m != invert) for s, e, m in _cut(length, matches)]
    pieces: List[List[int]] = []
    if behavior == "Isolated":
        pieces = [[s, e] for s, e, _ in parts]
    elif behavior == "Removed":
        pieces = [[s, e] for s, e, m in parts if not m]
    elif behavior == "Contiguous":
        previous = False  # a run of parts of the same kind is one piece
        for s, e, m in parts:
            if pieces and m == previous:
                pieces[-1][1] = e
            else:
                pieces.append([s, e])
            previous = m
    elif behavior == "MergedWithPrevious":
        previous = False  # a match after a gap closes the gap's piece
        for s, e, m in parts:
            if pieces and m and not previous:
                pieces[-1][1] = e
            else:
                pieces.append([s, e])
            previous = m
    else:  # MergedWithNext: the same, read from the end
        previous = False
        for s, e, m in reversed(parts):
            if pieces and m and not previous:
                pieces[-1][0] = s
            else:
                pieces.append([s, e])
            previous = m
        pieces.reverse()
    return [(s, e) for s, e in pieces if e > s]
