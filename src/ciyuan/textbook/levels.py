"""Document 003: the three levels of tokenization - words, characters, subwords - on its example
sentences, and the first steps of WordPiece (the ``##`` split and the merge score).

Word level. Whitespace separates words, and a word keeps the punctuation written against it
(``"books."``). Text with Chinese characters has no spaces to split on, so each whitespace-free
chunk holding a Han character is cut by a dictionary (ciyuan's native segmenter,
:mod:`ciyuan.segment`; jieba's method by default) and its punctuation is treated as whitespace
splitting treats English: a piece made only of punctuation stays attached to the word before
it (``"读书。"``), or, at the start of a chunk, to the word after it. Chunks without Han
characters are left whole, with or without a dictionary. Chinese text needs a dictionary:
without one, :func:`word_level` raises :class:`~ciyuan.errors.InvalidInputError` rather than
guess.

Character level: every character (code point) is a token, spaces included.

Subword level (WordPiece): a word starts as its first character followed by the others with
the continuation prefix (``w ##o ##r ##d``); training repeatedly merges the pair with the
highest ``freq_of_pair / (freq_of_first × freq_of_second)`` - that loop, and the encoding with
the final vocabulary, are :func:`ciyuan.textbook.train_wordpiece_pmi` and
:func:`ciyuan.textbook.wordpiece_encode` (document 004 describes the same algorithm).

Example:
    >>> print_char_level("读书。")
    读 | 书 | 。
    >>> print_word_level("I enjoy reading books.")
    I | enjoy | reading | books.
    >>> " ".join(wordpiece_split("word"))
    'w ##o ##r ##d'
"""

from __future__ import annotations

import os
import unicodedata
from typing import Iterable, List, Optional, Union

from ciyuan.errors import InvalidInputError, check_count
from ciyuan.segment import Dictionary, Segmenter

__all__ = [
    "word_level",
    "char_level",
    "format_split",
    "print_word_level",
    "print_char_level",
    "wordpiece_split",
    "wordpiece_score",
]

DictionaryLike = Union[Dictionary, Segmenter, str, "os.PathLike[str]", Iterable[str]]

_HAN = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH")


def _has_han(chunk: str) -> bool:
    """Whether ``chunk`` holds a Han character (a CJK unified or compatibility ideograph)."""
    return not chunk.isascii() and any(unicodedata.name(c, "").startswith(_HAN) for c in chunk)


def _is_punctuation(piece: str) -> bool:
    return all(unicodedata.category(c)[0] == "P" for c in piece)


def _segmenter(dictionary: DictionaryLike, method: str) -> Segmenter:
    if isinstance(dictionary, Segmenter):
        return dictionary
    if isinstance(dictionary, Dictionary):
        return Segmenter(dictionary, method)
    if isinstance(dictionary, (str, os.PathLike)):
        return Segmenter(Dictionary.load(dictionary), method)  # a dictionary file
    try:
        return Segmenter(Dictionary(w for w in dictionary if w != ""), method)
    except TypeError as e:
        raise InvalidInputError(f"the dictionary must be a Dictionary, a Segmenter, a dictionary file or a "
                                f"collection of words ({e})") from None


def _cut_chunk(chunk: str, seg: Segmenter) -> List[str]:
    """The dictionary words of a whitespace-free chunk, punctuation kept on its neighbour."""
    spans = seg.spans(chunk)
    # Keep the boundary before a piece unless the piece is punctuation only (it joins the word on
    # its left), or everything before it is (the punctuation opening the chunk joins this word).
    cuts = [0]
    seen_word = False
    for start, end in spans:
        if _is_punctuation(chunk[start:end]):
            continue
        if seen_word:
            cuts.append(start)
        seen_word = True
    cuts.append(len(chunk))
    return [chunk[a:b] for a, b in zip(cuts, cuts[1:])]


def word_level(sentence: str, dictionary: Optional[DictionaryLike] = None, *, method: str = "dag") -> List[str]:
    """Word-level tokens: words split by whitespace; Chinese chunks cut by a dictionary.

    Args:
        sentence: the text.
        dictionary: for text with Chinese characters: a :class:`ciyuan.segment.Dictionary`,
            a :class:`ciyuan.segment.Segmenter` (its method is used), the path of a dictionary
            file (jieba's ``dict.txt`` format or one word per line), or a collection of words.
            Build a Dictionary once to cut many sentences.
        method: the segmentation method: ``"dag"`` (jieba's), ``"fmm"``, ``"bmm"``, ``"bimm"``.

    Raises:
        InvalidInputError: the sentence has Chinese characters and no dictionary is given.

    Example:
        >>> word_level("我喜欢看电影和读书。", {"喜欢", "电影", "读书"})
        ['我', '喜欢', '看', '电影', '和', '读书。']
        >>> word_level("I enjoy watching movies.")
        ['I', 'enjoy', 'watching', 'movies.']
    """
    if not isinstance(sentence, str):
        raise InvalidInputError(f"the sentence must be a str, not {type(sentence).__name__}")
    seg: Optional[Segmenter] = None
    if dictionary is not None:
        seg = _segmenter(dictionary, method)
    words: List[str] = []
    for chunk in sentence.split():
        if not _has_han(chunk):
            words.append(chunk)
            continue
        if seg is None:
            raise InvalidInputError(
                f"word_level needs a dictionary to cut Chinese text ({chunk!r} has no spaces to split on): pass "
                "dictionary= a ciyuan.segment.Dictionary, a dictionary file or a collection of words")
        try:
            chunk.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError(f"{chunk!r} holds a lone surrogate, which is not text") from None
        words.extend(_cut_chunk(chunk, seg))
    return words


def char_level(sentence: str) -> List[str]:
    """Character-level tokens: every character of ``sentence``, spaces included.

    Example:
        >>> char_level("I am")
        ['I', ' ', 'a', 'm']
    """
    if not isinstance(sentence, str):
        raise InvalidInputError(f"the sentence must be a str, not {type(sentence).__name__}")
    return list(sentence)


def format_split(tokens: Iterable[str]) -> str:
    """Tokens as the document prints them: joined by ``" | "`` (a space token shows as
    ``"|   |"``).

    Example:
        >>> format_split(["I", " ", "am"])
        'I |   | am'
    """
    return " | ".join(tokens)


def print_word_level(sentence: str, dictionary: Optional[DictionaryLike] = None, *, method: str = "dag") -> None:
    """Print the word-level tokens of ``sentence`` joined by ``" | "`` (see :func:`word_level`).

    Example:
        >>> print_word_level("我喜欢看电影和读书。", ["喜欢", "电影", "读书"])
        我 | 喜欢 | 看 | 电影 | 和 | 读书。
    """
    print(format_split(word_level(sentence, dictionary, method=method)))


def print_char_level(sentence: str) -> None:
    """Print the characters of ``sentence`` joined by ``" | "``.

    Example:
        >>> print_char_level("I am")
        I |   | a | m
    """
    print(format_split(char_level(sentence)))


def wordpiece_split(word: str, prefix: str = "##") -> List[str]:
    """A word as WordPiece's first units: its first character, then each other character with
    the continuation prefix.

    Example:
        >>> wordpiece_split("word")
        ['w', '##o', '##r', '##d']
    """
    if not isinstance(word, str):
        raise InvalidInputError(f"the word must be a str, not {type(word).__name__}")
    if any(c.isspace() for c in word):
        raise InvalidInputError(f"a word has no whitespace, got {word!r}: split the text into words first")
    return [c if i == 0 else prefix + c for i, c in enumerate(word)]


def wordpiece_score(freq_of_pair: int, freq_of_first: int, freq_of_second: int) -> float:
    """WordPiece's merge score as document 003 writes it:
    ``freq_of_pair / (freq_of_first × freq_of_second)``.

    The pair with the highest score is merged next. To compare scores exactly (floats can tie
    or round apart), compare ``fractions.Fraction(freq_of_pair, freq_of_first * freq_of_second)``.

    Example:
        >>> wordpiece_score(5, 20, 5)
        0.05
    """
    check_count(freq_of_pair, "freq_of_pair")
    check_count(freq_of_first, "freq_of_first", least=1)
    check_count(freq_of_second, "freq_of_second", least=1)
    return freq_of_pair / (freq_of_first * freq_of_second)
