"""Segmentation dictionaries: word lists (optionally with jieba-style frequencies) held in a
native double-array trie.

File format, one entry per line (UTF-8; a BOM and blank lines are ignored):

- ``word`` (e.g. the SIGHAN ``*_training_words.utf8`` files),
- ``word freq`` or ``word freq tag`` (jieba's ``dict.txt``), or ``word tag`` (jieba user dicts).

Several files merge (a later file sets the frequency of a word it repeats). A word without a
frequency counts 1. Edits (:meth:`Dictionary.add_word`, :meth:`Dictionary.del_word`) rebuild
the trie on the next segmentation, which takes about 0.1 s per 100k words, so batch them.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from ciyuan import _core
from ciyuan.errors import FileFormatError, InvalidInputError, check_count

__all__ = ["Dictionary", "DictionarySource"]

PathLike = Union[str, "os.PathLike[str]"]
WordSpec = Union[str, Tuple[str, int]]


def _check_word(word: object) -> str:
    if not isinstance(word, str):
        raise TypeError(f"a dictionary word must be a str, not {type(word).__name__}")
    if not word or any(c.isspace() for c in word):
        raise InvalidInputError(f"a dictionary word must be non-empty and without whitespace, got {word!r}")
    return word


class Dictionary:
    """A word list for Chinese word segmentation.

    Args:
        words: initial words: strings, or ``(word, freq)`` pairs.

    Example:
        >>> d = Dictionary(["中国", "人民", ("中国人", 5)])
        >>> d.add_word("银行", 10)
        >>> len(d), d.freq("中国人"), "人民" in d, d.max_word_len
        (4, 5, True, 3)
    """

    def __init__(self, words: Iterable[WordSpec] = ()) -> None:
        self._native = _core.Dictionary()
        self.paths: List[str] = []
        #: Lines skipped by ``load(..., strict=False)``: (path, line number, reason).
        self.skipped: List[Tuple[str, int, str]] = []
        self._edited = False
        for w in words:
            if isinstance(w, tuple):
                self.add_word(w[0], w[1])
            else:
                self.add_word(w)
        self._edited = False
        self.load_seconds = 0.0

    # -- loading -------------------------------------------------------------------------------

    @classmethod
    def load(cls, *paths: PathLike, strict: bool = True) -> "Dictionary":
        """Load and merge dictionary files.

        Args:
            paths: one or more files (see the module docstring for the format).
            strict: raise :class:`~ciyuan.FileFormatError` (naming file and line) on the first bad
                line and load nothing from that file; with False, skip bad lines and list them in
                :attr:`skipped`.

        Example:
            >>> d = Dictionary.load("pku_training_words.utf8")      # doctest: +SKIP
        """
        if not paths:
            raise InvalidInputError("Dictionary.load needs at least one file")
        d = cls()
        start = time.perf_counter()
        for p in paths:
            d.load_file(p, strict=strict)
        d._native.build()
        d.load_seconds = time.perf_counter() - start
        return d

    def load_file(self, path: PathLike, *, strict: bool = True) -> None:
        """Add the words of one more file (see :meth:`load`)."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise InvalidInputError(f"cannot read dictionary {os.fspath(path)}: {e.strerror}") from None
        errors = self._native.load(data, strict)
        name = os.fspath(path)
        if errors and strict:
            line, message = errors[0]
            more = f" (and {len(errors) - 1} more bad lines)" if len(errors) > 1 else ""
            raise FileFormatError(name, line, message + more + "; fix the file or load it with strict=False")
        self.skipped.extend((name, line, message) for line, message in errors)
        self.paths.append(name)

    # -- editing -------------------------------------------------------------------------------

    def add_word(self, word: str, freq: Optional[int] = None) -> None:
        """Add ``word`` or change its frequency.

        Args:
            word: the word (no whitespace).
            freq: its frequency; None gives 1, or, in a dictionary with frequencies, jieba's
                ``suggest_freq``: just enough for the DAG method to keep the word whole.

        Example:
            >>> d = Dictionary(); d.add_word("词元"); "词元" in d
            True
        """
        word = _check_word(word)
        if freq is None:
            if self._native.has_frequencies and self.total > 0:
                self._native.add(word, self.suggest_freq(word))
            else:
                self._native.add(word)
        else:
            self._native.add(word, check_count(freq, "freq"))
        self._edited = True

    def suggest_freq(self, word: str) -> int:
        """jieba's ``suggest_freq(word, tune=False)``: a frequency high enough that the DAG method
        keeps ``word`` whole: ``max(int(total * prod(freq(w) / total)) + 1, freq(word) or 1)`` over
        the words ``w`` that ``word`` is cut into now. (jieba counts a piece that is only the prefix
        of some word as frequency 0, which makes the product 0; here such a piece counts 1.)

        Example:
            >>> Dictionary([("中", 5), ("国", 5)]).suggest_freq("中国")
            3
        """
        total = float(self.total)
        p = 1.0
        dag = self.native_segmenter(_core.SegmentOptions(method=_core.SegmentMethod.dag))
        for w in dag.cut(word):
            f = self.freq(w)
            p *= (1 if f is None else f) / total
        own = self.freq(word)
        return max(int(p * self.total) + 1, 1 if own is None else own)

    def del_word(self, word: str) -> bool:
        """Remove ``word``; returns whether it was there.

        Example:
            >>> d = Dictionary(["中国"]); d.del_word("中国"), "中国" in d
            (True, False)
        """
        removed = bool(self._native.remove(_check_word(word)))
        self._edited = self._edited or removed
        return removed

    # -- queries -------------------------------------------------------------------------------

    def freq(self, word: str) -> Optional[int]:
        """The frequency of ``word``, or None when it is not in the dictionary."""
        f = self._native.freq(word)
        return None if f < 0 else f

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self._native.freq(word) >= 0

    def __len__(self) -> int:
        return len(self._native)

    def __iter__(self) -> Iterator[str]:
        return (w for w, _ in self._native.entries())

    def items(self) -> List[Tuple[str, int]]:
        """``(word, freq)`` for every word, in the order they were first added."""
        return self._native.entries()

    @property
    def total(self) -> int:
        """The sum of all frequencies (the DAG method's denominator)."""
        return self._native.total

    @property
    def max_word_len(self) -> int:
        """The length of the longest word, in characters."""
        return self._native.max_word_chars

    @property
    def has_frequencies(self) -> bool:
        """Whether some word came with a frequency (the DAG method needs them to mean much)."""
        return self._native.has_frequencies

    # -- the native side -----------------------------------------------------------------------

    def build(self, *, backward: bool = False) -> int:
        """Build the search index now (the first segmentation after a change does otherwise),
        with the backward trie (BMM, BiMM) too when ``backward``; returns its size in bytes."""
        return self._native.build(backward)

    def native_segmenter(self, options: _core.SegmentOptions) -> _core.Segmenter:
        """The native segmenter of this dictionary with ``options`` (what
        :class:`~ciyuan.segment.Segmenter` runs; the dictionary's native part stays its own)."""
        return _core.Segmenter(self._native, options)

    # -- serialization -------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """The file paths it was loaded from, or (after edits or when built in memory) the words.

        Example:
            >>> Dictionary(["中国"]).to_dict()
            {'words': [['中国', 1]]}
        """
        if self.paths and not self._edited and not self.skipped:
            return {"paths": list(self.paths)}
        return {"words": [[w, f] for w, f in self.items()]}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Dictionary":
        if "paths" in data:
            return cls.load(*data["paths"])
        if "words" in data:
            return cls((w, int(f)) for w, f in data["words"])
        raise InvalidInputError("a dictionary description needs 'paths' or 'words'")

    def __repr__(self) -> str:
        src = f"paths={self.paths!r}" if self.paths else "in memory"
        return f"Dictionary({len(self)} words, {src})"


DictionarySource = Union[Dictionary, PathLike, Sequence[PathLike]]


def as_dictionary(source: DictionarySource) -> Dictionary:
    """A Dictionary from a Dictionary, a file path, or a list of paths."""
    if isinstance(source, Dictionary):
        return source
    if isinstance(source, (str, os.PathLike)):
        return Dictionary.load(source)
    if isinstance(source, (list, tuple)) and source and all(isinstance(p, (str, os.PathLike)) for p in source):
        return Dictionary.load(*source)
    raise TypeError(f"expected a Dictionary, a dictionary file path or a list of paths, not {type(source).__name__}")
