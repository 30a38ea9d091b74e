"""Post-processors: what turns a model's tokens into a model's input - special tokens around the
sequences (templates), truncation with overflowing windows, and padding - with exactly Hugging
Face ``tokenizers``' results.

Example:
    >>> from ciyuan.encoding import Encoding
    >>> from ciyuan.processors import BertProcessing, Padding, Truncation, pad_batch, post_process
    >>> raw = Encoding(None, ids=[7592, 2088], offsets=[(0, 5), (6, 11)], tokens=["hello", "world"])
    >>> enc = post_process(raw, processor=BertProcessing(), truncation=Truncation(512))
    >>> enc = pad_batch([enc], Padding(length=6))[0]
    >>> enc.ids, enc.attention_mask
    ([101, 7592, 2088, 102, 0, 0], [1, 1, 1, 1, 0, 0])
"""

from __future__ import annotations

from typing import Any, Dict, Union

from ciyuan.errors import ModelError
from ciyuan.processors.bert import BertProcessing
from ciyuan.processors.padding import Padding, pad, pad_batch
from ciyuan.processors.post_process import post_process
from ciyuan.processors.template import TemplateProcessing
from ciyuan.processors.truncation import Truncation, truncate_encodings

__all__ = [
    "TemplateProcessing",
    "BertProcessing",
    "PostProcessor",
    "Truncation",
    "Padding",
    "post_process",
    "pad",
    "pad_batch",
    "truncate_encodings",
    "from_dict",
]

PostProcessor = Union[TemplateProcessing, BertProcessing]

_TYPES = {cls.type_name: cls for cls in (TemplateProcessing, BertProcessing)}


def from_dict(data: Dict[str, Any]) -> PostProcessor:
    """Rebuild a post-processor from its ``to_dict`` form (HF's JSON form is read too)."""
    kind = data.get("type") if isinstance(data, dict) else None
    cls = _TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ModelError(f"unknown post-processor type {kind!r}; expected one of {sorted(_TYPES)}")
    return cls.from_dict(data)
