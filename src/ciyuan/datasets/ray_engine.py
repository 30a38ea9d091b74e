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
- **a Ray Data stage** (:func:`tokenize_dataset`): ``map_batches`` over a pool of tokenizer
  actors, for pipelines that already hold a ``ray.data.Dataset``.
- **encode-dataset** (:func:`encode_dataset_ray`, ``ciyuan encode-dataset --ray``): the documents
  are read and the shards written as the local run does it (:func:`ciyuan.datasets.encode_dataset`),
  and the batches are encoded by a pool of tokenizer actors (:class:`RayEngine`), in order: the
  same shards and manifest, byte for byte.

A Ray task or actor that dies with its worker (a killed process, a lost node) is run again by
Ray (``max_retries``; ``max_restarts`` and ``max_task_retries`` for actors); parts and batches
are pure functions of their input, so a retry gives the same bytes and the result is unchanged.

``address`` is Ray's: None starts a local Ray on this machine (or uses the one this process
already started), ``"auto"`` joins the cluster ``ray start`` runs here, ``"HOST:6379"`` or
``"ray://HOST:10001"`` joins a remote one (see docs/scale.md). Training's files are read by the
workers, so on a cluster they must be at the same path on every node (a shared file system);
encode-dataset's are read by the driver.

Example:
    >>> from ciyuan.trainers import BpeTrainer
    >>> tok = train(["low lower newest"] * 50, BpeTrainer(300, byte_level=True))  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional, Tuple

from ciyuan import _core, _text, training
from ciyuan.errors import CiyuanError, InvalidInputError
from ciyuan.front_end import FrontEnd
from ciyuan.trainers import CharLevelTrainer, Trainer
from ciyuan.trainers.corpus import TrainingSource, WordCounts, check_errors, iterate_source

if TYPE_CHECKING:
    from ciyuan.decoders import Decoder
    from ciyuan.normalizers import Normalizer
    from ciyuan.tokenizer import Tokenizer

__all__ = ["train", "count_words", "encode_dataset_ray", "RayEngine", "tokenize_dataset", "TokenizeBatch",
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


# -- encode-dataset: the batches on a pool of tokenizer actors -------------------------------
#
# encode_dataset reads the documents (on a thread of the driver), cuts them into batches and
# hands them to an engine (ciyuan.datasets.encode.Engine); it puts BOS/EOS around each document
# and writes the shards and the manifest itself. This engine sends each batch to one of a pool
# of Ray actors, each holding the tokenizer, with a bounded number of batches in flight, and
# gives the results back in batch order: the same ids as the local engine, so the same bytes.


class _Encoder:
    """A Ray actor holding one tokenizer: texts in, ``encode_batch_ids(..., as_array=True)`` out
    (flat ids and offsets, numpy: they travel through Ray's object store without a copy per
    token), or None when the tokenizer refuses a document (the driver then finds which)."""

    def __init__(self, tokenizer: Dict[str, Any], encode_args: Dict[str, Any]) -> None:
        from ciyuan.tokenizer import Tokenizer

        self.tok = Tokenizer.from_dict(tokenizer)
        self.args = encode_args

    def encode(self, texts: List[str]) -> Optional[Tuple[Any, Any]]:
        try:
            return self.tok.encode_batch_ids(texts, as_array=True, **self.args)
        except CiyuanError:
            return None


class RayEngine:
    """An :data:`~ciyuan.datasets.encode.Engine` on Ray (at ``address``; see the module's notes):
    ``actors`` tokenizer actors (default: one per CPU of the cluster), each encoding with
    ``threads`` threads (default 1), and up to ``2 * actors`` batches in flight.

    An actor lost with its worker is restarted and its batches sent again (``max_restarts``,
    ``max_task_retries``): encoding is a pure function of the batch, so the output does not change.
    """

    def __init__(self, address: Optional[str] = None, *, actors: Optional[int] = None,
                 threads: Optional[int] = None) -> None:
        if actors is not None and actors < 1:
            raise InvalidInputError(f"actors must be at least 1, not {actors}")
        self.address = address
        self.actors = actors
        self.threads = threads

    def __call__(self, batches: Iterator[List[str]], tok: "Tokenizer",
                 encode_args: Dict[str, Any]) -> Iterator[Optional[Tuple[Any, Any]]]:
        with ray_session(self.address) as ray:
            count = self.actors or max(1, int(ray.cluster_resources().get("CPU", 1)))
            args = dict(encode_args, threads=self.threads or 1)
            cls = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=-1)(_Encoder)
            saved = ray.put(tok.to_dict())
            pool = [cls.remote(saved, args) for _ in range(count)]
            pending: List[Any] = []
            try:
                for i, texts in enumerate(batches):
                    pending.append(pool[i % count].encode.remote(texts))
                    if len(pending) >= 2 * count:  # bounded: the oldest is written before more are sent
                        yield _get(ray, pending.pop(0))
                while pending:
                    yield _get(ray, pending.pop(0))
            finally:
                for actor in pool:
                    ray.kill(actor)


def encode_dataset_ray(inputs: Any, output: Any, tokenizer: Any, *, address: Optional[str] = None,
                       actors: Optional[int] = None, **options: Any) -> Any:
    """:func:`ciyuan.datasets.encode_dataset` with the batches encoded by :class:`RayEngine`
    (``actors`` tokenizer actors on the Ray at ``address``; ``threads`` is each actor's
    threads). The shards and manifest are the same bytes as the local run's, and a run started
    again resumes with or without Ray.
    """
    from ciyuan.datasets.encode import encode_dataset

    engine = RayEngine(address, actors=actors, threads=options.pop("threads", None))
    return encode_dataset(inputs, output, tokenizer, engine=engine, **options)


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
