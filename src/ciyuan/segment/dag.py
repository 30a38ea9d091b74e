"""Max-probability segmentation over the DAG of dictionary words (jieba's ``cut(HMM=False)``).

Every dictionary word that occurs in the text is an edge from its first character to the one
after its last; a character that starts no word is an edge of its own. The segmentation is the
path whose sum of ``log(freq) - log(total)`` is largest, found right to left by dynamic
programming (ties go to the longer word, as jieba's ``max`` over ``(score, end)`` does):
O(n * L) for n characters and words of at most L characters. Words of frequency 0 are no edges.
Outside dictionaries with frequencies every word counts 1, so the path has the fewest words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from ciyuan.segment.dictionary import DictionarySource
from ciyuan.segment.segmenter import Segmenter

if TYPE_CHECKING:
    from ciyuan.segment.dictionary import Dictionary

__all__ = ["dag", "suggest_freq"]


def dag(text: str, dictionary: DictionarySource, *, baseline: bool = False,
        max_word_len: Optional[int] = None) -> List[str]:
    """Max-probability segmentation.

    Example:
        >>> d = Dictionary([("研究", 10), ("研究生", 2), ("生命", 10), ("起源", 10)])
        >>> dag("研究生命起源", d)
        ['研究', '生命', '起源']
    """
    return Segmenter(dictionary, "dag", baseline=baseline, max_word_len=max_word_len).lcut(text)


def suggest_freq(dictionary: "Dictionary", word: str) -> int:
    """jieba's ``suggest_freq(word, tune=False)``: a frequency high enough that the DAG method
    keeps ``word`` whole: ``max(int(total * prod(freq(w) / total)) + 1, freq(word) or 1)`` over the
    words ``w`` that ``word`` is cut into now. (jieba counts a piece that is only the prefix of
    some word as frequency 0, which makes the product 0; here such a piece counts 1.)

    Example:
        >>> d = Dictionary([("中", 5), ("国", 5)])
        >>> suggest_freq(d, "中国")
        3
    """
    total = float(dictionary.total)
    p = 1.0
    for w in Segmenter(dictionary, "dag").lcut(word):
        f = dictionary.freq(w)
        p *= (1 if f is None else f) / total
    own = dictionary.freq(word)
    return max(int(p * dictionary.total) + 1, 1 if own is None else own)

