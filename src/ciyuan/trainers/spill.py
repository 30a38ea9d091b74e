"""Word counting under a memory limit: sorted runs spilled to a temporary directory, merged back.

The native counter (``_core.WordCounter``) measures the bytes its word tables hold. Given a
limit it spills a table that would grow past its share as a *run* (its words in byte order,
with counts and first-seen positions) and starts the table again; when counting ends the runs
are merged k-way, streaming. Counts add and a word's first-seen position is the smallest of its
runs', and positions are global (the counter's clock), so the merged words, counts and order are
exactly those of counting in memory: the trainers learn byte-identical merges and vocabularies.

How the limit is shared: half for the main table, a quarter for the threads' tables of a batch
(at least 64 KiB each, so a small limit counts on fewer threads), and file chunks of at most a
sixteenth (a chunk and the partial line carried over: an eighth). What is left covers the
merge's read buffers (64 KiB per run, at most 64 runs open at once). The limit bounds what
counting holds, not the interpreter, the caller's texts or the trainer that runs after it: once
merged, the distinct words (which the trainer needs) are held exactly sized, without the hash
index.

The runs live in a :func:`tempfile.TemporaryDirectory` (under ``spill_dir``, else the system's
temporary directory), removed when counting ends, also on error or Ctrl-C.

Example:
    >>> parse_memory_limit("64MB"), parse_memory_limit("1.5 GiB"), parse_memory_limit(300_000)
    (67108864, 1610612736, 300000)
"""

from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Optional, Union

from ciyuan.errors import InvalidInputError

if TYPE_CHECKING:
    from ciyuan import _core

__all__ = ["MemoryLimit", "parse_memory_limit", "spilling", "MIN_MEMORY_LIMIT"]

#: Bytes (an int) or a size such as ``"64MB"``; None: no limit.
MemoryLimit = Union[int, str, None]

#: Below this the tables could not hold a useful number of words between spills.
MIN_MEMORY_LIMIT = 256 << 10

# Binary multiples for both spellings, as `sort -S` and most memory flags read them: a limit
# is compared with RSS, which the kernel reports in KiB.
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*")


def parse_memory_limit(value: MemoryLimit) -> Optional[int]:
    """``value`` in bytes: an int as is, a string with a unit (``"64MB"``, ``"512k"``,
    ``"1.5GiB"``; K, M, G and T are powers of 1024 with or without ``B``/``iB``), None for none.

    Raises :class:`~ciyuan.errors.InvalidInputError` for anything else, or a limit below
    :data:`MIN_MEMORY_LIMIT` (256 KiB).

    Example:
        >>> parse_memory_limit(None) is None
        True
        >>> parse_memory_limit("lots")
        Traceback (most recent call last):
        ...
        ciyuan.errors.InvalidInputError: memory_limit must be bytes or a size such as '64MB' or '2GiB', not 'lots'
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidInputError(f"memory_limit must be bytes or a size such as '64MB', not {value!r}")
    if isinstance(value, str):
        m = _SIZE.fullmatch(value)
        unit = _UNITS.get(m.group(2).lower()) if m else None
        if m is None or unit is None:
            raise InvalidInputError(
                f"memory_limit must be bytes or a size such as '64MB' or '2GiB', not {value!r}")
        limit = int(float(m.group(1)) * unit)
    else:
        limit = value
    if limit < MIN_MEMORY_LIMIT:
        raise InvalidInputError(f"memory_limit {value!r} is below the smallest workable limit, 256KB")
    return limit


@contextmanager
def spilling(counter: "_core.WordCounter", memory_limit: Optional[int],
             spill_dir: Optional[Union[str, "os.PathLike[str]"]] = None) -> Iterator[None]:
    """Count into ``counter`` within ``memory_limit`` bytes (None: no limit, nothing spilled).

    On a normal exit the runs are merged back into ``counter`` and the words are held exactly
    sized (``finish``, also without a limit: the trainer starts from less); on any exit the run
    directory is removed.
    """
    if memory_limit is None:
        yield
        counter.finish()
        return
    if spill_dir is not None and not os.path.isdir(spill_dir):
        raise InvalidInputError(f"spill_dir {os.fspath(spill_dir)!r} is not a directory")
    with tempfile.TemporaryDirectory(prefix="ciyuan-spill-", dir=spill_dir) as runs:
        counter.set_memory_limit(memory_limit, runs)
        try:
            yield
            counter.finish()
        except BaseException:
            counter.clear()  # the partial counts are of no use; their runs go with the directory
            raise
        finally:
            counter.set_memory_limit(0, "")
