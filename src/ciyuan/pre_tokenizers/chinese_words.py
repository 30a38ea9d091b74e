"""A pre-tokenizer that splits Chinese text into dictionary words, so that subword models (BPE,
WordPiece) train on and encode word-segmented Chinese.

The pieces are the words of :class:`ciyuan.segment.Segmenter` (FMM, BMM, BiMM or the DAG
method) with their character spans; whitespace is kept as pieces of its own, so the pieces
cover the whole text and decoding gives it back.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span
from ciyuan.segment.dictionary import Dictionary, DictionarySource, as_dictionary
from ciyuan.segment.segmenter import Segmenter

__all__ = ["ChineseWords"]


@PRE_TOKENIZERS.register
class ChineseWords(PreTokenizer):
    """Pre-tokenizer whose pieces are the words of a dictionary-based Chinese segmenter.

    Args:
        dictionary: a :class:`~ciyuan.segment.Dictionary` or the path(s) of dictionary files
            (paths are stored by ``to_dict``; an edited or in-memory dictionary stores its words).
        method: ``"fmm"``, ``"bmm"``, ``"bimm"`` or ``"dag"``.
        baseline: the SIGHAN baseline's handling of unmatched text (whitespace dropped).
        max_word_len: the longest word to match, in characters (default: the dictionary's).

    Example:
        >>> from ciyuan.segment import Dictionary
        >>> pre = ChineseWords(Dictionary(["词元", "分词"]), method="fmm")
        >>> pre.pre_tokenize_str("词元分词 ok")
        [('词元', (0, 2)), ('分词', (2, 4)), (' ', (4, 5)), ('ok', (5, 7))]
    """

    type_name = "ChineseWords"

    def __init__(self, dictionary: DictionarySource, method: str = "fmm", *, baseline: bool = False,
                 max_word_len: Optional[int] = None) -> None:
        self.dictionary: Dictionary = as_dictionary(dictionary)
        self.segmenter = Segmenter(self.dictionary, method, baseline=baseline, max_word_len=max_word_len)
        self.method = method
        self.baseline = bool(baseline)
        self.max_word_len = max_word_len

    def split(self, text: str) -> List[Span]:
        """Character spans [start, end) of the words of ``text``."""
        return self.segmenter.spans(text)

    def pre_tokenize_str(self, text: str) -> List[Tuple[str, Span]]:
        """The words of ``text`` with their character spans."""
        return [(w, (s, e)) for w, s, e in self.segmenter.tokenize(text)]

    def to_dict(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {"type": self.type_name, "method": self.method, "baseline": self.baseline,
                                "max_word_len": self.max_word_len}
        data["dictionary"] = self.dictionary.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ChineseWords":
        return cls(Dictionary.from_dict(data["dictionary"]), data.get("method", "fmm"),
                   baseline=bool(data.get("baseline", False)), max_word_len=data.get("max_word_len"))

    def __repr__(self) -> str:
        extra = ", baseline=True" if self.baseline else ""
        if self.max_word_len:
            extra += f", max_word_len={self.max_word_len}"
        return f"ChineseWords({self.dictionary!r}, method={self.method!r}{extra})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChineseWords) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]
