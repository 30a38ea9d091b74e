"""BPE trainer: learn a vocabulary and merges from a corpus.

Training runs in two native passes. First the corpus is normalized, pre-tokenized and its
distinct words counted, on all cores with the GIL released (memory grows with the distinct
words, not with the corpus). Then the merge loop: every adjacent pair of symbols is counted
once, and each step takes the most frequent pair from a priority queue, merges it only in the
words that contain it (an index maps each pair to its words) and updates the counts of the
neighbouring pairs - never a full recount. Counts are exact 64-bit integers, so the result
depends only on the corpus and the options, never on the thread count.

Ties between pairs with the same count follow ``tie_break``:

- ``"hf"`` (default): the smallest (left id, right id), Hugging Face ``tokenizers``' rule
  made deterministic. Ids go to the special tokens first, then the alphabet in code point
  order (byte-level: the 256 bytes in the code point order of GPT-2's printable characters),
  then the end-of-word variants (``"e</w>"``) in code point order, then the marker symbol,
  then merged tokens in creation order. Byte-level training reproduces Hugging Face's merges
  and vocabulary exactly.
- ``"subword-nmt"``: the greatest (left text, right text), as subword-nmt's ``learn-bpe``.
- ``"first"``: the pair seen first in the corpus (word by first appearance, then position),
  as the classic tutorials' ``max(pairs, key=pairs.get)`` does.

See ``ciyuan.reference.bpe_train`` for the same algorithm in a page of Python.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ciyuan import _core
from ciyuan.errors import InvalidInputError

__all__ = ["BpeTrainer", "TrainingSource", "TrainingReport"]

PathLike = Union[str, "os.PathLike[str]"]
#: A file, a list of files, an iterator of texts, or pre-counted words ``{word: count}``.
TrainingSource = Union[PathLike, Sequence[PathLike], Iterable[str], Mapping[str, int]]

_TIE_BREAKS = {"hf": 0, "subword-nmt": 1, "first": 2}
_CHUNK_BYTES = 4 << 20
_BATCH_TEXTS = 8192
_NO_LIMIT = (1 << 64) - 1


class TrainingReport:
    """What a training run did: sizes, the stop reason and each merge's pair count."""

    def __init__(self, words: int, total: int, alphabet: int, merge_counts: List[int], stop_reason: str,
                 seconds: float) -> None:
        self.words = words
        self.total = total
        self.alphabet = alphabet
        self.merge_counts = merge_counts
        self.stop_reason = stop_reason
        self.seconds = seconds

    def __repr__(self) -> str:
        return (f"TrainingReport({self.words} distinct words of {self.total}, alphabet {self.alphabet}, "
                f"{len(self.merge_counts)} merges, stopped: {self.stop_reason}, {self.seconds:.2f} s)")


class _ProgressBar:
    def __init__(self, label: str, stream: Any = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.last = 0.0

    def __call__(self, done: int, total: int, force: bool = False) -> None:
        self.done, self.total = done, total
        now = time.monotonic()
        if not force and done < total and now - self.last < 0.1:
            return
        self.last = now
        if total >= 1 << 62:
            self.stream.write(f"\r{self.label}: {done} merges")
        else:
            width = 30
            filled = width * done // max(total, 1)
            self.stream.write(f"\r{self.label}: [{'#' * filled}{'.' * (width - filled)}] {done}/{total} merges")
        self.stream.flush()

    def close(self) -> None:
        if hasattr(self, "done"):
            self(self.done, self.total, force=True)  # the final count
        self.stream.write("\n")
        self.stream.flush()


class BpeTrainer:
    """Options for training a BPE model (character-level with an end-of-word marker, or byte-level).

    Args:
        vocab_size: stop when the vocabulary (special tokens included) has this many tokens;
            0 means no limit (then ``max_merges`` or ``min_frequency`` must stop training).
        min_frequency: stop when the most frequent pair occurs fewer times than this.
        max_merges: stop after this many merges (None: no limit).
        special_tokens: tokens given the first ids, in order (e.g. ``["<unk>", "<pad>"]``).
        byte_level: the initial symbols are the 256 bytes (GPT-2 style) instead of characters.
        lowercase: lowercase the text before counting.
        limit_alphabet: keep only this many characters (the most frequent; equally frequent
            ones by code point, smaller kept first); others are dropped from the words, as
            Hugging Face does. Not used with ``byte_level``.
        initial_alphabet: characters always in the alphabet, even if absent from the corpus.
        max_token_length: never create a token longer than this many characters (bytes for
            byte-level).
        end_of_word_suffix: attached to each word's last character (``"</w>"``, as Hugging Face
            and subword-nmt do).
        end_of_word_symbol: or appended to each word as a separate symbol (``"l o w </w>"``, as
            the classic tutorials do). At most one of the two.
        tie_break: ``"hf"``, ``"subword-nmt"`` or ``"first"`` (see the module docstring).
        show_progress: draw a progress bar on standard error.
        threads: threads for word counting (None: all cores). The result does not depend on it.
        unk_token: the trained model's token for characters outside the alphabet (must be one
            of ``special_tokens``); None makes such characters an encoding error.

    Example:
        >>> from ciyuan import Tokenizer, pre_tokenizers
        >>> from ciyuan.trainers import BpeTrainer
        >>> trainer = BpeTrainer(vocab_size=300, byte_level=True)
        >>> tok = Tokenizer.train(["low lower newest widest"] * 10, trainer,
        ...                       pre_tokenizer=pre_tokenizers.Split("gpt2"))
        >>> tok.encode("lowest").tokens
        ['low', 'est']
    """

    type_name = "BpeTrainer"

    def __init__(
        self,
        vocab_size: int = 30000,
        *,
        min_frequency: int = 0,
        max_merges: Optional[int] = None,
        special_tokens: Sequence[str] = (),
        byte_level: bool = False,
        lowercase: bool = False,
        limit_alphabet: Optional[int] = None,
        initial_alphabet: Sequence[str] = (),
        max_token_length: Optional[int] = None,
        end_of_word_suffix: str = "",
        end_of_word_symbol: str = "",
        tie_break: str = "hf",
        show_progress: bool = False,
        threads: Optional[int] = None,
        unk_token: Optional[str] = None,
    ) -> None:
        def count(name: str, value: Any, allow_none: bool = False) -> None:
            if value is None and allow_none:
                return
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInputError(f"{name} must be a non-negative integer, not {value!r}")

        count("vocab_size", vocab_size)
        count("min_frequency", min_frequency)
        count("max_merges", max_merges, True)
        count("limit_alphabet", limit_alphabet, True)
        count("max_token_length", max_token_length, True)
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise InvalidInputError(f"threads must be a positive integer or None, not {threads!r}")
        if tie_break not in _TIE_BREAKS:
            raise InvalidInputError(f"tie_break must be one of {sorted(_TIE_BREAKS)}, not {tie_break!r}")
        if end_of_word_suffix and end_of_word_symbol:
            raise InvalidInputError("give end_of_word_suffix or end_of_word_symbol, not both")
        if byte_level and end_of_word_suffix:
            raise InvalidInputError("end_of_word_suffix applies to character-level training, not byte_level")
        if isinstance(special_tokens, str) or any(not isinstance(t, str) or not t for t in special_tokens):
            raise InvalidInputError("special_tokens must be a list of non-empty strings")
        if len(set(special_tokens)) != len(special_tokens):
            raise InvalidInputError("special_tokens lists a token twice")
        if unk_token is not None and unk_token not in special_tokens:
            raise InvalidInputError(f"unk_token {unk_token!r} must be one of special_tokens")
        if isinstance(initial_alphabet, str):
            initial_alphabet = list(initial_alphabet)
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.max_merges = max_merges
        self.special_tokens = list(special_tokens)
        self.byte_level = bool(byte_level)
        self.lowercase = bool(lowercase)
        self.limit_alphabet = limit_alphabet
        # Like Hugging Face, only the first character of each string counts.
        self.initial_alphabet = sorted({s[0] for s in initial_alphabet if s})
        self.max_token_length = max_token_length
        self.end_of_word_suffix = end_of_word_suffix
        self.end_of_word_symbol = end_of_word_symbol
        self.tie_break = tie_break
        self.show_progress = bool(show_progress)
        self.threads = threads
        self.unk_token = unk_token
        if vocab_size == 0 and max_merges is None and min_frequency == 0:
            raise InvalidInputError("with vocab_size=0 (no limit) give max_merges or min_frequency, or training never stops")
        self.report: Optional[TrainingReport] = None

    # -- word counting --------------------------------------------------------------------------

    def count_words(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Any = None,
                    *, errors: str = "strict") -> "_core.WordCounter":
        """Count the distinct words of ``source`` (see :data:`TrainingSource`).

        Files are read in chunks and each line (with its newline) is pre-tokenized on its own,
        as Hugging Face and subword-nmt read files. Invalid UTF-8 raises an error naming the
        file, byte offset and line, unless ``errors="replace"`` (bad bytes become U+FFFD).
        """
        if errors not in ("strict", "replace"):
            raise InvalidInputError(f"errors must be 'strict' or 'replace', not {errors!r}")
        native = getattr(pre_tokenizer, "native_pattern", None) if pre_tokenizer is not None else ""
        bert = _bert_front_end(normalizer, pre_tokenizer)
        if bert is not None and (not self.lowercase or bert[3]):
            # BertNormalizer + BertPreTokenizer: the native BERT front end cuts and normalizes
            # (its lowercasing covers the trainer's).
            counter = _core.WordCounter.bert(*bert)
            fast = True
        elif native is not None and native != "" and normalizer is None:
            counter = _core.WordCounter(native)
            fast = True
        elif pre_tokenizer is None and normalizer is None:
            counter = _core.WordCounter("")
            fast = True
        else:
            counter = _core.WordCounter("")
            fast = False
        threads = self.threads or 0
        lower = self.lowercase and bert is None  # the BERT front end lowercases by itself
        python_counts: Counter = Counter()
        start = time.perf_counter()

        def prepare(text: str) -> str:
            if normalizer is not None:
                from ciyuan.normalizers import NormalizedString

                text = normalizer.normalize(NormalizedString.from_str(text)).text
            return text.lower() if self.lowercase else text

        def add_python(texts: List[str]) -> None:
            for text in texts:
                text = prepare(text)
                if pre_tokenizer is None:
                    if text:
                        python_counts[text] += 1
                    continue
                for s, e in pre_tokenizer.split(text):
                    if e > s:
                        python_counts[text[s:e]] += 1

        if isinstance(source, Mapping):
            words: Dict[str, int] = {}
            for word, n in source.items():
                if not isinstance(word, str):
                    raise InvalidInputError(f"pre-counted words must be str keys, got {word!r}")
                if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                    raise InvalidInputError(f"the count of {word!r} must be a non-negative integer, got {n!r}")
                key = prepare(word)
                words[key] = words.get(key, 0) + n
            counter.add_words(list(words), list(words.values()))
            return counter

        for kind, item in _iterate(source):
            if kind == "file":
                if fast and not lower and errors == "strict":
                    # The whole file natively: read, validated and counted with the GIL released.
                    if not item.is_file():
                        raise InvalidInputError(f"cannot read {item}: no such file")
                    ok, offset, line = counter.add_file(str(item), threads)
                    if not ok:
                        with open(item, "rb") as f:
                            f.seek(offset)
                            bad = f.read(4)
                        raise InvalidInputError(_utf8_error(item, offset, line, bad))
                    continue
                for chunk in _file_chunks(item, errors):
                    if fast and not lower:
                        counter.add_lines(chunk, threads)
                        continue
                    text = chunk.decode("utf-8", "surrogateescape")
                    if fast:
                        counter.add_lines(text.lower().encode("utf-8", "surrogateescape"), threads)
                    else:
                        add_python(_lines(text))
            else:
                texts = [_replace_surrogates(t) for t in item]
                if fast:
                    counter.add_texts([t.lower() for t in texts] if lower else texts, threads)
                else:
                    add_python(texts)
        if python_counts:
            counter.add_words(list(python_counts), list(python_counts.values()))
        if self.show_progress:
            sys.stderr.write(f"counted {len(counter):,} distinct words ({counter.total:,} in all) "
                             f"in {time.perf_counter() - start:.1f} s\n")
        return counter

    # -- training -------------------------------------------------------------------------------

    def train_words(self, counter: "_core.WordCounter", *, consume: bool = False):  # -> BPE
        """Learn merges from counted words; returns a :class:`ciyuan.models.BPE`.

        With ``consume=True`` the counter's words are freed as soon as training has copied them.
        """
        from ciyuan.models import BPE

        tokens, merges = self._learn(counter, consume=consume)
        vocab = {t: i for i, t in enumerate(tokens)}
        return BPE(
            vocab,
            [(tokens[a], tokens[b]) for a, b in merges],
            byte_level=self.byte_level,
            end_of_word_suffix=self.end_of_word_suffix,
            end_of_word_symbol=self.end_of_word_symbol,
            unk_token=self.unk_token,
        )

    def _learn(self, counter: "_core.WordCounter", *, consume: bool = False, continuing_subword_prefix: str = "",
               continuing_order: Sequence[str] = (), label: str = "training BPE") -> Tuple[List[bytes], List[Tuple[int, int]]]:
        """The native merge loop: (token bytes in id order, merges as id pairs); sets ``self.report``.

        ``continuing_subword_prefix`` gives Hugging Face's WordPiece-style BPE (see
        ``ciyuan.trainers.WordPieceTrainer``); ``continuing_order`` numbers those prefixed
        characters first in the given order (a way to reproduce another run's ids).
        """
        if len(counter) == 0:
            raise InvalidInputError("the training corpus is empty (no words after pre-tokenization)")
        bar = _ProgressBar(label) if self.show_progress else None
        words, total = len(counter), counter.total
        start = time.perf_counter()
        try:
            tokens, merges, merge_counts, alphabet, stop = _core.train_bpe(
                counter,
                self.vocab_size,
                _NO_LIMIT if self.max_merges is None else self.max_merges,
                self.min_frequency,
                self.special_tokens,
                self.byte_level,
                self.initial_alphabet,
                -1 if self.limit_alphabet is None else self.limit_alphabet,
                self.max_token_length or 0,
                self.end_of_word_suffix,
                self.end_of_word_symbol,
                _TIE_BREAKS[self.tie_break],
                bar,
                consume,
                continuing_subword_prefix,
                list(continuing_order),
            )
        finally:
            if bar is not None:
                bar.close()
        self.report = TrainingReport(words, total, alphabet, merge_counts, stop,
                                     time.perf_counter() - start)
        return tokens, merges

    def train(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Any = None,
              *, errors: str = "strict"):  # -> BPE
        """Count the words of ``source`` and learn a model from them.

        Example:
            >>> model = BpeTrainer(vocab_size=40).train({"low": 5, "lower": 2, "newest": 6})
            >>> model.merges[0]
            ('w', 'e')
        """
        return self.train_words(self.count_words(source, pre_tokenizer, normalizer, errors=errors), consume=True)

    # -- serialization --------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        return {
            "type": self.type_name,
            "vocab_size": self.vocab_size,
            "min_frequency": self.min_frequency,
            "max_merges": self.max_merges,
            "special_tokens": list(self.special_tokens),
            "byte_level": self.byte_level,
            "lowercase": self.lowercase,
            "limit_alphabet": self.limit_alphabet,
            "initial_alphabet": list(self.initial_alphabet),
            "max_token_length": self.max_token_length,
            "end_of_word_suffix": self.end_of_word_suffix,
            "end_of_word_symbol": self.end_of_word_symbol,
            "tie_break": self.tie_break,
            "unk_token": self.unk_token,
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "BpeTrainer":
        options = {k: v for k, v in data.items() if k != "type"}
        vocab_size = options.pop("vocab_size", 30000)
        return cls(vocab_size, **options)

    def __repr__(self) -> str:
        kind = "byte-level" if self.byte_level else "character-level"
        return f"BpeTrainer({kind}, vocab_size={self.vocab_size}, min_frequency={self.min_frequency}, tie_break={self.tie_break!r})"


def _bert_front_end(normalizer: Any, pre_tokenizer: Any) -> Optional[tuple]:
    """The native BERT front end's options when the stages are BertNormalizer (or none) and
    BertPreTokenizer, else None."""
    if getattr(pre_tokenizer, "type_name", None) != "BertPreTokenizer":
        return None
    if normalizer is None:
        return (False, False, False, False)
    native_options = getattr(normalizer, "native_bert_options", None)
    return native_options() if native_options is not None else None


def _lines(text: str) -> List[str]:
    """Lines with their newline ("\\n" only, as files are read natively)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return [line for line in lines if line]


def _replace_surrogates(text: str) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"training texts must be str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _is_file(name: str) -> bool:
    if "\n" in name or len(name) > 1024:
        return False
    try:
        return Path(name).is_file()
    except (OSError, ValueError):
        return False


def _iterate(source: Any) -> Iterator[Tuple[str, Any]]:
    """("file", path) for files, ("texts", batch) for batches of texts."""
    if isinstance(source, (str, os.PathLike)):
        yield "file", Path(source)
        return
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, os.PathLike) for s in source):
        for s in source:
            yield "file", Path(s)
        return
    # A list of strings names files only if every one is an existing file; otherwise they are texts.
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, str) and _is_file(s) for s in source):
        for s in source:
            yield "file", Path(s)
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
    batch: List[str] = []
    for text in it:
        batch.append(text)
        if len(batch) >= _BATCH_TEXTS:
            yield "texts", batch
            batch = []
    if batch:
        yield "texts", batch


def _utf8_error(path: Path, offset: int, line: int, bad: bytes) -> str:
    return (f"{path}: invalid UTF-8 at byte {offset} (line {line}): {bad!r}; fix the file or pass "
            "errors='replace' (CLI: --errors replace) to read such bytes as U+FFFD")


def _file_chunks(path: Path, errors: str) -> Iterator[bytes]:
    """Chunks of whole lines of a UTF-8 file (validated; see BpeTrainer.count_words)."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise InvalidInputError(f"cannot read {path}: {e.strerror}") from None
    with f:
        offset = 0
        line = 1
        rest = b""
        while True:
            data = f.read(_CHUNK_BYTES)
            buf = rest + data
            if not data:
                chunk, rest = buf, b""
            else:
                cut = buf.rfind(b"\n") + 1
                if cut == 0:
                    rest = buf
                    continue
                chunk, rest = buf[:cut], buf[cut:]
            if chunk:
                bad = _core.utf8_error_offset(chunk)
                if bad != len(chunk):
                    if errors == "strict":
                        at = line + chunk.count(b"\n", 0, bad)
                        raise InvalidInputError(_utf8_error(path, offset + bad, at, chunk[bad:bad + 4]))
                offset += len(chunk)
                line += chunk.count(b"\n")
                if bad != len(chunk):
                    chunk = chunk.decode("utf-8", "replace").encode("utf-8")
                yield chunk
            if not data:
                return
