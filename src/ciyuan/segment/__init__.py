"""Chinese word segmentation with a dictionary: forward, backward and bidirectional maximum
matching, jieba's max-probability DAG method, and SIGHAN bakeoff scoring.

Example:
    >>> from ciyuan.segment import Dictionary, Segmenter
    >>> seg = Segmenter(Dictionary(["研究", "研究生", "生命", "起源"]), "bimm")
    >>> seg.lcut("研究生命起源")
    ['研究', '生命', '起源']
"""

from ciyuan.segment.dag import dag, suggest_freq
from ciyuan.segment.dictionary import Dictionary
from ciyuan.segment.evaluate import LineDiff, SegScore, evaluate, read_word_list
from ciyuan.segment.mm import bimm, bmm, fmm
from ciyuan.segment.segmenter import METHODS, Segmenter

__all__ = [
    "Dictionary",
    "Segmenter",
    "METHODS",
    "fmm",
    "bmm",
    "bimm",
    "dag",
    "suggest_freq",
    "evaluate",
    "read_word_list",
    "SegScore",
    "LineDiff",
]
