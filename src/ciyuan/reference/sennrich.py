"""Document 001's two encoders, in plain Python (the oracle for ``ciyuan.textbook.sennrich``).

Greedy longest match (``greedy_split``): the word gets ``</w>`` appended; at each position,
of the known pieces starting there (at most ``longest`` characters, the length of the longest
known subword) take the longest. If none is known, the position's character is one unknown
token - unless the text there is an unknown ``</w>`` within reach, where the split ends.

Substring splitting (``split_by_substrings``): the tokens are tried in order; the first one that
occurs cuts the text at all its occurrences (left to right, not overlapping) and each piece in
between is split by the tokens after it; a piece that no token occurs in is one unknown token.

Example:
    >>> greedy_split("lowest", {"low", "est</w>"}, "<unk>")
    ['low', 'est</w>']
    >>> split_by_substrings("largest</w>", ["est</w>", "high"], "<unk>")
    ['<unk>', 'est</w>']
"""

from __future__ import annotations

import re
from typing import Collection, List, Sequence

__all__ = ["greedy_split", "split_by_substrings"]

END_OF_WORD = "</w>"


def greedy_split(word: str, subwords: Collection[str], unk: str) -> List[str]:
    """``word`` + ``</w>`` split greedily, longest known piece first."""
    longest = max(len(s) for s in subwords)
    text = word + END_OF_WORD
    out: List[str] = []
    pos = 0
    while pos < len(text):
        reach = min(longest, len(text) - pos)
        known = [n for n in range(1, reach + 1) if text[pos : pos + n] in subwords]
        best = max(known, default=0)
        # Trying the lengths from the longest down, an unknown "</w>" is met before any
        # shorter known piece: the split ends there.
        if best < len(END_OF_WORD) <= reach and text.startswith(END_OF_WORD, pos):
            break
        if best:
            out.append(text[pos : pos + best])
            pos += best
        else:
            out.append(unk)
            pos += 1
    return out


def split_by_substrings(text: str, tokens: Sequence[str], unk: str) -> List[str]:
    """``text`` split by ``tokens`` tried in order (see the module docstring)."""
    if not text:
        return []
    for k, token in enumerate(tokens):
        if not token or token not in text:
            continue
        # re.split with a group keeps the matches: gap, token, gap, token, ..., gap.
        parts = re.split("(" + re.escape(token) + ")", text)
        out: List[str] = []
        for i, part in enumerate(parts):
            out += [token] if i % 2 else split_by_substrings(part, tokens[k + 1 :], unk)
        return out
    return [unk]
