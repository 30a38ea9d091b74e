"""Segmentation scores by the rules of the SIGHAN bakeoffs' ``score`` script.

For each pair of lines (gold, predicted): full-width spaces become spaces, words are split on
ASCII whitespace, and the two word sequences are aligned by a minimal diff (a longest common
subsequence, as ``diff --minimal`` finds it; the script runs ``diff -y`` on one word per line).
A gold word aligned with an identical predicted word is correct. Between two aligned words, d
gold and i predicted words are min(d, i) substitutions and the rest deletions or insertions.
Recall = correct / gold words, precision = correct / predicted words, F = 2PR / (P + R). A gold
word is out of vocabulary (OOV) when the training word list lacks it; OOV (IV) recall is the
share of OOV (IV) gold words found. Lines with no gold words are skipped (their predicted words
do not count); lines past the end of the shorter file are ignored.

GNU diff (without ``--minimal``) is not always minimal: before its O((n + m) D) Myers search it
sets aside "confusing" lines, words that occur more than 5 times in the other line (more for
long lines) when they sit in a run of words the other side lacks. ``alignment="diff"`` (the
default) does the same, so the counts equal those of ``score`` run with GNU diffutils 3.x (e.g.
94,632 correct words for the PKU FMM baseline, where the minimal diff finds 94,641);
``alignment="minimal"`` gives the true longest common subsequence. Either way a typical line
costs little more than reading it: identical ends are skipped and D is the number of differing
words.

One departure from the Perl script, at its edge: it looks words up in the word list as
``diff -y`` prints them, cut to a 61-column half, so a gold word of more than about 20 Chinese
characters counts as OOV even when listed. We look up the whole word.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from ciyuan._text import decode_utf8
from ciyuan.errors import InvalidInputError

__all__ = ["SegScore", "LineDiff", "evaluate", "read_word_list", "align", "split_words"]

PathLike = Union[str, "os.PathLike[str]"]
Lines = Union[PathLike, Iterable[str]]

_WS = re.compile(r"[ \t\n\r\f\v]+")  # Perl's \s on bytes: ASCII whitespace only


def split_words(line: str) -> List[str]:
    """The words of a line as the scorer reads them (U+3000 is a space too).

    Example:
        >>> split_words(" 共同  创造\\u3000美好 ")
        ['共同', '创造', '美好']
    """
    return [w for w in _WS.split(line.replace("\u3000", " ")) if w]


def align(gold: Sequence[str], pred: Sequence[str], alignment: str = "diff") -> List[Tuple[int, int]]:
    """Index pairs (i, j), gold[i] == pred[j], of the words a diff keeps: GNU diff's choice
    (``"diff"``) or a longest common subsequence (``"minimal"``).

    Example:
        >>> align(["a", "b", "c"], ["a", "x", "c"])
        [(0, 0), (2, 2)]
    """
    if alignment not in ("diff", "minimal"):
        raise InvalidInputError(f"alignment must be 'diff' or 'minimal', not {alignment!r}")
    n, m = len(gold), len(pred)
    # Common prefix and suffix first: most lines differ in a few places only.
    lo = 0
    while lo < n and lo < m and gold[lo] == pred[lo]:
        lo += 1
    hi_g, hi_p = n, m
    while hi_g > lo and hi_p > lo and gold[hi_g - 1] == pred[hi_p - 1]:
        hi_g -= 1
        hi_p -= 1
    a, b = gold[lo:hi_g], pred[lo:hi_p]
    pairs = [(k, k) for k in range(lo)]
    if alignment == "diff" and a and b:
        keep_a, keep_b = _undiscarded(a, b), _undiscarded(b, a)
        found = _myers([a[i] for i in keep_a], [b[j] for j in keep_b])
        pairs += [(lo + keep_a[i], lo + keep_b[j]) for i, j in found]
    else:
        pairs += [(lo + i, lo + j) for i, j in _myers(a, b)]
    pairs += [(hi_g + k, hi_p + k) for k in range(n - hi_g)]
    return pairs


def _undiscarded(a: Sequence[str], b: Sequence[str]) -> List[int]:
    """Indexes of the words of ``a`` that GNU diff's "discard confusing lines" step keeps
    (diffutils analyze.c): words absent from ``b`` are discarded; words frequent in ``b`` are
    discarded only inside runs of discards, away from the run's ends."""
    counts: Dict[str, int] = {}
    for w in b:
        counts[w] = counts.get(w, 0) + 1
    many, t = 5, len(a) // 64
    while t >> 2 > 0:  # about 5 * sqrt(n / 64)
        t >>= 2
        many *= 2
    NO, YES, MAYBE = 0, 1, 2
    d = [YES if counts.get(w, 0) == 0 else MAYBE if counts[w] > many else NO for w in a]
    n, i = len(a), 0
    while i < n:
        if d[i] == MAYBE:
            d[i] = NO  # a provisional discard outside a run of discards stays
        elif d[i] == YES:
            j, maybe = i, 0
            while j < n and d[j] != NO:
                maybe += d[j] == MAYBE
                j += 1
            while j > i and d[j - 1] == MAYBE:  # the run ends on a real discard
                j -= 1
                d[j] = NO
                maybe -= 1
            length = j - i
            if maybe * 4 > length:  # mostly provisional: keep them all
                for k in range(i, j):
                    if d[k] == MAYBE:
                        d[k] = NO
            else:
                minimum, t = 1, length >> 2
                while t >> 2 > 0:
                    t >>= 2
                    minimum <<= 1
                minimum += 1
                k = consec = 0
                while k < length:  # long sub-runs of provisional discards stay
                    if d[i + k] != MAYBE:
                        consec = 0
                    else:
                        consec += 1
                        if consec == minimum:
                            k -= consec
                        elif consec > minimum:
                            d[i + k] = NO
                    k += 1
                for sign, at in ((1, i), (-1, i + length - 1)):
                    # Near each end of the run, until 3 real discards in a row (or 8 words
                    # in), provisional discards stay.
                    consec = 0
                    for k in range(length):
                        x = at + sign * k
                        if k >= 8 and d[x] == YES:
                            break
                        if d[x] == MAYBE:
                            consec = 0
                            d[x] = NO
                        elif d[x] == NO:
                            consec = 0
                        else:
                            consec += 1
                        if consec == 3:
                            break
                i += length - 1
        i += 1
    return [k for k in range(n) if d[k] == NO]


def _myers(a: Sequence[str], b: Sequence[str]) -> List[Tuple[int, int]]:
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return []
    v = {1: 0}
    trace = []
    for d in range(n + m + 1):
        trace.append(dict(v))
        done = False
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[k - 1] < v[k + 1]):
                x = v[k + 1]  # a step down: an inserted word
            else:
                x = v[k - 1] + 1  # a step right: a deleted word
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[k] = x
            if x >= n and y >= m:
                done = True
                break
        if done:
            break
    # Walk the furthest-reaching paths back from the end, collecting the diagonal moves.
    pairs = []
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        v = trace[d]
        k = x - y
        if k == -d or (k != d and v[k - 1] < v[k + 1]):
            prev_k = k + 1
        else:
            prev_k = k - 1
        prev_x = v[prev_k]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            x -= 1
            y -= 1
            pairs.append((x, y))
        x, y = prev_x, prev_y
    pairs.reverse()
    return pairs


@dataclass
class LineDiff:
    """One line with errors: its words, and which of them the alignment left unmatched."""

    line: int
    gold: List[str]
    pred: List[str]
    missed: List[int]  # indexes into gold
    extra: List[int]  # indexes into pred

    def __str__(self) -> str:
        miss, ext = set(self.missed), set(self.extra)
        g = " ".join(f"[{w}]" if i in miss else w for i, w in enumerate(self.gold))
        p = " ".join(f"[{w}]" if i in ext else w for i, w in enumerate(self.pred))
        return f"--- line {self.line}: {len(self.missed)} missed, {len(self.extra)} extra\ngold: {g}\npred: {p}"


@dataclass
class SegScore:
    """Counts and rates of one evaluation (see the module docstring for the rules)."""

    true_words: int = 0
    test_words: int = 0
    correct: int = 0
    insertions: int = 0
    deletions: int = 0
    substitutions: int = 0
    oov: int = 0
    oov_missed: int = 0
    iv: int = 0
    iv_missed: int = 0
    lines: int = 0
    skipped_lines: int = 0
    unpaired_lines: int = 0
    has_word_list: bool = True
    diffs: List[LineDiff] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.correct / self.true_words if self.true_words else 0.0

    @property
    def precision(self) -> float:
        return self.correct / self.test_words if self.test_words else 0.0

    @property
    def f(self) -> float:
        r, p = self.recall, self.precision
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def oov_rate(self) -> float:
        return self.oov / self.true_words if self.true_words else 0.0

    @property
    def oov_recall(self) -> Optional[float]:
        return 1 - self.oov_missed / self.oov if self.oov else None

    @property
    def iv_recall(self) -> Optional[float]:
        return 1 - self.iv_missed / self.iv if self.iv else None

    def summary(self, name: str = "test") -> str:
        """The scorer's closing summary (three decimals, tab-separated)."""
        def rate(x: Optional[float]) -> str:
            return "--" if x is None else f"{x:.3f}"

        nchange = self.insertions + self.deletions + self.substitutions
        rows = [
            ("TOTAL INSERTIONS", self.insertions), ("TOTAL DELETIONS", self.deletions),
            ("TOTAL SUBSTITUTIONS", self.substitutions), ("TOTAL NCHANGE", nchange),
            ("TOTAL TRUE WORD COUNT", self.true_words), ("TOTAL TEST WORD COUNT", self.test_words),
            ("TOTAL TRUE WORDS RECALL", f"{self.recall:.3f}"), ("TOTAL TEST WORDS PRECISION", f"{self.precision:.3f}"),
            ("F MEASURE", f"{self.f:.3f}"),
        ]
        if self.has_word_list:
            rows += [("OOV Rate", f"{self.oov_rate:.3f}"), ("OOV Recall Rate", rate(self.oov_recall)),
                     ("IV Recall Rate", rate(self.iv_recall))]
        out = ["=== SUMMARY:"] + [f"=== {k}:\t{v}" for k, v in rows]
        tail = [name, self.insertions, self.deletions, self.substitutions, nchange, self.true_words,
                self.test_words, f"{self.recall:.3f}", f"{self.precision:.3f}", f"{self.f:.3f}"]
        if self.has_word_list:
            tail += [f"{self.oov_rate:.3f}", rate(self.oov_recall), rate(self.iv_recall)]
        out.append("###\t" + "\t".join(map(str, tail)))
        return "\n".join(out)


def _read_lines(source: Lines, errors: str) -> List[str]:
    if isinstance(source, (str, os.PathLike)):
        text = decode_utf8(Path(source).read_bytes(), os.fspath(source), errors)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return lines
    return list(source)


def read_word_list(path: PathLike, errors: str = "strict") -> Set[str]:
    """The training word list: one word per line, surrounding ASCII whitespace removed."""
    text = decode_utf8(Path(path).read_bytes(), os.fspath(path), errors)
    return {w.strip(" \t\n\r\f\v") for w in text.split("\n")}


def evaluate(gold: Lines, pred: Lines, words: Union[None, PathLike, Iterable[str]] = None, *,
             diffs: bool = False, alignment: str = "diff", errors: str = "strict") -> SegScore:
    """Score a segmentation against the gold standard by the SIGHAN scorer's rules.

    Args:
        gold: the gold segmentation: a file path or the lines (words separated by spaces).
        pred: the segmentation to score, likewise.
        words: the training word list (a path or the words) for the OOV figures; None leaves
            them out.
        diffs: keep a :class:`LineDiff` for every line with errors in ``score.diffs``.
        alignment: ``"diff"`` (GNU diff's, as the scorer runs it) or ``"minimal"``.
        errors: invalid UTF-8 in files: ``"strict"`` raises, ``"replace"`` reads U+FFFD.

    Example:
        >>> s = evaluate(["共同 创造 美好"], ["共同创造 美好"], words={"共同", "创造"})
        >>> s.correct, s.recall, s.precision, s.substitutions, s.deletions, s.oov_recall
        (1, 0.3333333333333333, 0.5, 1, 1, 1.0)
    """
    gold_lines, pred_lines = _read_lines(gold, errors), _read_lines(pred, errors)
    vocab: Optional[Set[str]]
    if words is None:
        vocab = None
    elif isinstance(words, (str, os.PathLike)):
        vocab = read_word_list(words, errors)
    else:
        vocab = set(words)
    score = SegScore(has_word_list=vocab is not None)
    score.unpaired_lines = abs(len(gold_lines) - len(pred_lines))
    for number, (g_line, p_line) in enumerate(zip(gold_lines, pred_lines), 1):
        g, p = split_words(g_line), split_words(p_line)
        if not g:
            score.skipped_lines += 1
            continue
        score.lines += 1
        pairs = align(g, p, alignment)
        score.true_words += len(g)
        score.test_words += len(p)
        score.correct += len(pairs)
        matched = bytearray(len(g))
        prev_i = prev_j = -1
        for i, j in pairs + [(len(g), len(p))]:
            dg, dp = i - prev_i - 1, j - prev_j - 1
            sub = min(dg, dp)
            score.substitutions += sub
            score.deletions += dg - sub
            score.insertions += dp - sub
            prev_i, prev_j = i, j
            if i < len(g):
                matched[i] = 1
        if vocab is not None:
            for w, hit in zip(g, matched):
                if w in vocab:
                    score.iv += 1
                    score.iv_missed += not hit
                else:
                    score.oov += 1
                    score.oov_missed += not hit
        if diffs and (len(pairs) != len(g) or len(pairs) != len(p)):
            hit_p = {j for _, j in pairs}
            score.diffs.append(LineDiff(number, g, p, [i for i in range(len(g)) if not matched[i]],
                                        [j for j in range(len(p)) if j not in hit_p]))
    return score
