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
- ``"first-moved"``: as ``"first"``, but a word that a merge changes moves behind all the
  others (the changed words keeping their order) - founding document 000's ``fit`` re-inserts
  each merged word at the end of its dict, and its counter follows that order.

``live_vocab=True`` is document 000's vocabulary: ``vocab_size`` counts the symbols the words
still use (a merge may add one, none, or remove one: document 001's +1/0/-1), compared after
each merge - so one merge is made even when the alphabet alone is larger. :meth:`BpeTrainer.learn`
then lists them with their counts (``live_vocab`` of its result).

See ``ciyuan.reference.bpe_train`` for the same algorithm in a page of Python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence

from ciyuan import _core
from ciyuan.errors import InvalidInputError
from ciyuan.trainers.base import TRAINERS, Pipeline
from ciyuan.trainers.corpus import PathLike, TrainingSource, WordCounts
from ciyuan.trainers.merges import MergeTrainer
from ciyuan.trainers.spill import MemoryLimit

if TYPE_CHECKING:
    from ciyuan.models import BPE
    from ciyuan.normalizers.base import Normalizer

__all__ = ["BpeTrainer"]

_TIE_BREAKS = {"hf": _core.TieBreak.SMALLEST_IDS, "subword-nmt": _core.TieBreak.GREATEST_TEXT,
               "first": _core.TieBreak.FIRST_SEEN, "first-moved": _core.TieBreak.FIRST_SEEN_MOVED}


@TRAINERS.register
class BpeTrainer(MergeTrainer):
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
        tie_break: ``"hf"``, ``"subword-nmt"``, ``"first"`` or ``"first-moved"`` (see the module
            docstring).
        live_vocab: ``vocab_size`` counts the symbols still in use (document 000; see the module
            docstring).
        show_progress: draw a progress bar on standard error.
        threads: threads for word counting (None: all cores). The result does not depend on it.
        memory_limit, spill_dir: word counting within this many bytes (``"64MB"``), spilling
            sorted runs to ``spill_dir``; the result does not depend on it (see :class:`Trainer`).
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
        >>> BpeTrainer(vocab_size=40).train({"low": 5, "lower": 2, "newest": 6}).merges[0]
        ('w', 'e')
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
        live_vocab: bool = False,
        show_progress: bool = False,
        threads: Optional[int] = None,
        memory_limit: MemoryLimit = None,
        spill_dir: Optional[PathLike] = None,
        unk_token: Optional[str] = None,
    ) -> None:
        super().__init__(vocab_size, min_frequency=min_frequency, max_merges=max_merges, special_tokens=special_tokens,
                         lowercase=lowercase, limit_alphabet=limit_alphabet, initial_alphabet=initial_alphabet,
                         max_token_length=max_token_length, show_progress=show_progress, threads=threads,
                         unk_token=unk_token, memory_limit=memory_limit, spill_dir=spill_dir)
        if tie_break not in _TIE_BREAKS:
            raise InvalidInputError(f"tie_break must be one of {sorted(_TIE_BREAKS)}, not {tie_break!r}")
        if end_of_word_suffix and end_of_word_symbol:
            raise InvalidInputError("give end_of_word_suffix or end_of_word_symbol, not both")
        if byte_level and end_of_word_suffix:
            raise InvalidInputError("end_of_word_suffix applies to character-level training, not byte_level")
        if vocab_size == 0 and max_merges is None and min_frequency == 0:
            raise InvalidInputError("with vocab_size=0 (no limit) give max_merges or min_frequency, "
                                    "or training never stops")
        self.byte_level = bool(byte_level)
        self.end_of_word_suffix = end_of_word_suffix
        self.end_of_word_symbol = end_of_word_symbol
        self.tie_break = tie_break
        self.live_vocab = bool(live_vocab)

    def default_pipeline(self) -> Pipeline:
        return Pipeline.BYTES if self.byte_level else Pipeline.WORDS

    def train_words(self, counts: WordCounts, *, consume: bool = False) -> "BPE":
        """Learn merges from counted words; returns a :class:`ciyuan.models.BPE`.

        With ``consume=True`` the words are freed as soon as training has copied them.
        """
        from ciyuan.models import BPE  # imported late: the model lives beside the trainer

        result = self.learn(counts, consume=consume)
        tokens, merges = result.tokens, result.merges
        vocab = {t: i for i, t in enumerate(tokens)}
        return BPE(
            vocab,
            [(tokens[a], tokens[b]) for a, b in merges],
            byte_level=self.byte_level,
            end_of_word_suffix=self.end_of_word_suffix,
            end_of_word_symbol=self.end_of_word_symbol,
            unk_token=self.unk_token,
        )

    def train(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Optional["Normalizer"] = None,
              *, errors: str = "strict") -> "BPE":
        """:meth:`Trainer.train <ciyuan.trainers.base.Trainer.train>`, typed: the model is a BPE."""
        return self.train_words(self.count_words(source, pre_tokenizer, normalizer, errors=errors), consume=True)

    def learn(self, counts: WordCounts, *, consume: bool = False) -> "_core.MergeResult":
        """The native merge loop's whole result: ``tokens`` (bytes, in id order), ``merges`` (id
        pairs), ``merge_counts``, ``stop_reason`` and, with ``live_vocab``, ``live_vocab``
        ((id, count) of the symbols in use, most used first). Sets ``self.report``.

        No model is built: for callers that apply the merges themselves (e.g. byte-level
        training with an end-of-word symbol, which no :class:`~ciyuan.models.BPE` encodes).

        Example:
            >>> trainer = BpeTrainer(0, max_merges=2, end_of_word_symbol="</w>", tie_break="first")
            >>> result = trainer.learn(trainer.count_words({"low": 2}))
            >>> [(result.tokens[a], result.tokens[b]) for a, b in result.merges]
            [(b'l', b'o'), (b'lo', b'w')]
        """
        config = self._config(_core.BpeTrainerConfig())
        config.byte_level = self.byte_level
        config.end_of_word_suffix = self.end_of_word_suffix
        config.end_of_word_symbol = self.end_of_word_symbol
        config.tie_break = _TIE_BREAKS[self.tie_break]
        config.live_vocab = self.live_vocab
        return self._run(counts, _core.train_bpe, config, consume=consume, label="training BPE")

    # -- serialization --------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        data = super().to_dict()
        data.update(byte_level=self.byte_level, end_of_word_suffix=self.end_of_word_suffix,
                    end_of_word_symbol=self.end_of_word_symbol, tie_break=self.tie_break,
                    live_vocab=self.live_vocab)
        return data

    def __repr__(self) -> str:
        kind = "byte-level" if self.byte_level else "character-level"
        return (f"BpeTrainer({kind}, vocab_size={self.vocab_size}, min_frequency={self.min_frequency}, "
                f"tie_break={self.tie_break!r})")
