"""Reference twin of ``ciyuan.pre_tokenizers.behavior``: Hugging Face's split behaviors, from
one label per character.

Each character is labelled by the match it belongs to (``None`` in a gap). Then:

* Isolated: a piece per match and per gap;
* Removed: a piece per gap;
* Contiguous: adjacent parts of the same kind (matches, or gaps after ``invert``) are one piece;
* MergedWithPrevious: a match glues onto the gap just before it;
* MergedWithNext: a match glues onto the gap just after it.

``invert`` swaps matched and gap characters first (each gap becoming one match). Cost: O(n)
per text of n characters. Empty matches cannot be labelled: the twin takes non-empty ones.

Example:
    >>> pieces(5, [(1, 2), (2, 3)], "MergedWithPrevious")
    [(0, 2), (2, 3), (3, 5)]
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

Span = Tuple[int, int]


def _parts(length: int, labels: List[Optional[int]]) -> List[Tuple[int, int, bool]]:
    """Maximal runs of one label: (start, end, is_match)."""
    parts: List[Tuple[int, int, bool]] = []
    for i in range(length):
        if i and labels[i] == labels[i - 1]:
            s, _, m = parts[-1]
            parts[-1] = (s, i + 1, m)
        else:
            parts.append((i, i + 1, labels[i] is not None))
    return parts


def pieces(length: int, matches: Sequence[Span], behavior: str, invert: bool = False) -> List[Span]:
    labels: List[Optional[int]] = [None] * length
    for k, (s, e) in enumerate(matches):
        for i in range(s, e):
            labels[i] = k
    parts = _parts(length, labels)
    if invert:
        parts = [(s, e, not m) for s, e, m in parts]
    if behavior == "Isolated":
        return [(s, e) for s, e, _ in parts]
    if behavior == "Removed":
        return [(s, e) for s, e, m in parts if not m]
    out: List[List[int]] = []
    for i, (s, e, m) in enumerate(parts):
        before = parts[i - 1][2] if i else None  # is the part before a match?
        if behavior == "Contiguous" and i and m == before:
            out[-1][1] = e  # same kind as the part before: one piece
        elif behavior == "MergedWithPrevious" and i and m and not before:
            out[-1][1] = e  # a match glues onto the gap before it
        elif behavior == "MergedWithNext" and i and not m and before:
            out[-1][1] = e  # the gap after a match is glued onto it
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]
