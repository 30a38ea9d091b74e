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

from ciyuan.segment.segmenter import method_function

__all__ = ["fmm", "bmm", "bimm"]

_WORDS = 'Dictionary(["研究", "研究生", "生命", "起源"])'

fmm = method_function("fmm", "Forward maximum matching.", _WORDS, "['研究生', '命', '起源']")
bmm = method_function("bmm", "Backward maximum matching.", _WORDS, "['研究', '生命', '起源']")
bimm = method_function("bimm", "Bidirectional maximum matching: fewer words, then fewer single characters, then BMM.",
                       _WORDS, "['研究', '生命', '起源']")
