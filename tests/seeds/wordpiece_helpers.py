"""Replaying a WordPiece training run step by step, to check each chosen pair against the
documents' formulas (003's score, 004's PMI with probabilities). Shared by test_003_levels.py
and test_004_matching.py."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Dict, Iterator, List, Mapping, Tuple

Pair = Tuple[str, str]


class Step:
    """The counts of one step (in the segmentation before its merge) and the pair merged."""

    def __init__(self, symbols: Counter, pairs: Counter, chosen: Pair) -> None:
        self.symbols = symbols
        self.pairs = pairs
        self.chosen = chosen

    def pmi(self, pair: Pair) -> Fraction:
        """Document 004: P(a, b) / (P(a) P(b)), with P(a, b) = count(ab) / number of pairs and
        P(a) = count(a) / number of symbols - exact."""
        n_pairs = sum(self.pairs.values())
        n_symbols = sum(self.symbols.values())
        p_ab = Fraction(self.pairs[pair], n_pairs)
        return p_ab / (Fraction(self.symbols[pair[0]], n_symbols) * Fraction(self.symbols[pair[1]], n_symbols))


def join(a: str, b: str, prefix: str = "##") -> str:
    return a + (b[len(prefix):] if b.startswith(prefix) else b)


def replay(counts: Mapping[str, int], merges: List[Pair], prefix: str = "##") -> Iterator[Step]:
    """For each merge of a run on ``counts``: the counts before it, and the merge. After the
    last merge, a Step with ``chosen == ("", "")`` holds the final counts."""
    words: Dict[str, List[str]] = {w: [c if i == 0 else prefix + c for i, c in enumerate(w)]
                                   for w in counts if counts[w] > 0}
    for chosen in merges + [("", "")]:
        symbols: Counter = Counter()
        pairs: Counter = Counter()
        for w, syms in words.items():
            for s in syms:
                symbols[s] += counts[w]
            for p in zip(syms, syms[1:]):
                pairs[p] += counts[w]
        yield Step(symbols, pairs, chosen)
        a, b = chosen
        for w, syms in words.items():
            out, i = [], 0
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    out.append(join(a, b, prefix))
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            words[w] = out
