"""Several pre-tokenizers in a row (Hugging Face's pre-tokenizer ``Sequence``).

The first cuts the text; each next one cuts every piece of the one before, so the pieces only
ever get smaller (Llama 3: a Split by its pattern, then ByteLevel; DeepSeek-V3: three Splits).
A member that rewrites text (``Metaspace``, ``ByteLevel`` with a prefix space) rewrites each
piece it is given, and the text the model sees is those pieces joined, each character keeping
its original span. Cost: the members' costs.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple
from typing import Sequence as SequenceT

from ciyuan.errors import ModelError
from ciyuan.normalizers.base import NormalizedString
from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span

__all__ = ["Sequence"]


@PRE_TOKENIZERS.register
class Sequence(PreTokenizer):
    """Apply ``pretokenizers`` one after another, each to the pieces of the one before.

    Example:
        >>> from ciyuan.pre_tokenizers import Digits, WhitespaceSplit
        >>> Sequence([WhitespaceSplit(), Digits(individual_digits=True)]).pre_tokenize_str("a1 22")
        [('a', (0, 1)), ('1', (1, 2)), ('2', (3, 4)), ('2', (4, 5))]
    """

    type_name = "Sequence"

    def __init__(self, pretokenizers: SequenceT[PreTokenizer]) -> None:
        members = list(pretokenizers)
        if not all(isinstance(p, PreTokenizer) for p in members):
            raise ModelError("a pre-tokenizer Sequence holds pre-tokenizers")
        self.pretokenizers: List[PreTokenizer] = members
        # The members that do something; passthrough ones (ByteLevel without regex or prefix
        # space, as in Llama 3) are skipped.
        self._active = [p for p in members if not p.passthrough]
        self.passthrough = not self._active
        # One active member with a native scanner: the Sequence is that scanner.
        self.native_pattern: Optional[str] = self._active[0].native_pattern if len(self._active) == 1 else None

    def split(self, text: str) -> List[Span]:
        """Character spans of the pieces of ``text`` (for members that do not rewrite text;
        :meth:`pre_tokenize` handles every member)."""
        norm, spans = self.pre_tokenize(NormalizedString.from_str(text))
        if norm.text != text:
            raise ModelError("this pre-tokenizer Sequence rewrites text (Metaspace or ByteLevel's prefix space): "
                             "call pre_tokenize, which returns the rewritten text with its spans")
        return spans

    def pre_tokenize(self, text: NormalizedString, offset: int = 0) -> Tuple[NormalizedString, List[Span]]:
        if not self._active:
            return text, [(0, len(text.text))] if text.text else []
        first, *rest = self._active
        text, spans = first.pre_tokenize(text, offset)
        for member in rest:
            if type(member).pre_tokenize is PreTokenizer.pre_tokenize:
                # A member that only cuts (no rewriting): its split of each piece's str, without
                # making a NormalizedString per piece (most of a Sequence's cost otherwise).
                whole, split = text.text, member.split
                spans = [(s + a, s + b) for s, e in spans for a, b in split(whole[s:e])]
                continue
            parts: List[NormalizedString] = []
            joined: List[Span] = []  # spans in the pieces' rewritten texts joined
            same: List[Span] = []  # spans in the text as it is (when nothing was rewritten)
            at = 0
            changed = False
            for s, e in spans:
                piece = text.slice(s, e)
                out, sub = member.pre_tokenize(piece, offset)
                changed |= out.text != piece.text
                parts.append(out)
                joined.extend((at + a, at + b) for a, b in sub)
                same.extend((s + a, s + b) for a, b in sub)
                at += len(out.text)
            if changed:
                text, spans = NormalizedString.concat(parts, text.original), joined
            else:
                spans = same
        return text, spans

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "pretokenizers": [p.to_dict() for p in self.pretokenizers]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Sequence":
        members = data.get("pretokenizers")
        if not isinstance(members, list):
            raise ModelError("a pre-tokenizer Sequence needs a list 'pretokenizers'")
        return cls([PRE_TOKENIZERS.from_dict(d) for d in members])

    def __repr__(self) -> str:
        return f"Sequence({self.pretokenizers!r})"
