"""Trainers: learn a model's vocabulary from a corpus (one module per model family).

The contract is :class:`Trainer` (``trainers/base.py``); the corpus front end (sources, file
chunks, word counting) is ``trainers/corpus.py``; the progress bar ``trainers/progress.py``.

Example:
    >>> from ciyuan.trainers import BpeTrainer, from_dict
    >>> from_dict(BpeTrainer(vocab_size=500).to_dict()).vocab_size
    500
"""

from __future__ import annotations

from ciyuan.trainers.base import TRAINERS, Pipeline, Trainer, TrainingReport
from ciyuan.trainers.bpe import BpeTrainer
from ciyuan.trainers.corpus import TrainingSource, WordCounts
from ciyuan.trainers.unigram import SentencePieceBPETrainer, UnigramTrainer
from ciyuan.trainers.word_level import CharLevelTrainer, WordLevelTrainer
from ciyuan.trainers.wordpiece import WordPieceTrainer

__all__ = ["BpeTrainer", "CharLevelTrainer", "Pipeline", "SentencePieceBPETrainer", "TRAINERS", "Trainer",
           "TrainingReport", "TrainingSource", "UnigramTrainer", "WordCounts", "WordLevelTrainer", "WordPieceTrainer", "from_dict"]

#: Rebuild a trainer from its ``to_dict`` form.
from_dict = TRAINERS.from_dict
