"""Hugging Face's ByteLevel post-processor: offsets without the spaces a byte-level token
carries (``trim_offsets``), and nothing added.

A byte-level token keeps the space before a word (``"Ġworld"``), so its offsets cover that
space; trimming moves the start past leading spaces (``Ġ`` or whitespace characters) and the
end before trailing ones, never crossing. The first token keeps a single leading space when
``add_prefix_space`` is set (the pre-tokenizer put it there), as Hugging Face does.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ciyuan.encoding import Encoding, trim_spans
from ciyuan.errors import InvalidInputError, ModelError
from ciyuan.processors.base import PROCESSORS, PostProcessor

__all__ = ["ByteLevel", "trim_offsets", "combine"]


def trim_offsets(encoding: Encoding, add_prefix_space: bool) -> Encoding:
    """A copy of ``encoding`` (and of its overflowing windows) with trimmed offsets
    (:func:`ciyuan.encoding.trim_spans`).

    Example:
        >>> enc = Encoding(None, ids=[1, 2], offsets=[(0, 6), (6, 12)], tokens=["ĠHello", "Ġworld"])
        >>> trim_offsets(enc, add_prefix_space=True).offsets, trim_offsets(enc, add_prefix_space=False).offsets
        ([(0, 6), (7, 12)], [(1, 6), (7, 12)])
    """
    if not isinstance(encoding, Encoding):
        raise InvalidInputError(f"expected a ciyuan Encoding, not {type(encoding).__name__}")
    tokens = encoding.tokens
    offsets = list(encoding.offsets)
    trim_spans(offsets, tokens, 0, len(offsets), add_prefix_space)
    # A new flat Encoding (the model's output is not copied part by part and flattened).
    out = Encoding(encoding._tokenizer, ids=encoding.ids, offsets=offsets, tokens=tokens,
                   type_ids=encoding.type_ids, attention_mask=encoding.attention_mask,
                   special_tokens_mask=encoding.special_tokens_mask,
                   overflowing=[trim_offsets(o, add_prefix_space) for o in encoding.overflowing])
    if encoding.composed or encoding.n_sequences > 1:
        out._ranges = dict(encoding._ranges)
    return out


def combine(encoding: Encoding, pair: Optional[Encoding]) -> Encoding:
    """What Hugging Face's processors that add no token do (``PostProcessor::process``): a
    single encoding as it is; a pair concatenated, each part (and its overflowing windows) with
    its sequence id and type id = its index."""
    if pair is None:
        return encoding
    nodes = []
    for index, enc in enumerate((encoding, pair)):
        node = enc.copy(type_id=index)
        node.set_sequence_id(index, overflowing=True)
        nodes.append(node)
    return Encoding.merge(nodes)


@PROCESSORS.register
class ByteLevel(PostProcessor):
    """Trim byte-level offsets (Hugging Face's ``processors.ByteLevel``); adds no token.

    Args:
        trim_offsets: trim (without it the processor changes nothing).
        add_prefix_space: the first token keeps one leading space.
        use_regex: kept for Hugging Face's form (the pre-tokenizer's option).

    Example:
        >>> enc = Encoding(None, ids=[1, 2], offsets=[(0, 5), (5, 11)], tokens=["Hello", "Ġworld"])
        >>> ByteLevel().process(enc).offsets
        [(0, 5), (6, 11)]
    """

    type_name = "ByteLevel"

    def __init__(self, trim_offsets: bool = True, add_prefix_space: bool = True, use_regex: bool = True) -> None:
        self.trim_offsets = bool(trim_offsets)
        self.add_prefix_space = bool(add_prefix_space)
        self.use_regex = bool(use_regex)

    def transform(self, encodings: List[Encoding]) -> List[Encoding]:
        """The processor's work on the inputs before any are joined (what a Sequence chains)."""
        if not self.trim_offsets:
            return list(encodings)
        return [trim_offsets(e, self.add_prefix_space) for e in encodings]

    def single_wrapper(self, add_special_tokens: bool = True) -> Any:
        # A single sequence passes as it is (trimmed, see single_trim): a batch keeps the native path.
        return [], 0, []

    def single_trim(self) -> Optional[bool]:
        return self.add_prefix_space if self.trim_offsets else None

    def process(self, encoding: Encoding, pair: Optional[Encoding] = None,
                add_special_tokens: bool = True) -> Encoding:
        parts = self.transform([encoding] if pair is None else [encoding, pair])
        return combine(parts[0], parts[1] if len(parts) > 1 else None)

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return 0

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ByteLevel":
        if not isinstance(data, Mapping):
            raise ModelError(f"not a ByteLevel description: {data!r}")
        return cls(trim_offsets=data.get("trim_offsets", True), add_prefix_space=data.get("add_prefix_space", True),
                   use_regex=data.get("use_regex", True))

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"ByteLevel(trim_offsets={self.trim_offsets}, add_prefix_space={self.add_prefix_space}, "
                f"use_regex={self.use_regex})")
