"""Word counting with spilled runs, in plain Python: the twin of the native counter's spilling
(``cpp/src/word_counter.cc``, ``cpp/src/word_runs.cc``) and of :meth:`WordCounts.merge
<ciyuan.trainers.corpus.WordCounts.merge>`.

A counted word is ``(count, first)``: how often it was seen and the position where it was seen
first. A *run* is a table's words sorted by their bytes. Merging runs adds the counts and keeps
the smallest position, which is why it does not matter which table spilled what, or when: the
merged table is the one a single table would have held. The trainers then take the words in
first-seen order (ties by bytes).

Example:
    >>> pieces = [(b"low", 0), (b"er", 3), (b"low", 6), (b"new", 10), (b"er", 13)]
    >>> count_spilling(pieces, table_words=2) == count_in_memory(pieces)
    True
    >>> ordered(count_in_memory(pieces))
    [(b'low', 2), (b'er', 2), (b'new', 1)]
"""

from __future__ import annotations

import heapq
from typing import Dict, Iterable, Iterator, List, Sequence, Tuple

__all__ = ["count_in_memory", "count_spilling", "merge_runs", "merge_parts", "ordered"]

#: word bytes -> (count, first-seen position)
Table = Dict[bytes, Tuple[int, int]]
#: (word, count, first), in increasing word order
Run = List[Tuple[bytes, int, int]]


def _add(table: Table, word: bytes, count: int, first: int) -> None:
    old = table.get(word)
    table[word] = (count, first) if old is None else (old[0] + count, min(old[1], first))


def count_in_memory(pieces: Iterable[Tuple[bytes, int]]) -> Table:
    """One table of ``(word, position)`` pieces."""
    table: Table = {}
    for word, position in pieces:
        _add(table, word, 1, position)
    return table


def merge_runs(runs: Sequence[Run]) -> Iterator[Tuple[bytes, int, int]]:
    """The k-way merge: each word once, in word order, its counts added, its first position the smallest."""
    current: List = []
    for word, count, first in heapq.merge(*runs):
        if current and current[0] == word:
            current[1] += count
            current[2] = min(current[2], first)
            continue
        if current:
            yield current[0], current[1], current[2]
        current = [word, count, first]
    if current:
        yield current[0], current[1], current[2]


def count_spilling(pieces: Iterable[Tuple[bytes, int]], table_words: int) -> Table:
    """The same table, counted by a table that holds at most ``table_words`` words: a new word that
    does not fit sends the table to a run first. The runs are merged at the end."""
    runs: List[Run] = []
    table: Table = {}
    for word, position in pieces:
        if word not in table and len(table) >= table_words:
            runs.append(sorted((w, c, f) for w, (c, f) in table.items()))
            table = {}
        _add(table, word, 1, position)
    runs.append(sorted((w, c, f) for w, (c, f) in table.items()))
    return {w: (c, f) for w, c, f in merge_runs(runs)}


def merge_parts(parts: Sequence[Tuple[Table, int]]) -> Table:
    """Tables counted over consecutive parts of a corpus, each with its clock (the positions it
    consumed), as one table: a part's positions move past the clocks of the parts before it."""
    merged: Table = {}
    shift = 0
    for table, clock in parts:
        for word, (count, first) in table.items():
            _add(merged, word, count, first + shift)
        shift += clock
    return merged


def ordered(table: Table) -> List[Tuple[bytes, int]]:
    """``(word, count)`` in first-seen order (ties by bytes), as the trainers take them."""
    return [(w, c) for w, (c, _) in sorted(table.items(), key=lambda item: (item[1][1], item[0]))]
