"""RobertaProcessing: RoBERTa's ``<s> A </s>`` / ``<s> A </s> </s> B </s>``, every type id 0,
with byte-level offsets trimmed first (``trim_offsets``, see
:mod:`ciyuan.processors.byte_level`), exactly as Hugging Face's RobertaProcessing."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

from ciyuan.encoding import Encoding
from ciyuan.errors import ModelError
from ciyuan.processors.base import PROCESSORS
from ciyuan.processors.bert import _token
from ciyuan.processors.byte_level import trim_offsets as _trim
from ciyuan.processors.template import TemplateProcessing

__all__ = ["RobertaProcessing"]


@PROCESSORS.register
class RobertaProcessing(TemplateProcessing):
    """RoBERTa's post-processor.

    Args:
        sep: the separator token and its id (``("</s>", 2)``).
        cls: the start token and its id (``("<s>", 0)``).
        trim_offsets: offsets without the spaces of byte-level tokens.
        add_prefix_space: the first token keeps its one leading space when trimming.

    Example:
        >>> p = RobertaProcessing()
        >>> enc = p.process(Encoding(None, ids=[9], offsets=[(0, 3)], tokens=["Ġhi"]),
        ...                 Encoding(None, ids=[8], offsets=[(0, 2)], tokens=["yo"]))
        >>> enc.ids, enc.type_ids, enc.offsets
        ([0, 9, 2, 2, 8, 2], [0, 0, 0, 0, 0, 0], [(0, 0), (0, 3), (0, 0), (0, 0), (0, 2), (0, 0)])
    """

    type_name = "RobertaProcessing"

    def __init__(self, sep: Tuple[str, int] = ("</s>", 2), cls: Tuple[str, int] = ("<s>", 0),
                 trim_offsets: bool = True, add_prefix_space: bool = True) -> None:
        self.sep = _token(sep, "sep")
        self.cls = _token(cls, "cls")
        self.trim_offsets = bool(trim_offsets)
        self.add_prefix_space = bool(add_prefix_space)
        c, s = self.cls[0], self.sep[0]
        if c == s and self.cls[1] != self.sep[1]:
            raise ModelError(f"cls and sep are both {c!r} but with different ids")
        self.special_tokens = {c: ((self.cls[1],), (c,)), s: ((self.sep[1],), (s,))}
        self._init_templates([("special", c, 0), ("seq", 0, 0), ("special", s, 0)],
                             [("special", c, 0), ("seq", 0, 0), ("special", s, 0), ("special", s, 0),
                              ("seq", 1, 0), ("special", s, 0)])

    def single_trim(self) -> Optional[bool]:
        return self.add_prefix_space if self.trim_offsets else None

    def process(self, encoding: Encoding, pair: Optional[Encoding] = None,
                add_special_tokens: bool = True) -> Encoding:
        if self.trim_offsets:
            encoding = _trim(encoding, self.add_prefix_space)
            pair = _trim(pair, self.add_prefix_space) if pair is not None else None
        if pair is not None:  # RoBERTa's type ids are all 0, overflowing windows' too
            encoding, pair = encoding.copy(type_id=0), pair.copy(type_id=0)
        return super().process(encoding, pair, add_special_tokens)

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "sep": list(self.sep), "cls": list(self.cls),
                "trim_offsets": self.trim_offsets, "add_prefix_space": self.add_prefix_space}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RobertaProcessing":
        if not isinstance(data, Mapping) or data.get("type") != cls.type_name:
            raise ModelError(f"not a {cls.type_name} description: {data!r}")
        return cls(sep=tuple(data.get("sep", ("</s>", 2))), cls=tuple(data.get("cls", ("<s>", 0))),
                   trim_offsets=data.get("trim_offsets", True), add_prefix_space=data.get("add_prefix_space", True))

    def __repr__(self) -> str:
        return (f"RobertaProcessing(sep={self.sep!r}, cls={self.cls!r}, trim_offsets={self.trim_offsets}, "
                f"add_prefix_space={self.add_prefix_space})")
