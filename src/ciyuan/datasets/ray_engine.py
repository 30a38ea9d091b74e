"""The Ray engine: word counting for training, and encode-dataset, on a Ray cluster.

Ray (``pip install "ciyuan[ray]"``) is where many data pipelines already run. Two jobs run
on it here, each giving exactly what the single-machine run gives:

- **Training** (:func:`train`, ``ciyuan train --ray``): the corpus is cut into parts in corpus
  order (files, and byte ranges of large files cut at line ends; or batches of texts), each Ray
  task counts one part with the trainer's own counting (``trainer.count_words``) and returns its
  partial counts as bytes (:meth:`WordCounts.to_bytes`), and the driver merges them in part
  order (:meth:`WordCounts.merge`: counts add, a word keeps its first-seen position), so the
  words, counts and first-seen order equal one pass over the whole corpus. The merge loop (BPE,
  WordPiece) or EM (Unigram) then runs on the driver, and the model is byte-identical.
- **encode-dataset** (:func:`encode_dataset_ray`, ``ciyuan encode-dataset --ray``): see there.

A Ray task that dies with its worker (a killed process, a lost node) is run again by Ray
(``max_retries``); parts are pure functions of their byte range, so a retry gives the same
bytes and the result is unchanged.

``address`` is Ray's: None starts a local Ray on this machine (or uses the one this process
already started), ``"auto"`` joins the cluster ``ray start`` runs here, ``"HOST:6379"`` or
``"ray://HOST:10001"`` joins a remote one (see docs/scale.md). Files are read by the workers, so
on a cluster they must be at the same path on every node (a shared file system).

Example:
    >>> from ciyuan.trainers import BpeTrainer
    >>> tok = train(["low lower newest"] * 50, BpeTrainer(300, byte_level=True))  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional

from ciyuan import _core, _text, training
from ciyuan.errors import CiyuanError, InvalidInputError
from ciyuan.front_end import FrontEnd
from ciyuan.trainers import CharLevelTrainer, Trainer
from ciyuan.trainers.corpus import TrainingSource, WordCounts, check_errors, iterate_source

if TYPE_CHECKING:
    from ciyuan.decoders import Decoder
    from ciyuan.normalizers import Normalizer
    from ciyuan.tokenizer import Tokenizer

__all__ = ["train", "count_words", "encode_dataset_ray", "ray_session", "plan_file_parts", "FilePart",
           "DEFAULT_PART_BYTES"]

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
    if address is None:
        options["num_cpus"] = num_cpus
    ray.init(address=address, **options)
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


def _read_lines(part: FilePart, errors: str) -> List[str]:
    """The lines of ``part``, each with its ``\\n``, as a file is read for training: invalid
    UTF-8 raises an error naming the file, byte and line, or reads as U+FFFD."""
    with open(part.path, "rb") as f:
        f.seek(part.start)
        data = f.read(part.end - part.start)
    bad = _core.utf8_error_offset(data)
    if bad != len(data):
        if errors == "strict":
            raise _text.utf8_error(part.path, data, bad, offset=part.start, first_line=_line_at(part))
        text = data.decode("utf-8", "replace")
    else:
        text = data.decode("utf-8")
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]  # the text after the last newline (or "")
    return lines


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
    """One part's counts as bytes (a Ray task's body)."""
    texts = _read_lines(part, job.errors) if isinstance(part, FilePart) else part
    pre_tokenizer, normalizer = _Counting.restore(job.pre_tokenizer), _Counting.restore(job.normalizer)
    # An iterator, never a list: a list of strings that all name files would be read as files.
    counts = job.trainer.count_words(iter(texts), pre_tokenizer, normalizer, errors=job.errors)
    return counts.to_bytes()


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



# -- encode-dataset: a Ray Data pipeline --------------------------------------------------------
#
# read (a task per input file: ciyuan's DocumentStream, batches of about batch_chars characters)
#   -> map_batches over a pool of tokenizer actors (encode_batch_ids, exactly encode_ids)
#   -> the driver, in order: BOS/EOS, shards and the manifest, by encode_dataset's own run.
# Ray Data keeps the blocks in order (preserve_order), so the documents reach the writer in the
# order of the local run, and the shards and manifest are the same bytes. Each file's read ends
# with a marker row carrying the count of bad documents it skipped (skip_bad).

_DOC, _END = 0, 1  # row kinds: a document, a file's end marker


def _read_file(batch: Any, *, options: Dict[str, Any], batch_chars: int) -> Iterator[Any]:
    """The documents of one input file as pyarrow tables of about ``batch_chars`` characters,
    then its end marker (a Ray Data read step: a generator, so memory stays bounded)."""
    import pyarrow as pa

    from ciyuan.datasets.sources import DocumentStream

    index = int(batch["index"][0])
    stream = DocumentStream([Path(str(batch["path"][0]))], **options)

    def table(texts: List[str], lines: List[int], kind: int, skipped: int = 0) -> Any:
        n = len(texts)
        return pa.table({"text": pa.array(texts, pa.large_string()), "file": pa.array([index] * n, pa.int32()),
                         "line": pa.array(lines, pa.int64()), "kind": pa.array([kind] * n, pa.int8()),
                         "skipped": pa.array([skipped] * n, pa.int64())})

    texts: List[str] = []
    lines: List[int] = []
    size = 0
    for doc in stream:
        texts.append(doc.text)
        lines.append(doc.line)
        size += len(doc.text)
        if size >= batch_chars:
            yield table(texts, lines, _DOC)
            texts, lines, size = [], [], 0
    if texts:
        yield table(texts, lines, _DOC)
    yield table([""], [0], _END, stream.skipped)


class _Encoder:
    """A Ray actor holding one tokenizer: a batch of rows in, their ids out (a large_list
    column; ``refused``: the error of a document the tokenizer refused, else null)."""

    def __init__(self, tokenizer: Dict[str, Any], encode_args: Dict[str, Any]) -> None:
        from ciyuan.tokenizer import Tokenizer

        self.tok = Tokenizer.from_dict(tokenizer)
        self.args = encode_args

    def __call__(self, table: Any) -> Any:
        import numpy as np
        import pyarrow as pa

        texts = table.column("text").to_pylist()
        kinds = table.column("kind").to_numpy()
        docs = [t if k == _DOC else "" for t, k in zip(texts, kinds)]
        refused: List[Optional[str]] = [None] * len(docs)
        try:
            ids, offsets = self.tok.encode_batch_ids(docs, as_array=True, **self.args)
        except CiyuanError:  # find the documents the tokenizer refuses (as the local run does)
            parts = []
            for i, text in enumerate(docs):
                try:
                    parts.append(self.tok.encode_batch_ids([text], as_array=True, **self.args)[0])
                except CiyuanError as e:
                    refused[i] = f"{type(e).__name__}\0{e}"
                    parts.append(np.zeros(0, dtype=np.uint32))
            ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint32)
            offsets = np.zeros(len(parts) + 1, dtype=np.int64)
            np.cumsum([len(p) for p in parts], out=offsets[1:])
        column = pa.LargeListArray.from_arrays(pa.array(np.asarray(offsets, dtype=np.int64)),
                                               pa.array(np.asarray(ids, dtype=np.uint32)))
        return pa.table({"file": table.column("file"), "line": table.column("line"), "kind": table.column("kind"),
                         "skipped": table.column("skipped"), "ids": column,
                         "refused": pa.array(refused, pa.string())})


class _Encoded:
    """A batch of encoded documents as the local run's loop sees it (``len`` is its documents)."""

    def __init__(self, ids: Any, offsets: Any, refused: List[Optional[str]], places: List[str]) -> None:
        self.ids, self.offsets, self.refused, self.places = ids, offsets, refused, places

    def __len__(self) -> int:
        return len(self.offsets) - 1


class _StreamState:
    """What the run reads of its document stream besides the documents: skipped documents and
    bytes done (whole files, as their end markers arrive)."""

    def __init__(self, files: List[Path]) -> None:
        self.files = files
        self.total_bytes = sum(f.stat().st_size for f in files)
        self.skipped = 0
        self.done = 0

    def bytes_done(self) -> int:
        return self.done


def _run_class() -> Any:
    """``encode._Run`` with its reading and encoding on Ray (made on first use: importing
    :mod:`ciyuan.datasets.encode` pulls in numpy)."""
    from ciyuan.datasets import encode

    class RayRun(encode._Run):
        def __init__(self, *args: Any, address: Optional[str], actors: Optional[int]) -> None:
            super().__init__(*args)
            self.address = address
            self.actors = actors
            self.source = self.stream
            self.state = _StreamState(self.source.files)
            self.stream = self.state  # type: ignore[assignment]  # go() reads skipped / bytes_done only

        def go(self, show_progress: bool) -> Any:
            with ray_session(self.address):
                return super().go(show_progress)

        def _batches(self) -> Iterator[tuple]:
            skip = self.manifest.next_document
            position = 0
            for table in self._pipeline().iter_batches(batch_size=None, batch_format="pyarrow"):
                kinds = table.column("kind").to_numpy()
                for i in (kinds == _END).nonzero()[0]:
                    self.state.skipped += int(table.column("skipped")[int(i)].as_py())
                    self.state.done += self.source.files[int(table.column("file")[int(i)].as_py())].stat().st_size
                table = table.filter(self.np.asarray(kinds == _DOC))
                n = table.num_rows
                if position + n <= skip:  # documents the finished shards hold (a resumed run)
                    position += n
                    continue
                if position < skip:
                    table = table.slice(skip - position)
                    position = skip
                if table.num_rows == 0:
                    continue
                ids = table.column("ids").combine_chunks()
                offsets = self.np.asarray(ids.offsets.to_numpy(zero_copy_only=False), dtype=self.np.int64)
                values = ids.values.to_numpy(zero_copy_only=False)
                refused = table.column("refused").to_pylist()
                places = []
                if any(r is not None for r in refused):
                    files = table.column("file").to_pylist()
                    lines = table.column("line").to_pylist()
                    places = [f"{self.source.files[f]}:{line}" for f, line in zip(files, lines)]
                yield position, _Encoded(values, offsets, refused, places)
                position += table.num_rows
            if position < skip:
                raise InvalidInputError(f"the inputs hold fewer documents than the manifest's {skip}; "
                                        "use overwrite=True (CLI: --overwrite) to start again")

        def _encode(self, docs: Any, first: int) -> tuple:
            if not docs.places:
                return docs.ids, docs.offsets, None
            from ciyuan import errors

            kept = []
            for i, message in enumerate(docs.refused):
                if message is None:
                    kept.append(i)
                    continue
                name, text = message.split("\0", 1)
                if not self.skip_bad:
                    cls = getattr(errors, name, InvalidInputError)
                    raise cls(f"{docs.places[i]}: {text}")
                self.rejected.append(first + i)
            np = self.np
            lengths = np.diff(docs.offsets)[kept]
            starts = docs.offsets[:-1][kept]
            ids = (np.concatenate([docs.ids[s:s + n] for s, n in zip(starts, lengths)]) if kept
                   else np.zeros(0, dtype=np.uint32))
            offsets = np.zeros(len(kept) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            return ids, offsets, np.array(kept, dtype=np.int64)

        def _pipeline(self) -> Any:
            import ray

            ctx = ray.data.DataContext.get_current()
            ctx.execution_options.preserve_order = True  # the shards are written in document order
            ctx.enable_progress_bars = False
            src = self.source
            options = dict(input_format="auto", doc_per=src.doc_per, field=src.field, column=src.column,
                           errors=src.errors, skip_bad=src.skip_bad)
            options["input_format"] = self.manifest.job["input_format"]
            files = [{"index": i, "path": str(f)} for i, f in enumerate(src.files)]
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
            actors = self.actors or max(1, cpus - 1)  # one core reads, the others encode
            args = dict(self.encode_args)
            args["threads"] = args.get("threads") or 1  # one core per actor
            ds: Any = ray.data.from_items(files, override_num_blocks=max(1, len(files)))
            # Ray Data's defaults retry a read task whose worker dies, and restart a lost actor
            # and run its batch again (max_restarts=-1, max_task_retries=-1).
            ds = ds.map_batches(_read_file, batch_size=1,
                                fn_kwargs=dict(options=options, batch_chars=self.batch_chars))
            return ds.map_batches(_Encoder, batch_size=None, batch_format="pyarrow", num_cpus=1,
                                  compute=ray.data.ActorPoolStrategy(size=actors),
                                  fn_constructor_kwargs=dict(tokenizer=self.tok.to_dict(), encode_args=args))

    return RayRun


def encode_dataset_ray(inputs: Any, output: Any, tokenizer: Any, *, address: Optional[str] = None,
                       actors: Optional[int] = None, **options: Any) -> Any:
    """:func:`ciyuan.datasets.encode_dataset` as a Ray Data pipeline on the cluster at ``address``
    (see the module's notes): read (a task per input file) -> ``map_batches`` over ``actors``
    tokenizer actors (default: the cluster's CPUs less one) -> shards written by the driver, in
    order. The shards and manifest are the same bytes as the local run's, and a run started
    again resumes either way. ``threads`` is the threads of each actor (default 1).

    An actor or read task lost with its worker is restarted and its batch read or encoded again
    (Ray Data's ``max_restarts=-1``/``max_task_retries=-1``): the output does not change.
    """
    from ciyuan.datasets.encode import encode_dataset

    cls = _run_class()

    def runner(*args: Any) -> Any:
        return cls(*args, address=address, actors=actors)

    return encode_dataset(inputs, output, tokenizer, runner=runner, **options)
