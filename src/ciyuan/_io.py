"""File helpers: atomic writes (temp file + rename, so a killed run leaves the old file intact)
and reading UTF-8 with errors that name the file and byte offset."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import tempfile
from pathlib import Path
from typing import IO, BinaryIO, Callable, Iterator, Union

from ciyuan._text import decode_utf8
from ciyuan.errors import InvalidInputError

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_output", "make_dirs", "read_utf8", "line_blocks",
           "after_last_newline"]

PathLike = Union[str, "os.PathLike[str]"]

#: Errors that only writing gives (a full disk or quota, a read-only filesystem, a file too
#: large): raised while the output is written, they are the output's fault, whatever code
#: made the write.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})


def _write_error(path: Path, e: OSError) -> InvalidInputError:
    hint = {errno.ENOSPC: "free some space or write elsewhere", errno.EDQUOT: "free some space or write elsewhere",
            errno.EROFS: "the filesystem is read-only: write elsewhere"}.get(e.errno or 0, "write elsewhere")
    return InvalidInputError(f"cannot write {path}: {e.strerror}; {hint} (the old file, if any, is unchanged)")


@contextlib.contextmanager
def atomic_output(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file to stream into; it replaces ``path`` only if the block finishes.

    A missing or unwritable folder, a full disk or a read-only filesystem is an
    :class:`~ciyuan.errors.InvalidInputError` naming ``path``, and ``path`` is left as it was.

    Example:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "out.bin"
        >>> with atomic_output(out) as f:
        ...     _ = f.write(b"done")
        >>> out.read_bytes()
        b'done'
    """
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
        f = os.fdopen(fd, "wb")
        try:
            try:
                yield f
            except OSError as e:
                if e.errno in _WRITE_ERRNOS:  # the block's writes to f failed
                    raise _write_error(path, e) from None
                raise
            try:
                f.flush()
                os.fsync(f.fileno())
            except OSError as e:  # the last buffered bytes did not fit
                raise _write_error(path, e) from None
        finally:
            # After a failed write, close() would try the buffered bytes again and fail the same
            # way: that second error says nothing new (and would hide the first).
            with contextlib.suppress(OSError):
                f.close()
        try:
            os.replace(tmp, path)
        except OSError as e:  # e.g. path is a folder
            raise InvalidInputError(f"cannot write {path}: {e.strerror}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def make_dirs(path: PathLike) -> Path:
    """Create the folder ``path`` (and its parents) if missing; an :class:`InvalidInputError`
    naming it when it cannot be (a read-only filesystem, a file in the way, no permission).

    Example:
        >>> import tempfile, pathlib
        >>> make_dirs(pathlib.Path(tempfile.mkdtemp()) / "a" / "b").is_dir()
        True
    """
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InvalidInputError(f"cannot create the folder {path}: {e.strerror}; write elsewhere") from None
    return path


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


def after_last_newline(data: bytes, carried: int) -> int:
    """Where :func:`line_blocks` cuts by default: just after the last line break (0: none yet)."""
    return data.rfind(b"\n") + 1


def line_blocks(stream: IO[bytes], chunk_bytes: int,
                cut: Callable[[bytes, int], int] = after_last_newline) -> Iterator[bytes]:
    """The bytes of ``stream`` in blocks that end where ``cut`` says, read ``chunk_bytes`` at a
    time: by default blocks of whole lines (the last may lack its line break). A line longer
    than a chunk is read on until it ends, so a block is never cut inside a line (nor a UTF-8
    character). Joined, the blocks are the whole stream.

    ``cut(data, carried)`` gets the bytes read so far (the ``carried`` bytes left over from the
    previous reads, then the new chunk) and returns where the block ends: 0 to read on.

    Why one helper: the corpus readers (``ciyuan eval``'s corpora, the dataset sources, the
    trainers' files) all read big files this way, so a corpus of any size takes the memory of
    a chunk or two.

    Example:
        >>> import io
        >>> list(line_blocks(io.BytesIO(b"one\\ntwo\\nthree"), 5))
        [b'one\\n', b'two\\n', b'three']
        >>> list(line_blocks(io.BytesIO(b"a long line\\nb\\n"), 4))   # longer than a chunk: read on
        [b'a long line\\n', b'b\\n']
    """
    rest = b""
    while True:
        chunk = stream.read(chunk_bytes)
        if chunk:
            data = rest + chunk if rest else chunk
            end = cut(data, len(rest))
            if end == 0:  # no place to cut yet (a line, or a block, longer than a chunk): read on
                rest = data
                continue
            block, rest = data[:end], data[end:]
        elif rest:
            block, rest = rest, b""
        else:
            return
        yield block
