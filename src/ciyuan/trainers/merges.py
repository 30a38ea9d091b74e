"""What the trainers with a merge loop (BPE, WordPiece) share: their options and the native run.

Both learn by merging pairs of symbols, natively (``cpp/include/ciyuan/merge_loop.h``): the
options here are the core's ``MergeOptions`` (the fields common to ``_core.BpeTrainerConfig``
and ``_core.WordPieceTrainerConfig``), and :meth:`MergeTrainer._run` is the one way a native
trainer is called - the empty-corpus check, the progress bar, the timing and the report.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, Optional, Sequence, TypeVar

from ciyuan import _core
from ciyuan.errors import InvalidInputError, check_count
from ciyuan.trainers.base import Trainer, TrainingReport
from ciyuan.trainers.corpus import WordCounts
from ciyuan.trainers.progress import progress_bar

__all__ = ["MergeTrainer", "NO_LIMIT"]

#: The core's "no limit" for the merge count.
NO_LIMIT = (1 << 64) - 1

Config = TypeVar("Config")


class MergeTrainer(Trainer):
    """The options of a trainer with a merge loop, beyond :class:`~ciyuan.trainers.base.Trainer`'s.

    Args:
        max_merges: stop after this many merges (None: no limit).
        limit_alphabet: keep only this many characters (the most frequent; equally frequent
            ones by code point, smaller kept first); the others are dropped from the words, as
            Hugging Face does.
        initial_alphabet: characters always in the alphabet, even if absent from the corpus
            (only each string's first character counts, as in Hugging Face).
        max_token_length: never make a token longer than this many characters.
    """

    def __init__(self, vocab_size: int, *, max_merges: Optional[int], limit_alphabet: Optional[int],
                 initial_alphabet: Sequence[str], max_token_length: Optional[int], **options: Any) -> None:
        super().__init__(vocab_size, **options)
        for name, value in (("max_merges", max_merges), ("limit_alphabet", limit_alphabet),
                            ("max_token_length", max_token_length)):
            if value is not None:  # None: no limit (the message does not mention it)
                check_count(value, name)
        if isinstance(initial_alphabet, str):
            initial_alphabet = list(initial_alphabet)
        self.max_merges = max_merges
        self.limit_alphabet = limit_alphabet
        self.initial_alphabet = sorted({s[0] for s in initial_alphabet if s})
        self.max_token_length = max_token_length

    def _config(self, config: Config) -> Config:
        """``config`` (a fresh native config) with the shared options set."""
        c: Any = config
        c.vocab_size = self.vocab_size
        c.max_merges = NO_LIMIT if self.max_merges is None else self.max_merges
        c.min_frequency = self.min_frequency
        c.special_tokens = self.special_tokens
        c.initial_alphabet = self.initial_alphabet
        c.limit_alphabet = -1 if self.limit_alphabet is None else self.limit_alphabet
        c.max_token_length = self.max_token_length or 0
        return config

    def _run(self, counts: WordCounts, train: Callable[..., "_core.MergeResult"], config: Config, *,
             consume: bool, label: str) -> "_core.MergeResult":
        """Run the native trainer ``train`` on ``counts`` (its result: tokens, merges as id pairs,
        ...); sets ``self.report``."""
        if len(counts) == 0:
            raise InvalidInputError("the training corpus is empty (no words after pre-tokenization)")
        words, total = len(counts), counts.total
        start = time.perf_counter()
        with progress_bar(label, self.show_progress) as bar:
            result = counts.learn(train, config, progress=bar, consume=consume)
        self.report = TrainingReport(words, total, result.alphabet_size, result.merge_counts, result.stop_reason,
                                     time.perf_counter() - start)
        return result

    def to_dict(self) -> Dict[str, Any]:
        data = super().to_dict()
        data.update(max_merges=self.max_merges, limit_alphabet=self.limit_alphabet,
                    initial_alphabet=list(self.initial_alphabet), max_token_length=self.max_token_length)
        return data
