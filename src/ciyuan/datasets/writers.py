"""Token shards on disk: the Megatron-LM indexed dataset, a flat token file with a numpy index,
or Parquet with a token-list column.

A writer takes documents' ids in order (:meth:`ShardWriter.add` for one,
:meth:`ShardWriter.add_batch` for the flat ``(ids, offsets)`` form of
``Tokenizer.encode_batch_ids(..., as_array=True)``) and cuts them into shards of at most
``shard_tokens`` tokens. **A document is never split**: a shard ends before the document that
would take it past ``shard_tokens``, and a document longer than ``shard_tokens`` alone makes a
shard of its own (longer than the limit). Where the shards are cut depends only on the
documents' lengths, never on how they were batched, so the files are the same bytes whatever
the batch sizes or thread counts. (:mod:`ciyuan.reference.shard_cut` is the rule written one
document at a time; the tests hold the writers to it.)

Shard ``i`` is named ``{prefix}_{i:05d}`` plus the format's endings:

======== ============================== ===================================================
format   files                          layout
======== ============================== ===================================================
megatron ``.bin``, ``.idx``             megatron-core's ``IndexedDataset``: the ids back to
                                        back in ``.bin``; ``.idx`` = ``MMIDIDX\\x00\\x00``,
                                        version 1 (u64), dtype code (u8: 8 uint16, 4 int32),
                                        sequence count (u64), document count + 1 (u64),
                                        sequence lengths (int32), sequence byte offsets
                                        (int64), document indices ``0..n`` (int64); all
                                        little-endian, one sequence per document
flat     ``.bin``, ``.offsets.npy``     the ids back to back (nanoGPT's ``np.memmap(path,
                                        dtype)``) and an int64 ``.npy`` of ``n + 1`` token
                                        offsets: document ``i`` is ``ids[o[i]:o[i + 1]]``
parquet  ``.parquet``                   one column ``input_ids`` (list of uint16/uint32),
                                        a row per document
======== ============================== ===================================================

Each file is written to a temporary name and renamed into place when the shard is finished
(:mod:`ciyuan._io`), so a killed run leaves finished shards and no half file under a shard's name.

Example:
    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> with open_writer("flat", out, dtype="uint16", shard_tokens=4) as w:
    ...     w.add([1, 2, 3])
    ...     w.add([4, 5])
    >>> [(s.number, s.documents, s.tokens) for s in w.shards]
    [(0, 1, 3), (1, 1, 2)]
"""

from __future__ import annotations

import contextlib
import io
import struct
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, BinaryIO, Callable, ContextManager, Dict, List, NamedTuple, Optional, Type

from ciyuan._io import PathLike, atomic_output, atomic_write_bytes
from ciyuan.errors import InvalidInputError, ModelError

__all__ = [
    "FORMATS",
    "ShardInfo",
    "ShardWriter",
    "MegatronWriter",
    "FlatWriter",
    "ParquetWriter",
    "open_writer",
    "token_dtype",
    "shard_files",
    "MEGATRON_HEADER",
    "MEGATRON_DTYPE_CODES",
]

#: The output formats, by name.
FORMATS = ("megatron", "flat", "parquet")

#: The first bytes of a Megatron ``.idx`` file.
MEGATRON_HEADER = b"MMIDIDX\x00\x00"
#: megatron-core's dtype codes (its ``DType`` enum) for the dtypes written here.
MEGATRON_DTYPE_CODES = {"uint16": 8, "int32": 4}

# Parquet row groups close at this many tokens (at a document's end): a batching-independent
# rule, so the file's bytes do not depend on how documents reached the writer.
_PARQUET_ROW_GROUP_TOKENS = 1 << 22


class ShardInfo(NamedTuple):
    """A finished shard: its number, its files (names in the output folder), how many documents
    and tokens it holds."""

    number: int
    files: List[str]
    documents: int
    tokens: int


def token_dtype(fmt: str, id_limit: int, dtype: str = "auto") -> str:
    """The numpy dtype name of the ids: ``uint16`` when every id fits (``id_limit <= 65536``),
    else ``uint32`` (``int32`` for Megatron, which has no unsigned 32-bit code); an explicit
    ``dtype`` is checked against the format and the vocabulary.

    Example:
        >>> token_dtype("flat", 50257), token_dtype("flat", 200019), token_dtype("megatron", 200019)
        ('uint16', 'uint32', 'int32')
    """
    _check_format(fmt)
    allowed = ("uint16", "int32") if fmt == "megatron" else ("uint16", "uint32")
    if dtype == "auto":
        return allowed[0] if id_limit <= 1 << 16 else allowed[1]
    if dtype not in allowed:
        raise InvalidInputError(f"dtype for {fmt} must be auto, {allowed[0]} or {allowed[1]}, not {dtype!r}")
    if dtype == "uint16" and id_limit > 1 << 16:
        raise InvalidInputError(f"dtype uint16 holds ids below 65536, but the vocabulary's ids go up to "
                                f"{id_limit - 1}; use dtype='auto'")
    return dtype


def shard_files(fmt: str, prefix: str, index: int) -> List[str]:
    """The file names of shard ``index`` in format ``fmt``.

    Example:
        >>> shard_files("megatron", "shard", 3)
        ['shard_00003.bin', 'shard_00003.idx']
    """
    _check_format(fmt)
    stem = f"{prefix}_{index:05d}"
    return {"megatron": [f"{stem}.bin", f"{stem}.idx"], "flat": [f"{stem}.bin", f"{stem}.offsets.npy"],
            "parquet": [f"{stem}.parquet"]}[fmt]


class ShardWriter(ABC):
    """Documents' ids in, shards out (see the module's doc for the cut and the layouts).

    Use it as a context manager: leaving the block normally finishes the last shard
    (:meth:`close`); leaving it by an exception drops the unfinished shard (:meth:`abort`).
    ``on_shard(info)`` is called after each shard's files are in place.
    """

    format = ""

    def __init__(self, out_dir: PathLike, *, dtype: str, shard_tokens: Optional[int] = None,
                 prefix: str = "shard", first_shard: int = 0,
                 on_shard: Optional[Callable[[ShardInfo], None]] = None) -> None:
        import numpy as np

        self._np = np
        self.out_dir = Path(out_dir)
        if not self.out_dir.is_dir():
            raise InvalidInputError(f"{self.out_dir}: the output folder does not exist")
        if shard_tokens is not None and (isinstance(shard_tokens, bool) or not isinstance(shard_tokens, int)
                                         or shard_tokens < 1):
            raise InvalidInputError(f"shard_tokens must be a positive integer or None, not {shard_tokens!r}")
        self.dtype = np.dtype(dtype)
        self.shard_tokens = shard_tokens
        self.prefix = prefix
        self.on_shard = on_shard
        self.shards: List[ShardInfo] = []
        self._next_index = first_shard
        self._open = False
        self._docs = 0
        self._tokens = 0
        self._closed = False

    # -- the public interface --------------------------------------------------------------------

    def add(self, ids: Any) -> None:
        """Add one document's ids (a list or an integer array)."""
        np = self._np
        arr = np.asarray(ids, dtype=np.int64) if not hasattr(ids, "dtype") else np.asarray(ids)
        self.add_batch(arr, np.array([0, len(arr)], dtype=np.int64))

    def add_batch(self, ids: Any, offsets: Any) -> None:
        """Add documents in the flat form: document ``i``'s ids are ``ids[offsets[i]:offsets[i + 1]]``."""
        np = self._np
        if self._closed:
            raise InvalidInputError("the writer is closed")
        ids = np.asarray(ids)
        offsets = np.asarray(offsets, dtype=np.int64)
        n = len(offsets) - 1
        if n <= 0:
            return
        ids = self._typed(ids[offsets[0]:offsets[-1]])
        offsets = offsets - offsets[0]
        i = 0
        while i < n:
            if self.shard_tokens is None:
                k = n - i
            else:
                room = self.shard_tokens - self._tokens
                ends = offsets[i + 1:] - offsets[i]  # tokens taken by documents i..j
                k = int(np.searchsorted(ends, room, side="right")) if room >= 0 else 0
                if k == 0:
                    if self._docs == 0:
                        k = 1  # a document longer than a shard makes a shard of its own
                    else:
                        self._finish()
                        continue
            if not self._open:
                self._start(self._next_index)
                self._open = True
            part = offsets[i:i + k + 1]
            self._write(ids[part[0]:part[-1]], np.diff(part))
            self._docs += k
            self._tokens += int(part[-1] - part[0])
            i += k

    def close(self) -> List[ShardInfo]:
        """Finish the last shard (if it holds a document); the finished shards."""
        if not self._closed:
            if self._open:
                self._finish()
            self._closed = True
        return self.shards

    def abort(self) -> None:
        """Drop the unfinished shard's temporary files; finished shards stay."""
        if self._open:
            self._discard()
            self._open = False
        self._closed = True

    def __enter__(self) -> "ShardWriter":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    # -- what each format does ------------------------------------------------------------------

    @abstractmethod
    def _start(self, index: int) -> None:
        """Open shard ``index``'s files (temporary until :meth:`_commit`)."""

    @abstractmethod
    def _write(self, ids: Any, lengths: Any) -> None:
        """Append documents: their ids (already of the shard's dtype) and lengths."""

    @abstractmethod
    def _commit(self) -> List[str]:
        """Put the shard's files in place; their names."""

    @abstractmethod
    def _discard(self) -> None:
        """Remove the shard's temporary files."""

    # -- shared ------------------------------------------------------------------------------------

    def _finish(self) -> None:
        files = self._commit()
        info = ShardInfo(self._next_index, files, self._docs, self._tokens)
        self._open = False
        self._docs = self._tokens = 0
        self._next_index += 1
        self.shards.append(info)
        if self.on_shard is not None:
            self.on_shard(info)

    def _typed(self, ids: Any) -> Any:
        """``ids`` as the shard's dtype, refusing ids it cannot hold (they would wrap around)."""
        if ids.dtype == self.dtype:
            return ids
        if len(ids):
            low, high = int(ids.min()), int(ids.max())
            if low < 0 or high > self._np.iinfo(self.dtype).max:
                bad = low if low < 0 else high
                raise ModelError(f"id {bad} does not fit the output dtype {self.dtype.name}")
        return ids.astype(self.dtype)

    def _names(self) -> List[str]:
        return shard_files(self.format, self.prefix, self._next_index)


class _AtomicFile:
    """A file streamed into under a temporary name: :meth:`commit` renames it into place,
    :meth:`discard` removes it (:func:`ciyuan._io.atomic_output`, held open across calls)."""

    def __init__(self, path: Path) -> None:
        self._cm: ContextManager[BinaryIO] = atomic_output(path)
        self.file = self._cm.__enter__()

    def commit(self) -> None:
        self._cm.__exit__(None, None, None)

    def discard(self) -> None:
        error = _Discarded()
        with contextlib.suppress(_Discarded):
            self._cm.__exit__(_Discarded, error, None)


class _Discarded(Exception):
    """Thrown into an atomic output to make it remove its temporary file."""


class _StreamedIds(ShardWriter):
    """Shared part of the formats whose ids are one ``.bin`` stream plus an index of lengths."""

    def _start(self, index: int) -> None:
        self._bin = _AtomicFile(self.out_dir / self._names()[0])
        self._lengths: List[Any] = []

    def _write(self, ids: Any, lengths: Any) -> None:
        self._bin.file.write(memoryview(self._np.ascontiguousarray(ids)).cast("B"))
        self._lengths.append(lengths)

    def _discard(self) -> None:
        self._bin.discard()

    def _all_lengths(self) -> Any:
        np = self._np
        return np.concatenate(self._lengths).astype(np.int64) if self._lengths else np.zeros(0, np.int64)


class MegatronWriter(_StreamedIds):
    """megatron-core's ``IndexedDataset`` (``.bin`` + ``.idx``), one sequence per document."""

    format = "megatron"

    def _commit(self) -> List[str]:
        np = self._np
        names = self._names()
        lengths = self._all_lengths()
        n = len(lengths)
        if n and int(lengths.max()) > np.iinfo(np.int32).max:
            raise ModelError(f"a document of {int(lengths.max())} tokens is longer than Megatron's index "
                             "holds (int32 lengths)")
        pointers = np.zeros(n, dtype=np.int64)
        if n > 1:
            np.cumsum(lengths[:-1] * self.dtype.itemsize, out=pointers[1:])
        index = io.BytesIO()
        index.write(MEGATRON_HEADER)
        index.write(struct.pack("<Q", 1))
        index.write(struct.pack("<B", MEGATRON_DTYPE_CODES[self.dtype.name]))
        index.write(struct.pack("<Q", n))
        index.write(struct.pack("<Q", n + 1))
        index.write(lengths.astype("<i4").tobytes())
        index.write(pointers.astype("<i8").tobytes())
        index.write(np.arange(n + 1, dtype="<i8").tobytes())
        self._bin.commit()  # .bin first: a reader looks for the .idx, and the manifest for both
        atomic_write_bytes(self.out_dir / names[1], index.getvalue())
        return names


class FlatWriter(_StreamedIds):
    """A flat token file (``.bin``) and an int64 ``.offsets.npy`` of document offsets."""

    format = "flat"

    def _commit(self) -> List[str]:
        np = self._np
        names = self._names()
        offsets = np.zeros(len(self._all_lengths()) + 1, dtype="<i8")
        np.cumsum(self._all_lengths(), out=offsets[1:])
        buf = io.BytesIO()
        np.save(buf, offsets, allow_pickle=False)
        self._bin.commit()
        atomic_write_bytes(self.out_dir / names[1], buf.getvalue())
        return names


class ParquetWriter(ShardWriter):
    """Parquet, a row per document in one column ``input_ids`` (a list of ids)."""

    format = "parquet"
    column = "input_ids"

    def __init__(self, out_dir: PathLike, **options: Any) -> None:
        super().__init__(out_dir, **options)
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise InvalidInputError("writing Parquet needs pyarrow: pip install pyarrow "
                                    "(or pip install 'ciyuan[datasets]')") from None
        self._pa, self._pq = pa, pq
        value_type = pa.uint16() if self.dtype.name == "uint16" else pa.uint32()
        self._schema = pa.schema([pa.field(self.column, pa.list_(value_type))])

    def _start(self, index: int) -> None:
        self._file = _AtomicFile(self.out_dir / self._names()[0])
        self._writer = self._pq.ParquetWriter(self._file.file, self._schema)
        self._pending_ids: List[Any] = []
        self._pending_lengths: List[Any] = []
        self._pending_tokens = 0

    def _write(self, ids: Any, lengths: Any) -> None:
        # Row groups close at the first document end at or past _PARQUET_ROW_GROUP_TOKENS tokens.
        np = self._np
        n = len(lengths)
        ends = np.cumsum(lengths)  # tokens through each document of this call
        start = 0
        while start < n:
            base = int(ends[start - 1]) if start else 0
            last = int(np.searchsorted(ends, base + _PARQUET_ROW_GROUP_TOKENS - self._pending_tokens, side="left"))
            if last >= n:
                self._pending_ids.append(ids[base:])
                self._pending_lengths.append(lengths[start:])
                self._pending_tokens += int(ends[-1]) - base
                return
            self._pending_ids.append(ids[base:int(ends[last])])
            self._pending_lengths.append(lengths[start:last + 1])
            self._flush()
            start = last + 1

    def _flush(self) -> None:
        np, pa = self._np, self._pa
        if not self._pending_lengths:
            return
        ids = np.concatenate(self._pending_ids)
        lengths = np.concatenate(self._pending_lengths).astype(np.int64)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        list_type = self._schema.field(0).type
        values = pa.array(ids, type=list_type.value_type)
        if offsets[-1] <= np.iinfo(np.int32).max:
            column = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values, type=list_type)
        else:
            raise ModelError("a Parquet row group over 2**31 tokens; lower shard_tokens")
        self._writer.write_table(pa.Table.from_arrays([column], schema=self._schema))
        self._pending_ids, self._pending_lengths, self._pending_tokens = [], [], 0

    def _commit(self) -> List[str]:
        self._flush()
        self._writer.close()
        self._file.commit()
        return self._names()

    def _discard(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
        self._file.discard()


_WRITERS: Dict[str, Type[ShardWriter]] = {"megatron": MegatronWriter, "flat": FlatWriter, "parquet": ParquetWriter}


def open_writer(fmt: str, out_dir: PathLike, *, dtype: str, shard_tokens: Optional[int] = None,
                prefix: str = "shard", first_shard: int = 0,
                on_shard: Optional[Callable[[ShardInfo], None]] = None) -> ShardWriter:
    """A :class:`ShardWriter` of format ``fmt`` (``"megatron"``, ``"flat"`` or ``"parquet"``)
    writing shards ``{prefix}_{i:05d}.*`` into the existing folder ``out_dir``.

    Args:
        fmt: the output format (see the module's table).
        out_dir: the folder the shards go into.
        dtype: the ids' numpy dtype, ``"uint16"``, ``"uint32"`` (``"int32"`` for Megatron):
            :func:`token_dtype` chooses it from the vocabulary.
        shard_tokens: the most tokens a shard holds (None: one shard); documents are not split.
        prefix: the shards' file name prefix.
        first_shard: the number of the first shard written (a resumed run continues the count).
        on_shard: called with each finished shard's :class:`ShardInfo`, after its files are in place.

    Example:
        >>> import tempfile
        >>> with open_writer("megatron", tempfile.mkdtemp(), dtype="uint16") as w:
        ...     w.add([7, 8, 9])
        >>> w.shards[0].files
        ['shard_00000.bin', 'shard_00000.idx']
    """
    _check_format(fmt)
    return _WRITERS[fmt](out_dir, dtype=dtype, shard_tokens=shard_tokens, prefix=prefix, first_shard=first_shard,
                         on_shard=on_shard)


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise InvalidInputError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")

