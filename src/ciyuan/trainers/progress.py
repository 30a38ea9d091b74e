"""The trainers' progress bar: merges done out of the merge budget, drawn on standard error.

The native merge loop calls the bar now and then (without holding the GIL between calls); the
bar redraws at most ten times a second, so it costs nothing next to training.

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> with progress_bar("training BPE", True, stream=out) as bar:
    ...     bar(5, 10)
    >>> out.getvalue().split("\\r")[-1]
    'training BPE: [###############...............] 5/10 merges\\n'
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import IO, Iterator, Optional

__all__ = ["ProgressBar", "progress_bar"]


class ProgressBar:
    """``bar(done, total)`` draws ``label: [####....] done/total merges`` (a plain count when
    there is no limit); :meth:`close` draws the final count and ends the line."""

    def __init__(self, label: str, stream: Optional[IO[str]] = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.last = 0.0
        self.done: Optional[int] = None
        self.total = 0

    def __call__(self, done: int, total: int, force: bool = False) -> None:
        self.done, self.total = done, total
        now = time.monotonic()
        if not force and done < total and now - self.last < 0.1:
            return
        self.last = now
        if total >= 1 << 62:
            self.stream.write(f"\r{self.label}: {done} merges")
        else:
            width = 30
            filled = width * done // max(total, 1)
            self.stream.write(f"\r{self.label}: [{'#' * filled}{'.' * (width - filled)}] {done}/{total} merges")
        self.stream.flush()

    def close(self) -> None:
        if self.done is not None:
            self(self.done, self.total, force=True)  # the final count
        self.stream.write("\n")
        self.stream.flush()


@contextmanager
def progress_bar(label: str, show: bool, stream: Optional[IO[str]] = None) -> Iterator[Optional[ProgressBar]]:
    """A :class:`ProgressBar` closed on leaving (also when training fails), or None unless ``show``."""
    bar = ProgressBar(label, stream) if show else None
    try:
        yield bar
    finally:
        if bar is not None:
            bar.close()
