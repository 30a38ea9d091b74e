"""The trainer stage's contract: what every trainer takes, does and gives back, and its registry.

A trainer learns a model from a corpus. It never reads text itself: the corpus front end
(:mod:`ciyuan.trainers.corpus`) normalizes, pre-tokenizes and counts the words, and the
trainer learns from the counts. So a trainer is

- options, checked when it is made, with ``to_dict()`` / ``from_dict()`` (``"type"``-tagged);
- ``train(source, pre_tokenizer, normalizer, errors=...) -> Model``, which counts the words
  (:meth:`Trainer.count_words`) and learns from them (:meth:`Trainer.train_words`);
- ``special_tokens`` (the model's first ids) and :meth:`Trainer.default_pipeline`, the stages a
  new tokenizer trained by it gets when the caller names none (:mod:`ciyuan.training`).

Example:
    >>> from ciyuan.trainers import TRAINERS
    >>> TRAINERS.from_dict({"type": "WordLevelTrainer", "vocab_size": 10}).vocab_size
    10
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Type, TypeVar

from ciyuan._text import is_utf8_encodable
from ciyuan.errors import InvalidInputError, check_count
from ciyuan.registry import Registry
from ciyuan.trainers.corpus import PathLike, TrainingSource, WordCounts, count_words
from ciyuan.trainers.spill import MemoryLimit, parse_memory_limit

if TYPE_CHECKING:
    from ciyuan.models.base import Model
    from ciyuan.normalizers.base import Normalizer

__all__ = ["Pipeline", "Trainer", "TrainingReport", "VocabTrainer", "TRAINERS"]

T = TypeVar("T", bound="Trainer")


class Pipeline(enum.Enum):
    """The normalizer and pre-tokenizer a new tokenizer gets from its trainer by default."""

    #: No normalizer; ``WordPunct()`` (Hugging Face's ``Whitespace``) cuts words and punctuation.
    WORDS = "words"
    #: No normalizer; GPT-2's pattern (``Split("gpt2")``), as byte-level models are trained.
    BYTES = "bytes"
    #: Neither: every character of a text (of a line of a file), spaces included, counts.
    LINES = "lines"
    #: BERT's: ``BertNormalizer`` (lowercasing as the trainer does) and ``BertPreTokenizer``;
    #: with ``[CLS]`` and ``[SEP]`` among the special tokens, ``[CLS] A [SEP]`` post-processing.
    BERT = "bert"
    #: SentencePiece's: ``SentencePieceNormalizer`` (nmt_nfkc, ``▁`` for spaces) cuts the words
    #: itself; no pre-tokenizer; the SentencePiece decoder.
    SENTENCEPIECE = "sentencepiece"


@dataclass(repr=False)
class TrainingReport:
    """What a training run did: sizes, the stop reason and each merge's pair count."""

    words: int  #: distinct words
    total: int  #: words counted in all
    alphabet: int  #: tokens before the first merge (special tokens and the alphabet)
    merge_counts: List[int]  #: each merge's pair count when it merged
    stop_reason: str
    seconds: float

    def __repr__(self) -> str:
        return (f"TrainingReport({self.words} distinct words of {self.total}, alphabet {self.alphabet}, "
                f"{len(self.merge_counts)} merges, stopped: {self.stop_reason}, {self.seconds:.2f} s)")


class Trainer(ABC):
    """The options every trainer takes, the word counting, and the contract.

    Args:
        vocab_size: the vocabulary's size, special tokens included.
        min_frequency: what is rarer than this is not learned.
        special_tokens: the first ids, in order.
        unk_token: the trained model's token for what it does not know (one of
            ``special_tokens``), or None: unknown input is an encoding error.
        lowercase: lowercase the text before counting.
        show_progress: report progress on standard error.
        threads: threads for word counting (None: all cores); the result never depends on it.
        memory_limit: bytes (or a size such as ``"64MB"``) word counting may hold; beyond it
            the counter spills sorted runs to disk and merges them, so corpora larger than
            memory train to the same model as without a limit (:mod:`ciyuan.trainers.spill`).
        spill_dir: where the runs go (None: the system's temporary directory).
    """

    #: The ``"type"`` of :meth:`to_dict`, under which :data:`TRAINERS` knows the class.
    type_name: ClassVar[str] = ""

    def __init__(self, vocab_size: int, *, min_frequency: int, special_tokens: Sequence[str],
                 unk_token: Optional[str], lowercase: bool, show_progress: bool, threads: Optional[int],
                 memory_limit: MemoryLimit = None, spill_dir: Optional[PathLike] = None) -> None:
        check_count(vocab_size, "vocab_size")
        check_count(min_frequency, "min_frequency")
        check_count(threads, "threads", least=1, allow_none=True)
        if isinstance(special_tokens, str) or any(not isinstance(t, str) or not t for t in special_tokens):
            raise InvalidInputError("special_tokens must be a list of non-empty strings")
        if len(set(special_tokens)) != len(special_tokens):
            raise InvalidInputError("special_tokens lists a token twice")
        for t in special_tokens:
            if not is_utf8_encodable(t):  # the native trainer takes UTF-8 (found by fuzz/py/fuzz_trainers.py)
                raise InvalidInputError(f"special token {t!r} holds a lone surrogate, which has no UTF-8 form")
        if unk_token is not None and unk_token not in special_tokens:
            raise InvalidInputError(f"unk_token {unk_token!r} must be one of special_tokens")
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.special_tokens: List[str] = list(special_tokens)
        self.unk_token = unk_token
        self.lowercase = bool(lowercase)
        self.show_progress = bool(show_progress)
        self.threads = threads
        parse_memory_limit(memory_limit)  # checked now, not after a long read
        #: Counting's memory limit and the runs' directory (run options: not in :meth:`to_dict`).
        self.memory_limit = memory_limit
        self.spill_dir = spill_dir
        #: What the last run did (trainers with a merge loop), or None.
        self.report: Optional[TrainingReport] = None

    # -- training -------------------------------------------------------------------------------

    def count_words(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Optional["Normalizer"] = None,
                    *, errors: str = "strict") -> WordCounts:
        """Count the distinct words of ``source`` with this trainer's ``lowercase`` and
        ``threads`` (see :func:`ciyuan.trainers.corpus.count_words`)."""
        return count_words(source, pre_tokenizer, normalizer, lowercase=self.lowercase, threads=self.threads,
                           show_progress=self.show_progress, errors=errors, memory_limit=self.memory_limit,
                           spill_dir=self.spill_dir)

    @abstractmethod
    def train_words(self, counts: WordCounts, *, consume: bool = False) -> "Model":
        """Learn a model from counted words; ``consume=True`` frees them as soon as they are copied."""

    def train(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Optional["Normalizer"] = None,
              *, errors: str = "strict") -> "Model":
        """Count the words of ``source`` and learn a model from them.

        Args:
            source: a file, a list of files, an iterable of texts, or ``{word: count}``.
            pre_tokenizer: cuts text into words; None: each text (each line of a file) is one.
            normalizer: applied before the pre-tokenizer.
            errors: invalid UTF-8 in files: ``"strict"`` (an error naming file, byte and line)
                or ``"replace"`` (read as U+FFFD).
        """
        return self.train_words(self.count_words(source, pre_tokenizer, normalizer, errors=errors), consume=True)

    def default_pipeline(self) -> Pipeline:
        """The stages a new tokenizer trained by this trainer gets when the caller names none."""
        return Pipeline.WORDS

    # -- serialization --------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """The options, with this trainer's ``"type"``; :data:`TRAINERS` reads it back."""
        return {
            "type": self.type_name,
            "vocab_size": self.vocab_size,
            "min_frequency": self.min_frequency,
            "special_tokens": list(self.special_tokens),
            "unk_token": self.unk_token,
            "lowercase": self.lowercase,
        }

    @classmethod
    def from_dict(cls: Type[T], data: Mapping[str, Any]) -> T:
        """The trainer :meth:`to_dict` describes (unknown options raise ``TypeError``)."""
        options = {k: v for k, v in data.items() if k != "type"}
        vocab_size = options.pop("vocab_size", 30000)
        return cls(vocab_size, **options)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size}, min_frequency={self.min_frequency})"


class VocabTrainer(Trainer):
    """A trainer whose model is fixed by its vocabulary: the tokens in id order."""

    @abstractmethod
    def words_to_vocab(self, counts: WordCounts, *, consume: bool = False) -> List[str]:
        """The vocabulary learned from counted words: the tokens in id order."""

    @abstractmethod
    def _model(self, tokens: List[str]) -> "Model":
        """The model over the vocabulary ``tokens``."""

    def train_vocab(self, source: TrainingSource, pre_tokenizer: Any = None,
                    normalizer: Optional["Normalizer"] = None, *, errors: str = "strict") -> List[str]:
        """Count the words of ``source`` and learn the vocabulary: the tokens in id order."""
        return self.words_to_vocab(self.count_words(source, pre_tokenizer, normalizer, errors=errors), consume=True)

    def train_words(self, counts: WordCounts, *, consume: bool = False) -> "Model":
        return self._model(self.words_to_vocab(counts, consume=consume))

    def train(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Optional["Normalizer"] = None,
              *, errors: str = "strict") -> "Model":
        return self._model(self.train_vocab(source, pre_tokenizer, normalizer, errors=errors))


#: Trainer ``"type"`` -> class; :func:`ciyuan.trainers.from_dict` is ``TRAINERS.from_dict``.
TRAINERS: Registry[Trainer] = Registry("trainer")
