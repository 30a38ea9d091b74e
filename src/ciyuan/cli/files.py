"""File helpers shared by the commands: inputs (files or standard input), the output (standard
output, or a file replaced atomically when the command finishes) and lines in batches.

Only the standard library's lightest modules are imported here: ``ciyuan segment`` starts with
them (see :mod:`ciyuan.cli.segment`).
"""

from __future__ import annotations

import contextlib
import sys
from typing import BinaryIO, Iterator, List, Optional, Sequence, Tuple

from ciyuan._text import utf8_error
from ciyuan.errors import InvalidInputError

__all__ = ["BATCH_LINES", "open_output", "input_files", "line_batches"]

BATCH_LINES = 8192


@contextlib.contextmanager
def open_output(path: Optional[str]) -> Iterator[BinaryIO]:
    """Standard output (``None`` or ``-``), or ``path`` written atomically."""
    if path is None or path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
    else:
        from ciyuan._io import atomic_output

        with atomic_output(path) as f:
            yield f


def input_files(inputs: Sequence[str]) -> Iterator[Tuple[str, BinaryIO]]:
    """``(name, binary file)`` of each input; standard input for none or ``-``."""
    for name in inputs or ["-"]:
        if name == "-":
            yield "<stdin>", sys.stdin.buffer
        else:
            try:
                f = open(name, "rb")  # noqa: SIM115 (`with f` below; the try is for the open alone)
            except OSError as e:
                raise InvalidInputError(f"cannot read {name}: {e.strerror}") from None
            with f:
                yield name, f


def line_batches(name: str, f: BinaryIO, errors: str) -> Iterator[List[str]]:
    """Lines (without their newline) in batches; invalid UTF-8 names the file, byte and line."""
    batch: List[str] = []
    offset = 0
    for number, raw in enumerate(f, 1):
        try:
            line = raw.decode("utf-8", errors)
        except UnicodeDecodeError as e:
            raise utf8_error(name, raw, e.start, offset=offset, first_line=number) from None
        offset += len(raw)
        batch.append(line[:-1] if line.endswith("\n") else line)
        if len(batch) >= BATCH_LINES:
            yield batch
            batch = []
    if batch:
        yield batch
