"""Chinese word segmentation with a dictionary: forward, backward and bidirectional maximum
matching, jieba's max-probability DAG method, and SIGHAN bakeoff scoring.

Example:
    >>> from ciyuan.segment import Dictionary, Segmenter
    >>> seg = Segmenter(Dictionary(["研究", "研究生", "生命", "起源"]), "bimm")
    >>> seg.lcut("研究生命起源")
    ['研究', '生命', '起源']
"""

from typing import TYPE_CHECKING, Any

from ciyuan.segment.dag import dag, suggest_freq
from ciyuan.segment.dictionary import Dictionary
from ciyuan.segment.mm import bimm, bmm, fmm
from ciyuan.segment.segmenter import METHODS, Segmenter

if TYPE_CHECKING:
    from ciyuan.segment.scoring import LineDiff, SegScore, evaluate, read_word_list

# Scoring (and the dataclasses it needs) loads on first use (PEP 562): `ciyuan segment`, which
# does not score, starts faster.
_SCORING = ("evaluate", "read_word_list", "SegScore", "LineDiff")


def __getattr__(name: str) -> Any:
    if name in _SCORING:
        from ciyuan.segment import scoring

        value = getattr(scoring, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ciyuan.segment' has no attribute {name!r}")

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
