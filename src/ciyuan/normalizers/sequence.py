"""Several normalizers applied in order."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional
from typing import Sequence as SequenceT

from ciyuan import _core
from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer
from ciyuan.normalizers.replace import Prepend, Replace

__all__ = ["Sequence"]


@NORMALIZERS.register
class Sequence(Normalizer):
    """Apply ``normalizers`` one after another.

    Example:
        >>> from ciyuan.normalizers import NFKC, Lowercase
        >>> Sequence([NFKC(), Lowercase()]).normalize_str("ＡＢＣ")
        'abc'
    """

    type_name = "Sequence"

    def __init__(self, normalizers: SequenceT[Normalizer]) -> None:
        self.normalizers: List[Normalizer] = list(normalizers)

    def normalize(self, text: NormalizedString) -> NormalizedString:
        for n in self.normalizers:
            text = n.normalize(text)
        return text

    def native_sentencepiece_options(self) -> Optional[Any]:
        """Hugging Face's Llama 2 normalizer, ``Prepend("▁")`` then ``Replace(" ", "▁")``, is
        SentencePiece's identity normalizer with a dummy prefix, kept whitespace and escaped
        spaces (both only on non-empty text), with Hugging Face's offsets (``hf_offsets``): the
        native SentencePiece front end runs it. None for any other Sequence."""
        parts = self.normalizers
        if not (len(parts) == 2 and type(parts[0]) is Prepend and parts[0].prepend == "\u2581"
                and type(parts[1]) is Replace and parts[1].kind == "String" and parts[1].source == " "
                and parts[1].content == "\u2581"):
            return None
        o = _core.SpmNormalizerOptions()
        o.charsmap = b""
        o.add_dummy_prefix = True
        o.remove_extra_whitespaces = False
        o.escape_whitespaces = True
        o.treat_whitespace_as_suffix = False
        o.hf_offsets = True
        return o

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "normalizers": [n.to_dict() for n in self.normalizers]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Sequence":
        return cls([NORMALIZERS.from_dict(d) for d in data.get("normalizers", [])])

    def __repr__(self) -> str:
        return f"Sequence({self.normalizers!r})"
