"""Unigram LM trainer (Kudo 2018), SentencePiece's default model type, and SentencePiece's BPE type.

Training runs natively on the counted words (each word a normalized text with ``▁`` for its
space, as SentencePiece's normalizer and its whitespace split give them; SentencePiece itself
trains on whitespace words, so the counts lose nothing):

1. the required characters: the most frequent ones covering ``character_coverage`` of all
   characters (rarer ones are unknown, or bytes with ``byte_fallback``);
2. seed pieces: frequent substrings from a suffix array over the distinct words (score =
   count x length, the ``seed_size`` best), plus the required characters;
3. EM rounds: ``num_sub_iterations`` E-steps (forward-backward over each word's lattice) and
   M-steps (pieces expected fewer than 0.5 times go; Bayesian digamma update of the
   log-probabilities), then pruning of the pieces whose removal loses the least likelihood,
   keeping ``shrinking_factor`` of them per round until ``vocab_size`` x 1.1 remain;
4. the final ``vocab_size`` pieces (meta pieces, user symbols and byte pieces included, as
   SentencePiece counts them): the required characters and the best pieces by score.

No piece crosses a Unicode script boundary (``split_by_unicode_script``; digits count as
"common" script like punctuation, so ``"3.5"`` may be a piece, but ``"a1"`` not - unless
``split_by_number=False``, which lets digits join any script), holds a digit and anything else
(``split_digits``), or holds ``▁`` except at its start (at its end with
``treat_whitespace_as_suffix``). Deterministic on any thread count: the E-step and pruning run
over fixed chunks of words, added in chunk order.

``model_type="bpe"`` trains SentencePiece's BPE instead: the merged pieces in merge order
(score minus the merge index), then the required characters (continuing the scores), as
SentencePiece lists them. Pairs with equal counts merge in the order of the smallest ids
(characters by code point, merged pieces by creation), a rule of ours (SentencePiece's own
order among ties is not specified).

See ``ciyuan.reference.unigram`` (training section) for one EM step and pruning in Python.

Example:
    >>> from ciyuan.trainers import UnigramTrainer
    >>> trainer = UnigramTrainer(vocab_size=40)
    >>> model = trainer.learn(trainer.count_words(["low lower lowest newer newest"] * 20))
    >>> model.pieces[:3]
    ['<unk>', '<s>', '</s>']
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ciyuan import _core
from ciyuan.errors import InvalidInputError, check_count
from ciyuan.trainers.base import TRAINERS, Pipeline, Trainer, TrainingReport
from ciyuan.trainers.corpus import PathLike, TrainingSource, WordCounts, iterate_source
from ciyuan.trainers.progress import progress_bar
from ciyuan.trainers.spill import MemoryLimit

if TYPE_CHECKING:
    from ciyuan.models.base import Model
    from ciyuan.normalizers.base import Normalizer

__all__ = ["UnigramTrainer", "SentencePieceBPETrainer", "TrainedPieces"]

# SentencePiece's piece types (ModelProto numbering), as ciyuan.models.PieceType numbers them.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
#: The options ``to_dict`` records, in the constructor's order.
_OPTIONS = ("vocab_size", "model_type", "character_coverage", "max_piece_length", "seed_size", "shrinking_factor",
            "num_sub_iterations", "split_digits", "split_by_unicode_script", "split_by_number",
            "treat_whitespace_as_suffix", "byte_fallback", "user_defined_symbols", "unk_piece", "bos_piece",
            "eos_piece", "pad_piece", "unk_id", "bos_id", "eos_id", "pad_id", "input_sentence_size", "seed")
_MODEL_TYPES = {"unigram": _core.UnigramModelType.UNIGRAM, "bpe": _core.UnigramModelType.BPE}


@dataclass
class TrainedPieces:
    """What a run learned, before it becomes a model: every piece in id order."""

    pieces: List[str]  #: piece text by id
    scores: List[float]  #: score by id (meta, user and byte pieces 0)
    types: List[int]  #: SentencePiece piece type by id (NORMAL=1, UNKNOWN=2, CONTROL=3, USER_DEFINED=4, BYTE=6)
    unk_id: Optional[int]
    byte_fallback: bool
    model_type: str  #: "unigram" or "bpe"
    required_chars: List[str]  #: the covered characters, most frequent first


@TRAINERS.register
class UnigramTrainer(Trainer):
    """Options for training a Unigram LM (or SentencePiece BPE) model; named as SentencePiece's flags.

    Args:
        vocab_size: pieces in all, meta pieces (unk, bos, eos, pad), user symbols and the 256
            byte pieces (with ``byte_fallback``) included.
        model_type: ``"unigram"`` or ``"bpe"`` (SentencePiece's BPE, see the module docstring).
        character_coverage: share of the characters the required characters cover (1.0: all).
        max_piece_length: longest piece, in characters (SentencePiece's max_sentencepiece_length).
        seed_size: seed pieces taken from the suffix array (seed_sentencepiece_size).
        shrinking_factor: share of the pieces each pruning round keeps.
        num_sub_iterations: EM steps per round.
        split_digits: every digit is a piece of its own.
        split_by_unicode_script: no piece mixes Unicode scripts.
        split_by_number: digits do not join letters (False: they join any script).
        treat_whitespace_as_suffix: ``▁`` ends words instead of starting them.
        byte_fallback: add the 256 ``<0x00>``.. ``<0xFF>`` pieces; unknown characters encode as bytes.
        user_defined_symbols: pieces always kept whole and never part of another piece.
        unk_piece, bos_piece, eos_piece, pad_piece: the meta pieces' texts.
        unk_id, bos_id, eos_id, pad_id: their ids (-1: no such piece; unk is required).
        input_sentence_size: train on this many lines sampled from the corpus (0: all), drawn
            deterministically with ``seed``.
        seed: the sampling seed.
        show_progress: draw a progress bar on standard error.
        threads: threads for counting and training (None: all cores); the result never depends on it.
        memory_limit, spill_dir: word counting within this many bytes (``"64MB"``), spilling
            sorted runs to ``spill_dir``; the result never depends on it (see :class:`Trainer`).

    Example:
        >>> trainer = UnigramTrainer(vocab_size=30, byte_fallback=False)
        >>> trainer.to_dict()["type"]
        'UnigramTrainer'
    """

    type_name = "UnigramTrainer"

    def __init__(
        self,
        vocab_size: int = 8000,
        *,
        model_type: str = "unigram",
        character_coverage: float = 0.9995,
        max_piece_length: int = 16,
        seed_size: int = 1_000_000,
        shrinking_factor: float = 0.75,
        num_sub_iterations: int = 2,
        split_digits: bool = False,
        split_by_unicode_script: bool = True,
        split_by_number: bool = True,
        treat_whitespace_as_suffix: bool = False,
        byte_fallback: bool = False,
        user_defined_symbols: Sequence[str] = (),
        unk_piece: str = "<unk>",
        bos_piece: str = "<s>",
        eos_piece: str = "</s>",
        pad_piece: str = "<pad>",
        unk_id: int = 0,
        bos_id: int = 1,
        eos_id: int = 2,
        pad_id: int = -1,
        input_sentence_size: int = 0,
        seed: int = 0,
        show_progress: bool = False,
        threads: Optional[int] = None,
        memory_limit: MemoryLimit = None,
        spill_dir: Optional[PathLike] = None,
    ) -> None:
        super().__init__(vocab_size, min_frequency=0, special_tokens=(), unk_token=None, lowercase=False,
                         show_progress=show_progress, threads=threads, memory_limit=memory_limit,
                         spill_dir=spill_dir)
        if model_type not in _MODEL_TYPES:
            raise InvalidInputError(f"model_type must be 'unigram' or 'bpe', not {model_type!r}")
        if not 0.0 < float(character_coverage) <= 1.0:
            raise InvalidInputError(f"character_coverage must be in (0, 1], not {character_coverage!r}")
        check_count(max_piece_length, "max_piece_length", least=1)
        check_count(seed_size, "seed_size", least=1)
        check_count(num_sub_iterations, "num_sub_iterations", least=1)
        check_count(input_sentence_size, "input_sentence_size")
        if not 0.0 < float(shrinking_factor) < 1.0:
            raise InvalidInputError(f"shrinking_factor must be in (0, 1), not {shrinking_factor!r}")
        if isinstance(user_defined_symbols, str) or any(not isinstance(s, str) or not s for s in user_defined_symbols):
            raise InvalidInputError("user_defined_symbols must be a list of non-empty strings")
        if len(set(user_defined_symbols)) != len(user_defined_symbols):
            raise InvalidInputError("user_defined_symbols lists a symbol twice")
        self.model_type = model_type
        self.character_coverage = float(character_coverage)
        self.max_piece_length = max_piece_length
        self.seed_size = seed_size
        self.shrinking_factor = float(shrinking_factor)
        self.num_sub_iterations = num_sub_iterations
        self.split_digits = bool(split_digits)
        self.split_by_unicode_script = bool(split_by_unicode_script)
        self.split_by_number = bool(split_by_number)
        self.treat_whitespace_as_suffix = bool(treat_whitespace_as_suffix)
        self.byte_fallback = bool(byte_fallback)
        self.user_defined_symbols = list(user_defined_symbols)
        self.unk_piece, self.bos_piece, self.eos_piece, self.pad_piece = unk_piece, bos_piece, eos_piece, pad_piece
        self.unk_id, self.bos_id, self.eos_id, self.pad_id = unk_id, bos_id, eos_id, pad_id
        self.input_sentence_size = input_sentence_size
        self.seed = seed
        self._meta()  # checks the ids now

    # -- the vocabulary's fixed part ------------------------------------------------------------

    def _meta(self) -> List[Tuple[str, int]]:
        """(piece, type) of the first ids: the meta pieces at their ids, the user symbols and
        byte pieces filling the other ids in order."""
        if self.unk_id < 0:
            raise InvalidInputError("unk_id must be set (SentencePiece models need an unknown piece)")
        fixed: Dict[int, Tuple[str, int]] = {}
        for name, piece, kind, token_id in (("unk", self.unk_piece, UNKNOWN, self.unk_id),
                                            ("bos", self.bos_piece, CONTROL, self.bos_id),
                                            ("eos", self.eos_piece, CONTROL, self.eos_id),
                                            ("pad", self.pad_piece, CONTROL, self.pad_id)):
            if token_id < 0:
                continue
            if not isinstance(piece, str) or not piece:
                raise InvalidInputError(f"{name}_piece must be a non-empty string")
            if token_id in fixed:
                raise InvalidInputError(f"{name}_id {token_id} is taken by another meta piece")
            fixed[token_id] = (piece, kind)
        extra: List[Tuple[str, int]] = [(s, USER_DEFINED) for s in self.user_defined_symbols]
        if self.byte_fallback:
            extra += [(f"<0x{b:02X}>", BYTE) for b in range(256)]
        size = len(fixed) + len(extra)
        if max(fixed) >= size:
            raise InvalidInputError(f"meta piece ids must be below {size} (the meta pieces' count)")
        texts = [p for p, _ in fixed.values()] + [p for p, _ in extra]
        if len(set(texts)) != len(texts):
            raise InvalidInputError("a user-defined symbol repeats a meta or byte piece")
        it = iter(extra)
        return [fixed[i] if i in fixed else next(it) for i in range(size)]

    # -- counting -------------------------------------------------------------------------------

    def count_words(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Optional["Normalizer"] = None,
                    *, errors: str = "strict") -> WordCounts:
        """Count the whitespace words (``▁`` + word) of ``source``.

        With a normalizer that cuts words itself (``SentencePieceNormalizer``) its words are
        counted; with neither normalizer nor pre-tokenizer, each line is cut at whitespace runs
        and each word gets its ``▁`` (SentencePiece's whitespace handling, without its
        normalization rule). ``input_sentence_size`` samples the lines first.
        """
        if self.input_sentence_size:
            source = self._sample(source)
        if normalizer is None and pre_tokenizer is None and not isinstance(source, dict):
            source = self._whitespace_words(source)
        return super().count_words(source, pre_tokenizer, normalizer, errors=errors)

    def _sample(self, source: TrainingSource) -> List[str]:
        """``input_sentence_size`` lines drawn uniformly (reservoir sampling, seeded: the same
        lines on every run), in corpus order."""
        rng = random.Random(self.seed)
        size = self.input_sentence_size
        reservoir: List[tuple] = []
        seen = 0

        def lines() -> Any:
            for kind, item in iterate_source(source):
                if kind == "file":
                    with open(item, encoding="utf-8", errors="replace") as f:
                        yield from f
                else:
                    yield from item

        for line in lines():
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if seen < size:
                reservoir.append((seen, line))
            else:
                j = rng.randrange(seen + 1)
                if j < size:
                    reservoir[j] = (seen, line)
            seen += 1
        reservoir.sort()
        return [line for _, line in reservoir]

    def _whitespace_words(self, source: TrainingSource) -> Dict[str, int]:
        counts: Dict[str, int] = {}
        suffix = self.treat_whitespace_as_suffix
        def add(texts: Iterable[str]) -> None:
            for text in texts:
                for word in text.split():
                    w = word + "\u2581" if suffix else "\u2581" + word
                    counts[w] = counts.get(w, 0) + 1

        for kind, item in iterate_source(source):
            if kind == "file":
                with open(item, encoding="utf-8", errors="replace") as f:
                    add(f)
            else:
                add(item)
        return counts

    # -- training -------------------------------------------------------------------------------

    def default_pipeline(self) -> Pipeline:
        return Pipeline.SENTENCEPIECE

    def _config(self, normal: int) -> "_core.UnigramTrainerConfig":
        config = _core.UnigramTrainerConfig()
        config.model_type = _MODEL_TYPES[self.model_type]
        config.vocab_size = normal
        config.character_coverage = self.character_coverage
        config.max_piece_length = self.max_piece_length
        config.seed_size = self.seed_size
        config.shrinking_factor = self.shrinking_factor
        config.num_sub_iterations = self.num_sub_iterations
        config.split_digits = self.split_digits
        config.split_by_unicode_script = self.split_by_unicode_script
        config.split_by_number = self.split_by_number
        config.treat_whitespace_as_suffix = self.treat_whitespace_as_suffix
        config.user_defined_symbols = list(self.user_defined_symbols)
        config.threads = self.threads or 0
        return config

    def learn(self, counts: WordCounts, *, consume: bool = False) -> TrainedPieces:
        """The pieces, scores and types in id order (no model built). Sets ``self.report``.

        Example:
            >>> t = UnigramTrainer(vocab_size=20)
            >>> learned = t.learn(t.count_words({"\u2581ab": 5, "\u2581abc": 3}))
            >>> learned.pieces[0], learned.types[0]
            ('<unk>', 2)
        """
        if len(counts) == 0:
            raise InvalidInputError("the training corpus is empty (no words after normalization)")
        meta = self._meta()
        normal = self.vocab_size - len(meta)
        if normal <= 0:
            raise InvalidInputError(f"vocab_size {self.vocab_size} leaves no room for pieces after the {len(meta)} "
                                    "meta, user-defined and byte pieces: raise it")
        words, total = len(counts), counts.total
        start = time.perf_counter()
        label = "training Unigram" if self.model_type == "unigram" else "training SentencePiece BPE"
        with progress_bar(label, self.show_progress) as bar:
            result = counts.learn(_core.train_unigram, self._config(normal), progress=bar, consume=consume)
        pieces = [p for p, _ in meta] + list(result.pieces)
        scores = [0.0] * len(meta) + [float(s) for s in result.scores]
        types = [t for _, t in meta] + [NORMAL] * len(result.pieces)
        taken = {p for p, _ in meta}
        clash = [p for p in result.pieces if p in taken]
        if clash:
            raise InvalidInputError(f"a learned piece {clash[0]!r} equals a meta or user-defined piece; "
                                    "rename the meta piece")
        self.report = TrainingReport(words, total, len(result.required_chars), [], f"{result.rounds} rounds",
                                     time.perf_counter() - start)
        return TrainedPieces(pieces, scores, types, self.unk_id, self.byte_fallback, self.model_type,
                             list(result.required_chars))

    def train_words(self, counts: WordCounts, *, consume: bool = False) -> "Model":
        """Learn a model from counted words: a :class:`ciyuan.models.Unigram` (or
        ``SentencePieceBPE`` with ``model_type="bpe"``)."""
        learned = self.learn(counts, consume=consume)
        from ciyuan import models  # imported late: the model lives beside the trainer

        cls = getattr(models, "Unigram" if self.model_type == "unigram" else "SentencePieceBPE", None)
        if cls is None:
            raise InvalidInputError("this build of ciyuan has no Unigram / SentencePieceBPE model class; "
                                    "use UnigramTrainer.learn() for the pieces")
        model: "Model" = cls(list(zip(learned.pieces, learned.scores)), unk_id=learned.unk_id,
                             byte_fallback=learned.byte_fallback, types=learned.types)
        return model

    def train(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Optional["Normalizer"] = None,
              *, errors: str = "strict") -> "Model":
        """Count the words of ``source`` and learn the model (see :meth:`count_words`)."""
        return self.train_words(self.count_words(source, pre_tokenizer, normalizer, errors=errors), consume=True)

    # -- serialization --------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {"type": self.type_name}
        for name in _OPTIONS:
            value = getattr(self, name)
            data[name] = list(value) if isinstance(value, list) else value
        return data

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size}, model_type={self.model_type!r})"


@TRAINERS.register
class SentencePieceBPETrainer(UnigramTrainer):
    """SentencePiece's BPE model type: ``UnigramTrainer(model_type="bpe")`` under its own name.

    Example:
        >>> SentencePieceBPETrainer(vocab_size=100).model_type
        'bpe'
    """

    type_name = "SentencePieceBPETrainer"

    def __init__(self, vocab_size: int = 8000, **options: Any) -> None:
        options.pop("model_type", None)
        super().__init__(vocab_size, model_type="bpe", **options)

    def to_dict(self) -> Dict[str, Any]:
        data = super().to_dict()
        data.pop("model_type")
        return data
