"""Models: turn one pre-tokenized piece into token ids."""

from __future__ import annotations

from typing import Any, Dict

from ciyuan.errors import ModelError
from ciyuan.models.bpe import BPE

__all__ = ["BPE", "from_dict"]


def from_dict(data: Dict[str, Any]) -> BPE:
    """Rebuild a model from its ``to_dict`` form."""
    kind = data.get("type")
    if kind == "BPE":
        return BPE.from_dict(data)
    raise ModelError(f"unknown model type {kind!r}; expected BPE")
