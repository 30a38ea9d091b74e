"""Training corpora: where the text comes from, how files are read, and the word-counting front end.

Every trainer sees only distinct words with counts (:class:`WordCounts`). :func:`count_words`
gets them from any :data:`TrainingSource`: files are read in chunks of whole lines and each
line (with its newline) is pre-tokenized on its own, as Hugging Face and subword-nmt read
files; texts come in batches. When the normalizer and pre-tokenizer have a native form (a
scanner pattern, or BertNormalizer + BertPreTokenizer) the core cuts and counts on all cores
with the GIL released; otherwise the Python stages cut the text and the core counts the pieces.
Memory grows with the distinct words, never with the corpus; with ``memory_limit`` the counter
spills sorted runs to disk and merges them, exactly (:mod:`ciyuan.trainers.spill`).

Counts made separately over consecutive parts of a corpus (on other processes or machines)
combine exactly with :meth:`WordCounts.merge` / :func:`merge_counts`; :meth:`WordCounts.to_bytes`
(and pickling) carries them between processes.

Example:
    >>> counts = count_words({"low": 5, "lower": 2})
    >>> counts.words(), counts.total
    ([(b'low', 5), (b'lower', 2)], 7)
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

from ciyuan import _core, _text
from ciyuan._io import PathLike, line_blocks
from ciyuan.datasets.sources import Document, file_kind, iter_documents
from ciyuan.errors import InvalidInputError
from ciyuan.front_end import FrontEnd, native_front_end
from ciyuan.normalizers.base import NormalizedString, Normalizer
from ciyuan.pre_tokenizers.base import PreTokenizer
from ciyuan.trainers.spill import MemoryLimit, parse_memory_limit, spilling

if TYPE_CHECKING:
    from ciyuan.trainers.progress import ProgressBar

__all__ = ["PathLike", "TrainingSource", "WordCounts", "count_words", "merge_counts", "iterate_source",
           "file_chunks", "replace_surrogates", "check_errors"]

#: A file, a list of files, an iterable of texts or of :class:`~ciyuan.datasets.sources.Document`
#: (``iter_documents(...)``: JSON Lines fields, Parquet columns), or pre-counted words
#: ``{word: count}``. Files named ``*.jsonl``/``*.ndjson``/``*.json``/``*.parquet`` (also
#: ``.gz``/``.zst`` JSON Lines) are read as documents of their ``"text"`` field or column; any
#: other file is text, each line (with its newline) cut on its own. A Hugging Face dataset's
#: column (``dataset["text"]``) is an iterable of texts.
TrainingSource = Union[PathLike, Sequence[PathLike], Iterable[str], Iterable[Document], Mapping[str, int]]

_CHUNK_BYTES = 4 << 20
_BATCH_TEXTS = 8192

Config = TypeVar("Config")
Result = TypeVar("Result")


class WordCounts:
    """The distinct words of a corpus with their counts, held natively (made by :func:`count_words`).

    The only owner of the native word table: trainers read it through :meth:`words` or hand it
    to a native trainer through :meth:`learn`. Each word keeps the position where it was first
    seen (the trainers break ties by it), so :meth:`words` comes out in first-seen order.

    Example:
        >>> from ciyuan.pre_tokenizers import WhitespaceSplit
        >>> a, b = count_words(["low low lower"], WhitespaceSplit()), count_words(["newest low"], WhitespaceSplit())
        >>> a.merge(b)
        >>> a.words()
        [(b'low', 3), (b'lower', 1), (b'newest', 1)]
    """

    def __init__(self, native: "_core.WordCounter") -> None:
        self._native = native

    def __len__(self) -> int:
        """The number of distinct words."""
        return len(self._native)

    @property
    def total(self) -> int:
        """The sum of the counts."""
        return self._native.total

    @property
    def runs(self) -> int:
        """Sorted runs spilled to disk while counting (0 without a memory limit)."""
        return self._native.runs

    @property
    def memory(self) -> int:
        """Bytes the word table holds now (after a spilled count: exactly the words, no index)."""
        return self._native.memory

    @property
    def peak_memory(self) -> int:
        """The most bytes the main word table held while counting."""
        return self._native.peak_memory

    def words(self) -> List[Tuple[bytes, int]]:
        """``(UTF-8 word, count)`` in the order the words were first seen."""
        return self._native.words()

    def merge(self, other: "WordCounts") -> None:
        """Add ``other``'s words to these as if they had been counted after them.

        The exact merge of partial counts: for counts made by separate :func:`count_words` calls
        (same pre-tokenizer, normalizer and options) over consecutive parts of a corpus, merged in
        corpus order, the words, counts, total and first-seen order equal those of one call over
        the whole corpus, so a trainer learns byte-identical merges from either. ``other`` is
        left unchanged. :func:`merge_counts` merges a sequence.
        """
        if not isinstance(other, WordCounts):
            raise InvalidInputError(f"merge takes WordCounts, not {type(other).__name__}")
        self._native.merge(other._native)

    def to_bytes(self) -> bytes:
        """The words, counts, first-seen positions and clock as bytes (:meth:`from_bytes` reads
        them back; pickling uses them), to carry counts between processes."""
        return self._native.dump()

    @classmethod
    def from_bytes(cls, data: bytes) -> "WordCounts":
        """Counts written by :meth:`to_bytes`. They can be merged and trained on; text added to
        them later is not cut by any pre-tokenizer (each text would be one word)."""
        native = _core.WordCounter(FrontEnd.none())
        native.load(bytes(data))
        return cls(native)

    def __reduce__(self) -> Tuple[Any, Tuple[bytes]]:
        return (WordCounts.from_bytes, (self.to_bytes(),))

    def learn(self, train: Callable[..., Result], config: Config, *,
              progress: Optional["ProgressBar"] = None, consume: bool = False) -> Result:
        """Run a native trainer (``_core.train_bpe``, ``_core.train_wordpiece``, ``_core.train_unigram``)
        on these words.

        With ``consume=True`` the words are freed as soon as the trainer has copied them.
        """
        return train(self._native, config, progress, consume)


def merge_counts(parts: Iterable[WordCounts]) -> WordCounts:
    """One :class:`WordCounts` of ``parts`` (counts over consecutive parts of a corpus, in corpus
    order): exactly what counting the whole corpus in one pass gives (see :meth:`WordCounts.merge`).
    The parts are left unchanged.

    Example:
        >>> from ciyuan.pre_tokenizers import WhitespaceSplit
        >>> parts = [count_words(["b a"], WhitespaceSplit()), count_words(["a c"], WhitespaceSplit())]
        >>> merge_counts(parts).words() == count_words(["b a", "a c"], WhitespaceSplit()).words()
        True
    """
    merged = WordCounts(_core.WordCounter(FrontEnd.none()))
    for part in parts:
        merged.merge(part)
    return merged


def check_errors(errors: str) -> None:
    """``errors`` is how invalid UTF-8 in files is handled: ``"strict"`` or ``"replace"``."""
    if errors not in ("strict", "replace"):
        raise InvalidInputError(f"errors must be 'strict' or 'replace', not {errors!r}")


def _native_counter(normalizer: Any, pre_tokenizer: Any, lowercase: bool) -> Tuple["_core.WordCounter", bool, bool]:
    """The native counter for these stages: (counter, fast, lower). ``fast``: the core cuts the
    text itself (the same front end the encoder would run); ``lower``: the text must be
    lowercased before it reaches the core."""
    front = native_front_end(normalizer, pre_tokenizer, None)
    if front is None:
        return _core.WordCounter(FrontEnd.none()), False, lowercase
    bert = front.bert_options
    if bert is None:  # a scanner, or each text whole
        return _core.WordCounter(front), True, lowercase
    if not lowercase or bert.lowercase:
        # BertNormalizer + BertPreTokenizer: the native BERT front end cuts and normalizes (its
        # lowercasing covers the trainer's).
        return _core.WordCounter(front), True, False
    return _core.WordCounter(FrontEnd.none()), False, False


def count_words(source: TrainingSource, pre_tokenizer: Any = None, normalizer: Optional["Normalizer"] = None, *,
                lowercase: bool = False, threads: Optional[int] = None, show_progress: bool = False,
                errors: str = "strict", memory_limit: MemoryLimit = None,
                spill_dir: Optional[PathLike] = None) -> WordCounts:
    """Count the distinct words of ``source`` (see :data:`TrainingSource`).

    Args:
        source: a file, a list of files, an iterable of texts, or ``{word: count}``.
        pre_tokenizer: cuts text into words (``split(text) -> [(start, end)]``); None: each
            text, or each line of a file, is one word.
        normalizer: applied before the pre-tokenizer.
        lowercase: lowercase the text (after the normalizer).
        threads: threads for counting (None: all cores); the counts never depend on it.
        show_progress: report the counts on standard error.
        errors: invalid UTF-8 in files raises an error naming the file, byte offset and line
            (``"strict"``), or reads as U+FFFD (``"replace"``).
        memory_limit: bytes (or ``"64MB"``) the word tables may hold; beyond it they spill
            sorted runs to disk, merged when counting ends. The result is the same as without a
            limit (see :mod:`ciyuan.trainers.spill`). None: no limit.
        spill_dir: where the runs' temporary directory goes (None: the system's temporary
            directory).

    Example:
        >>> words = ["low lower newest widest"] * 50
        >>> limited = count_words(words, memory_limit="256KB")
        >>> limited.words() == count_words(words).words()
        True
    """
    check_errors(errors)
    start = time.perf_counter()
    limit = parse_memory_limit(memory_limit)
    counter, fast, lower = _native_counter(normalizer, pre_tokenizer, lowercase)
    with spilling(counter, limit, spill_dir):
        _count(counter, fast, lower, source, pre_tokenizer, normalizer, lowercase, threads, errors)
    counts = WordCounts(counter)
    if show_progress:
        spilled = f", {counts.runs} runs spilled" if counts.runs else ""
        sys.stderr.write(f"counted {len(counts):,} distinct words ({counts.total:,} in all{spilled}) "
                         f"in {time.perf_counter() - start:.1f} s\n")
    return counts


def _count(counter: "_core.WordCounter", fast: bool, lower: bool, source: TrainingSource, pre_tokenizer: Any,
           normalizer: Optional["Normalizer"], lowercase: bool, threads: Optional[int], errors: str) -> None:
    """:func:`count_words`' counting into ``counter`` (``fast``, ``lower``: see :func:`_native_counter`)."""
    python_counts: Counter = Counter()

    def prepare(text: str) -> str:
        if normalizer is not None:
            text = normalizer.normalize(NormalizedString.from_str(text)).text
        return text.lower() if lowercase else text

    def add_python(texts: List[str]) -> None:
        for text in texts:
            text = prepare(text)
            if pre_tokenizer is None:
                if text:
                    python_counts[text] += 1
                continue
            # pre_tokenize: the words as the tokenizer's model sees them (Metaspace's "▁"); any
            # other object with split() cuts the text as it is.
            if isinstance(pre_tokenizer, PreTokenizer):
                norm, spans = pre_tokenizer.pre_tokenize(NormalizedString.from_str(text))
                text = norm.text
            else:
                spans = pre_tokenizer.split(text)
            for s, e in spans:
                if e > s:
                    python_counts[text[s:e]] += 1
        # Into the native table after each batch, so that Python holds one batch's words. The
        # order is the same as one hand-over at the end: a word's position is that of the first
        # batch it appears in, and within a batch the Counter keeps first-appearance order.
        counter.add_words(list(python_counts), list(python_counts.values()))
        python_counts.clear()

    if isinstance(source, Mapping):
        words: Dict[str, int] = {}
        for word, n in source.items():
            if not isinstance(word, str):
                raise InvalidInputError(f"pre-counted words must be str keys, got {word!r}")
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise InvalidInputError(f"the count of {word!r} must be a non-negative integer, got {n!r}")
            key = replace_surrogates(prepare(word))  # as texts are read: a lone surrogate is U+FFFD
            words[key] = words.get(key, 0) + n
        counter.add_words(list(words), list(words.values()))
        return

    threads_ = threads or 0
    for kind, item in iterate_source(source):
        if kind == "file":
            if fast and not lower and errors == "strict":
                # The whole file natively: read, validated and counted with the GIL released.
                if not item.is_file():
                    raise InvalidInputError(f"cannot read {item}: no such file")
                ok, offset, line = counter.add_file(str(item), threads_)
                if not ok:
                    with open(item, "rb") as f:
                        f.seek(offset)
                        bad = f.read(4)
                    raise _text.utf8_error(item, bad, 0, offset=offset, first_line=line)
                continue
            for chunk in file_chunks(item, errors):
                if fast and not lower:
                    counter.add_lines(chunk, threads_)
                    continue
                text = chunk.decode("utf-8", "surrogateescape")
                if fast:
                    counter.add_lines(text.lower().encode("utf-8", "surrogateescape"), threads_)
                else:
                    add_python(_lines(text))
        else:
            texts = [replace_surrogates(t) for t in item]
            if fast:
                counter.add_texts([t.lower() for t in texts] if lower else texts, threads_)
            else:
                add_python(texts)


def _lines(text: str) -> List[str]:
    """Lines with their newline ("\\n" only, as files are read natively)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return [line for line in lines if line]


def replace_surrogates(text: str) -> str:
    """``text`` with lone surrogates (which have no UTF-8 form) replaced by U+FFFD."""
    if not isinstance(text, str):
        raise InvalidInputError(f"training texts must be str, got {type(text).__name__}")
    return _text.replace_surrogates(text)


def _is_file(name: str) -> bool:
    if "\n" in name or len(name) > 1024:
        return False
    try:
        return Path(name).is_file()
    except (OSError, ValueError):
        return False


def iterate_source(source: Any) -> Iterator[Tuple[str, Any]]:
    """``("file", path)`` for each text file of ``source``, ``("texts", batch)`` for batches of its
    texts (documents of JSON Lines and Parquet files included)."""
    if isinstance(source, (str, os.PathLike)):
        yield from _file_or_documents(Path(source))
        return
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, os.PathLike) for s in source):
        for s in source:
            yield from _file_or_documents(Path(s))
        return
    # A list of strings names files only if every one is an existing file; otherwise they are texts.
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, str) and _is_file(s) for s in source):
        for s in source:
            yield from _file_or_documents(Path(s))
        return
    if isinstance(source, (bytes, bytearray)):
        raise InvalidInputError("pass training text as str (or a file path), not bytes")
    try:
        it = iter(source)
    except TypeError:
        raise InvalidInputError(
            f"cannot train from {type(source).__name__}: give a file path, a list of paths, "
            "an iterable of texts or a dict of word counts"
        ) from None
    yield from _batches(it)


def _batches(texts: Iterator[Any]) -> Iterator[Tuple[str, List[str]]]:
    """``("texts", batch)`` of the texts (or documents' texts) of ``texts``."""
    batch: List[str] = []
    for text in texts:
        if isinstance(text, Document):
            text = text.text
        elif isinstance(text, Mapping):
            raise InvalidInputError(
                "training texts must be str, got a dict (a row of a Hugging Face dataset?): pass the "
                "column, dataset['text'], or ciyuan.datasets.iter_documents(files, field=...)")
        batch.append(text)
        if len(batch) >= _BATCH_TEXTS:
            yield "texts", batch
            batch = []
    if batch:
        yield "texts", batch


def _file_or_documents(path: Path) -> Iterator[Tuple[str, Any]]:
    """A text file as ``("file", path)``; JSON Lines or Parquet as batches of its documents'
    ``"text"`` field or column (:func:`ciyuan.datasets.sources.iter_documents`)."""
    if path.is_file() and file_kind(path) != "text":
        yield from _batches(iter(iter_documents(path)))
    else:
        yield "file", path


def file_chunks(path: Path, errors: str) -> Iterator[bytes]:
    """Chunks of whole lines of a UTF-8 file, validated (see :func:`count_words` for ``errors``)."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (`with f` below; the try is for the open alone)
    except OSError as e:
        raise InvalidInputError(f"cannot read {path}: {e.strerror}") from None
    with f:
        offset = 0
        line = 1
        for chunk in line_blocks(f, _CHUNK_BYTES):
            bad = _core.utf8_error_offset(chunk)
            if bad != len(chunk) and errors == "strict":
                raise _text.utf8_error(path, chunk, bad, offset=offset, first_line=line)
            offset += len(chunk)
            line += chunk.count(b"\n")
            if bad != len(chunk):
                chunk = chunk.decode("utf-8", "replace").encode("utf-8")
            yield chunk
