"""Document 002: a Chinese BPE command-line tool (``ciyuan zh-bpe train|apply``), as functions.

Train (:func:`zh_bpe_train`). The training text is read as Python reads a file in text mode
(``\\r\\n`` and ``\\r`` end lines too). Each line is cut at ASCII ``,``; ASCII spaces and ``。``
are removed from each piece; every non-empty piece is a *clause* (the tool's "word"), counted.
A clause starts as its characters, the last one carrying ``</w>`` (``中 国</w>``). At most
``vocab_size`` times - ``vocab_size`` is the number of merge *steps* - the pair with the
greatest (count, (left, right)) is merged (equal counts: the greater pair in code point order);
training stops early once that count is below ``min_frequency`` (the tool then prints
"已达到下限", "reached the lower bound"). The merges, ``"left right"`` one per line in order,
are the vocabulary file. Counts are exact; the merge loop is ciyuan's native BPE trainer.

Apply (:func:`zh_bpe_apply`). The units are the vocabulary file's lines with their spaces and
``</w>`` removed, kept if they have one or two characters, all Chinese (:func:`is_all_chinese`)
and none of them ``的``. Each line of the test text (spaces, tabs and U+3000 removed) is cut by
applying the units in file order: a unit takes, left to right and without overlaps, the
characters no earlier unit has taken. Characters no unit takes stay units of their own.
The answer is each line's units joined by single spaces, one line per input line.

Why the native BPE encoder gives exactly that: a unit of two characters is a merge of two
single characters whose result never merges again, so BPE's rule (the lowest-ranked pair
first, leftmost first) with ranks in file order takes each unit's occurrences exactly when the
sequential scan does. A one-character unit only forbids the characters it takes to later units:
the two-character units after it that use its character can never match and are dropped.

``ciyuan.reference.zh_bpe`` is the same tool in plain Python (the tests' oracle).

Example:
    >>> clauses = zh_clauses("中国人,中国 。\\n中国,人民\\n")
    >>> learn_zh_merges(clauses, vocab_size=10).merges
    [('中', '国</w>')]
    >>> ZhBpeSegmenter(["中国", "国人", "人民"]).segment("中国人民的中国")
    ['中国', '人民', '的', '中国']
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from ciyuan._io import PathLike, atomic_write_text, read_utf8
from ciyuan._text import replace_surrogates
from ciyuan.errors import InvalidInputError, check_count
from ciyuan.models import BPE
from ciyuan.tokenizer import Tokenizer
from ciyuan.trainers import BpeTrainer
from ciyuan.trainers.corpus import WordCounts, check_errors, count_words

__all__ = [
    "END_OF_WORD",
    "LOWER_BOUND_MESSAGE",
    "ZhBpeTraining",
    "ZhBpeSegmenter",
    "ZhBpeAnswer",
    "zh_clauses",
    "get_vocabulary_from_txt",
    "learn_zh_merges",
    "zh_bpe_train",
    "is_all_chinese",
    "zh_units",
    "read_zh_units",
    "zh_bpe_apply",
]

#: The end-of-word mark attached to a clause's last character.
END_OF_WORD = "</w>"
#: What the tool prints when the best pair is rarer than ``min_frequency``: "reached the lower bound".
LOWER_BOUND_MESSAGE = "已达到下限"

_CHINESE = re.compile("[\u4e00-\u9fa5]*")
_TEST_SPACES = (" ", "\t", "\u3000")


def _read_text(path: PathLike, errors: str) -> str:
    """A UTF-8 file as text mode reads it: ``\\r\\n`` and ``\\r`` become ``\\n``. ``errors``:
    invalid UTF-8 raises an error naming the byte (``"strict"``) or reads as U+FFFD (``"replace"``)."""
    check_errors(errors)
    try:
        text = read_utf8(path, errors)
    except OSError as e:
        raise InvalidInputError(f"cannot read {os.fspath(path)}: {e.strerror}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _write_text(path: PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically; a path that cannot be written is an input error."""
    try:
        atomic_write_text(path, text)
    except OSError as e:
        raise InvalidInputError(f"cannot write {os.fspath(path)}: {e.strerror}") from None


def _lines(text: str) -> List[str]:
    """The lines of a text (newlines already ``\\n``), without their newline."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


# -- train ----------------------------------------------------------------------------------------


class ZhBpeTraining(NamedTuple):
    """What :func:`learn_zh_merges` learned.

    Attributes:
        merges: the merges in order, ``(left, right)`` (``</w>`` on a clause's last symbol).
        stop: why training stopped: ``"vocab_size"`` (that many merges made),
            ``"min_frequency"`` (the best pair is rarer: the tool's "reached the lower bound")
            or ``"no_pair"`` (``min_frequency`` 0 and nothing left to merge).
        clauses: the number of distinct clauses.
        total: the number of clauses (with repeats).
    """

    merges: List[Tuple[str, str]]
    stop: str
    clauses: int
    total: int

    def vocabulary_text(self) -> str:
        """The vocabulary file: ``"left right"`` per line, in merge order."""
        return "".join(f"{a} {b}\n" for a, b in self.merges)


def _clause_pieces(text: str) -> List[str]:
    """Every piece of ``text`` (newlines ``\\n``) cut at newlines and ``,``, with spaces and
    ``。`` removed (empty pieces included)."""
    return text.replace(" ", "").replace("。", "").replace(",", "\n").split("\n")


def zh_clauses(text: str) -> Counter:
    """The clauses of a training text with their counts, in first-seen order.

    Example:
        >>> zh_clauses("中 国,中国。\\n,,人民\\n")
        Counter({'中国': 2, '人民': 1})
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    counts = Counter(_clause_pieces(text))
    counts.pop("", None)
    return counts


def get_vocabulary_from_txt(path: PathLike, errors: str = "strict") -> Counter:
    """The clauses of a training file with their counts (the document's name for it)."""
    return zh_clauses(_read_text(path, errors))


def _check_steps(vocab_size: int, min_frequency: int) -> None:
    check_count(vocab_size, "vocab_size (the number of merge steps)")
    check_count(min_frequency, "min_frequency")


def _learn(counts: WordCounts, vocab_size: int, min_frequency: int) -> ZhBpeTraining:
    merges: List[Tuple[str, str]] = []
    distinct, total = len(counts), counts.total  # read before training frees the words
    if vocab_size > 0 and distinct > 0:
        trainer = BpeTrainer(0, min_frequency=min_frequency, max_merges=vocab_size, end_of_word_suffix=END_OF_WORD,
                             tie_break="subword-nmt")
        merges = trainer.train_words(counts, consume=True).merges
    if len(merges) == vocab_size:
        stop = "vocab_size"
    else:
        # Stopped early: the best pair was rarer than min_frequency, or there was none (a count
        # of 0, below any min_frequency of 1 or more).
        stop = "min_frequency" if min_frequency > 0 else "no_pair"
    return ZhBpeTraining(merges, stop, distinct, total)


def learn_zh_merges(clauses: Mapping[str, int], vocab_size: int = 1000, min_frequency: int = 2) -> ZhBpeTraining:
    """Learn at most ``vocab_size`` merges from ``{clause: count}`` (see the module docstring).

    Example:
        >>> learn_zh_merges({"中国人": 1, "中国": 2, "人民": 1}, vocab_size=10, min_frequency=1).merges
        [('中', '国</w>'), ('国', '人</w>'), ('人', '民</w>'), ('中', '国人</w>')]
    """
    _check_steps(vocab_size, min_frequency)
    return _learn(count_words({c: n for c, n in clauses.items() if c}), vocab_size, min_frequency)


def zh_bpe_train(train_text: PathLike, save_vocab: Optional[PathLike], vocab_size: int = 1000,
                 min_frequency: int = 2, *, errors: str = "strict") -> ZhBpeTraining:
    """The tool's train mode: learn the merges of the file ``train_text`` and write them to
    ``save_vocab`` (atomically; None writes nothing). ``errors``: invalid UTF-8 raises an error
    (``"strict"``) or reads as U+FFFD (``"replace"``).

    Example:
        >>> result = zh_bpe_train("smalltrain.txt", "1000.txt")   # doctest: +SKIP
        >>> len(result.merges), result.stop                       # doctest: +SKIP
        (423, 'min_frequency')
    """
    _check_steps(vocab_size, min_frequency)
    # One expression: the text and its pieces are freed before the merge loop runs (empty
    # pieces are not counted).
    counts = count_words(_clause_pieces(_read_text(train_text, errors)))
    result = _learn(counts, vocab_size, min_frequency)
    if save_vocab is not None:
        _write_text(save_vocab, result.vocabulary_text())
    return result


# -- apply ----------------------------------------------------------------------------------------


def is_all_chinese(text: str) -> bool:
    """Every character of ``text`` is in U+4E00..U+9FA5 (the CJK Unified Ideographs block as of
    Unicode 4.1, the usual test of "Chinese"; the document uses this name without defining it).

    Example:
        >>> is_all_chinese("中国"), is_all_chinese("中国</w>"), is_all_chinese("〇")
        (True, False, False)
    """
    return _CHINESE.fullmatch(text) is not None


def zh_units(lines: Iterable[str]) -> List[str]:
    """The units of a vocabulary file's lines (newlines removed), in file order: each line
    without spaces and ``</w>``, kept if it has one or two characters, all Chinese, no ``的``.

    Example:
        >>> zh_units(["中 国</w>", "中国 人</w>", "我 的", "A B", "人 民"])
        ['中国', '人民']
    """
    units = []
    for line in lines:
        unit = line.replace(" ", "").replace(END_OF_WORD, "")
        if 0 < len(unit) < 3 and "的" not in unit and is_all_chinese(unit):
            units.append(unit)
    return units


def read_zh_units(vocab_filename: PathLike, errors: str = "strict") -> List[str]:
    """The units of a vocabulary file (see :func:`zh_units`)."""
    return zh_units(_lines(_read_text(vocab_filename, errors)))


class ZhBpeSegmenter:
    """Cuts text into the units of a vocabulary, applied in order (see the module docstring).

    Args:
        units: the units in file order (:func:`read_zh_units`); units of other lengths than one
            or two characters are not allowed.

    Example:
        >>> seg = ZhBpeSegmenter(["中国", "国人", "人民"])
        >>> seg.segment_text("中 国 人 民 。\\n人民\\n")
        '中国 人民 。\\n人民\\n'
    """

    def __init__(self, units: Sequence[str]) -> None:
        self.units = list(units)
        merges: List[Tuple[str, str]] = []
        seen: Set[str] = set()
        taken_alone: Set[str] = set()  # characters of one-character units met so far
        for unit in self.units:
            if not isinstance(unit, str) or not 0 < len(unit) < 3:
                raise InvalidInputError(f"a unit has one or two characters, not {unit!r}")
            if len(unit) == 1:
                taken_alone.add(unit)
            elif unit not in seen and unit[0] not in taken_alone and unit[1] not in taken_alone:
                merges.append((unit[0], unit[1]))
            seen.add(unit)
        self._merges = merges
        self._chars: Set[str] = {c for a, b in merges for c in a + b}  # the model's characters
        self._encoder: Optional[Tokenizer] = None
        self._tokens: List[str] = []  # by id

    def _ids(self, lines: List[str], chars: Set[str]) -> List[List[int]]:
        """The token ids of each line (``chars``: every character in them), by the BPE model over
        the units' characters and ``chars``; the model is rebuilt when a text brings characters
        it has not seen (every character must be a token)."""
        if self._encoder is None or not chars <= self._chars:
            self._chars |= chars
            if not self._chars:
                return [[] for _ in lines]  # no character anywhere: empty lines
            vocab: Dict[str, int] = {c: i for i, c in enumerate(sorted(self._chars))}
            for a, b in self._merges:
                vocab.setdefault(a + b, len(vocab))
            self._tokens = list(vocab)
            # Whole lines are the pieces: almost never repeated, so no piece cache.
            self._encoder = Tokenizer(BPE(vocab, self._merges, cache_capacity=0), pre_tokenizer=None)
        return self._encoder.encode_batch_ids(lines)

    def segment_lines(self, lines: Sequence[str]) -> List[List[str]]:
        """The units of each line, as given (nothing removed; a lone surrogate reads as U+FFFD)."""
        lines = [replace_surrogates(line) for line in lines]
        ids = self._ids(lines, set("".join(lines)))
        names = self._tokens  # after _ids: it may have rebuilt the model
        return [[names[i] for i in line] for line in ids]

    def segment(self, line: str) -> List[str]:
        """The units of one line, as given."""
        return self.segment_lines([line])[0]

    def segment_text(self, text: str) -> str:
        """The tool's answer for a test text: each line (``\\n``, ``\\r\\n`` or ``\\r``) without its
        spaces, tabs and U+3000, cut into units joined by single spaces, one line per line."""
        text = replace_surrogates(text)
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if not text:
            return ""
        last_ends = text.endswith("\n")  # before the spaces go: a line of spaces is still a line
        for space in _TEST_SPACES:
            text = text.replace(space, "")
        lines = text.split("\n")
        if last_ends:
            lines.pop()
        ids = self._ids(lines, set(text) - {"\n"})
        names = self._tokens
        return "\n".join(" ".join(map(names.__getitem__, line)) for line in ids) + "\n"


class ZhBpeAnswer(NamedTuple):
    """What :func:`zh_bpe_apply` did: the answer text, the units applied (in file order) and the
    number of lines."""

    text: str
    units: List[str]
    lines: int


def zh_bpe_apply(test_text: PathLike, vocab_filename: PathLike, answer_filename: Optional[PathLike], *,
                 errors: str = "strict") -> ZhBpeAnswer:
    """The tool's apply mode: cut the file ``test_text`` into the units of ``vocab_filename``
    and write the answer to ``answer_filename`` (atomically; None writes nothing). ``errors``:
    invalid UTF-8 raises an error (``"strict"``) or reads as U+FFFD (``"replace"``).

    Example:
        >>> zh_bpe_apply("smalltest.txt", "1000.txt", "answer.txt").lines   # doctest: +SKIP
        1000
    """
    units = read_zh_units(vocab_filename, errors)
    answer = ZhBpeSegmenter(units).segment_text(_read_text(test_text, errors))
    if answer_filename is not None:
        _write_text(answer_filename, answer)
    return ZhBpeAnswer(answer, units, answer.count("\n"))
