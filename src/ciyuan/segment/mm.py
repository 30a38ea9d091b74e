"""Maximum matching: forward (FMM), backward (BMM) and bidirectional (BiMM).

FMM scans left to right and takes, at each position, the longest dictionary word starting there
(one character when none does); BMM does the same from the right end with the longest word
ending there; BiMM runs both and keeps the result with fewer words, then with fewer
single-character words, then BMM's. Each costs O(n * L) trie steps for n characters and words of
at most L characters; the native core walks a double-array trie (``cpp/src/segment.cc``).

These functions are shortcuts for ``Segmenter(dictionary, method).lcut(text)``; build a
:class:`~ciyuan.segment.Segmenter` once when segmenting many texts.
"""

from __future__ import annotations

from typing import List, Optional

from ciyuan.segment.dictionary import Dictionary, DictionarySource  # noqa: F401  (Dictionary: for the examples)
from ciyuan.segment.segmenter import Segmenter

__all__ = ["fmm", "bmm", "bimm"]


def fmm(text: str, dictionary: DictionarySource, *, baseline: bool = False,
        max_word_len: Optional[int] = None) -> List[str]:
    """Forward maximum matching.

    Example:
        >>> fmm("研究生命起源", Dictionary(["研究", "研究生", "生命", "起源"]))
        ['研究生', '命', '起源']
    """
    return Segmenter(dictionary, "fmm", baseline=baseline, max_word_len=max_word_len).lcut(text)


def bmm(text: str, dictionary: DictionarySource, *, baseline: bool = False,
        max_word_len: Optional[int] = None) -> List[str]:
    """Backward maximum matching.

    Example:
        >>> bmm("研究生命起源", Dictionary(["研究", "研究生", "生命", "起源"]))
        ['研究', '生命', '起源']
    """
    return Segmenter(dictionary, "bmm", baseline=baseline, max_word_len=max_word_len).lcut(text)


def bimm(text: str, dictionary: DictionarySource, *, baseline: bool = False,
         max_word_len: Optional[int] = None) -> List[str]:
    """Bidirectional maximum matching: fewer words, then fewer single characters, then BMM.

    Example:
        >>> bimm("研究生命起源", Dictionary(["研究", "研究生", "生命", "起源"]))
        ['研究', '生命', '起源']
    """
    return Segmenter(dictionary, "bimm", baseline=baseline, max_word_len=max_word_len).lcut(text)
