"""The figures of ``ciyuan eval``, computed from token counts: each a small function.

They take what a pass over a corpus collects - how many times each id was produced, and the
corpus's size in bytes, characters and words - so the pass over the text is made once and every
figure is read off its counts. ``ciyuan.reference.evaluation`` computes the same figures token by
token, in plain Python; the tests hold the two equal.

Example:
    >>> round(renyi_efficiency([3, 1], vocab_size=4, alpha=2.5), 4)
    0.316
    >>> fit = zipf_fit([12, 6, 4, 3])    # 12 / rank: Zipf's law exactly
    >>> round(fit.exponent, 6), round(fit.r2, 6)
    (1.0, 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Sequence

__all__ = ["ZipfFit", "zipf_fit", "renyi_entropy", "renyi_efficiency", "ratio", "quantile"]


def ratio(a: float, b: float) -> float:
    """``a / b``, or NaN when ``b`` is 0 (an empty corpus has no bytes per token).

    Example:
        >>> ratio(6, 3), math.isnan(ratio(1, 0))
        (2.0, True)
    """
    return a / b if b else math.nan


@dataclass(frozen=True)
class ZipfFit:
    """A least-squares line through (log rank, log frequency) of the ids seen: frequency
    ~ C / rank^exponent. ``r2`` is the share of the variance of log frequency the line explains
    (1 is a perfect Zipf law). Both NaN with fewer than two distinct ids."""

    exponent: float
    r2: float


def zipf_fit(counts: Sequence[int]) -> ZipfFit:
    """Fit Zipf's law to the counts of the ids seen (any order; zeros are ignored).

    Ranks start at 1 for the most frequent id; ties keep no particular order, which does not
    change the fit (equal counts have equal logs).

    Example:
        >>> round(zipf_fit([10, 5]).exponent, 9)
        1.0
    """
    freqs = sorted((c for c in counts if c > 0), reverse=True)
    n = len(freqs)
    if n < 2:
        return ZipfFit(math.nan, math.nan)
    xs = [math.log(r) for r in range(1, n + 1)]
    ys = [math.log(f) for f in freqs]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    slope = sxy / sxx
    # All counts equal: a flat line explains everything there is (no variance).
    r2 = 1.0 if syy == 0 else (sxy * sxy) / (sxx * syy)
    return ZipfFit(-slope, r2)


def renyi_entropy(counts: Sequence[int], alpha: float = 2.5) -> float:
    """Rényi entropy (in nats) of order ``alpha`` of the distribution the counts make:
    ``log(sum p_i^alpha) / (1 - alpha)``; Shannon's entropy for ``alpha == 1``.

    Example:
        >>> round(renyi_entropy([1, 1, 1, 1]), 6) == round(math.log(4), 6)
        True
    """
    total = sum(counts)
    if total == 0:
        return math.nan
    ps = [c / total for c in counts if c > 0]
    if alpha == 1:
        return -sum(p * math.log(p) for p in ps)
    return math.log(sum(p ** alpha for p in ps)) / (1 - alpha)


def renyi_efficiency(counts: Sequence[int], vocab_size: int, alpha: float = 2.5) -> float:
    """Rényi efficiency (Zouhar et al., 2023, "Tokenization and the Noiseless Channel"): the
    Rényi entropy of the unigram distribution of tokens divided by ``log(vocab_size)``, in
    [0, 1]; 1 is every token of the vocabulary used equally often. alpha = 2.5 is the paper's
    choice, the order that best predicted the BLEU of its translation models.

    Example:
        >>> renyi_efficiency([5, 5], vocab_size=2)
        1.0
    """
    if vocab_size < 2:
        return math.nan
    return renyi_entropy(counts, alpha) / math.log(vocab_size)


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` by linear interpolation between order statistics
    (numpy's default, and ``statistics.quantiles``' 'inclusive' method); NaN when empty.

    Example:
        >>> quantile([1, 2, 3, 4], 0.5)
        2.5
    """
    xs: List[float] = sorted(values)
    if not xs:
        return math.nan
    pos = (len(xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
