"""The trainers' progress bar: merges done out of the merge budget, drawn on standard error.

The native merge loop calls the bar now and then (without holding the GIL between calls); the
bar redraws at most ten times a second, so it costs nothing next to training.

Other code can follow training too: inside ``with progress_listener(callback):`` every
trainer's progress, drawn or not, also goes to ``callback(label, done, total)`` (``ciyuan
serve``'s progress bar in the page). A listener that raises stops training with its error.

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
from contextvars import ContextVar
from typing import IO, Callable, Iterator, Optional

__all__ = ["ProgressBar", "progress_bar", "progress_listener"]

#: ``listener(label, done, total)``
Listener = Callable[[str, int, int], None]

# A context variable, not a global: a server trains on worker threads, each for one job, and
# each job's reports must reach its own listener only.
_LISTENER: ContextVar[Optional[Listener]] = ContextVar("ciyuan_training_listener", default=None)


class ProgressBar:
    """``bar(done, total)`` draws ``label: [####....] done/total merges`` (a plain count when
    there is no limit); :meth:`close` draws the final count and ends the line."""

    def __init__(self, label: str, stream: Optional[IO[str]] = None, *, draw: bool = True,
                 listener: Optional[Listener] = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.draw = draw
        self.listener = listener
        self.last = 0.0
        self.done: Optional[int] = None
        self.total = 0

    def __call__(self, done: int, total: int, force: bool = False) -> None:
        self.done, self.total = done, total
        if self.listener is not None:
            self.listener(self.label, done, total)
        if self.draw:
            self._draw(done, total, force)

    def _draw(self, done: int, total: int, force: bool) -> None:
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
        if not self.draw:
            return
        if self.done is not None:
            self._draw(self.done, self.total, force=True)  # the final count (the listener has had it)
        self.stream.write("\n")
        self.stream.flush()


@contextmanager
def progress_bar(label: str, show: bool, stream: Optional[IO[str]] = None) -> Iterator[Optional[ProgressBar]]:
    """A :class:`ProgressBar` closed on leaving (also when training fails), or None unless ``show``
    or a :func:`progress_listener` is listening (then the bar reports to it, and draws only with ``show``)."""
    listener = _LISTENER.get()
    bar = ProgressBar(label, stream, draw=show, listener=listener) if show or listener is not None else None
    try:
        yield bar
    finally:
        if bar is not None:
            bar.close()


@contextmanager
def progress_listener(listener: Listener) -> Iterator[None]:
    """Send the progress of every training run in this context (this thread, or this task) to
    ``listener(label, done, total)`` as well.

    Example:
        >>> seen = []
        >>> with progress_listener(lambda label, done, total: seen.append(label)):
        ...     with progress_bar("training BPE", False) as bar:
        ...         bar(1, 2)
        >>> seen
        ['training BPE']
    """
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
