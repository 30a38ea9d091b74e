"""Chinese word segmentation for the page: the ``--dict`` dictionaries, and every method's
words (with their character spans) on one text, side by side.

Example:
    >>> from ciyuan.segment import Dictionary
    >>> dicts = Dictionaries()
    >>> dicts.add("tiny", Dictionary([("研究", 5), ("研究生", 3), ("生命", 6), ("起源", 4)]))
    'tiny'
    >>> result = dicts.segment("研究生命起源", ["fmm", "bmm"])
    >>> [[w["text"] for w in m["words"]] for m in result["methods"]]
    [['研究生', '命', '起源'], ['研究', '生命', '起源']]
    >>> result["differ"]
    [{'pos': 2, 'by': ['bmm']}, {'pos': 3, 'by': ['fmm']}]
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ciyuan.errors import CiyuanError, InvalidInputError
from ciyuan.segment import METHODS, Dictionary, Segmenter
from ciyuan.serve.token_view import boundary_diff

__all__ = ["Dictionaries", "NoDictionaryError"]


class NoDictionaryError(CiyuanError, LookupError):
    """No such dictionary, or none at all (answered with 404)."""


class Dictionaries:
    """The segmentation dictionaries by name, with one :class:`Segmenter` per method made on
    first use (a segmenter is immutable and safe to share between threads)."""

    def __init__(self) -> None:
        self._dicts: Dict[str, Dictionary] = {}
        self._segmenters: Dict[Tuple[str, str], Segmenter] = {}
        self._lock = threading.Lock()

    def add(self, name: str, dictionary: Dictionary) -> str:
        """Offer ``dictionary`` as ``name`` (made unique); returns the name."""
        with self._lock:
            unique, n = name, 2
            while unique in self._dicts:
                unique, n = f"{name}-{n}", n + 1
            self._dicts[unique] = dictionary
            return unique

    def names(self) -> List[str]:
        with self._lock:
            return list(self._dicts)

    def describe(self) -> List[Dict[str, Any]]:
        """What ``GET /api/tokenizers`` says of the dictionaries."""
        with self._lock:
            return [{"name": n, "words": len(d), "frequencies": d.has_frequencies} for n, d in self._dicts.items()]

    def segmenter(self, name: Optional[str], method: str) -> Segmenter:
        """The segmenter of dictionary ``name`` (None: the first) and ``method``.

        Raises:
            NoDictionaryError: no dictionary of that name, or none was loaded.
            InvalidInputError: an unknown method.
        """
        if method not in METHODS:
            raise InvalidInputError(f"unknown segmentation method {method!r}; expected one of {', '.join(METHODS)}")
        with self._lock:
            if not self._dicts:
                raise NoDictionaryError("no segmentation dictionary: start ciyuan serve with --dict FILE "
                                        "(one word per line, or jieba's 'word freq tag' lines)")
            key = name if name is not None else next(iter(self._dicts))
            dictionary = self._dicts.get(key)
            if dictionary is None:
                raise NoDictionaryError(f"no dictionary named {key!r}; known: {', '.join(self._dicts)}")
            seg = self._segmenters.get((key, method))
            if seg is None:
                seg = self._segmenters[(key, method)] = Segmenter(dictionary, method)
            return seg

    def segment(self, text: str, methods: Sequence[str], dictionary: Optional[str] = None) -> Dict[str, Any]:
        """Every method's words of ``text`` (``text``, ``start``, ``end`` in characters), their
        count, and where the methods' boundaries differ."""
        if not methods:
            raise InvalidInputError("choose at least one segmentation method")
        results = []
        spans: Dict[str, List[Tuple[int, int]]] = {}
        for method in methods:
            words = self.segmenter(dictionary, method).tokenize(text)
            results.append({"method": method, "count": len(words),
                            "words": [{"text": w, "start": s, "end": e} for w, s, e in words]})
            spans[method] = [(s, e) for _, s, e in words]
        return {"methods": results, "differ": boundary_diff(len(text), spans)}
