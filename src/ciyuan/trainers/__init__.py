"""Trainers: learn a model's vocabulary from a corpus (one module per model family).

Example:
    >>> from ciyuan.trainers import BpeTrainer, from_dict
    >>> from_dict(BpeTrainer(vocab_size=500).to_dict()).vocab_size
    500
"""

from __future__ import annotations

from typing import Any, Dict, Union

from ciyuan.errors import ModelError
from ciyuan.trainers.bpe import BpeTrainer, TrainingReport, TrainingSource
from ciyuan.trainers.word_level import CharLevelTrainer, WordLevelTrainer
from ciyuan.trainers.wordpiece import WordPieceTrainer

__all__ = ["BpeTrainer", "CharLevelTrainer", "TrainingReport", "TrainingSource", "WordLevelTrainer",
           "WordPieceTrainer", "from_dict"]

_TRAINERS = {cls.type_name: cls for cls in (BpeTrainer, WordPieceTrainer, WordLevelTrainer, CharLevelTrainer)}

Trainer = Union[BpeTrainer, WordPieceTrainer, WordLevelTrainer, CharLevelTrainer]


def from_dict(data: Dict[str, Any]) -> Trainer:
    """Rebuild a trainer from its ``to_dict`` form."""
    kind = data.get("type") if isinstance(data, dict) else None
    cls = _TRAINERS.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ModelError(f"unknown trainer type {kind!r}; expected one of {', '.join(sorted(_TRAINERS))}")
    return cls.from_dict(data)
