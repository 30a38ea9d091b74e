"""Chinese word segmentation with a dictionary: forward, backward and bidirectional maximum
matching, jieba's max-probability DAG method, and SIGHAN bakeoff scoring.

The names are loaded on first use (PEP 562): ``ciyuan segment`` on the command line needs the
dictionary and the segmenter, not the scorer.

Example:
    >>> from ciyuan.segment import Dictionary, Segmenter
    >>> seg = Segmenter(Dictionary(["研究", "研究生", "生命", "起源"]), "bimm")
    >>> seg.lcut("研究生命起源")
    ['研究', '生命', '起源']
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from ciyuan.segment.dag import dag, suggest_freq
    from ciyuan.segment.dictionary import Dictionary
    from ciyuan.segment.evaluate import LineDiff, SegScore, evaluate, read_word_list
    from ciyuan.segment.mm import bimm, bmm, fmm
    from ciyuan.segment.segmenter import METHODS, Segmenter

# public name -> the module that defines it
_LAZY = {
    "Dictionary": "ciyuan.segment.dictionary",
    "Segmenter": "ciyuan.segment.segmenter",
    "METHODS": "ciyuan.segment.segmenter",
    "fmm": "ciyuan.segment.mm",
    "bmm": "ciyuan.segment.mm",
    "bimm": "ciyuan.segment.mm",
    "dag": "ciyuan.segment.dag",
    "suggest_freq": "ciyuan.segment.dag",
    "evaluate": "ciyuan.segment.evaluate",
    "read_word_list": "ciyuan.segment.evaluate",
    "SegScore": "ciyuan.segment.evaluate",
    "LineDiff": "ciyuan.segment.evaluate",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module_name = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'ciyuan.segment' has no attribute {name!r}") from None
    value = getattr(import_module(module_name), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__))
