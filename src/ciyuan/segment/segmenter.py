r"""The Segmenter: one dictionary, one method, and jieba-style calls (``cut``, ``lcut``,
``tokenize``) plus batches on all cores.

Methods: ``"fmm"`` (forward maximum matching), ``"bmm"`` (backward), ``"bimm"`` (both; fewer
words wins, then fewer single-character words, then BMM) and ``"dag"`` (jieba's
max-probability path over the dictionary words, for dictionaries with frequencies).

Text outside the dictionary: by default single ASCII letters and digits join into runs
(``"iPhone6"`` stays one word), whitespace and any other unmatched character are words of their
own, and the DAG method segments inside jieba's blocks (runs of CJK ideographs, ASCII letters
and digits and ``+#&._%-``) exactly as ``jieba.cut(HMM=False)``. ``baseline=True`` follows the
SIGHAN 2005 bakeoff's maximum matching baseline (``mwseg.pl``): every whitespace character of a
line is deleted before matching (its ``s/\s*//g``), so a dictionary word may span a space
("四位 一体" matches the word "四位一体"), and every unmatched character is a word.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from ciyuan import _core
from ciyuan._text import replace_surrogates
from ciyuan.errors import InvalidInputError, check_count
from ciyuan.segment.dictionary import Dictionary, DictionarySource, as_dictionary

__all__ = ["Segmenter", "METHODS", "baseline_text"]

#: The method names and the native methods they select.
METHODS: Dict[str, _core.SegmentMethod] = {
    "fmm": _core.SegmentMethod.fmm,
    "bmm": _core.SegmentMethod.bmm,
    "bimm": _core.SegmentMethod.bimm,
    "dag": _core.SegmentMethod.dag,
}


#: Whitespace other than the line break (Python's ``str.isspace()`` set, which the native core
#: uses too): the baseline deletes it from each line before matching; lines stay apart.
_LINE_SPACE = re.compile(r"[^\S\n]+")
#: The same characters as UTF-8 bytes, for :meth:`Segmenter.segment_bytes` (valid UTF-8 only:
#: each alternative starts at a lead byte, so it never matches inside another character).
_LINE_SPACE_BYTES = re.compile(
    rb"(?:[\t\x0b\x0c\r\x1c-\x20]|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f"
    rb"|\xe3\x80\x80)+")

def baseline_text(text: str) -> str:
    """``text`` as the bakeoff baseline matches it: every whitespace character but ``"\\n"``
    deleted (``mwseg.pl`` reads a line, then ``s/\\s*//g``).

    Example:
        >>> baseline_text("Colin I need you\\n四位 一体")
        'ColinIneedyou\\n四位一体'
    """
    return _LINE_SPACE.sub("", text)


def _baseline_offsets(text: str, spans: Callable[[str], List[Any]]) -> List[Any]:
    """``spans`` of the baseline text, with its character offsets mapped back to ``text``: a
    word starts at its first character and ends after its last (a word that spans deleted
    whitespace covers it)."""
    short = baseline_text(text)
    if len(short) == len(text):
        return spans(text)
    kept = [i for i, c in enumerate(text) if c == "\n" or not c.isspace()]
    out = []
    for *word, s, e in spans(short):  # (word, start, end) or (start, end)
        out.append((*word, kept[s], kept[e - 1] + 1))  # a word is never empty
    return out


def _clean(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return text


class Segmenter:
    """Chinese word segmentation with a dictionary.

    Args:
        dictionary: a :class:`Dictionary`, or the path(s) of dictionary files.
        method: ``"fmm"``, ``"bmm"``, ``"bimm"`` or ``"dag"``.
        baseline: the SIGHAN bakeoff baseline's rules: the whitespace of each line deleted
            before matching (words may span it), every unmatched character a word.
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
        """The words of ``text`` as a list (jieba's ``lcut``).

        Example:
            >>> seg = Segmenter(Dictionary(["四位一体"]), "fmm", baseline=True)
            >>> seg.lcut("四位 一体")
            ['四位一体']
        """
        if self.baseline:
            text = baseline_text(_clean(text))
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
        """``(word, start, end)`` for each word, in character offsets (jieba's ``tokenize``).
        With ``baseline``, a word that spans deleted whitespace covers it (``text[start:end]``
        then holds the whitespace the word has not)."""
        if self.baseline:
            return _baseline_offsets(_clean(text), self._tokenize)
        return self._tokenize(text)

    def _tokenize(self, text: str) -> List[Tuple[str, int, int]]:
        try:
            return self._native.tokenize(_clean(text))
        except UnicodeEncodeError:
            return self._native.tokenize(replace_surrogates(text))

    def spans(self, text: str) -> List[Tuple[int, int]]:
        """``(start, end)`` character offsets of the words of ``text`` (see :meth:`tokenize`)."""
        if self.baseline:
            return _baseline_offsets(_clean(text), self._spans)
        return self._spans(text)

    def _spans(self, text: str) -> List[Tuple[int, int]]:
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
        if self.baseline:
            texts = [baseline_text(t) for t in texts]
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
        data = bytes(data)
        if self.baseline:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                pass  # the native call names the first bad byte of the data as given
            else:
                data = _LINE_SPACE_BYTES.sub(b"", data)
        return self._native.segment_lines(data, threads or 0)

    def __repr__(self) -> str:
        extra = ", baseline=True" if self.baseline else ""
        if self.max_word_len:
            extra += f", max_word_len={self.max_word_len}"
        return f"Segmenter({self.dictionary!r}, {self.method!r}{extra})"
