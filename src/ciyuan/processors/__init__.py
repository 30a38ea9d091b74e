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

from ciyuan.processors.base import PROCESSORS, PostProcessor
from ciyuan.processors.bert import BertProcessing
from ciyuan.processors.byte_level import ByteLevel
from ciyuan.processors.padding import Padding, pad, pad_batch
from ciyuan.processors.post_process import post_process
from ciyuan.processors.roberta import RobertaProcessing
from ciyuan.processors.sequence import Sequence
from ciyuan.processors.template import TemplateProcessing
from ciyuan.processors.truncation import Truncation, truncate_encodings

__all__ = [
    "TemplateProcessing",
    "BertProcessing",
    "RobertaProcessing",
    "ByteLevel",
    "Sequence",
    "PostProcessor",
    "PROCESSORS",
    "Truncation",
    "Padding",
    "post_process",
    "pad",
    "pad_batch",
    "truncate_encodings",
    "from_dict",
]

#: Rebuild a post-processor from its ``to_dict`` form (HF's JSON form is read too).
from_dict = PROCESSORS.from_dict
