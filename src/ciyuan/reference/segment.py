r"""Dictionary-based Chinese word segmentation in plain Python (the test oracle for the core).

The textbook algorithms over a set of words, on a string without whitespace:

- forward maximum matching (FMM): from the left, take the longest dictionary word that starts
  here (at most ``max_len`` characters), or one character when none does; repeat;
- backward maximum matching (BMM): the same from the right end, with words that end here;
- bidirectional (BiMM): the one with fewer words, then fewer single characters, then BMM's;
- jieba's DAG method: the path through dictionary words with the largest sum of
  log(freq / total), ties to the longer word.

``segment`` adds what the native core does around them: whitespace separates runs (a word per
character), except in baseline mode, where the SIGHAN bakeoff's ``mwseg.pl`` deletes every
whitespace character of a line before matching (``s/\s*//g``: words may span it); outside
baseline mode single ASCII letters and digits join into runs, and the DAG method works inside
jieba's blocks. Cost: O(n * L) dictionary lookups for n characters and words of at most L
characters; fine for an oracle.
"""

from __future__ import annotations

import math
import re
from typing import List, Mapping, Optional, Set

__all__ = ["fmm", "bmm", "bimm", "dag", "segment"]


def fmm(text: str, words: Set[str], max_len: int) -> List[str]:
    out, i = [], 0
    while i < len(text):
        # Longest first: the first length (from max_len down) that is a word wins.
        for n in range(min(max_len, len(text) - i), 0, -1):
            if text[i:i + n] in words:
                break
        else:
            n = 1  # no word starts here: one character
        out.append(text[i:i + n])
        i += n
    return out


def bmm(text: str, words: Set[str], max_len: int) -> List[str]:
    out, j = [], len(text)
    while j > 0:
        for n in range(min(max_len, j), 0, -1):  # the longest word that ends at j
            if text[j - n:j] in words:
                break
        else:
            n = 1
        out.append(text[j - n:j])
        j -= n
    return out[::-1]


def bimm(text: str, words: Set[str], max_len: int) -> List[str]:
    f, b = fmm(text, words, max_len), bmm(text, words, max_len)
    singles = lambda ws: sum(len(w) == 1 for w in ws)  # noqa: E731
    # Fewer words; then fewer single-character words; on a full tie, BMM.
    return f if (len(f), singles(f)) < (len(b), singles(b)) else b


def dag(text: str, freq: Mapping[str, int], max_len: int) -> List[str]:
    total = sum(freq.values())
    log_total = math.log(total) if total > 0 else 0.0
    n = len(text)
    route = [(0.0, 0)] * (n + 1)
    for k in range(n - 1, -1, -1):
        # Edges: words of frequency > 0 starting at k; a bare character when there are none.
        ends = [x for x in range(k + 1, min(n, k + max_len) + 1) if freq.get(text[k:x], 0) > 0] or [k + 1]
        # max over (score, end): equal scores go to the larger end, i.e. the longer word.
        route[k] = max((math.log(freq.get(text[k:x]) or 1) - log_total + route[x][0], x) for x in ends)
    out, k = [], 0
    while k < n:
        out.append(text[k:route[k][1]])
        k = route[k][1]
    return out


_JIEBA_BLOCK = re.compile("([\u4E00-\u9FD5a-zA-Z0-9+#&\\._%\\-]+)")
_ALNUM = re.compile("[a-zA-Z0-9]")


def _join_alnum(words: List[str]) -> List[str]:
    out: List[str] = []
    run = False
    for w in words:
        alnum = len(w) == 1 and w.isascii() and bool(_ALNUM.match(w))
        if alnum and run:
            out[-1] += w
        else:
            out.append(w)
            run = alnum
    return out


def segment(text: str, freq: Mapping[str, int], method: str = "fmm", baseline: bool = False,
            max_len: Optional[int] = None) -> List[str]:
    """What ``ciyuan.segment.Segmenter(dictionary, method, baseline=...).lcut(text)`` returns."""
    words = set(freq)
    if max_len is None:
        max_len = max((len(w) for w in words), default=1)
    max_len = max(max_len, 1)
    algo = {"fmm": fmm, "bmm": bmm, "bimm": bimm}.get(method)
    out: List[str] = []
    if baseline:  # lines stay apart; any other whitespace goes before matching
        text = "".join(c for c in text if c == "\n" or not c.isspace())
    if method == "dag" and not baseline:
        for i, part in enumerate(_JIEBA_BLOCK.split(text)):
            if i % 2:  # the split's captured blocks
                out += dag(part, freq, max_len)
            else:
                # "\r\n" stays one word, like jieba's re_skip; any other character is a word.
                out += re.findall("\r\n|.", part, re.S)
        return _join_alnum(out)
    # Whitespace separates runs, which are segmented on their own.
    for piece in re.split(r"(\s)", text):
        if not piece:
            continue
        if piece.isspace():
            if not baseline:
                out.append(piece)
        elif algo is not None:
            out += algo(piece, words, max_len)
        else:
            out += dag(piece, freq, max_len)
    return out if baseline else _join_alnum(out)
