"""The Ray engine: word counting for training, and encode-dataset, on a Ray cluster.

Ray (``pip install "ciyuan[ray]"``) is where many data pipelines already run. Two jobs run
on it here, each giving exactly what the single-machine run gives, and a stage for users' own
Ray Data pipelines:

- **Training** (:func:`train`, ``ciyuan train --ray``): the corpus is cut into parts in corpus
  order (files, and byte ranges of large files cut at line ends; or batches of texts), each Ray
  task counts one part with the trainer's own counting (``trainer.count_words``) and returns its
  partial counts as bytes (:meth:`WordCounts.to_bytes`), and the driver merges them in part
  order (:meth:`WordCounts.merge`: counts add, a word keeps its first-seen position), so the
  words, counts and first-seen order equal one pass over the whole corpus. The merge loop (BPE,
  WordPiece) or EM (Unigram) then runs on the driver, and the model is byte-identical.
- **a Ray Data stage** (:func:`tokenize_dataset`): ``map_batches`` over a pool of tokenizer
  actors, for pipelines that already hold a ``ray.data.Dataset``.
- **encode-dataset** (:func:`encode_dataset_ray`, ``ciyuan encode-dataset --ray``): a Ray Data
  pipeline: read (a Ray task per read part - an input file, or a byte range of a large file of
  lines - with ciyuan's own reader) -> ``map_batches`` over a
  pool of tokenizer actors -> the driver, which gets the ids in document order and writes the
  shards and manifest as the local run does (:func:`ciyuan.datasets.encode_dataset` with this
  pipeline): the same shards and manifest, byte for byte, and the same resumable runs.

A Ray task or actor that dies with its worker (a killed process, a lost node) is run again by
Ray (``max_retries``; ``max_restarts`` and ``max_task_retries`` for actors); parts and batches
are pure functions of their input, so a retry gives the same bytes and the result is unchanged.

``address`` is Ray's: None starts a local Ray on this machine (or uses the one this process
already started), ``"auto"`` joins the cluster ``ray start`` runs here, ``"HOST:6379"`` or
``"ray://HOST:10001"`` joins a remote one (see docs/scale.md). The input files are read by
Ray workers (training's parts, encode-dataset's read stage), so on a cluster they must be at the
same path on every node (a shared file system); encode-dataset's shards are written by the driver.

Example:
    >>> from ciyuan.trainers import BpeTrainer
    >>> tok = train(["low lower newest"] * 50, BpeTrainer(300, byte_level=True))  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Generator, Iterator, List, Mapping, Optional, Tuple

from ciyuan import _core, _text, training
from ciyuan.errors import CiyuanError, InvalidInputError
from ciyuan.front_end import FrontEnd
from ciyuan.trainers import CharLevelTrainer, Trainer
from ciyuan.trainers.corpus import TrainingSource, WordCounts, check_errors, iterate_source

if TYPE_CHECKING:
    from ciyuan.decoders import Decoder
    from ciyuan.normalizers import Normalizer
    from ciyuan.tokenizer import Tokenizer

__all__ = ["train", "count_words", "encode_dataset_ray", "tokenize_dataset", "TokenizeBatch",
           "ray_session", "plan_file_parts", "FilePart", "DEFAULT_PART_BYTES"]

#: The most bytes of a file one counting task reads: small enough to spread a single large file
#: over the cluster's cores, large enough that a task's start-up is noise.
DEFAULT_PART_BYTES = 32 << 20
_TEXTS_PER_PART = 65536
_RETRIES = 5  # a task whose worker dies is run again this many times


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InvalidInputError('the Ray engine needs Ray: pip install "ciyuan[ray]" (or ray[data])') from None
    return ray


@contextmanager
def ray_session(address: Optional[str] = None, *, num_cpus: Optional[int] = None) -> Iterator[Any]:
    """Ray, connected to ``address`` for the ``with`` block (see the module's notes on
    ``address``). A Ray this process already started is used as it is and left running; one
    started or joined here is shut down (a local one) or left (a cluster's) at the end."""
    ray = _ray()
    if ray.is_initialized():
        yield ray
        return
    options: Dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
    if address is None:  # "local": a new Ray here, even where `ray start` runs or RAY_ADDRESS is set
        options["num_cpus"] = num_cpus
    ray.init(address=address or "local", **options)
    try:
        yield ray
    finally:
        ray.shutdown()


# -- training: the counting pass ------------------------------------------------------------


@dataclass(frozen=True)
class FilePart:
    """Bytes ``[start, end)`` of ``path``: whole lines (``start`` is 0 or follows a newline)."""

    path: str
    start: int
    end: int


def plan_file_parts(path: Path, part_bytes: int = DEFAULT_PART_BYTES) -> List[FilePart]:
    """``path`` cut into parts of about ``part_bytes``, each ending at a line end (or the end of
    the file), in file order. A line longer than a part stays whole in one part.

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False) as f:
        ...     _ = f.write(b"ab\\ncd\\nef\\n")
        >>> [(p.start, p.end) for p in plan_file_parts(Path(f.name), 4)]
        [(0, 6), (6, 9)]
        >>> os.unlink(f.name)
    """
    try:
        size = path.stat().st_size
    except OSError:
        raise InvalidInputError(f"cannot read {path}: no such file") from None
    if not path.is_file():
        raise InvalidInputError(f"cannot read {path}: not a file")
    parts: List[FilePart] = []
    start = 0
    with open(path, "rb") as f:
        while start < size:
            end = min(size, start + part_bytes)
            if end < size:
                f.seek(end - 1)  # the newline may be the part's last byte
                while True:
                    block = f.read(1 << 16)
                    if not block:
                        end = size
                        break
                    nl = block.find(b"\n")
                    if nl >= 0:
                        end += nl
                        break
                    end += len(block)
                end = min(size, end)  # reading began at end - 1, so `end` is just past the newline
            parts.append(FilePart(str(path), start, end))
            start = end
    return parts


def _line_at(part: FilePart) -> int:
    """The line number (1-based) of the part's first line: counted only for an error message."""
    lines = 1
    with open(part.path, "rb") as f:
        left = part.start
        while left > 0:
            block = f.read(min(left, 1 << 20))
            lines += block.count(b"\n")
            left -= len(block)
    return lines


@dataclass(frozen=True)
class _Counting:
    """What every counting task needs: the trainer and the stages, in a form that crosses
    processes (stages with a registry ``"type"`` as their dict: some hold native objects)."""

    trainer: Trainer
    pre_tokenizer: Any
    normalizer: Any
    errors: str

    @staticmethod
    def portable(stage: Any) -> Any:
        to_dict = getattr(stage, "to_dict", None)
        if stage is None or to_dict is None or getattr(stage, "type_name", None) is None:
            return stage  # None, or a caller's object with split(): pickled as it is
        return ("stage", type(stage).__module__.split(".")[1], to_dict())

    @staticmethod
    def restore(stage: Any) -> Any:
        if isinstance(stage, tuple) and len(stage) == 3 and stage[0] == "stage":
            import importlib

            return importlib.import_module(f"ciyuan.{stage[1]}").from_dict(stage[2])
        return stage


def _count_part(job: _Counting, part: Any) -> bytes:
    """One part's counts as bytes (a Ray task's body).

    A file's part is counted as a file of its own (a temporary copy of its bytes, on the worker),
    so it is read exactly as the local run reads files (natively, line by line; invalid UTF-8
    replaced or refused as ``errors`` says); a refusal names the real file, byte and line.
    """
    pre_tokenizer, normalizer = _Counting.restore(job.pre_tokenizer), _Counting.restore(job.normalizer)
    if not isinstance(part, FilePart):
        # An iterator, never a list: a list of strings that all name files would be read as files.
        return job.trainer.count_words(iter(part), pre_tokenizer, normalizer, errors=job.errors).to_bytes()
    with open(part.path, "rb") as f:
        f.seek(part.start)
        data = f.read(part.end - part.start)
    with tempfile.TemporaryDirectory(prefix="ciyuan-part-") as folder:
        path = Path(folder) / "part.txt"
        path.write_bytes(data)
        try:
            return job.trainer.count_words(path, pre_tokenizer, normalizer, errors=job.errors).to_bytes()
        except InvalidInputError:
            bad = _core.utf8_error_offset(data)
            if bad == len(data):
                raise  # not about the bytes: as it is
            raise _text.utf8_error(part.path, data, bad, offset=part.start, first_line=_line_at(part)) from None


def _parts(source: TrainingSource, part_bytes: int) -> Iterator[Any]:
    """The parts of ``source`` in corpus order: :class:`FilePart` s and lists of texts."""
    for kind, item in iterate_source(source):
        if kind == "file":
            yield from plan_file_parts(Path(item), part_bytes)
            continue
        batch: List[str] = []
        size = 0
        for text in item:
            batch.append(text)
            size += len(text)
            if len(batch) >= _TEXTS_PER_PART or size >= part_bytes:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch


def _check_trainer(trainer: Trainer) -> None:
    if isinstance(trainer, CharLevelTrainer):
        raise InvalidInputError("CharLevelTrainer counts characters natively in one pass; train it without Ray")
    if getattr(trainer, "input_sentence_size", 0):
        raise InvalidInputError("input_sentence_size samples lines from the whole corpus on one machine; "
                                "with Ray, sample the corpus beforehand or leave it at 0")


def count_words(source: TrainingSource, trainer: Trainer, pre_tokenizer: Any = None,
                normalizer: Optional["Normalizer"] = None, errors: str = "strict", *,
                address: Optional[str] = None, part_bytes: int = DEFAULT_PART_BYTES) -> WordCounts:
    """``trainer.count_words(source, pre_tokenizer, normalizer, errors=errors)``, counted by Ray
    tasks and merged exactly on the driver (see the module's notes).

    Pre-counted words (a mapping) are counted here: there is nothing to spread.
    """
    check_errors(errors)
    _check_trainer(trainer)
    if isinstance(source, Mapping):
        return trainer.count_words(source, pre_tokenizer, normalizer, errors=errors)
    if part_bytes < 1:
        raise InvalidInputError(f"part_bytes must be at least 1, got {part_bytes}")
    worker = copy.copy(trainer)
    worker.show_progress = False
    worker.threads = 1  # one core per task: Ray runs one task per core
    job = _Counting(worker, _Counting.portable(pre_tokenizer), _Counting.portable(normalizer), errors)
    start = time.perf_counter()
    with ray_session(address) as ray:
        task = ray.remote(num_cpus=1, max_retries=_RETRIES)(_count_part)
        job_ref = ray.put(job)
        window = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
        merged = WordCounts(_core.WordCounter(FrontEnd.none()))
        pending: List[Any] = []
        done = 0

        def merge_oldest() -> None:
            nonlocal done
            # In part order: the merge is exact only when parts arrive in corpus order.
            merged.merge(WordCounts.from_bytes(_get(ray, pending.pop(0))))
            done += 1
            if trainer.show_progress:
                sys.stderr.write(f"\rcounted {done} parts, {len(merged):,} distinct words")

        for part in _parts(source, part_bytes):
            pending.append(task.remote(job_ref, part))
            if len(pending) >= window:  # bounded: at most `window` parts' counts wait in memory
                merge_oldest()
        while pending:
            merge_oldest()
    if trainer.show_progress:
        sys.stderr.write(f"\rcounted {len(merged):,} distinct words ({merged.total:,} in all) in {done} parts "
                         f"on Ray in {time.perf_counter() - start:.1f} s\n")
    return merged


def _get(ray: Any, ref: Any) -> Any:
    """``ray.get``, with a ciyuan error raised in a task re-raised as itself (file, line...)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, CiyuanError):
            raise cause from None
        raise


def train(source: TrainingSource, trainer: Optional[Trainer] = None, *, address: Optional[str] = None,
          pre_tokenizer: Any = training.DEFAULT, normalizer: Optional["Normalizer"] = None,
          decoder: Optional["Decoder"] = None, errors: str = "strict",
          part_bytes: int = DEFAULT_PART_BYTES) -> "Tokenizer":
    """:meth:`Tokenizer.train <ciyuan.tokenizer.Tokenizer.train>` with the counting pass on Ray
    (at ``address``; see the module's notes): the same tokenizer, byte for byte.

    Supported: BPE, WordPiece, Unigram (and SentencePiece-BPE), word-level trainers; not
    ``CharLevelTrainer`` (one native pass) nor Unigram's ``input_sentence_size`` (a sample of
    the whole corpus).
    """
    from ciyuan.tokenizer import Tokenizer

    def count(source: TrainingSource, trainer: Trainer, pre_tokenizer: Any, normalizer: Any,
              errors: str) -> WordCounts:
        return count_words(source, trainer, pre_tokenizer, normalizer, errors, address=address,
                           part_bytes=part_bytes)

    return training.train_tokenizer(Tokenizer, source, trainer, pre_tokenizer=pre_tokenizer, normalizer=normalizer,
                                    decoder=decoder, errors=errors, count=count)


# -- encode-dataset: a Ray Data pipeline ---------------------------------------------------------
#
#   read: a Ray task per read part, a file or a byte range of a large file of lines (ciyuan's own
#         reader, DocumentStream: the same documents, file and line as the local run, bad
#         documents skipped or refused alike), yielding pyarrow tables of about batch_chars
#         characters, then a marker row (the part's skipped count) or
#         an error row (a bad document without skip_bad: raised by the driver when it gets there)
#   -> map_batches over a pool of tokenizer actors (ActorPoolStrategy): encode_batch_ids, exactly
#         encode_ids; refused documents found and marked (encode_finding_refused)
#   -> the driver, in document order (preserve_order): BOS/EOS, the shards and the manifest, by
#         encode_dataset's own run (a Pipeline of ciyuan.datasets.encode), so the same bytes.
#
# Ray Data's own readers (read_json, read_text, read_parquet) are not used: they have nothing like
# ciyuan's reader's file:line for each document, skip_bad's count of bad documents, blank-line
# blocks or whole-file documents, so they would not give the same documents (and errors) in every
# case; ciyuan's reader in Ray tasks does, by construction.

_DOC, _END, _ERROR = 0, 1, 2  # row kinds: a document, a file's end marker, a bad document's error
_READERS_PER_ACTOR = 4  # reading (orjson, or a line split) is several times faster than encoding


def _cut(texts: List[str], lines: List[int], batch_chars: int) -> Iterator[Tuple[List[str], List[int]]]:
    """``texts`` (and their lines) in runs of about ``batch_chars`` characters (at least one document)."""
    import bisect
    import itertools

    ends = list(itertools.accumulate(map(len, texts)))
    start = 0
    while start < len(texts):
        base = ends[start - 1] if start else 0
        stop = min(len(texts), bisect.bisect_left(ends, base + batch_chars, lo=start) + 1)
        yield texts[start:stop], lines[start:stop]
        start = stop


def _rows(part: int, kind: int, texts: List[str], lines: List[int], info: int = 0,
          message: Optional[str] = None) -> Any:
    import numpy as np
    import pyarrow as pa

    n = len(texts)
    return pa.table({"part": pa.array(np.full(n, part, np.int32)), "kind": pa.array(np.full(n, kind, np.int8)),
                     "line": pa.array(np.asarray(lines, dtype=np.int64)), "info": pa.array(np.full(n, info, np.int64)),
                     "message": pa.array([message] * n, pa.string()), "text": pa.array(texts, pa.large_string())})


def _part_documents(stream: Any, part: Dict[str, Any], lines_before: int = 0) -> Iterator[Any]:
    """The document batches of one read part: a whole file (``end`` < 0), or bytes
    ``[start, end)`` of a file of lines, its lines counted after ``lines_before``."""
    if part["end"] < 0:
        return iter(stream.batches())
    return iter(stream.part_batches(part["start"], part["end"], lines_before))


def _message_in_file(options: Dict[str, Any], part: Dict[str, Any], message: str) -> str:
    """The error of a bad document in a part after a file's start, with the file's own line:
    the part is read again, its lines counted after those before it (counted only now: an
    error is rare, and counting reads the file up to the part)."""
    from ciyuan.datasets.sources import DocumentStream

    lines_before = _line_at(FilePart(part["path"], part["start"], part["end"])) - 1
    try:
        for _ in _part_documents(DocumentStream([Path(part["path"])], **options), part, lines_before):
            pass
    except InvalidInputError as e:
        return str(e)
    return message


def _read_part(batch: Dict[str, Any], *, options: Dict[str, Any], batch_chars: int) -> Iterator[Any]:
    """The read stage (a Ray Data task, a generator: memory stays bounded): the documents of one
    part - an input file, or a byte range of a large file of lines - after its first ``skip``
    (a resumed run), as tables of about ``batch_chars`` characters, then its end marker; a bad
    document ends the part with its error row instead. A byte range's lines are numbered from
    its start (the driver adds the lines before it when it names a document)."""
    from ciyuan.datasets.sources import DocumentStream

    part: Dict[str, Any] = {key: (int(batch[key][0]) if key != "path" else str(batch[key][0]))
            for key in ("part", "path", "start", "end", "skip")}
    skip = part["skip"]
    stream = DocumentStream([Path(part["path"])], **options)
    try:
        for docs in _part_documents(stream, part):
            texts, lines = docs.texts, docs.lines
            if skip:
                if len(texts) <= skip:
                    skip -= len(texts)
                    continue
                texts, lines, skip = texts[skip:], lines[skip:], 0
            for run_texts, run_lines in _cut(texts, lines, batch_chars):
                yield _rows(part["part"], _DOC, run_texts, run_lines)
    except InvalidInputError as e:
        message = _message_in_file(options, part, str(e)) if part["start"] > 0 else str(e)
        yield _rows(part["part"], _ERROR, [""], [0], message=message)
        return
    finally:
        stream.close()  # stopped early (Ray asked for no more): the file is closed now
    yield _rows(part["part"], _END, [""], [0], info=stream.skipped)


class _EncodeStage:
    """The encode stage (a Ray Data actor holding one tokenizer): the read stage's rows in, the
    same rows out with the text replaced by its ids (``large_list<uint32>``: flat numpy ids and
    offsets, no Python int per token) and ``refused``: null, or for a document the tokenizer
    refuses its error as ``"ClassName\0message"`` (under ``skip_bad`` it is then left out; else
    the driver raises it, naming the file:line)."""

    def __init__(self, tokenizer: Dict[str, Any], encode_args: Dict[str, Any], skip_bad: bool) -> None:
        from ciyuan.tokenizer import Tokenizer

        self.tok = Tokenizer.from_dict(tokenizer)
        self.args = encode_args
        self.skip_bad = skip_bad

    def __call__(self, table: Any) -> Any:
        import numpy as np
        import pyarrow as pa

        from ciyuan.datasets.encode import encode_finding_refused

        docs = np.flatnonzero(table.column("kind").to_numpy() == _DOC)
        texts = table.column("text").take(pa.array(docs)).to_pylist()
        refused: List[Optional[str]] = [None] * table.num_rows
        try:
            ids, offsets = self.tok.encode_batch_ids(texts, as_array=True, **self.args)
            kept = np.arange(len(texts))
        except CiyuanError:
            ids, offsets, kept, refusal = encode_finding_refused(self.tok, texts, self.args,
                                                                 stop_at_first=not self.skip_bad)
            for i in np.setdiff1d(np.arange(len(texts)), kept):
                refused[int(docs[i])] = ""  # after a refusal without skip_bad: never read
            if refusal is not None:
                i, error = refusal
                refused[int(docs[i])] = f"{type(error).__name__}\0{error}"
        lengths = np.zeros(table.num_rows, dtype=np.int64)
        lengths[docs[kept]] = np.diff(np.asarray(offsets, dtype=np.int64))
        row_offsets = np.zeros(table.num_rows + 1, dtype=np.int64)
        np.cumsum(lengths, out=row_offsets[1:])
        column = pa.LargeListArray.from_arrays(pa.array(row_offsets),
                                               pa.array(np.asarray(ids, dtype=np.uint32)[offsets[0]:offsets[-1]]))
        return table.drop_columns(["text"]).append_column("ids", column).append_column(
            "refused", pa.array(refused, pa.string()))


class _RayReading:
    """The Ray Data pipeline as encode_dataset's :data:`~ciyuan.datasets.encode.Pipeline`: the
    encoded batches in document order, and the skipped count and bytes done as files finish."""

    def __init__(self, run: Any, address: Optional[str], actors: Optional[int], part_bytes: int) -> None:
        self.run = run
        self.address = address
        self.actors = actors
        self.part_bytes = part_bytes
        self.skipped = 0
        self._done = 0
        self._plan: List[Dict[str, Any]] = []
        self._closing: List[Any] = []

    def bytes_done(self) -> int:
        return self._done

    def close(self) -> None:
        while self._closing:
            self._closing.pop()()

    def _options(self) -> Dict[str, Any]:
        stream = self.run.stream
        return dict(input_format=self.run.manifest.job["input_format"], doc_per=stream.doc_per, field=stream.field,
                    column=stream.column, errors=stream.errors, skip_bad=stream.skip_bad)

    def _split(self, path: Path, kind: str) -> List[Tuple[int, int]]:
        """``path`` as read parts: byte ranges cut at line ends for a large file of lines
        (uncompressed JSON Lines, text with a document per line), else the whole file (-1)."""
        lines = kind == "jsonl" or (kind == "text" and self.run.stream.doc_per == "line")
        if not lines or path.name.lower().endswith((".gz", ".zst")) or path.stat().st_size <= self.part_bytes:
            return [(0, -1)]
        return [(p.start, p.end) for p in plan_file_parts(path, self.part_bytes)]

    def _parts(self) -> List[Dict[str, Any]]:
        """The read stage's parts in document order, after the documents the finished shards
        hold: whole parts of them are counted here (read, as the local run reads them) and left
        out; the part where they end is read from its first document after them."""
        from ciyuan.datasets.encode import too_few_documents
        from ciyuan.datasets.sources import DocumentStream

        stream = self.run.stream
        self._plan = [{"part": 0, "path": str(path), "start": start, "end": end, "skip": 0}
                      for path, kind in zip(stream.files, stream.kinds) for start, end in self._split(path, kind)]
        for number, part in enumerate(self._plan):
            part["part"] = number
        skip = self.run.skip
        parts = []
        for part in self._plan:
            if skip:
                counting = DocumentStream([Path(part["path"])], **self._options())
                count = sum(len(docs.texts) for docs in _part_documents(counting, part))
                if count <= skip:
                    skip -= count
                    self.skipped += counting.skipped
                    self._done += self._size(part)
                    continue
            parts.append(dict(part, skip=skip))
            skip = 0
        if skip:
            raise too_few_documents(self.run.skip, self.run.skip - skip)
        return parts

    def _size(self, part: Dict[str, Any]) -> int:
        return int(part["end"] - part["start"]) if part["end"] >= 0 else Path(part["path"]).stat().st_size

    def _place(self, number: int, line: int) -> str:
        """``file:line`` of a document: line ``line`` of read part ``number``."""
        part = self._plan[number]
        if part["start"] > 0:  # lines counted from the part's start (a refused document: rare)
            line += _line_at(FilePart(part["path"], part["start"], part["end"])) - 1
        return f"{part['path']}:{line}"

    def _dataset(self, ray: Any, parts: List[Dict[str, Any]]) -> Any:
        run = self.run
        with warnings.catch_warnings():  # Ray Data's context warns of its own defaults when first made
            warnings.simplefilter("ignore", DeprecationWarning)
            context = ray.data.DataContext.get_current()
        saved = (context.execution_options.preserve_order, context.target_max_block_size,
                 context.enable_progress_bars)

        def restore() -> None:
            (context.execution_options.preserve_order, context.target_max_block_size,
             context.enable_progress_bars) = saved

        self._closing.append(restore)
        context.execution_options.preserve_order = True  # the shards are written in document order
        # Blocks of about a batch: Ray Data would otherwise join a file's tables into blocks of up
        # to 128 MB, and a block is one actor's call (a single large file on one actor).
        context.target_max_block_size = max(run.batch_chars, 1 << 12)
        context.enable_progress_bars = False
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        actors = self.actors or cpus
        encode_args = dict(run.encode_args, threads=run.encode_args.get("threads") or 1)
        ds = ray.data.from_items(parts, override_num_blocks=len(parts))
        # Readers take no CPU of their own, so that a pool of one actor per CPU leaves room for
        # them (a reader waiting for a free CPU behind the actors would wait for ever); their
        # number is capped instead. A read task or actor lost with its worker is run again or
        # restarted by Ray Data (tasks' retries; actors' max_restarts=-1, max_task_retries=-1),
        # and both are pure functions of their input: the output does not change.
        ds = ds.map_batches(_read_part, batch_size=1, num_cpus=0,
                            compute=ray.data.TaskPoolStrategy(size=max(1, -(-actors // _READERS_PER_ACTOR))),
                            fn_kwargs=dict(options=self._options(), batch_chars=run.batch_chars))
        return ds.map_batches(_EncodeStage, batch_size=None, batch_format="pyarrow", num_cpus=1,
                              # All the actors from the start; min_size 1: a small input (fewer
                              # blocks than actors) is not an error.
                              compute=ray.data.ActorPoolStrategy(min_size=1, max_size=actors, initial_size=actors),
                              fn_constructor_kwargs=dict(tokenizer=run.tok.to_dict(), encode_args=encode_args,
                                                         skip_bad=run.skip_bad))

    def __iter__(self) -> Iterator[Any]:
        batches = self._batches()
        self._closing.append(batches.close)  # first to run at close: stops the pipeline, then Ray
        return batches

    def _batches(self) -> Generator[Any, None, None]:
        import numpy as np

        from ciyuan import errors
        from ciyuan.datasets.encode import EncodedBatch

        session = ray_session(self.address)
        ray = session.__enter__()
        self._closing.insert(0, lambda: session.__exit__(None, None, None))  # the last to run
        parts = self._parts()
        if not parts:
            return
        position = self.run.skip
        batches = self._dataset(ray, parts).iter_batches(batch_size=None, batch_format="pyarrow")
        try:
            for table in _unwrapped(ray, batches):
                kinds = table.column("kind").to_numpy()
                stop = np.flatnonzero(kinds == _ERROR)
                end = int(stop[0]) if len(stop) else table.num_rows
                for row in np.flatnonzero(kinds[:end] == _END):
                    self.skipped += int(table.column("info")[int(row)].as_py())
                    self._done += self._size(self._plan[int(table.column("part")[int(row)].as_py())])
                docs = np.flatnonzero(kinds[:end] == _DOC)
                if len(docs):
                    rows = table.take(docs)
                    ids = rows.column("ids").combine_chunks()
                    offsets = np.asarray(ids.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
                    values = ids.values.to_numpy(zero_copy_only=False)
                    kept = None
                    if rows.column("refused").null_count < rows.num_rows:
                        refused = rows.column("refused").to_pylist()
                        first = next(i for i, r in enumerate(refused) if r is not None)
                        if not self.run.skip_bad:
                            name, text = refused[first].split("\0", 1)
                            place = self._place(rows.column("part")[first].as_py(), rows.column("line")[first].as_py())
                            cls = getattr(errors, name, errors.CiyuanError)
                            raise cls(f"{place}: {text}")
                        kept = np.array([i for i, r in enumerate(refused) if r is None], dtype=np.int64)
                        lengths = np.diff(offsets)[kept]
                        values = np.concatenate([values[offsets[i]:offsets[i + 1]] for i in kept] or
                                                [np.zeros(0, np.uint32)])
                        offsets = np.zeros(len(kept) + 1, dtype=np.int64)
                        np.cumsum(lengths, out=offsets[1:])
                    yield EncodedBatch(position, len(docs), values, offsets, kept)
                    position += len(docs)
                if end < table.num_rows:  # a bad document, in order: the reader's own error
                    raise InvalidInputError(table.column("message")[end].as_py())
        finally:
            close = getattr(batches, "close", None)  # a generator: stops the pipeline
            if close is not None:
                close()


def _unwrapped(ray: Any, items: Iterator[Any]) -> Iterator[Any]:
    """``items``, with a ciyuan error raised in a Ray task or actor re-raised as itself."""
    try:
        yield from items
    except (ray.exceptions.RayTaskError, ray.exceptions.RayError) as e:
        cause = getattr(e, "cause", None)
        while cause is not None and not isinstance(cause, CiyuanError):
            cause = getattr(cause, "cause", None) or cause.__cause__
        if isinstance(cause, CiyuanError):
            raise cause from None
        raise


def encode_dataset_ray(inputs: Any, output: Any, tokenizer: Any, *, address: Optional[str] = None,
                       actors: Optional[int] = None, part_bytes: int = DEFAULT_PART_BYTES, **options: Any) -> Any:
    """:func:`ciyuan.datasets.encode_dataset` as a Ray Data pipeline on the Ray at ``address``
    (see the module's notes): read (a task per input file, ciyuan's own reader) ->
    ``map_batches`` over a pool of ``actors`` tokenizer actors (default: one per CPU of the
    cluster; ``threads``: each actor's threads, default 1) -> the shards and manifest, written by
    the driver in document order. A file of lines (uncompressed JSON Lines, text with a document
    per line) larger than ``part_bytes`` is read in parts of about that size, cut at line ends,
    each by a read task of its own. They are the same bytes as the local run's, and a run started
    again resumes with or without Ray.

    Example:
        >>> encode_dataset_ray(["corpus/"], "shards/", tok, eos="<|endoftext|>")   # doctest: +SKIP
    """
    from ciyuan.datasets.encode import encode_dataset

    if actors is not None and actors < 1:
        raise InvalidInputError(f"actors must be at least 1, not {actors}")
    if part_bytes < 1:
        raise InvalidInputError(f"part_bytes must be at least 1, got {part_bytes}")

    def pipeline(run: Any) -> _RayReading:
        return _RayReading(run, address, actors, part_bytes)

    return encode_dataset(inputs, output, tokenizer, pipeline=pipeline, **options)


# -- a stage of the user's own Ray Data pipeline ------------------------------------------------


class TokenizeBatch:
    """A Ray Data ``map_batches`` stage (a callable class: one tokenizer per actor): a pyarrow
    batch in, the same batch with ``output_column`` added out: each row's ids (``large_list``
    of ``uint32``), exactly ``encode_ids`` of its ``column`` with ``bos``/``eos`` ids around.
    A document the tokenizer refuses (special-token text under ``disallowed_special``) fails the
    batch with the tokenizer's error. :func:`tokenize_dataset` sets it up."""

    def __init__(self, tokenizer: Dict[str, Any], column: str, output_column: str, bos: List[int],
                 eos: List[int], encode_args: Dict[str, Any]) -> None:
        from ciyuan.tokenizer import Tokenizer

        self.tok = Tokenizer.from_dict(tokenizer)
        self.column, self.output_column = column, output_column
        self.bos, self.eos = bos, eos
        self.args = encode_args

    def __call__(self, table: Any) -> Any:
        import numpy as np
        import pyarrow as pa

        from ciyuan.datasets.encode import add_bos_eos

        if self.column not in table.column_names:
            raise InvalidInputError(f"the dataset has no column {self.column!r} (it has {table.column_names})")
        texts = table.column(self.column).to_pylist()
        ids, offsets = self.tok.encode_batch_ids(texts, as_array=True, **self.args)
        ids, offsets = add_bos_eos(ids, offsets, self.bos, self.eos)
        column = pa.LargeListArray.from_arrays(pa.array(np.asarray(offsets, dtype=np.int64)),
                                               pa.array(np.asarray(ids, dtype=np.uint32)))
        return table.append_column(self.output_column, column)


def tokenize_dataset(dataset: Any, tokenizer: "Tokenizer", *, column: str = "text", output_column: str = "input_ids",
                     bos: Any = None, eos: Any = None, actors: Optional[int] = None, threads: int = 1,
                     add_special_tokens: bool = True, allowed_special: Any = (),
                     disallowed_special: Any = "all") -> Any:
    """``dataset`` (a ``ray.data.Dataset``) with each row's ids in ``output_column``: a
    ``map_batches`` stage over a pool of ``actors`` tokenizer actors (default: as many as Ray
    chooses, up to the cluster's CPUs), for pipelines that already run on Ray Data. The ids are
    exactly ``encode_ids`` of the row's ``column`` (``bos``/``eos``: ids or token strings put
    around each document); the rows keep their order when the Ray Data context's
    ``execution_options.preserve_order`` is set.

    Example:
        >>> import ray                                                   # doctest: +SKIP
        >>> ds = ray.data.read_parquet("corpus/")                        # doctest: +SKIP
        >>> tokenize_dataset(ds, tok, eos="<|endoftext|>").write_parquet("tokens/")  # doctest: +SKIP
    """
    ray = _ray()
    from ciyuan.datasets.encode import special_ids

    encode_args = dict(threads=threads, add_special_tokens=add_special_tokens, allowed_special=allowed_special,
                       disallowed_special=disallowed_special)
    kwargs = dict(tokenizer=tokenizer.to_dict(), column=column, output_column=output_column,
                  bos=special_ids(tokenizer, bos, "bos"), eos=special_ids(tokenizer, eos, "eos"),
                  encode_args=encode_args)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    compute = ray.data.ActorPoolStrategy(size=actors) if actors else ray.data.ActorPoolStrategy(min_size=1,
                                                                                                 max_size=cpus)
    return dataset.map_batches(TokenizeBatch, batch_format="pyarrow", compute=compute, num_cpus=threads,
                               fn_constructor_kwargs=kwargs)
