"""Trainers: learn a model's vocabulary from a corpus (one module per model family).

Example:
    >>> from ciyuan.trainers import BpeTrainer, from_dict
    >>> from_dict(BpeTrainer(vocab_size=500).to_dict()).vocab_size
    500
"""

from __future__ import annotations

from typing import Any, Dict

from ciyuan.errors import ModelError
from ciyuan.trainers.bpe import BpeTrainer, TrainingReport, TrainingSource

__all__ = ["BpeTrainer", "TrainingReport", "TrainingSource", "from_dict"]


def from_dict(data: Dict[str, Any]) -> BpeTrainer:
    """Rebuild a trainer from its ``to_dict`` form."""
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "BpeTrainer":
        return BpeTrainer.from_dict(data)
    raise ModelError(f"unknown trainer type {kind!r}; expected BpeTrainer")
