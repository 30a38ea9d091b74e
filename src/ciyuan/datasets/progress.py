"""encode-dataset's progress line: documents, MB read of the total, tokens, MB/s and ETA.

Like the trainers' bar (:mod:`ciyuan.trainers.progress`) it redraws at most ten times a second
on standard error, so it costs nothing next to encoding.

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> p = DatasetProgress(total_bytes=10_000_000, stream=out)
    >>> p.update(documents=1200, bytes_done=5_000_000, tokens=1_300_000, force=True)
    >>> out.getvalue().split(" MB/s")[0].startswith("\\rencode-dataset: 1,200 docs, 5.0/10.0 MB, 1,300,000 tokens,")
    True
"""

from __future__ import annotations

import sys
import time
from typing import IO, Optional

__all__ = ["DatasetProgress"]


class DatasetProgress:
    """``update(...)`` redraws the line; :meth:`close` draws the final figures and ends it."""

    def __init__(self, total_bytes: int, stream: Optional[IO[str]] = None, label: str = "encode-dataset") -> None:
        self.total = total_bytes
        self.stream = stream or sys.stderr
        self.label = label
        self.start = time.monotonic()
        self.last = 0.0
        self.figures = (0, 0, 0)
        self.width = 0

    def update(self, documents: int, bytes_done: int, tokens: int, force: bool = False) -> None:
        self.figures = (documents, bytes_done, tokens)
        now = time.monotonic()
        if not force and now - self.last < 0.1:
            return
        self.last = now
        elapsed = max(now - self.start, 1e-9)
        rate = bytes_done / elapsed
        eta = "?"
        if rate > 0 and self.total >= bytes_done:
            left = int((self.total - bytes_done) / rate)
            eta = f"{left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"
        line = (f"{self.label}: {documents:,} docs, {bytes_done / 1e6:.1f}/{self.total / 1e6:.1f} MB, "
                f"{tokens:,} tokens, {rate / 1e6:.1f} MB/s, ETA {eta}")
        pad = max(self.width - len(line), 0)  # clear what a longer earlier line left
        self.width = len(line)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()

    def close(self) -> None:
        self.update(*self.figures, force=True)
        self.stream.write("\n")
        self.stream.flush()
