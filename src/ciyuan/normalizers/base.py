"""The normalizer stage: text in, normalized text out, with every character still pointing at
the span of the original text it came from (so offsets survive normalization)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

__all__ = ["NormalizedString", "Normalizer"]

Span = Tuple[int, int]


@dataclass(frozen=True)
class NormalizedString:
    """Normalized text plus, for each of its characters, a span of the original text.

    ``spans`` is ``None`` while the text is unchanged (the identity alignment), which keeps the
    common case free.
    """

    original: str
    text: str
    spans: Optional[List[Span]] = None

    @classmethod
    def from_str(cls, text: str) -> "NormalizedString":
        return cls(text, text, None)

    def original_span(self, start: int, end: int) -> Span:
        """Map the character span [start, end) of the normalized text to the original."""
        if self.spans is None:
            return (start, end)
        if start >= end:  # an empty token sits at the start of the next character
            at = self.spans[start][0] if start < len(self.spans) else len(self.original)
            return (at, at)
        return (self.spans[start][0], self.spans[end - 1][1])

    def map_units(self, units: Iterable[Tuple[int, int]], replace: Callable[[str], str]) -> "NormalizedString":
        """Replace each unit [start, end) of the text by ``replace(unit)``.

        Every character a unit produces points at the whole original span of the unit: a
        character that expands (``ß`` -> ``ss``) maps all its output back to itself.
        """
        out: List[str] = []
        spans: List[Span] = []
        changed = False
        for start, end in units:
            unit = self.text[start:end]
            new = replace(unit)
            changed |= new != unit
            out.append(new)
            if new:
                span = self.original_span(start, end)
                spans.extend([span] * len(new))
        if not changed:
            return self
        return NormalizedString(self.original, "".join(out), spans)


class Normalizer:
    """Base class of the normalizers: subclasses implement :meth:`normalize`."""

    type_name: str = ""

    def normalize(self, text: NormalizedString) -> NormalizedString:
        raise NotImplementedError

    def native_bert_options(self) -> Optional[Any]:
        """The native BERT front end's options (a ``_core.BertOptions``) when this normalizer is
        Hugging Face's BertNormalizer, else None (see ``ciyuan.front_end``)."""
        return None

    def normalize_str(self, text: str) -> str:
        """Normalize a plain string (no offsets)."""
        return self.normalize(NormalizedString.from_str(text)).text

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()  # type: ignore[attr-defined]
