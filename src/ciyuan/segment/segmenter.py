"""The Segmenter: one dictionary, one method, and jieba-style calls (``cut``, ``lcut``,
``tokenize``) plus batches on all cores.

Methods: ``"fmm"`` (forward maximum matching), ``"bmm"`` (backward), ``"bimm"`` (both; fewer
words wins, then fewer single-character words, then BMM) and ``"dag"`` (jieba's
max-probability path over the dictionary words, for dictionaries with frequencies).

Text outside the dictionary: by default single ASCII letters and digits join into runs
(``"iPhone6"`` stays one word), whitespace and any other unmatched character are words of their
own, and the DAG method segments inside jieba's blocks (runs of CJK ideographs, ASCII letters
and digits and ``+#&._%-``) exactly as ``jieba.cut(HMM=False)``. ``baseline=True`` follows the
SIGHAN 2005 bakeoff's maximum matching baseline: whitespace is dropped and every unmatched
character is a word (whitespace still separates words).
"""

from __future__ import annotations

from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from ciyuan import _core
from ciyuan._text import replace_surrogates
from ciyuan.errors import InvalidInputError, check_count
from ciyuan.segment.dictionary import Dictionary, DictionarySource, as_dictionary

__all__ = ["Segmenter", "METHODS"]

#: The method names and the native methods they select.
METHODS: Dict[str, _core.SegmentMethod] = {
    "fmm": _core.SegmentMethod.fmm,
    "bmm": _core.SegmentMethod.bmm,
    "bimm": _core.SegmentMethod.bimm,
    "dag": _core.SegmentMethod.dag,
}


def _clean(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return text


class Segmenter:
    """Chinese word segmentation with a dictionary.

    Args:
        dictionary: a :class:`Dictionary`, or the path(s) of dictionary files.
        method: ``"fmm"``, ``"bmm"``, ``"bimm"`` or ``"dag"``.
        baseline: the SIGHAN bakeoff baseline's handling of text outside the dictionary
            (whitespace dropped, every unmatched character a word).
        max_word_len: the longest word to match, in characters (default: the dictionary's
            longest word).

    Example:
        >>> seg = Segmenter(Dictionary(["研究", "研究生", "生命", "起源"]), "fmm")
        >>> seg.lcut("研究生命起源")
        ['研究生', '命', '起源']
        >>> Segmenter(seg.dictionary, "bmm").lcut("研究生命起源")
        ['研究', '生命', '起源']
        >>> seg.tokenize("研究 iPhone")
        [('研究', 0, 2), (' ', 2, 3), ('iPhone', 3, 9)]
    """

    def __init__(
        self,
        dictionary: DictionarySource,
        method: str = "fmm",
        *,
        baseline: bool = False,
        max_word_len: Optional[int] = None,
    ) -> None:
        if method not in METHODS:
            raise InvalidInputError(f"unknown segmentation method {method!r}; expected one of {', '.join(METHODS)}")
        check_count(max_word_len, "max_word_len", least=1, allow_none=True)
        self.dictionary: Dictionary = as_dictionary(dictionary)
        self.method = method
        self.baseline = bool(baseline)
        self.max_word_len = max_word_len
        self._native = self.dictionary.native_segmenter(
            _core.SegmentOptions(method=METHODS[method], baseline=self.baseline, max_word_len=max_word_len or 0))
        self._cut = self._native.cut

    def lcut(self, text: str) -> List[str]:
        """The words of ``text`` as a list (jieba's ``lcut``)."""
        try:
            # The native call checks the type itself (TypeError for non-str): this is the hot
            # path of per-line loops, so nothing else runs before it.
            return self._cut(text)
        except UnicodeEncodeError:
            # Surrogates have no UTF-8 form; like the Tokenizer, read a lone one as U+FFFD (one
            # character for one) and a surrogate pair as the one character it encodes: offsets from
            # tokenize() and spans() then count each pair as one character, one less than in text.
            return self._cut(replace_surrogates(text))

    def cut(self, text: str) -> Iterator[str]:
        """The words of ``text``, one by one (jieba's ``cut``)."""
        return iter(self.lcut(text))

    __call__ = lcut

    def tokenize(self, text: str) -> List[Tuple[str, int, int]]:
        """``(word, start, end)`` for each word, in character offsets (jieba's ``tokenize``)."""
        try:
            return self._native.tokenize(_clean(text))
        except UnicodeEncodeError:
            return self._native.tokenize(replace_surrogates(text))

    def spans(self, text: str) -> List[Tuple[int, int]]:
        """``(start, end)`` character offsets of the words of ``text``."""
        try:
            return self._native.spans(_clean(text))
        except UnicodeEncodeError:
            return self._native.spans(replace_surrogates(text))

    def lcut_batch(self, texts: Iterable[str], threads: Optional[int] = None) -> List[List[str]]:
        """The words of each text, on ``threads`` threads (default: all cores): the others
        segment texts ahead while the calling thread turns finished ones into lists. The
        result does not depend on the thread count.

        Example:
            >>> Segmenter(Dictionary(["中国"])).lcut_batch(["中国人", "人"])
            [['中国', '人'], ['人']]
        """
        texts = [_clean(t) for t in texts]
        check_count(threads, "threads", least=1, allow_none=True)
        try:
            return self._native.cut_batch(texts, threads or 0)
        except UnicodeEncodeError:
            return self._native.cut_batch([replace_surrogates(t) for t in texts], threads or 0)

    def segment_bytes(self, data: bytes, threads: Optional[int] = None) -> bytes:
        """Segment every line of UTF-8 ``data``: the words separated by one space, one output
        line (ended by ``\\n``) per input line; whitespace words are left out. This is the
        command line's fast path.

        Example:
            >>> Segmenter(Dictionary(["中国"])).segment_bytes("中国人\\n".encode())
            b'\\xe4\\xb8\\xad\\xe5\\x9b\\xbd \\xe4\\xba\\xba\\n'
        """
        return self._native.segment_lines(bytes(data), threads or 0)

    def __repr__(self) -> str:
        extra = ", baseline=True" if self.baseline else ""
        if self.max_word_len:
            extra += f", max_word_len={self.max_word_len}"
        return f"Segmenter({self.dictionary!r}, {self.method!r}{extra})"
