"""Document 002's Chinese BPE tool in plain Python: train merges on clauses, apply them in order.

Train. A text is read as Python reads a file in text mode (``\\r\\n`` and ``\\r`` end lines too).
Each line is cut at ASCII ``,``; ASCII spaces and ``。`` are removed from each piece, and every
non-empty piece is a *clause*, counted. A clause starts as its characters, the last one carrying
``</w>`` (``中 国</w>``). Then, at most ``vocab_size`` times: count every adjacent pair of
symbols (each clause weighted by its count), take the pair with the greatest (count, (left,
right)) - equal counts go to the greater pair in code point order - and stop if its count is
below ``min_frequency`` (no pair at all counts as 0); else record it and merge it in every
clause, left to right, whole symbols only. The merges, ``"left right"`` one per line in order,
are the tool's vocabulary file.

Apply. A unit is a vocabulary line with its spaces and ``</w>`` removed; only units of one or
two characters, all in U+4E00..U+9FA5 and without ``的``, are kept, in file order. The units
are applied in that order: each one is looked for left to right among the characters that no
earlier unit has taken, without overlaps; a match takes all its characters. Characters never
taken stay units of one character.

Cost: training recounts every pair at each merge, O(merges x symbols of the distinct clauses)
(:func:`train_merges_incremental` updates the counts instead, as the document's tool does);
applying is O(units x characters). Fine for an oracle; ``ciyuan.textbook.zh_bpe`` does the same
on the native core.

Example:
    >>> clauses = clause_counts("中国人,中国 。\\n中国,人民\\n")
    >>> clauses
    Counter({'中国': 2, '中国人': 1, '人民': 1})
    >>> train_merges(clauses, vocab_size=10, min_frequency=2)
    ([('中', '国</w>')], 'min_frequency')
    >>> apply_units("中国人民的中国", ["中国", "国人", "人民"])
    ['中国', '人民', '的', '中国']
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from ciyuan.reference.textbook_bpe import merge_symbols

__all__ = [
    "END_OF_WORD",
    "clause_counts",
    "train_merges",
    "train_merges_incremental",
    "is_all_chinese",
    "units_from_lines",
    "apply_units",
    "apply_text",
]

END_OF_WORD = "</w>"
Pair = Tuple[str, str]


def text_lines(text: str) -> List[str]:
    """The lines of ``text`` as a file opened in text mode gives them, without their newline."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()  # the text ended with a newline (or was empty)
    return lines


def clause_counts(text: str) -> Counter:
    """The clauses of ``text`` with their counts, in first-seen order."""
    counts: Counter = Counter()
    for line in text_lines(text):
        for piece in line.split(","):
            clause = piece.replace(" ", "").replace("。", "")
            if clause:
                counts[clause] += 1
    return counts


def _symbols(clause: str) -> Tuple[str, ...]:
    return (*clause[:-1], clause[-1] + END_OF_WORD)


def _stop(best_count: int, min_frequency: int) -> Optional[str]:
    """Why training stops with this best count (0: no pair left), or None to go on."""
    if best_count < min_frequency:
        return "min_frequency"  # the document's "reached the lower bound"
    if best_count == 0:
        return "no_pair"  # min_frequency 0: nothing left to merge
    return None


def train_merges(clauses: Mapping[str, int], vocab_size: int = 1000,
                 min_frequency: int = 2) -> Tuple[List[Pair], str]:
    """The merges in order and why training stopped: ``"vocab_size"`` (that many merges made),
    ``"min_frequency"`` (the best pair occurs fewer times) or ``"no_pair"``."""
    words = [_symbols(c) for c in clauses]
    counts = list(clauses.values())
    merges: List[Pair] = []
    for _ in range(vocab_size):
        stats: Counter = Counter()
        for word, n in zip(words, counts):
            for pair in zip(word, word[1:]):
                stats[pair] += n
        best = max((p for p in stats if stats[p] > 0), key=lambda p: (stats[p], p), default=None)
        why = _stop(stats[best] if best else 0, min_frequency)
        if best is None or why:
            return merges, why or "no_pair"
        merges.append(best)
        words = [merge_symbols(w, best) for w in words]
    return merges, "vocab_size"


def train_merges_incremental(clauses: Mapping[str, int], vocab_size: int = 1000,
                             min_frequency: int = 2) -> Tuple[List[Pair], str]:
    """:func:`train_merges` with the document's data structures: pair counts and, for each pair,
    the clauses it occurs in, updated after each merge in the clauses that held the pair only
    (their old pairs are taken away, their new ones added). The best pair is still found by
    looking at every pair, as the document's loop does."""
    words = [_symbols(c) for c in clauses]
    counts = list(clauses.values())
    pairs: Dict[Pair, int] = defaultdict(int)
    where: Dict[Pair, Set[int]] = defaultdict(set)
    for w, word in enumerate(words):
        for pair in zip(word, word[1:]):
            pairs[pair] += counts[w]
            where[pair].add(w)
    merges: List[Pair] = []
    for _ in range(vocab_size):
        best = max(pairs, key=lambda p: (pairs[p], p), default=None)
        why = _stop(pairs[best] if best else 0, min_frequency)
        if best is None or why:
            return merges, why or "no_pair"
        merges.append(best)
        touched: Set[Pair] = set()
        for w in where.pop(best):
            old, n = words[w], counts[w]
            new = merge_symbols(old, best)
            for pair in zip(old, old[1:]):
                pairs[pair] -= n
                touched.add(pair)
            for pair in zip(new, new[1:]):
                pairs[pair] += n
                where[pair].add(w)
            words[w] = new
        for pair in touched:
            if pairs[pair] == 0:  # gone: keep only pairs that still occur
                del pairs[pair]
    return merges, "vocab_size"


def is_all_chinese(text: str) -> bool:
    """Every character is in U+4E00..U+9FA5 (the CJK Unified Ideographs of Unicode 4.1)."""
    return all("\u4e00" <= c <= "\u9fa5" for c in text)


def units_from_lines(lines: Iterable[str]) -> List[str]:
    """The units of a vocabulary file's lines (newlines removed), in file order."""
    units = []
    for line in lines:
        unit = line.replace(" ", "").replace(END_OF_WORD, "")
        if unit and len(unit) < 3 and is_all_chinese(unit) and "的" not in unit:
            units.append(unit)
    return units


def apply_units(line: str, units: Sequence[str]) -> List[str]:
    """Cut ``line`` into units, applying ``units`` one after another (see the module docstring)."""
    taken = [False] * len(line)
    length = [1] * len(line)  # the length of the unit starting at each character (0: inside one)
    for unit in units:
        i = line.find(unit) if unit else -1  # the scan, jumping to the places where unit is
        while i >= 0:
            if any(taken[i:i + len(unit)]):
                i = line.find(unit, i + 1)
                continue
            for j in range(i, i + len(unit)):
                taken[j] = True
                length[j] = 0
            length[i] = len(unit)
            i = line.find(unit, i + len(unit))
    out, i = [], 0
    while i < len(line):
        out.append(line[i:i + length[i]])
        i += length[i]
    return out


def apply_text(text: str, units: Sequence[str]) -> str:
    """The tool's answer for a test text: each line without its spaces, tabs and U+3000, cut
    into units joined by single spaces; one output line per input line."""
    out = []
    for line in text_lines(text):
        line = line.replace(" ", "").replace("\t", "").replace("\u3000", "")
        out.append(" ".join(apply_units(line, units)) + "\n")
    return "".join(out)
