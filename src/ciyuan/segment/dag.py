"""Max-probability segmentation over the DAG of dictionary words (jieba's ``cut(HMM=False)``).

Every dictionary word that occurs in the text is an edge from its first character to the one
after its last; a character that starts no word is an edge of its own. The segmentation is the
path whose sum of ``log(freq) - log(total)`` is largest, found right to left by dynamic
programming (ties go to the longer word, as jieba's ``max`` over ``(score, end)`` does):
O(n * L) for n characters and words of at most L characters. Words of frequency 0 are no edges.
Outside dictionaries with frequencies every word counts 1, so the path has the fewest words.
"""

from __future__ import annotations

from typing import List, Optional

from ciyuan.segment.dictionary import Dictionary, DictionarySource
from ciyuan.segment.segmenter import Segmenter

__all__ = ["dag", "suggest_freq"]


def dag(text: str, dictionary: DictionarySource, *, baseline: bool = False,
        max_word_len: Optional[int] = None) -> List[str]:
    """Max-probability segmentation.

    Example:
        >>> dag("研究生命起源", Dictionary([("研究", 10), ("研究生", 2), ("生命", 10), ("起源", 10)]))
        ['研究', '生命', '起源']
    """
    return Segmenter(dictionary, "dag", baseline=baseline, max_word_len=max_word_len).lcut(text)


def suggest_freq(dictionary: Dictionary, word: str) -> int:
    """jieba's ``suggest_freq(word, tune=False)``: see :meth:`Dictionary.suggest_freq`.

    Example:
        >>> d = Dictionary([("中", 5), ("国", 5)])
        >>> suggest_freq(d, "中国")
        3
    """
    return dictionary.suggest_freq(word)
