"""File helpers: atomic writes (temp file + rename, so a killed run leaves the old file intact)
and reading UTF-8 with errors that name the file and byte offset."""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterator, Union

from ciyuan._text import decode_utf8
from ciyuan.errors import InvalidInputError

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_output", "read_utf8"]

PathLike = Union[str, "os.PathLike[str]"]


@contextlib.contextmanager
def atomic_output(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file to stream into; it replaces ``path`` only if the block finishes."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    except OSError as e:  # the folder is missing or not writable: name the path asked for
        raise InvalidInputError(f"cannot write {path}: {e.strerror}; check that its folder exists and is "
                                "writable") from None
    try:
        # mkstemp makes the file private (0600); a written file gets the permissions an ordinary
        # open() would give it (0666 less the umask), or those of the file it replaces.
        try:
            mode = os.stat(path).st_mode & 0o7777
        except OSError:
            mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@functools.lru_cache(maxsize=None)
def _umask() -> int:
    """The process's umask, read once (by setting it and setting it back: there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half."""
    with atomic_output(path) as f:
        f.write(data)


def atomic_write_text(path: PathLike, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` as UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


def read_utf8(path: PathLike, errors: str = "strict") -> str:
    """Read a UTF-8 file (see :func:`ciyuan._text.decode_utf8` for ``errors``)."""
    return decode_utf8(Path(path).read_bytes(), str(path), errors)
