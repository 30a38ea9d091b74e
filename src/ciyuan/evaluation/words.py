"""Words, the denominator of fertility (tokens per word).

By default a word is a run of non-whitespace (``str.split()``: Unicode whitespace). Text in
scripts written without spaces (Chinese) would then be one "word" per clause, so a
:class:`WordCounter` given a Chinese ``Segmenter`` cuts every whitespace run holding a Han
character into the segmenter's words (ASCII letters and digits in it stay together, as the
segmenter keeps them).

Example:
    >>> WordCounter().count("tokens per word")
    3
    >>> from ciyuan.segment import Dictionary, Segmenter
    >>> WordCounter(Segmenter(Dictionary(["研究", "生命", "起源"]), "fmm")).count("研究生命起源 ok")
    4
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable, Optional

if TYPE_CHECKING:
    from ciyuan.segment import Segmenter

__all__ = ["WordCounter"]

# Han ideographs (the CJK blocks and their extensions, and the compatibility ideographs).
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


class WordCounter:
    """Counts the words of texts, by whitespace or, with ``segmenter``, by whitespace and the
    Chinese segmenter (see the module's doc)."""

    def __init__(self, segmenter: Optional["Segmenter"] = None) -> None:
        self.segmenter = segmenter

    @property
    def method(self) -> str:
        """``"whitespace"`` or ``"segmenter"``, as the report names it."""
        return "whitespace" if self.segmenter is None else "segmenter"

    def count(self, text: str) -> int:
        """The number of words in ``text``."""
        runs = text.split()
        if self.segmenter is None:
            return len(runs)
        seg = self.segmenter
        return sum(len(seg.lcut(run)) if _HAN.search(run) else 1 for run in runs)

    def count_all(self, texts: Iterable[str]) -> int:
        """The number of words in all ``texts``."""
        return sum(self.count(t) for t in texts)
