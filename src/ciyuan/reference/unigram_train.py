"""Unigram LM training in plain Python: seed pieces, one EM step, one pruning step.

The oracle the native trainer (``cpp/src/unigram_trainer.cc``) is tested against, on whole
words (no cutting into script units). Words are texts with counts; pieces are texts with
log-probability scores. (Helper A1's ``reference/unigram.py`` holds the encode half; this is
the training half, to be appended there as "# --- training (EM, pruning) ---" on merging.)

Example:
    >>> words = {"▁ab": 3, "▁abc": 1}
    >>> sorted(seeds(words))[:2]
    [('ab', 8), ('abc', 3)]
"""

from __future__ import annotations

import math
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = ["seeds", "expected_counts", "m_step", "prune", "digamma"]

NEG_INF = float("-inf")
UNKNOWN_PENALTY = 10.0  # an unknown character scores the lowest piece score minus this
MIN_EXPECTED = 0.5  # the M-step drops pieces expected fewer times


def seeds(words: Mapping[str, int], max_piece_length: int = 16) -> Dict[str, int]:
    """Every substring of 2..max_piece_length characters that occurs at least twice (counting
    each word ``count`` times) and is right-maximal - not every occurrence is followed by the
    same character (a word's end counts as a different character each time) - with score
    occurrences x length. These are the internal nodes of the suffix tree of the words' copies.
    Cost: O(total length x max_piece_length) substrings."""
    occurrences: Dict[str, int] = {}
    followers: Dict[str, set] = {}
    for word, count in words.items():
        for i in range(len(word)):
            for j in range(i + 2, min(len(word), i + max_piece_length) + 1):
                s = word[i:j]
                occurrences[s] = occurrences.get(s, 0) + count
                nxt = followers.setdefault(s, set())
                if j == len(word):
                    nxt.update(("end", word, i, k) for k in range(count))  # each end distinct
                else:
                    nxt.add(word[j])
    return {s: n * len(s) for s, n in occurrences.items() if n >= 2 and len(followers[s]) >= 2}


def _edges(word: str, pieces: Mapping[str, int], scores: Sequence[float], max_len: int,
           unk: float) -> List[Tuple[int, int, int, float]]:
    """The lattice: (start, end, piece index or -1 for unknown, score), by start."""
    edges = []
    for s in range(len(word)):
        single = False
        for e in range(s + 1, min(len(word), s + max_len) + 1):
            p = pieces.get(word[s:e])
            if p is not None:
                edges.append((s, e, p, scores[p]))
                single = single or e == s + 1
        if not single:
            edges.append((s, s + 1, -1, unk))
    return edges


def _log_add(a: float, b: float) -> float:
    if a < b:
        a, b = b, a
    return a if b == NEG_INF else a + math.log1p(math.exp(b - a))


def expected_counts(words: Mapping[str, int], pieces: Sequence[str],
                    scores: Sequence[float]) -> Tuple[List[float], float]:
    """E-step: each piece's expected count over all segmentations of all words (forward-backward:
    alpha[e] = logsum over edges (s, e) of alpha[s] + score; beta symmetrically; an edge's
    posterior is exp(alpha[s] + score + beta[e] - log Z)), weighted by the word counts; and the
    sum of count x log Z. Cost: O(total length x max piece length)."""
    index = {p: i for i, p in enumerate(pieces)}
    max_len = max(len(p) for p in pieces)
    unk = min(min(scores), 0.0) - UNKNOWN_PENALTY
    expected = [0.0] * len(pieces)
    objective = 0.0
    for word, count in words.items():
        edges = _edges(word, index, scores, max_len, unk)
        alpha = [NEG_INF] * (len(word) + 1)
        beta = [NEG_INF] * (len(word) + 1)
        alpha[0] = 0.0
        for s, e, _, sc in edges:
            alpha[e] = _log_add(alpha[e], alpha[s] + sc)
        beta[len(word)] = 0.0
        for s, e, _, sc in reversed(edges):
            beta[s] = _log_add(beta[s], sc + beta[e])
        z = alpha[len(word)]
        objective += count * z
        for s, e, p, sc in edges:
            if p >= 0:
                expected[p] += count * math.exp(alpha[s] + sc + beta[e] - z)
    return expected, objective


def digamma(x: float) -> float:
    """psi(x) for x > 0: shift up to x >= 6, then the asymptotic series."""
    r = 0.0
    while x < 6:
        r -= 1 / x
        x += 1
    f = 1 / (x * x)
    return r + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


def m_step(expected: Sequence[float]) -> Tuple[List[int], List[float]]:
    """M-step: pieces expected at least 0.5 times stay, with log p = digamma(count) -
    digamma(total) (the variational Bayes update, which shrinks rare pieces harder than
    log(count / total) would)."""
    keep = [i for i, c in enumerate(expected) if c >= MIN_EXPECTED]
    total = sum(expected[i] for i in keep)
    return keep, [digamma(expected[i]) - digamma(total) for i in keep]


def _viterbi(word: str, index: Mapping[str, int], scores: Sequence[float], max_len: int, unk: float,
             skip: Optional[int] = None) -> Tuple[float, List[int]]:
    """Best segmentation's (score, pieces), without piece ``skip`` spanning the whole word."""
    edges = _edges(word, index, scores, max_len, unk)
    best = [NEG_INF] * (len(word) + 1)
    back: List[Optional[Tuple[int, int]]] = [None] * (len(word) + 1)
    best[0] = 0.0
    for s, e, p, sc in edges:
        if p == skip and s == 0 and e == len(word):
            continue
        if best[s] != NEG_INF and best[s] + sc > best[e]:
            best[e], back[e] = best[s] + sc, (s, p)
    path = []
    pos = len(word)
    while pos > 0 and back[pos] is not None:
        s, p = back[pos]  # type: ignore[misc]
        path.append(p)
        pos = s
    return best[len(word)], path[::-1]


def prune(words: Mapping[str, int], pieces: Sequence[str], scores: Sequence[float],
          size: int) -> Tuple[List[int], Dict[int, float]]:
    """One pruning step: (indices kept, in order; the loss of each removable piece).

    A one-character piece always stays. A piece whose best segmentation (of its own text) is
    not itself is never used and goes. For the others, with Viterbi counts f over all words
    (sum F), removing piece i moves its f_i occurrences to the pieces of its best alternative
    segmentation A: loss = f_i x (log(f_i / F) - sum over j in A of log((f_j + f_i) / F')),
    F' = F + f_i (|A| - 1). Pieces are kept by largest loss (ties: smaller index) until
    ``size`` remain; unused pieces (f_i = 0) go."""
    index = {p: i for i, p in enumerate(pieces)}
    max_len = max(len(p) for p in pieces)
    unk = min(min(scores), 0.0) - UNKNOWN_PENALTY
    freq = [0] * len(pieces)
    for word, count in words.items():
        for p in _viterbi(word, index, scores, max_len, unk)[1]:
            if p >= 0:
                freq[p] += count
    total = sum(freq)
    kept, losses = [], {}
    for i, piece in enumerate(pieces):
        if len(piece) == 1:
            kept.append(i)
            continue
        alt_score, alt = _viterbi(piece, index, scores, max_len, unk, skip=i)
        if alt_score > scores[i] or freq[i] == 0:
            continue
        f = freq[i]
        logprob = math.log(f) - math.log(total)
        log_total_alt = math.log(total + f * (len(alt) - 1))
        logprob_alt = sum(math.log((freq[j] if j >= 0 else 0) + f) - log_total_alt for j in alt)
        losses[i] = f * (logprob - logprob_alt)
    for i in sorted(losses, key=lambda i: (-losses[i], i)):
        if len(kept) >= size:
            break
        kept.append(i)
    return sorted(kept), losses
