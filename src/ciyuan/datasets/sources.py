"""Documents read from a corpus: text files, JSON Lines and Parquet, streamed with bounded memory.

A *source* is a file, a directory (every file under it, recursively, in sorted order; hidden
files skipped) or a glob pattern (``data/*.jsonl.zst``). Each file's kind comes from its name
unless ``input_format`` says otherwise:

* ``*.parquet`` - Parquet: the string column ``column``, read one batch of rows at a time;
* ``*.jsonl``, ``*.ndjson``, ``*.json`` - JSON Lines: the string field ``field`` of each line's object;
* anything else - text: a document per line, per blank-line block or per file (``doc_per``).

Text and JSON Lines may be compressed: ``.gz`` (the standard library's gzip) and ``.zst``
(the ``zstandard`` package) are read as streams.

Every :class:`Document` knows the file it came from and its line there (the row, 1-based, for
Parquet), so an error names the place. A bad document - invalid UTF-8, a line that is not a JSON
object, a missing or non-string field, a null cell - raises :class:`~ciyuan.errors.InvalidInputError`
naming ``file:line``, or with ``skip_bad=True`` is counted (:attr:`DocumentStream.skipped`) and
left out.

Example:
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.jsonl").write_text('{"text": "hello"}\\n{"text": "world"}\\n')
    >>> [(doc.text, doc.line) for doc in iter_documents([d / "a.jsonl"])]
    [('hello', 1), ('world', 2)]
"""

from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import re
from pathlib import Path
from typing import (
    IO,
    Any,
    Callable,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
    cast,
    overload,
)

from ciyuan import _core
from ciyuan._io import after_last_newline, line_blocks
from ciyuan._text import utf8_error
from ciyuan.errors import InvalidInputError

__all__ = [
    "Document",
    "DocumentBatch",
    "DocumentStream",
    "Utf8Texts",
    "iter_documents",
    "expand_sources",
    "file_kind",
    "INPUT_FORMATS",
    "DOC_PER",
]

PathLike = Union[str, "os.PathLike[str]"]

#: ``input_format=`` values: ``auto`` decides per file from its name.
INPUT_FORMATS = ("auto", "text", "jsonl", "parquet")
#: ``doc_per=`` values for text files: a document per line, per blank-line block, or per file.
DOC_PER = ("line", "block", "file")

_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
_COMPRESSED = (".gz", ".zst")
_PARQUET_BATCH_ROWS = 4096  # rows per Parquet read: bounded memory whatever the row group size
_CHUNK_BYTES = 1 << 22  # text and JSON Lines are read in chunks of whole lines of about this size


class Document(NamedTuple):
    """One document: its text, the file it came from and where in it (1-based line, or the row
    of a Parquet file)."""

    text: str
    source: str
    line: int


class Utf8Texts(Sequence[str]):
    """Documents held as one UTF-8 buffer: document ``i`` is ``data[ends[i - 1]:ends[i]]``
    (from ``start`` for the first), a str only when asked for. The native readers of text lines
    and JSON Lines make them (no str, nor dict, per line); the encoder takes the buffer as it is
    (:meth:`utf8`).

    Example:
        >>> t = Utf8Texts("abéc".encode(), [2, 5])
        >>> list(t), len(t), t.sizes(), list(t[1:])
        (['ab', 'éc'], 2, [2, 3], ['éc'])
    """

    def __init__(self, data: bytes, ends: List[int], start: int = 0) -> None:
        self.data = data
        self.ends = ends
        self.start = start

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> "Utf8Texts": ...

    def __getitem__(self, i: Union[int, slice]) -> Union[str, "Utf8Texts"]:
        if isinstance(i, slice):
            first, stop, step = i.indices(len(self.ends))
            if step != 1:
                raise ValueError("Utf8Texts slices take every document (step 1)")
            stop = max(stop, first)
            return Utf8Texts(self.data, self.ends[first:stop], self.ends[first - 1] if first else self.start)
        n = len(self.ends)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("document index out of range")
        return self.data[self.ends[i - 1] if i else self.start:self.ends[i]].decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        data, at = self.data, self.start
        for end in self.ends:
            yield data[at:end].decode("utf-8")
            at = end

    def sizes(self) -> List[int]:
        """Each document's length in bytes."""
        return [b - a for a, b in zip([self.start] + self.ends[:-1], self.ends)]

    def utf8(self) -> Tuple[bytes, List[int]]:
        """``(data, ends)`` of these documents alone (a copy of the bytes only for a slice)."""
        if self.start == 0 and (not self.ends or self.ends[-1] == len(self.data)):
            return self.data, self.ends
        start = self.start
        return self.data[start:self.ends[-1] if self.ends else start], [e - start for e in self.ends]


class DocumentBatch(NamedTuple):
    """Consecutive documents of one file: their texts and lines (what :meth:`DocumentStream.batches`
    gives, without a :class:`Document` per document). ``texts`` is a :class:`Utf8Texts` when
    the stream reads lines natively (``utf8_texts=True``: text and JSON Lines)."""

    source: str
    texts: Sequence[str]
    lines: List[int]


def expand_sources(sources: Union[PathLike, Iterable[PathLike]]) -> List[Path]:
    """The files ``sources`` name, in order: a file as is, a directory's files (recursively,
    sorted by path, hidden files and folders left out), a glob pattern's matches (sorted).

    Raises :class:`~ciyuan.errors.InvalidInputError` for a path that does not exist, a pattern
    that matches nothing, or no source at all.

    Example:
        >>> expand_sources([])
        Traceback (most recent call last):
        ...
        ciyuan.errors.InvalidInputError: no input files: name files, folders or glob patterns
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    files: List[Path] = []
    for source in sources:
        path = Path(source)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*")
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not found:
                raise InvalidInputError(f"{path}: the folder holds no files")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        elif glob.has_magic(str(source)):
            matches = sorted(Path(p) for p in glob.glob(str(source), recursive=True) if Path(p).is_file())
            if not matches:
                raise InvalidInputError(f"{source}: the pattern matches no file")
            files.extend(matches)
        else:
            raise InvalidInputError(f"{source}: no such file, folder or glob pattern")
    if not files:
        raise InvalidInputError("no input files: name files, folders or glob patterns")
    return files


def file_kind(path: PathLike, input_format: str = "auto") -> str:
    """``"text"``, ``"jsonl"`` or ``"parquet"``: ``input_format`` unless it is ``"auto"``, else
    from the file name (a ``.gz`` / ``.zst`` ending is looked through).

    Example:
        >>> file_kind("part-0.jsonl.zst"), file_kind("a.parquet"), file_kind("books.txt.gz")
        ('jsonl', 'parquet', 'text')
    """
    if input_format not in INPUT_FORMATS:
        raise InvalidInputError(f"input_format must be one of {', '.join(INPUT_FORMATS)}, not {input_format!r}")
    if input_format != "auto":
        return input_format
    name = Path(path).name.lower()
    for suffix in _COMPRESSED:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(_JSONL_SUFFIXES):
        return "jsonl"
    return "text"


class DocumentStream:
    """The documents of ``files``, in order; iterate it once.

    Besides the documents it keeps what a progress bar and a report need: :attr:`skipped` (bad
    documents left out with ``skip_bad``), :attr:`first_bad` (the first one's message),
    :attr:`total_bytes` (the files' sizes on disk) and :meth:`bytes_done` (how far into them
    reading has gone, in bytes on disk, compressed bytes for compressed files).
    """

    def __init__(self, files: Sequence[Path], *, input_format: str = "auto", doc_per: str = "line",
                 field: str = "text", column: Optional[str] = None, errors: str = "strict",
                 skip_bad: bool = False, utf8_texts: bool = False) -> None:
        if doc_per not in DOC_PER:
            raise InvalidInputError(f"doc_per must be one of {', '.join(DOC_PER)}, not {doc_per!r}")
        if errors not in ("strict", "replace"):
            raise InvalidInputError(f"errors must be 'strict' or 'replace', not {errors!r}")
        self.files = list(files)
        self.kinds = [file_kind(f, input_format) for f in self.files]
        self.doc_per = doc_per
        self.field = field
        self.column = column if column is not None else field
        self.errors = errors
        self.skip_bad = skip_bad
        # Lines of text and JSON Lines read natively into Utf8Texts (see _lines_block and
        # _jsonl_block): for an encoder that takes them.
        self.utf8_texts = utf8_texts
        self.skipped = 0
        self.first_bad: Optional[str] = None
        self.total_bytes = sum(f.stat().st_size for f in self.files)
        self._done_before = 0  # sizes of the files finished
        self._raw: Optional[IO[bytes]] = None  # the file being read, for its position
        self._fraction: Optional[Tuple[int, int]] = None  # Parquet: (rows read, rows) of the file
        self._batches = self._all_batches()
        self._iterator = self._documents()

    def __iter__(self) -> Iterator[Document]:
        return self._iterator

    def __next__(self) -> Document:
        return next(self._iterator)

    def batches(self) -> Iterator[DocumentBatch]:
        """The same documents as iterating the stream, in :class:`DocumentBatch` es (a batch
        never spans two files): the fast form for whole-corpus work. Use one form or the other."""
        return self._batches

    def close(self) -> None:
        """Stops reading: the file being read is closed now. A stream left suspended holds its
        open file in a reference cycle (the reading generator and the stream), which only the
        cyclic garbage collector frees, and then may close the file before the generator ends
        (a ResourceWarning). Reading again after this yields nothing.

        Example:
            >>> import pathlib, tempfile
            >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
            >>> _ = p.write_text("one\\ntwo\\n")
            >>> stream = DocumentStream([p])
            >>> next(stream).text
            'one'
            >>> stream.close()
            >>> list(stream)
            []
        """
        self._iterator.close()  # type: ignore[attr-defined]  # generators
        self._batches.close()  # type: ignore[attr-defined]

    def bytes_done(self) -> int:
        """Bytes of the input files read so far (on disk: compressed bytes for compressed files)."""
        done = self._done_before
        raw = self._raw
        if raw is not None:
            with contextlib.suppress(ValueError):  # the reading thread may close the file meanwhile
                done += raw.tell()
        elif self._fraction is not None:
            rows_read, rows = self._fraction
            done += self._current_size * rows_read // max(rows, 1)
        return done

    # -- reading -----------------------------------------------------------------------------

    def _documents(self) -> Iterator[Document]:
        for batch in self._batches:
            source = batch.source
            for text, line in zip(batch.texts, batch.lines):
                yield Document(text, source, line)

    def _all_batches(self) -> Iterator[DocumentBatch]:
        for path, kind in zip(self.files, self.kinds):
            self._current_size = path.stat().st_size
            name = str(path)
            if kind == "parquet":
                yield from self._parquet(path)
            else:
                with open(path, "rb") as raw:
                    self._raw = raw
                    with _decompressed(path, raw) as stream:
                        if kind == "jsonl":
                            yield from self._chunked(name, stream, self._jsonl_block)
                        elif self.doc_per == "line":
                            yield from self._chunked(name, stream, self._lines_block)
                        elif self.doc_per == "block":
                            yield from self._chunked(name, stream, self._blocks_block, _after_last_blank_line)
                        else:
                            yield _as_batch(name, self._whole(name, stream))
                self._raw = None
            self._done_before += self._current_size
            self._fraction = None

    def part_batches(self, start: int, end: int, lines_before: int = 0) -> Iterator[DocumentBatch]:
        """The documents of bytes ``[start, end)`` of the stream's first file, as :meth:`batches`
        gives them, their lines counted after ``lines_before``: a part of a large file, read on
        its own (the Ray pipeline's read tasks). Only for a file of lines - uncompressed JSON
        Lines, or text with a document per line - and ``start`` at a line's start.

        Example:
            >>> import pathlib, tempfile
            >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
            >>> _ = p.write_text("one\\ntwo\\nthree\\n")
            >>> [(b.texts, b.lines) for b in DocumentStream([p]).part_batches(4, 14, lines_before=1)]
            [(['two', 'three'], [2, 3])]
        """
        path, kind = self.files[0], self.kinds[0]
        if kind == "parquet" or path.name.lower().endswith(_COMPRESSED) or (kind == "text" and self.doc_per != "line"):
            raise InvalidInputError(f"{path}: only a file of lines (uncompressed JSON Lines, or text with a document "
                                    "per line) is read in parts")
        with open(path, "rb") as raw:
            raw.seek(start)
            part = io.BufferedReader(_Window(raw, end - start))
            block = self._jsonl_block if kind == "jsonl" else self._lines_block
            yield from self._chunked(str(path), part, block, number=lines_before, offset=start)

    def _chunked(self, name: str, stream: IO[bytes], block_batch: Callable[[str, bytes, int, int], DocumentBatch],
                 cut: Callable[[bytes, int], int] = after_last_newline, *, number: int = 0,
                 offset: int = 0) -> Iterator[DocumentBatch]:
        """``block_batch(name, block, lines before it, bytes before it)`` of each block of whole
        lines (the last may lack its newline) read in chunks of about ``_CHUNK_BYTES``; a block
        ends where ``cut(data, bytes carried over)`` says (0: read on; see :func:`line_blocks`).
        ``number`` lines and ``offset`` bytes of the file come before ``stream``."""
        for block in line_blocks(stream, _CHUNK_BYTES, cut):
            batch = block_batch(name, block, number, offset)
            if batch.texts:
                yield batch
            number += block.count(b"\n")
            offset += len(block)

    def _blocks_block(self, name: str, block: bytes, number: int, offset: int) -> DocumentBatch:
        """A document per block of non-blank lines of ``block`` (which ends after a blank line or
        at the end of the file): found by one regular expression over the decoded text; line by
        line when it holds invalid UTF-8."""
        try:
            text = block.decode("utf-8", self.errors)
        except UnicodeDecodeError:
            return _as_batch(name, self._blocks(name, io.BytesIO(block), number, offset))
        crlf = "\r" in text
        texts: List[str] = []
        numbers: List[int] = []
        line, at = number + 1, 0
        for m in _TEXT_BLOCK.finditer(text):
            line += text.count("\n", at, m.start())
            at = m.start()
            found = m.group()
            if crlf:  # \r\n line ends: the \r goes with the newline (not on a last line without one)
                found = found.replace("\r\n", "\n")
                if found.endswith("\r") and m.end() < len(text):
                    found = found[:-1]
            texts.append(found)
            numbers.append(line)
        return DocumentBatch(name, texts, numbers)

    def _lines_block(self, name: str, block: bytes, number: int, offset: int) -> DocumentBatch:
        """A document per non-empty line of ``block`` (decoded at once; line by line when it
        holds invalid UTF-8, to name or skip the bad lines)."""
        if self.utf8_texts:
            found = cast(Optional[Tuple[bytes, List[int], List[int]]], _core.text_lines(block, number))
            if found is not None:  # None: invalid UTF-8, named (or skipped) below
                data, ends, numbers = found
                return DocumentBatch(name, Utf8Texts(data, ends), numbers)
        try:
            text = block.decode("utf-8", self.errors)
        except UnicodeDecodeError:
            return _as_batch(name, self._lines(name, io.BytesIO(block), number, offset))
        lines = text.split("\n")
        last = lines.pop()  # after the final newline: "", or a last line without newline
        if "\r" in text:  # \r\n line ends: the \r goes with the newline
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        if last:
            lines.append(last)
        texts = [line for line in lines if line]
        if len(texts) == len(lines):
            numbers = list(range(number + 1, number + 1 + len(lines)))
        else:
            numbers = [i for i, line in enumerate(lines, number + 1) if line]
        return DocumentBatch(name, texts, numbers)

    def _jsonl_block(self, name: str, block: bytes, number: int, offset: int) -> DocumentBatch:
        """The documents of the JSON lines of ``block``: all parsed in one pass when every line is
        good, else line by line (to name or skip the bad ones)."""
        if self.utf8_texts:
            plain = cast(Optional[Tuple[bytes, List[int], List[int]]],  # None: a line it leaves to orjson
                         _core.jsonl_field_strings(block, self.field, number))
            if plain is not None:
                data, ends, lines = plain
                return DocumentBatch(name, Utf8Texts(data, ends), lines)
        import orjson  # 2-3x faster than json: reading is the part of a run not on all cores

        raws = block.split(b"\n")
        if not raws[-1]:
            raws.pop()
        field = self.field
        try:
            numbers = [i for i, raw in enumerate(raws, number + 1) if raw.strip()]
            loads = orjson.loads
            texts = [loads(raws[i - number - 1])[field] for i in numbers]
            if not all(type(t) is str for t in texts):
                raise TypeError("not a string")
        except (ValueError, TypeError, KeyError, IndexError):  # a bad line somewhere: find it
            return _as_batch(name, self._jsonl(name, io.BytesIO(block), number, offset))
        return DocumentBatch(name, texts, numbers)

    def _bad(self, message: str) -> None:
        """Raise the error of a bad document, or count it with ``skip_bad``."""
        if not self.skip_bad:
            fix = "or" if "; fix" in message else "fix the input or"  # a UTF-8 message names its own fixes
            raise InvalidInputError(f"{message}; {fix} pass skip_bad=True (CLI: --skip-bad) to count and leave out "
                                    "such documents")
        self.skipped += 1
        if self.first_bad is None:
            self.first_bad = message

    def _decode(self, name: str, raw: bytes, offset: int, number: int) -> Optional[str]:
        """``raw`` as text, or None (skipped) for invalid UTF-8 under ``skip_bad``."""
        try:
            return raw.decode("utf-8", self.errors)
        except UnicodeDecodeError as e:
            self._bad(str(utf8_error(name, raw, e.start, offset=offset, first_line=number)))
            return None

    def _lines(self, name: str, stream: IO[bytes], first: int = 0, offset: int = 0) -> Iterator[Document]:
        """A document per non-empty line (its newline, ``\\n`` or ``\\r\\n``, left out), line by
        line; ``first`` lines and ``offset`` bytes come before ``stream`` in the file."""
        for number, raw in enumerate(stream, first + 1):
            text = self._decode(name, raw, offset, number)
            offset += len(raw)
            if text is None:
                continue
            text = _strip_newline(text)
            if text:
                yield Document(text, name, number)

    def _blocks(self, name: str, stream: IO[bytes], first: int = 0, offset: int = 0) -> Iterator[Document]:
        """A document per block of lines between blank (empty or ASCII-whitespace-only) lines;
        the block's lines joined by ``\\n``, without the last one's newline, line by line. A
        block with an invalid line is one bad document. ``first`` lines and ``offset`` bytes
        come before ``stream`` in the file."""
        block: List[str] = []
        start = 0
        bad = False
        for number, raw in enumerate(stream, first + 1):
            if not raw.strip():
                if block or bad:
                    if not bad:
                        yield Document("\n".join(block), name, start)
                    block, bad = [], False
                offset += len(raw)
                continue
            if not block and not bad:
                start = number
            text = self._decode(name, raw, offset, number)
            offset += len(raw)
            if text is None:
                bad, block = True, []
            elif not bad:
                block.append(_strip_newline(text))
        if block and not bad:
            yield Document("\n".join(block), name, start)

    def _whole(self, name: str, stream: IO[bytes]) -> Iterator[Document]:
        """The whole file as one document (line 1)."""
        text = self._decode(name, stream.read(), 0, 1)
        if text is not None:
            yield Document(text, name, 1)

    def _jsonl(self, name: str, stream: IO[bytes], first: int = 0, offset: int = 0) -> Iterator[Document]:
        """A document per non-blank line: the string ``field`` of the line's JSON object, line by
        line; ``first`` lines and ``offset`` bytes come before ``stream`` in the file."""
        import orjson

        loads = orjson.loads
        field = self.field
        for number, raw in enumerate(stream, first + 1):
            start = offset
            offset += len(raw)
            if not raw.strip():
                continue
            try:
                obj = loads(raw)
            except ValueError:  # orjson's error; the standard library decides (lone surrogate escapes ...)
                try:
                    obj = json.loads(raw)
                except UnicodeDecodeError:
                    # json.loads guesses the encoding itself; the UTF-8 decoder names the bad byte
                    self._bad(str(utf8_error(name, raw, _utf8_error_start(raw), offset=start, first_line=number)))
                    continue
                except ValueError as e:
                    self._bad(f"{name}:{number}: not a JSON line ({e})")
                    continue
            if not isinstance(obj, dict):
                self._bad(f"{name}:{number}: the line is JSON but not an object (a {type(obj).__name__})")
                continue
            text = obj.get(field)
            if not isinstance(text, str):
                what = "has no field" if field not in obj else f"has a {type(text).__name__}, not a string, in field"
                self._bad(f"{name}:{number}: the object {what} {field!r}")
                continue
            yield Document(text, name, number)

    def _rows(self, name: str, texts: List[Optional[str]], row: int) -> Iterator[Document]:
        """The rows of a Parquet batch with null cells, one by one (``row`` rows come before)."""
        for number, text in enumerate(texts, row + 1):
            if text is None:
                self._bad(f"{name}:{number}: row {number} has no value (null) in column {self.column!r}")
                continue
            yield Document(text, name, number)

    def _parquet(self, path: Path) -> Iterator[DocumentBatch]:
        """A document per row: the string ``column`` (row numbers are 1-based ``line``s)."""
        pq = _import_pyarrow_parquet()
        name = str(path)
        try:
            pfile = pq.ParquetFile(path)
        except Exception as e:  # pyarrow's own errors: not a Parquet file, damaged footer
            raise InvalidInputError(f"{name}: cannot read as Parquet: {e}") from None
        with pfile:
            names = pfile.schema_arrow.names
            if self.column not in names:
                raise InvalidInputError(f"{name}: no column {self.column!r} (columns: {', '.join(names)}); "
                                        "choose one with column= (CLI: --column)")
            rows = pfile.metadata.num_rows
            row = 0
            self._fraction = (0, rows)
            for batch in pfile.iter_batches(batch_size=_PARQUET_BATCH_ROWS, columns=[self.column]):
                values = batch.column(0)
                kind = str(values.type)
                if kind not in ("string", "large_string", "string_view"):
                    raise InvalidInputError(f"{name}: column {self.column!r} holds {kind}, not strings")
                texts = values.to_pylist()
                if None in texts:  # null cells: bad documents
                    yield _as_batch(name, self._rows(name, texts, row))
                else:
                    yield DocumentBatch(name, texts, list(range(row + 1, row + 1 + len(texts))))
                row += len(texts)
                self._fraction = (row, rows)


def iter_documents(
    sources: Union[PathLike, Iterable[PathLike]],
    *,
    input_format: str = "auto",
    doc_per: str = "line",
    field: str = "text",
    column: Optional[str] = None,
    errors: str = "strict",
    skip_bad: bool = False,
) -> DocumentStream:
    """The documents of ``sources`` (files, folders, glob patterns; see :func:`expand_sources`),
    streamed in order.

    Args:
        sources: one path or pattern, or several.
        input_format: ``"auto"`` (from each file's name, see :func:`file_kind`), ``"text"``,
            ``"jsonl"`` or ``"parquet"``.
        doc_per: for text files: ``"line"`` (each non-empty line is a document, its newline
            left out), ``"block"`` (lines between blank lines, joined by ``\\n``) or ``"file"``.
        field: the JSON Lines field holding the text.
        column: the Parquet column holding the text (default: ``field``).
        errors: invalid UTF-8 in text files: ``"strict"`` (a bad document) or ``"replace"``
            (read as U+FFFD).
        skip_bad: count and leave out bad documents instead of raising
            :class:`~ciyuan.errors.InvalidInputError`.

    Returns:
        A :class:`DocumentStream` of :class:`Document` (text, source, line), which also counts
        the documents skipped and the bytes read.

    Example:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
        >>> _ = p.write_text("one\\ntwo\\n\\nthree\\n")
        >>> [d.text for d in iter_documents(p, doc_per="block")]
        ['one\\ntwo', 'three']
    """
    return DocumentStream(expand_sources(sources), input_format=input_format, doc_per=doc_per, field=field,
                          column=column, errors=errors, skip_bad=skip_bad)


# -- helpers ------------------------------------------------------------------------------------


# Blank lines hold ASCII whitespace only (as bytes.strip() sees it); a block is a run of the others.
_WS = " \t\r\x0b\x0c"
_BLANK_LINE = re.compile(rb"\n[ \t\r\x0b\x0c]*\n")  # reads the same backwards
_TEXT_BLOCK = re.compile(f"(?m)^[{_WS}]*[^{_WS}\n][^\n]*(?:\n[{_WS}]*[^{_WS}\n][^\n]*)*")


def _after_last_blank_line(data: bytes, carried: int) -> int:
    """Where ``data`` can be cut between blocks: just after its last blank line (0: none). The
    ``carried`` bytes before the new chunk hold none, so the search starts at their last newline
    (searched backwards: the pattern is its own reverse)."""
    start = data.rfind(b"\n", 0, carried)
    tail = data[start if start >= 0 else carried:]
    m = _BLANK_LINE.search(tail[::-1])
    return len(data) - m.start() if m else 0


def _as_batch(name: str, documents: Iterable[Document]) -> DocumentBatch:
    """Documents of one file as a batch."""
    docs = list(documents)
    return DocumentBatch(name, [d.text for d in docs], [d.line for d in docs])


def _utf8_error_start(raw: bytes) -> int:
    """Where the first invalid UTF-8 sequence of ``raw`` starts (0 if there is none)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start
    return 0


def _strip_newline(text: str) -> str:
    if text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    return text


class _Window(io.RawIOBase):
    """The next ``size`` bytes of ``raw`` as a stream of their own (a part of a file)."""

    def __init__(self, raw: IO[bytes], size: int) -> None:
        self.raw = raw
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(min(len(buffer), self.left))
        buffer[:len(data)] = data
        self.left -= len(data)
        return len(data)


class _decompressed:
    """A context manager giving the decompressed binary stream of ``raw`` (by ``path``'s ending)."""

    def __init__(self, path: Path, raw: IO[bytes]) -> None:
        self.path = path
        self.raw = raw
        self.stream: Any = None  # GzipFile or a BufferedReader over zstandard's reader

    def __enter__(self) -> IO[bytes]:
        name = self.path.name.lower()
        if name.endswith(".gz"):
            import gzip

            self.stream = gzip.GzipFile(fileobj=self.raw, mode="rb")
        elif name.endswith(".zst"):
            zstandard = _import_zstandard()
            reader = zstandard.ZstdDecompressor().stream_reader(self.raw, read_across_frames=True)
            self.stream = io.BufferedReader(reader, buffer_size=1 << 20)
        else:
            return self.raw
        return cast(IO[bytes], self.stream)

    def __exit__(self, *exc: Any) -> None:
        if self.stream is not None:
            with contextlib.suppress(Exception):  # a damaged stream's close error is not the one to report
                self.stream.close()


def _import_zstandard() -> Any:
    try:
        import zstandard
    except ImportError:
        raise InvalidInputError("reading .zst files needs the zstandard package: pip install zstandard "
                                "(or pip install 'ciyuan[datasets]')") from None
    return zstandard


def _import_pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InvalidInputError("reading Parquet files needs pyarrow: pip install pyarrow "
                                "(or pip install 'ciyuan[datasets]')") from None
    return pq
