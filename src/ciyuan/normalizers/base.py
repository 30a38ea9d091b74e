"""The normalizer stage's contract: text in, normalized text out, with every character still
pointing at the span of the original text it came from (so offsets survive normalization).

:class:`Normalizer` is what the pipeline calls; :data:`NORMALIZERS` maps each ``"type"`` name to
its class, and ``ciyuan.normalizers.from_dict`` is its :meth:`~ciyuan.registry.Registry.from_dict`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple

from ciyuan.registry import Component, Registry

__all__ = ["NormalizedString", "Normalizer", "NORMALIZERS"]

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

    def transform(self, dest: Iterable[Tuple[str, int]]) -> "NormalizedString":
        """The whole text replaced by ``dest``, Hugging Face's ``(char, change)`` list, aligned by
        its rule (so offsets equal Hugging Face's).

        Read the current characters left to right: a character with change ``<= 0`` takes the
        span of the next current character and consumes it plus ``-change`` more (removed); a
        character with change ``> 0`` is inserted and takes the span of the character consumed
        last (``(0, 0)`` at the start). ``("", -k)`` removes ``k`` characters and writes none.

        Example:
            >>> ns = NormalizedString.from_str("e\u0301x").transform([("é", -1), ("x", 0)])
            >>> ns.text, ns.spans
            ('éx', [(0, 1), (2, 3)])
        """
        spans = self.all_spans()
        out: List[str] = []
        new_spans: List[Span] = []
        at = 0
        for c, change in dest:
            if not c:  # ("", -k): k characters removed, nothing written (Hugging Face's initial offset)
                at -= change
                continue
            if change > 0:
                new_spans.append(spans[at - 1] if at > 0 else (0, 0))
            else:
                new_spans.append(spans[at])
                at += 1 - change
            out.append(c)
        return NormalizedString(self.original, "".join(out), new_spans)

    def all_spans(self) -> List[Span]:
        """The original span of every character (the identity alignment spelled out)."""
        return [(i, i + 1) for i in range(len(self.text))] if self.spans is None else self.spans

    def prepend(self, prefix: str) -> "NormalizedString":
        """``prefix + text``; the new characters point where the first character points (as in
        Hugging Face, so a token made only of the prefix gets the first character's span).

        An empty text stays empty: there is no character to point at.

        Example:
            >>> NormalizedString.from_str("ab").prepend("_").original_span(0, 1)
            (0, 1)
        """
        if not prefix or not self.text:
            return self
        spans = self.all_spans()
        return NormalizedString(self.original, prefix + self.text, [spans[0]] * len(prefix) + spans)

    def slice(self, start: int, end: int) -> "NormalizedString":
        """Characters [start, end) of the text, still pointing into the same original."""
        spans = [(i, i + 1) for i in range(start, end)] if self.spans is None else self.spans[start:end]
        return NormalizedString(self.original, self.text[start:end], spans)

    @staticmethod
    def concat(parts: Sequence["NormalizedString"], original: str) -> "NormalizedString":
        """The parts' texts joined, each character keeping its span of ``original``."""
        spans: List[Span] = []
        for part in parts:
            spans.extend(part.all_spans())
        return NormalizedString(original, "".join(p.text for p in parts), spans)


class Normalizer(Component, ABC):
    """The normalizer stage: subclasses implement :meth:`normalize` and name their ``type_name``.

    A normalizer with options names them in ``options`` (see
    :class:`~ciyuan.registry.Component`). Register a new class with ``@NORMALIZERS.register``.
    """

    @abstractmethod
    def normalize(self, text: NormalizedString) -> NormalizedString:
        """``text`` normalized, each output character pointing at its span of the original."""

    def native_bert_options(self) -> Optional[Any]:
        """The native BERT front end's options (a ``_core.BertOptions``) when this normalizer is
        Hugging Face's BertNormalizer, else None (see ``ciyuan.front_end``)."""
        return None

    def native_sentencepiece_options(self) -> Optional[Any]:
        """The native SentencePiece front end's options (a ``_core.SpmNormalizerOptions``) when
        this normalizer is SentencePiece's, else None (see ``ciyuan.front_end``)."""
        return None

    def normalize_str(self, text: str) -> str:
        """Normalize a plain string (no offsets)."""
        return self.normalize(NormalizedString.from_str(text)).text


#: ``"type"`` name -> normalizer class.
NORMALIZERS: Registry[Normalizer] = Registry("normalizer")
