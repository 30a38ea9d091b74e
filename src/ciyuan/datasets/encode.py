"""``encode_dataset``: a corpus in, token shards out, resumable (behind ``ciyuan encode-dataset``).

The documents (:mod:`ciyuan.datasets.sources`) are read on a thread of their own in batches of
about ``batch_chars`` characters; each batch is encoded on all cores by
``Tokenizer.encode_batch_ids(texts, as_array=True)`` (flat ids + offsets: no Python int per
token), BOS/EOS ids are put around each document with numpy, and the writer
(:mod:`ciyuan.datasets.writers`) cuts the stream into shards. After each finished shard the
manifest (:mod:`ciyuan.datasets.manifest`) is rewritten; a run started again on the same folder
skips the documents the finished shards hold and continues with the next shard, so the result is
the same bytes as a run that was never interrupted. The ids are exactly ``encode_ids`` of each
document, whatever ``threads`` is.

Example:
    >>> import pathlib, tempfile
    >>> from ciyuan import Tokenizer
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "in.txt").write_text("hello world\\nsecond line\\n")
    >>> tok = Tokenizer.from_tiktoken("cl100k_base.tiktoken")        # doctest: +SKIP
    >>> r = encode_dataset(d / "in.txt", d / "out", tok, format="flat", eos="<|endoftext|>")  # doctest: +SKIP
    >>> r.documents, r.shards[0].files                               # doctest: +SKIP
    (2, ['shard_00000.bin', 'shard_00000.offsets.npy'])
"""

from __future__ import annotations

import bisect
import concurrent.futures
import contextlib
import hashlib
import itertools
import json
import queue
import re
import threading
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    cast,
)

from ciyuan._io import PathLike, make_dirs
from ciyuan.datasets.manifest import MANIFEST_NAME, Manifest, describe_inputs
from ciyuan.datasets.progress import DatasetProgress
from ciyuan.datasets.sources import DocumentBatch, DocumentStream, Utf8Texts, expand_sources
from ciyuan.datasets.writers import ShardInfo, open_writer, token_dtype
from ciyuan.errors import CiyuanError, InvalidInputError

if TYPE_CHECKING:
    from ciyuan.tokenizer import Tokenizer

__all__ = ["encode_dataset", "EncodeResult", "EncodedBatch", "Pipeline", "DEFAULT_SHARD_TOKENS", "special_ids",
           "tokenizer_fingerprint", "add_bos_eos", "encode_finding_refused"]

#: Shard size when none is given: 100 million tokens (200 MB of uint16, 400 MB of 32-bit ids).
DEFAULT_SHARD_TOKENS = 100_000_000
_BATCH_CHARS = 4 << 20  # characters per encode call: enough to keep every core busy
_REFUSED_GROUP = 256  # a refused batch is encoded again in groups of this many documents

TokenSpec = Union[None, int, str, Sequence[Union[int, str]]]
T = TypeVar("T")


class EncodeResult(NamedTuple):
    """What a run wrote: the output folder and format, the ids' dtype, the shards (all of them,
    also those of earlier runs it resumed), documents and tokens written, bad documents skipped,
    and how many shards were already finished when it started."""

    output: Path
    format: str
    dtype: str
    shards: List[ShardInfo]
    documents: int
    tokens: int
    skipped: int
    resumed_shards: int


def encode_dataset(
    inputs: Union[PathLike, Iterable[PathLike]],
    output: PathLike,
    tokenizer: Union["Tokenizer", PathLike],
    *,
    format: str = "megatron",
    bos: TokenSpec = None,
    eos: TokenSpec = None,
    shard_tokens: Optional[int] = DEFAULT_SHARD_TOKENS,
    dtype: str = "auto",
    threads: Optional[int] = None,
    skip_bad: bool = False,
    input_format: str = "auto",
    doc_per: str = "line",
    field: str = "text",
    column: Optional[str] = None,
    errors: str = "strict",
    add_special_tokens: bool = True,
    allowed_special: Union[str, Iterable[str]] = (),
    disallowed_special: Union[str, Iterable[str]] = "all",
    prefix: str = "shard",
    overwrite: bool = False,
    progress: bool = False,
    pattern: Optional[str] = None,
    batch_chars: int = _BATCH_CHARS,
    pipeline: Optional[Pipeline] = None,
) -> EncodeResult:
    """Encode every document of ``inputs`` into token shards in the folder ``output``.

    Args:
        inputs: files, folders or glob patterns (:func:`ciyuan.datasets.iter_documents`).
        output: the output folder (made if missing); it gets the shards and ``manifest.json``.
        tokenizer: a :class:`~ciyuan.Tokenizer`, or a path for :meth:`Tokenizer.load` (with ``pattern``).
        format: ``"megatron"`` (``.bin`` + ``.idx``), ``"flat"`` (``.bin`` + ``.offsets.npy``)
            or ``"parquet"`` (see :mod:`ciyuan.datasets.writers`).
        bos, eos: ids put before / after every document: an id, a token string, or a sequence of them.
        shard_tokens: the most tokens per shard (None: one shard); documents are never split,
            a longer document is a shard of its own.
        dtype: ``"auto"`` (uint16 when every id fits, else uint32; int32 for Megatron) or a dtype name.
        threads: encoding threads (default: all cores); the output does not depend on it.
        skip_bad: count and leave out bad documents (invalid UTF-8, bad JSON, missing field,
            special-token text the tokenizer refuses) instead of stopping at the first with its file:line.
        input_format, doc_per, field, column, errors: how documents are read (see
            :func:`ciyuan.datasets.iter_documents`).
        add_special_tokens, allowed_special, disallowed_special: as for
            :meth:`Tokenizer.encode_batch_ids` (the ids are those of ``encode_ids``).
        prefix: the shards' file name prefix.
        overwrite: start again in a folder holding another run (its shards and manifest are removed).
        progress: draw a progress line on standard error (documents, MB, tokens, MB/s, ETA).
        pattern: with a tokenizer path: the tiktoken encoding name or pattern (:meth:`Tokenizer.load`).
        batch_chars: about how many characters are encoded per call (memory vs. overhead).
        pipeline: what reads and encodes the documents (default: a reading thread and this
            machine's cores); see :data:`Pipeline`. BOS/EOS, the shards, the manifest and resuming
            stay here, so any pipeline that gives ``encode_batch_ids``'s ids in document order gives
            the same bytes (the Ray Data pipeline of :mod:`ciyuan.datasets.ray_engine` is one).

    Returns:
        An :class:`EncodeResult`. A folder whose manifest says the same run is complete is left
        as it is; one with an unfinished run of the same job and inputs is resumed.

    Raises:
        InvalidInputError: a bad document (naming file:line) without ``skip_bad``; a folder
            holding another run without ``overwrite``; bad arguments.
    """
    from ciyuan.tokenizer import Tokenizer

    tok = tokenizer if isinstance(tokenizer, Tokenizer) else Tokenizer.load(tokenizer, pattern)
    if tok.model.default_sampling() is not None:
        raise InvalidInputError("the tokenizer samples its segmentation on every encode (BPE dropout): its ids would "
                                "differ from run to run and a resumed run would not match; set the model's dropout "
                                "to None for encode_dataset")
    id_limit = _id_limit(tok)
    out_dtype = token_dtype(format, id_limit, dtype)
    bos_ids = special_ids(tok, bos, "bos", id_limit)
    eos_ids = special_ids(tok, eos, "eos", id_limit)
    if isinstance(batch_chars, bool) or not isinstance(batch_chars, int) or batch_chars < 1:
        raise InvalidInputError(f"batch_chars must be a positive integer, not {batch_chars!r}")
    if shard_tokens is not None and (isinstance(shard_tokens, bool) or not isinstance(shard_tokens, int)
                                     or shard_tokens < 1):
        raise InvalidInputError(f"shard_tokens must be a positive integer or None, not {shard_tokens!r}")
    if not prefix or "/" in prefix or "\\" in prefix or prefix.startswith("."):
        raise InvalidInputError(f"prefix must be a plain file name start, not {prefix!r}")
    out = Path(output)
    # A folder given as input may hold the output folder: its shards are not inputs.
    files = [f for f in expand_sources(inputs) if not _inside(f, out)]
    if not files:
        raise InvalidInputError(f"no input files outside the output folder {out}")
    # The local pipeline reads JSON Lines natively into UTF-8 buffers for the encoder (Utf8Texts).
    stream = DocumentStream(files, input_format=input_format, doc_per=doc_per, field=field, column=column,
                            errors=errors, skip_bad=skip_bad, utf8_texts=pipeline is None)
    # The inputs' checksums (hashlib works without the GIL) while the fingerprint is made here.
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ciyuan-checksum") as pool:
        checksums = pool.submit(describe_inputs, files)
        fingerprint = tokenizer_fingerprint(tok)
        described = checksums.result()
    job = {
        "format": format, "dtype": out_dtype, "shard_tokens": shard_tokens, "prefix": prefix,
        "bos": bos_ids, "eos": eos_ids, "input_format": input_format, "doc_per": doc_per, "field": field,
        "column": stream.column, "errors": errors, "skip_bad": skip_bad, "add_special_tokens": add_special_tokens,
        "allowed_special": _special_setting(allowed_special),
        "disallowed_special": _special_setting(disallowed_special),
        "tokenizer": fingerprint,
    }
    make_dirs(out)
    manifest = _prepare(out, job, described, prefix, overwrite)
    if manifest.complete:
        return _result(out, manifest, resumed=len(manifest.shards))
    run = _Run(tok, manifest, out, stream, bos_ids, eos_ids, threads, skip_bad, add_special_tokens,
               allowed_special, disallowed_special, batch_chars)
    return run.go(progress, pipeline or _local_pipeline)


# -- the run ------------------------------------------------------------------------------------


class _Batch(NamedTuple):
    """Documents encoded in one call: the stream position of the first, their texts, and the
    parts of files they came from (for a document's file:line)."""

    first: int
    texts: Sequence[str]  # a list of str, or the Utf8Texts of one part of a file read natively
    parts: List[DocumentBatch]

    def where(self, i: int) -> Tuple[str, int]:
        for part in self.parts:
            if i < len(part.texts):
                return part.source, part.lines[i]
            i -= len(part.texts)
        raise IndexError(i)


class EncodedBatch(NamedTuple):
    """Consecutive documents encoded, as a :data:`Pipeline` hands them to the writer: the
    position of the first in the stream of documents read (after the documents the finished
    shards hold), how many were read, and the flat ``ids``/``offsets`` (``encode_batch_ids(...,
    as_array=True)``) of those ``kept`` (indices into the batch; None: all). A document not
    kept is one the tokenizer refused under ``skip_bad``."""

    first: int
    documents: int
    ids: Any
    offsets: Any
    kept: Any = None


class _Run:
    """One run: documents -> batches -> ids -> writer, with the manifest kept up to date.

    A :data:`Pipeline` reads and encodes; what it needs of the run is public here: ``tok``,
    ``stream`` (the :class:`DocumentStream`, not yet read: its files and reading options),
    ``skip`` (the documents the finished shards hold: read but not encoded), ``batch_chars``,
    ``encode_args`` and ``skip_bad``.
    """

    def __init__(self, tok: "Tokenizer", manifest: Manifest, out: Path, stream: DocumentStream, bos: List[int],
                 eos: List[int], threads: Optional[int], skip_bad: bool, add_special_tokens: bool,
                 allowed_special: Any, disallowed_special: Any, batch_chars: int) -> None:
        import numpy as np

        self.np = np
        self.tok = tok
        self.manifest = manifest
        self.out = out
        self.stream = stream
        self.skip = manifest.next_document
        self.bos = bos
        self.eos = eos
        self.skip_bad = skip_bad
        self.batch_chars = batch_chars
        self.encode_args = dict(threads=threads, add_special_tokens=add_special_tokens,
                                allowed_special=allowed_special, disallowed_special=disallowed_special)
        self.resumed = len(manifest.shards)
        # Where the documents given to the writer came from in the stream of documents read, for
        # the manifest's `next_document` when a shard is finished (see _on_shard).
        self.written = sum(int(s["documents"]) for s in manifest.shards)
        self.written_before_batch = self.written
        self.batch_sources: Any = np.zeros(0, dtype=np.int64)
        self.last_source = manifest.next_document - 1
        self.rejected: List[int] = []  # stream positions of documents the tokenizer refused
        self.rejected_before = manifest.rejected
        self.tokens = sum(int(s["tokens"]) for s in manifest.shards)

    def go(self, show_progress: bool, pipeline: "Pipeline") -> EncodeResult:
        np = self.np
        manifest = self.manifest
        bar = DatasetProgress(self.stream.total_bytes) if show_progress else None
        writer = open_writer(manifest.job["format"], self.out, dtype=manifest.job["dtype"],
                             shard_tokens=manifest.job["shard_tokens"], prefix=manifest.job["prefix"],
                             first_shard=manifest.next_shard, on_shard=self._on_shard)
        expected = self.skip
        try:
            with writer, contextlib.closing(pipeline(self)) as reading:
                for batch in reading:
                    if batch.first != expected:
                        raise InvalidInputError(f"the pipeline skipped or repeated documents: a batch starts at "
                                                f"document {batch.first}, not {expected}")
                    expected += batch.documents
                    sources = np.arange(batch.first, batch.first + batch.documents, dtype=np.int64)
                    if batch.kept is not None:
                        kept = np.asarray(batch.kept, dtype=np.int64)
                        refused = np.ones(batch.documents, dtype=bool)
                        refused[kept] = False
                        self.rejected.extend(sources[refused].tolist())
                        sources = sources[kept]
                    ids, offsets = add_bos_eos(batch.ids, batch.offsets, self.bos, self.eos)
                    self.batch_sources = sources
                    self.written_before_batch = self.written
                    writer.add_batch(ids, offsets)
                    self.written += len(sources)
                    self.tokens += int(offsets[-1] - offsets[0])
                    if len(sources):
                        self.last_source = int(sources[-1])
                    if bar is not None:
                        bar.update(self.written, reading.bytes_done(), self.tokens)
                skipped = reading.skipped
        finally:
            if bar is not None:
                bar.close()
        manifest.complete = True
        manifest.totals = {"documents": self.written, "tokens": self.tokens,
                           "skipped": skipped + self.rejected_before + len(self.rejected)}
        manifest.save(self.out)
        return _result(self.out, manifest, self.resumed)

    def batches(self) -> Iterator["_Batch"]:
        """Batches of about ``batch_chars`` characters, after the documents the finished shards
        hold (read, not encoded)."""
        skip = self.skip
        position = skip
        texts: List[str] = []
        parts: List[DocumentBatch] = []
        size = 0
        reading = iter(self.stream.batches())
        while True:
            try:
                part = next(reading)
            except StopIteration:
                break
            except Exception:
                # A bad document of the input: the documents read before it are encoded first, so
                # that an error of theirs (a special token's text) is the one raised, in order.
                if texts:
                    yield _Batch(position, texts, parts)
                raise
            if skip:
                if len(part.texts) <= skip:
                    skip -= len(part.texts)
                    continue
                part = DocumentBatch(part.source, part.texts[skip:], part.lines[skip:])
                skip = 0
            if isinstance(part.texts, Utf8Texts):
                # Read natively: its documents go to the encoder as one buffer, so a batch holds
                # one part's (batch_chars counted in bytes); what was gathered before goes first.
                if texts:
                    yield _Batch(position, texts, parts)
                    position += len(texts)
                    texts, parts, size = [], [], 0
                for piece in _cut(part, self.batch_chars):
                    yield _Batch(position, piece.texts, [piece])
                    position += len(piece.texts)
                continue
            ends = list(itertools.accumulate(map(len, part.texts)))  # characters through each document
            start = 0
            while start < len(part.texts):
                base = ends[start - 1] if start else 0
                last = bisect.bisect_left(ends, base + self.batch_chars - size, lo=start)
                if last >= len(ends):  # the rest of the part fits
                    piece = part if start == 0 else DocumentBatch(part.source, part.texts[start:], part.lines[start:])
                    texts.extend(piece.texts)
                    parts.append(piece)
                    size += ends[-1] - base
                    break
                piece = DocumentBatch(part.source, part.texts[start:last + 1], part.lines[start:last + 1])
                texts.extend(piece.texts)
                parts.append(piece)
                yield _Batch(position, texts, parts)
                position += len(texts)
                texts, parts, size = [], [], 0
                start = last + 1
        if skip:
            raise too_few_documents(self.skip, self.skip - skip)
        if texts:
            yield _Batch(position, texts, parts)

    def _on_shard(self, info: ShardInfo) -> None:
        """Record a finished shard: where the stream of documents continues after it."""
        end = self.written_before_shard_end(info)
        index = end - self.written_before_batch - 1
        last = int(self.batch_sources[index]) if index >= 0 else self.last_source
        next_document = last + 1
        rejected = self.rejected_before + bisect.bisect_left(self.rejected, next_document)
        self.manifest.shards.append({"number": info.number, "files": info.files, "documents": info.documents,
                                     "tokens": info.tokens, "next_document": next_document, "rejected": rejected})
        self.manifest.save(self.out)

    def written_before_shard_end(self, info: ShardInfo) -> int:
        """Documents written through the end of shard ``info`` (all shards, earlier runs' too)."""
        return sum(int(s["documents"]) for s in self.manifest.shards) + info.documents


def too_few_documents(expected: int, found: int) -> InvalidInputError:
    """The error of a resumed run whose inputs hold fewer documents than its finished shards."""
    return InvalidInputError(f"the inputs hold {found} documents, fewer than the manifest's {expected}; use "
                             "overwrite=True (CLI: --overwrite) to start again")


class Reading(Protocol):
    """What a :data:`Pipeline` returns: the :class:`EncodedBatch` es in document order, and what
    the progress bar and the totals need of the reading (as :class:`DocumentStream` has them)."""

    @property
    def skipped(self) -> int:
        """Bad documents of the input left out under ``skip_bad``, so far."""

    def __iter__(self) -> Iterator[EncodedBatch]: ...

    def bytes_done(self) -> int: ...

    def close(self) -> None: ...


#: A pipeline: ``pipeline(run)`` reads the run's documents after ``run.skip`` and encodes them
#: (exactly ``run.tok.encode_batch_ids(texts, as_array=True, **run.encode_args)``), giving a
#: :class:`Reading` of :class:`EncodedBatch` es in document order. A document the tokenizer refuses
#: is left out of ``kept`` under ``run.skip_bad``, else raises the tokenizer's error prefixed with
#: its ``file:line`` (see :func:`encode_finding_refused`); a bad document of the input raises the
#: reader's error, in order.
Pipeline = Callable[["_Run"], Reading]


class _LocalReading:
    """The local pipeline: batches read ahead on a thread, each encoded on this machine's cores
    from another thread, so that reading, encoding and the caller's writing overlap."""

    def __init__(self, run: "_Run") -> None:
        self.run = run
        self._batches = _prefetch(run.batches())
        self._encoded = _prefetch(self._encode(self._batches))

    @property
    def skipped(self) -> int:
        return self.run.stream.skipped

    def bytes_done(self) -> int:
        return self.run.stream.bytes_done()

    def close(self) -> None:
        self._encoded.close()  # type: ignore[attr-defined]  # generators: stop the encoding thread,
        self._batches.close()  # type: ignore[attr-defined]  # then the reading thread,
        self.run.stream.close()  # and close the file it was reading (see DocumentStream.close)

    def __iter__(self) -> Iterator[EncodedBatch]:
        return self._encoded

    def _encode(self, batches: Iterator[_Batch]) -> Iterator[EncodedBatch]:
        run = self.run
        for batch in batches:
            texts = batch.texts
            try:
                if isinstance(texts, Utf8Texts):
                    data, ends = texts.utf8()
                    found = run.tok._encode_utf8_batch_ids_array(data, ends, **run.encode_args)
                    if found is not None:
                        yield EncodedBatch(batch.first, len(texts), *found)
                        continue
                    texts = list(texts)  # a tokenizer that needs its texts as str
                ids, offsets = run.tok.encode_batch_ids(texts, as_array=True, **run.encode_args)
                yield EncodedBatch(batch.first, len(texts), ids, offsets)
                continue
            except CiyuanError:  # a document the tokenizer refuses: find it (and name it, or skip it)
                pass
            ids, offsets, kept, refusal = encode_finding_refused(run.tok, list(texts), run.encode_args,
                                                                 stop_at_first=not run.skip_bad)
            if refusal is not None:
                i, error = refusal
                source, line = batch.where(i)
                raise type(error)(f"{source}:{line}: {error}") from None
            yield EncodedBatch(batch.first, len(batch.texts), ids, offsets, kept)


def _local_pipeline(run: "_Run") -> Reading:
    return _LocalReading(run)


def _cut(part: DocumentBatch, size: int) -> Iterator[DocumentBatch]:
    """``part`` in consecutive pieces of about ``size`` bytes of text (at least a document each)."""
    texts = cast(Utf8Texts, part.texts)
    ends = list(itertools.accumulate(texts.sizes()))
    start = 0
    while start < len(ends):
        base = ends[start - 1] if start else 0
        stop = max(bisect.bisect_right(ends, base + size, lo=start), start + 1)
        yield DocumentBatch(part.source, texts[start:stop], part.lines[start:stop])
        start = stop


def encode_finding_refused(tok: "Tokenizer", texts: List[str], encode_args: Dict[str, Any], *,
                           stop_at_first: bool) -> Tuple[Any, Any, Any, Optional[Tuple[int, CiyuanError]]]:
    """``(ids, offsets, kept, refusal)`` of a batch the tokenizer refused as a whole: encoded again
    in groups, and the documents of a failing group one by one, to find those it refuses
    (special-token text under ``disallowed_special``). ``kept``: the indices of the others;
    ``refusal``: the first refused document's index and error, when ``stop_at_first`` (the run
    then raises it, naming the document's file:line), else None.

    Example:
        >>> from ciyuan import Tokenizer
        >>> tok = Tokenizer.from_tiktoken("cl100k_base.tiktoken", "cl100k_base")   # doctest: +SKIP
        >>> _, offsets, kept, _ = encode_finding_refused(tok, ["a", "<|endoftext|>", "b"], {},
        ...                                              stop_at_first=False)      # doctest: +SKIP
        >>> kept.tolist(), offsets.tolist()                                          # doctest: +SKIP
        ([0, 2], [0, 1, 2])
    """
    import numpy as np

    kept: List[int] = []
    pieces: List[Tuple[Any, Any]] = []
    refusal: Optional[Tuple[int, CiyuanError]] = None
    for group in range(0, len(texts), _REFUSED_GROUP):
        members = range(group, min(group + _REFUSED_GROUP, len(texts)))
        try:
            pieces.append(tok.encode_batch_ids(texts[group:members.stop], as_array=True, **encode_args))
            kept.extend(members)
            continue
        except CiyuanError:
            pass
        for i in members:
            try:
                pieces.append(tok.encode_batch_ids([texts[i]], as_array=True, **encode_args))
            except CiyuanError as e:
                if stop_at_first:
                    refusal = (i, e)
                    break
                continue
            kept.append(i)
        if refusal is not None:
            break
    ids = np.concatenate([np.asarray(p[0], dtype=np.uint32) for p in pieces] or [np.zeros(0, np.uint32)])
    lengths = np.concatenate([np.diff(np.asarray(p[1], dtype=np.int64)) for p in pieces] or [np.zeros(0, np.int64)])
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return ids, offsets, np.array(kept, dtype=np.int64), refusal


def _prefetch(batches: Iterator[T], depth: int = 2) -> Iterator[T]:
    """``batches`` read ahead on a thread (reading and parsing overlap the native encoding,
    which runs without the GIL); an error in reading is raised here, in order."""
    q: "queue.Queue[Tuple[str, Any]]" = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in batches:
                while not stop.is_set():
                    try:
                        q.put(("batch", item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(("end", None))
        except BaseException as e:  # handed to the consumer, raised there
            q.put(("error", e))
        finally:
            # Stopped early (the consumer failed): the reader's open file is closed now, on this
            # thread, not whenever the garbage collector finds the suspended generator.
            close = getattr(batches, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="ciyuan-read", daemon=True)
    thread.start()
    try:
        while True:
            kind, item = q.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # let the reader see `stop` (it may be waiting on a full queue)
            with contextlib.suppress(queue.Empty):
                q.get_nowait()
            thread.join(timeout=0.05)


# -- setting up ---------------------------------------------------------------------------------


def _prepare(out: Path, job: Dict[str, Any], inputs: List[Dict[str, Any]], prefix: str,
             overwrite: bool) -> Manifest:
    """The manifest to continue: the folder's own when it is the same run, else a new one
    (after clearing the folder's shards with ``overwrite``); leftovers of a killed run removed."""
    existing = Manifest.load(out)
    shard_name = re.compile(re.escape(prefix) + r"_(\d{5,})\.")
    ours = [p for p in out.iterdir() if shard_name.match(p.name)]
    if existing is not None and not existing.shards and not existing.complete:
        existing = None  # nothing finished: nothing to keep, whatever the settings were
        overwrite = True
    if existing is not None and not overwrite:
        existing.check_same_run(job, inputs, out)
        manifest = existing
    else:
        if ours and not overwrite:
            raise InvalidInputError(f"{out} holds shard files ({ours[0].name}, ...) but no {MANIFEST_NAME}; use "
                                    "a new folder, or overwrite=True (CLI: --overwrite) to replace them")
        for p in ours:
            p.unlink()
        ours = []
        manifest = Manifest(job, inputs)
    finished = {name for s in manifest.shards for name in s["files"]}
    for p in ours:  # a shard finished after the manifest was last written: made again
        if p.name not in finished:
            p.unlink()
    for p in out.iterdir():  # temporary files of a killed run (see ciyuan._io.atomic_output)
        if p.name.startswith(".") and p.name.endswith(".tmp") and (
                p.name.startswith(f".{prefix}_") or p.name.startswith(f".{MANIFEST_NAME}.")):
            p.unlink()
    if existing is None or overwrite:
        manifest.save(out)
    return manifest


def _result(out: Path, manifest: Manifest, resumed: int) -> EncodeResult:
    shards = [ShardInfo(int(s["number"]), list(s["files"]), int(s["documents"]), int(s["tokens"]))
              for s in manifest.shards]
    totals = manifest.totals
    return EncodeResult(out, manifest.job["format"], manifest.job["dtype"], shards,
                        int(totals.get("documents", sum(s.documents for s in shards))),
                        int(totals.get("tokens", sum(s.tokens for s in shards))), int(totals.get("skipped", 0)),
                        resumed)


def add_bos_eos(ids: Any, offsets: Any, bos: Sequence[int], eos: Sequence[int]) -> Tuple[Any, Any]:
    """The flat ``(ids, offsets)`` of a batch with ``bos`` before and ``eos`` after every
    document (numpy, no Python int per token); uint32 ids, offsets from 0.

    Example:
        >>> import numpy as np
        >>> ids, offsets = add_bos_eos(np.array([5, 6, 7], np.uint32), np.array([0, 2, 3]), [1], [2])
        >>> ids.tolist(), offsets.tolist()
        ([1, 5, 6, 2, 1, 7, 2], [0, 4, 7])
    """
    import numpy as np

    ids = np.asarray(ids)
    offsets = np.asarray(offsets, dtype=np.int64)
    nb, ne = len(bos), len(eos)
    if nb + ne == 0:
        return ids[offsets[0]:offsets[-1]], offsets - offsets[0]
    n = len(offsets) - 1
    new_offsets = offsets - offsets[0] + np.arange(n + 1, dtype=np.int64) * (nb + ne)
    out = np.empty(int(new_offsets[-1]), dtype=np.uint32)
    body = np.ones(len(out), dtype=bool)
    for k, token in enumerate(bos):
        out[new_offsets[:-1] + k] = token
        body[new_offsets[:-1] + k] = False
    for k, token in enumerate(eos):
        out[new_offsets[1:] - ne + k] = token
        body[new_offsets[1:] - ne + k] = False
    out[body] = ids[offsets[0]:offsets[-1]]
    return out, new_offsets


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _id_limit(tok: "Tokenizer") -> int:
    """One past the largest id the tokenizer can produce (model, special and added tokens)."""
    ids = [tok.model.id_limit - 1, *tok.special_tokens.values(), *tok.added_tokens]
    return max(ids) + 1


def special_ids(tok: "Tokenizer", value: TokenSpec, what: str, id_limit: Optional[int] = None) -> List[int]:
    """The ids of ``value`` (``bos``/``eos``): None, an id, a token string, or a sequence of them.

    Example:
        >>> special_ids(None, None, "bos")
        []
    """
    if value is None:
        return []
    items = [value] if isinstance(value, (int, str)) else list(value)
    ids = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise InvalidInputError(f"{what} must be an id, a token string or a list of them, not {item!r}")
        if isinstance(item, str):
            found = tok.token_to_id(item)
            if found is None:
                raise InvalidInputError(f"{what}: the tokenizer has no token {item!r}; give its id or another token")
            item = found
        limit = id_limit if id_limit is not None else _id_limit(tok)
        if not 0 <= item < limit:
            raise InvalidInputError(f"{what}: id {item} is outside the vocabulary (0..{limit - 1})")
        ids.append(item)
    return ids


def tokenizer_fingerprint(tok: "Tokenizer") -> str:
    """blake2b of the tokenizer's saved form: a resumed run must use the same tokenizer."""
    import orjson

    saved = tok.to_dict()
    try:
        data = orjson.dumps(saved, option=orjson.OPT_SORT_KEYS)  # 10x json's speed on 200,000 tokens
    except TypeError:  # a key or value orjson refuses: the standard library's slower form
        data = json.dumps(saved, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _special_setting(value: Union[str, Iterable[str]]) -> Any:
    return value if isinstance(value, str) else sorted(value)
