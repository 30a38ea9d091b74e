"""The shard cut of ``ciyuan.datasets.writers``, one document at a time: the twin the writers'
vectorised cut (numpy ``searchsorted`` over a batch's cumulative lengths) is held against.

Rule: a shard holds whole documents and at most ``limit`` tokens; a shard ends before the
document that would take it past ``limit``; a document longer than ``limit`` is a shard of its
own. Empty documents join the open shard (they add nothing).

Example:
    >>> shard_sizes([3, 2, 9, 1, 1], limit=4)
    [1, 1, 1, 2]
    >>> shard_sizes([1, 1], limit=None)
    [2]
"""

from __future__ import annotations

from typing import Iterable, List, Optional

__all__ = ["shard_sizes"]


def shard_sizes(lengths: Iterable[int], limit: Optional[int]) -> List[int]:
    """How many documents each shard holds, for documents of ``lengths`` tokens (``limit``
    None: one shard)."""
    sizes: List[int] = []
    docs = tokens = 0
    for n in lengths:
        if docs and limit is not None and tokens + n > limit:
            sizes.append(docs)  # this document would overflow the open shard: close it first
            docs = tokens = 0
        docs += 1
        tokens += n
    if docs:
        sizes.append(docs)
    return sizes
