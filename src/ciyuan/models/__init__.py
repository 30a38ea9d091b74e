"""Models: turn one pre-tokenized piece into token ids."""

from __future__ import annotations

from typing import Any, Dict

from ciyuan.errors import ModelError
from ciyuan.models.bpe import BPE
from ciyuan.models.word_level import CharLevel, WordLevel
from ciyuan.models.wordpiece import WordPiece

__all__ = ["BPE", "WordPiece", "WordLevel", "CharLevel", "from_dict"]

_VOCAB_MODELS = {cls.type_name: cls for cls in (WordPiece, WordLevel, CharLevel)}


def from_dict(data: Dict[str, Any]) -> Any:
    """Rebuild a model from its ``to_dict`` form."""
    kind = data.get("type")
    if kind == "BPE":
        return BPE.from_dict(data)
    if kind in _VOCAB_MODELS:
        return _VOCAB_MODELS[kind].from_dict(data)
    raise ModelError(f"unknown model type {kind!r}; expected BPE, WordPiece, WordLevel or CharLevel")
