"""Hugging Face's processor Sequence: processors applied in turn (Llama 3: ByteLevel's offset
trimming, then the template that adds ``<|begin_of_text|>``).

Processors that only change the inputs (ByteLevel) work on them before they are joined; then
at most one processor joins them (a template, BERT's, RoBERTa's), last. Without a joining one
the inputs are joined as a processor that adds nothing joins them. (Hugging Face also runs a
ByteLevel after a joining processor, where it numbers the joined pieces as sequences, special
tokens included; ciyuan refuses that order with a ModelError.)
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional
from typing import Sequence as Seq

from ciyuan.encoding import Encoding
from ciyuan.errors import ModelError
from ciyuan.processors.base import PROCESSORS, PostProcessor
from ciyuan.processors.byte_level import ByteLevel, combine

__all__ = ["Sequence"]


@PROCESSORS.register
class Sequence(PostProcessor):
    """A chain of post-processors.

    Example:
        >>> from ciyuan.processors import TemplateProcessing
        >>> p = Sequence([ByteLevel(trim_offsets=False),
        ...               TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])])
        >>> p.process(Encoding(None, ids=[7], offsets=[(0, 2)], tokens=["hi"])).ids
        [1, 7]
    """

    type_name = "Sequence"

    def __init__(self, processors: Seq[PostProcessor]) -> None:
        if isinstance(processors, (str, bytes)) or not all(isinstance(p, PostProcessor) for p in processors):
            raise ModelError("a post-processor Sequence takes a list of post-processors")
        self.processors: List[PostProcessor] = list(processors)
        joining = [i for i, p in enumerate(self.processors) if not isinstance(p, ByteLevel)]
        if len(joining) > 1:
            names = ", ".join(type(self.processors[i]).__name__ for i in joining)
            raise ModelError(f"a post-processor Sequence with more than one processor that adds tokens ({names}) "
                             "is not supported")
        if joining and joining[0] < len(self.processors) - 1:
            # Hugging Face then numbers the template's pieces as sequences (special tokens and
            # all); ciyuan does not reproduce that.
            name = type(self.processors[joining[0]]).__name__
            raise ModelError(f"a post-processor Sequence with ByteLevel after {name} is not supported; "
                             "put ByteLevel first (as Llama 3's tokenizer.json does)")

    def process(self, encoding: Encoding, pair: Optional[Encoding] = None,
                add_special_tokens: bool = True) -> Encoding:
        current: List[Encoding] = [encoding] if pair is None else [encoding, pair]
        for p in self.processors:
            if isinstance(p, ByteLevel):
                current = p.transform(current)
            else:  # the last one (see __init__)
                return p.process(current[0], current[1] if len(current) > 1 else None, add_special_tokens)
        return combine(current[0], current[1] if len(current) > 1 else None)

    def _trims(self) -> List[bool]:
        """The add_prefix_space of each processor that trims offsets, in order."""
        return [t for t in (p.single_trim() for p in self.processors) if t is not None]

    def single_wrapper(self, add_special_tokens: bool = True) -> Any:
        # The processor that adds tokens (the last, see __init__) says how it wraps, or the
        # sequence passes as it is; offsets trimmed once at most (single_trim) - twice would
        # trim the trimmed spans again, which one trim does not describe.
        if len(self._trims()) > 1:
            return None
        joining = [p for p in self.processors if not isinstance(p, ByteLevel)]
        return joining[0].single_wrapper(add_special_tokens) if joining else ([], 0, [])

    def single_trim(self) -> Optional[bool]:
        trims = self._trims()
        return trims[0] if len(trims) == 1 else None

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return sum(p.num_special_tokens_to_add(is_pair) for p in self.processors)

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "processors": [p.to_dict() for p in self.processors]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Sequence":
        parts = data.get("processors") if isinstance(data, Mapping) else None
        if not isinstance(parts, list):
            raise ModelError("a post-processor Sequence needs 'processors', a list")
        return cls([PROCESSORS.from_dict(p) for p in parts])

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Sequence({self.processors!r})"
