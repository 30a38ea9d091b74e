"""BertProcessing: BERT's ``[CLS] A [SEP]`` / ``[CLS] A [SEP] B [SEP]`` in its classic form.

It is exactly the template ``single="[CLS] $A [SEP]"``, ``pair="[CLS] $A [SEP] $B:1 [SEP]:1"``
(Hugging Face's BertProcessing gives the same encodings, overflowing windows included); it only
keeps its own short description for files.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Tuple

from ciyuan.errors import ModelError
from ciyuan.processors.base import PROCESSORS
from ciyuan.processors.template import TemplateProcessing

__all__ = ["BertProcessing"]


def _token(value: Any, what: str) -> Tuple[str, int]:
    if (not isinstance(value, (tuple, list)) or len(value) != 2 or not isinstance(value[0], str)
            or isinstance(value[1], bool) or not isinstance(value[1], int) or value[1] < 0):
        raise ModelError(f"{what} must be (token, id), e.g. ('[SEP]', 102); got {value!r}")
    return value[0], value[1]


@PROCESSORS.register
class BertProcessing(TemplateProcessing):
    """BERT's post-processor: ``[CLS]`` before, ``[SEP]`` after each sequence, type id 1 for the
    second sequence.

    Args:
        sep: the separator token and its id.
        cls: the classification token and its id.

    Example:
        >>> p = BertProcessing(sep=("[SEP]", 102), cls=("[CLS]", 101))
        >>> p.num_special_tokens_to_add(is_pair=False), p.num_special_tokens_to_add(is_pair=True)
        (2, 3)
    """

    type_name = "BertProcessing"

    def __init__(self, sep: Tuple[str, int] = ("[SEP]", 102), cls: Tuple[str, int] = ("[CLS]", 101)) -> None:
        self.sep = _token(sep, "sep")
        self.cls = _token(cls, "cls")
        c, s = self.cls[0], self.sep[0]
        if c == s and self.cls[1] != self.sep[1]:
            raise ModelError(f"cls and sep are both {c!r} but with different ids")
        # Pieces built directly (not parsed), so any token text works, even with ':' or spaces.
        self.special_tokens = {c: ((self.cls[1],), (c,)), s: ((self.sep[1],), (s,))}
        self._init_templates([("special", c, 0), ("seq", 0, 0), ("special", s, 0)],
                             [("special", c, 0), ("seq", 0, 0), ("special", s, 0), ("seq", 1, 1), ("special", s, 1)])

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "sep": list(self.sep), "cls": list(self.cls)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "BertProcessing":
        if not isinstance(data, dict) or data.get("type") != cls.type_name:
            raise ModelError(f"not a {cls.type_name} description: {data!r}")
        return cls(sep=tuple(data.get("sep", ("[SEP]", 102))), cls=tuple(data.get("cls", ("[CLS]", 101))))

    def __repr__(self) -> str:
        return f"BertProcessing(sep={self.sep!r}, cls={self.cls!r})"
