"""The Unigram language model and SentencePiece's BPE in plain Python: encoding (Viterbi,
n-best, forward-backward, sampling) here; training (EM, pruning) at the end of the file.

A model is a :class:`Table`: pieces with scores and SentencePiece's piece types (1 NORMAL,
2 UNKNOWN, 3 CONTROL, 4 USER_DEFINED, 5 UNUSED, 6 BYTE). Texts are *normalized* (spaces
already ``▁``). What SentencePiece does, as observed on sentencepiece 0.2.3:

- The lattice: from each character, every NORMAL or USER_DEFINED piece the text starts with.
  A NORMAL piece scores its score; a USER_DEFINED piece ``0.1 * (bytes) - 0.1``, whatever its
  own score. Where no piece of exactly one character starts, one unknown node of one character
  scores ``min(NORMAL scores) - 10``.
- Viterbi adds scores in float32 from left to right; a candidate replaces the best at a
  position only when strictly greater, and candidates come by increasing start, so on a tie
  the path whose last piece starts first wins.
- Re-centring: before the edges from a position whose best score is below ``-100000`` or above
  ``100000``, that score is subtracted (in float32) from it and from every later position
  already reached, and the sums go on from 0. On long texts this changes how the sums round,
  so it decides near ties (sentencepiece's ``kScoreResetThreshold``, new in 0.2).
- Consecutive unknown characters are one unknown token; with byte fallback an unknown
  character is the ``<0xXX>`` pieces of its UTF-8 bytes instead.
- Hugging Face's Unigram (``Table(..., hf=True)``, tokenizers 0.2x) keeps the scores as given
  and sums in double, with no re-centring, from 0 for each pre-token it is given; its unknown
  node scores ``min(all scores) - 10`` and a USER_DEFINED piece its own score. The lattice,
  the order of relaxation and the tie rule are the same.
- BPE (:func:`spm_bpe_encode`): symbols start as characters (the longest user-defined piece
  the text starts with is one frozen symbol); the adjacent pair whose concatenation is a
  NORMAL, USER_DEFINED or UNUSED piece with the highest score merges, the leftmost on ties;
  an UNUSED result is split back at the end; leftover symbols that are no piece are unknown.

Cost: Viterbi O(n * L) for n characters and pieces of up to L characters; the forward pass
the same; n-best by enumerating every segmentation (exponential: short texts only, which is
what an oracle needs); BPE O(m^2) for m symbols (a scan per merge).

Example:
    >>> t = Table([("<unk>", 0.0, 2), ("▁a", -1.0, 1), ("b", -2.0, 1), ("▁ab", -2.5, 1)])
    >>> [p for p, _, _ in viterbi("▁ab▁ac", t)]
    ['▁ab', '▁a', '<unk>']
"""

from __future__ import annotations

import math
import random
import struct
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

__all__ = [
    "Table", "f32", "lattice", "viterbi", "segmentations", "nbest", "log_partition", "marginals",
    "segmentation_probabilities", "sample", "spm_bpe_encode",
    "seeds", "expected_counts", "m_step", "prune", "digamma",
]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# (piece text, start, end) in characters of the normalized text.
Token = Tuple[str, int, int]
# An edge of the lattice: (start, end, piece id or None for an unknown character, score).
Edge = Tuple[int, int, Optional[int], float]


def f32(x: float) -> float:
    """x rounded to float32, as SentencePiece's scores and sums are."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


class Table:
    """Pieces ``(text, score, type)`` in id order; ``byte_fallback`` needs ``<0x00>``..``<0xFF>``."""

    def __init__(self, pieces: Sequence[Tuple[str, float, int]], byte_fallback: bool = False,
                 hf: bool = False) -> None:
        self.hf = hf  # Hugging Face's arithmetic (see the module's docstring)
        self.pieces = [p for p, _, _ in pieces]
        self.scores = [float(s) if hf else f32(s) for _, s, _ in pieces]
        self.types = [t for _, _, t in pieces]
        self.byte_fallback = byte_fallback
        self.ids = {p: i for i, p in enumerate(self.pieces)}
        unknown = [i for i, t in enumerate(self.types) if t == UNKNOWN]
        self.unk_id: Optional[int] = unknown[0] if unknown else None
        normal = [s for s, t in zip(self.scores, self.types) if t == NORMAL]
        self.unk_score = f32((min(normal) if normal else 3.4028234663852886e38) - 10.0)
        if hf:
            self.unk_score = min(self.scores) - 10.0
        # Pieces the text may match, for the lattice (NORMAL, USER_DEFINED) and for BPE merges
        # (also UNUSED).
        self.lattice_ids = {p: i for i, p in enumerate(self.pieces) if self.types[i] in (NORMAL, USER_DEFINED)}
        self.merge_ids = {p: i for i, p in enumerate(self.pieces) if self.types[i] in (NORMAL, USER_DEFINED, UNUSED)}
        self.longest = max((len(p) for p in self.lattice_ids), default=1)

    def lattice_score(self, i: int) -> float:
        """A piece's score in the lattice (user-defined pieces: 0.1 per byte less 0.1)."""
        if self.types[i] == USER_DEFINED and not self.hf:
            return f32(0.1 * len(self.pieces[i].encode("utf-8")) - 0.1)
        return self.scores[i]


def lattice(text: str, table: Table) -> List[Edge]:
    """Every edge of the lattice of ``text``, by start, shorter first."""
    edges: List[Edge] = []
    for s in range(len(text)):
        single = False
        for e in range(s + 1, min(len(text), s + table.longest) + 1):
            i = table.lattice_ids.get(text[s:e])
            if i is not None:
                edges.append((s, e, i, table.lattice_score(i)))
                single = single or e == s + 1
        if not single:
            edges.append((s, s + 1, None, table.unk_score))
    return edges


def _tokens(text: str, path: Sequence[Edge], table: Table) -> List[Token]:
    """The output of a lattice path: unknown runs merged, or bytes with byte fallback."""
    out: List[Token] = []
    for s, e, i, _ in path:
        if i is not None:
            out.append((table.pieces[i], s, e))
        elif table.byte_fallback:
            out.extend((f"<0x{b:02X}>", s, e) for b in text[s:e].encode("utf-8"))
        elif table.unk_id is None:
            raise ValueError(f"{text[s:e]!r} is in no piece and the model has no unknown piece")
        elif out and out[-1][0] == table.pieces[table.unk_id] and out[-1][2] == s:
            out[-1] = (out[-1][0], out[-1][1], e)  # one unknown token for a run of them
        else:
            out.append((table.pieces[table.unk_id], s, e))
    return out


# Past this either way, the running score where edges start is re-centred to 0 (see above).
RESET = 100000.0


def viterbi(text: str, table: Table) -> List[Token]:
    """The best segmentation, decided exactly as SentencePiece decides (float32 sums, ties to
    the earliest start of the last piece, re-centring past ``RESET``), or for a ``hf`` table as
    Hugging Face does (double sums, no re-centring; ``text`` is one pre-token)."""
    rounded = (lambda x: x) if table.hf else f32
    n = len(text)
    best: List[Optional[Tuple[float, Edge]]] = [None] * (n + 1)
    total = [0.0] * (n + 1)
    at = -1
    for edge in lattice(text, table):  # by start: total[s] is final when s's edges come
        s, e, _, score = edge
        if s != at:  # the first edge from s (every position has one)
            at, here = s, total[s]
            if not table.hf and (here < -RESET or here > RESET):
                # s itself, and the positions reached beyond it (at most a piece ahead)
                for k in range(s, min(n, s + table.longest) + 1):
                    if k == s or best[k] is not None:
                        total[k] = f32(total[k] - here)
        cand = rounded(score + total[s])
        if best[e] is None or cand > total[e]:
            best[e], total[e] = (cand, edge), cand
    path: List[Edge] = []
    e = n
    while e > 0:
        entry = best[e]
        assert entry is not None
        path.append(entry[1])
        e = entry[1][0]
    return _tokens(text, path[::-1], table)


def segmentations(text: str, table: Table) -> List[Tuple[float, List[Edge]]]:
    """Every path through the lattice with its score (a plain sum). Exponential in len(text)."""
    by_start: Dict[int, List[Edge]] = {}
    for edge in lattice(text, table):
        by_start.setdefault(edge[0], []).append(edge)
    out: List[Tuple[float, List[Edge]]] = []

    def walk(pos: int, path: List[Edge], score: float) -> None:
        if pos == len(text):
            out.append((score, list(path)))
            return
        for edge in by_start.get(pos, []):
            path.append(edge)
            walk(edge[1], path, score + edge[3])
            path.pop()

    walk(0, [], 0.0)
    return out


def nbest(text: str, table: Table, k: int) -> List[Tuple[List[Token], float]]:
    """The k best segmentations, best first (ties in enumeration order)."""
    paths = sorted(segmentations(text, table), key=lambda sp: -sp[0])[:k]
    return [(_tokens(text, path, table), score) for score, path in paths]


def _logsumexp(values: Sequence[float]) -> float:
    hi = max(values)
    return hi + math.log(sum(math.exp(v - hi) for v in values))


def log_partition(text: str, table: Table, alpha: float = 1.0) -> Tuple[List[float], List[Edge]]:
    """Forward pass: ``forward[pos]`` = log of the sum over paths to pos of exp(alpha * score)."""
    edges = lattice(text, table)
    forward = [-math.inf] * (len(text) + 1)
    forward[0] = 0.0
    for s, e, _, score in edges:
        forward[e] = _logsumexp([forward[e], forward[s] + alpha * score]) if forward[e] > -math.inf \
            else forward[s] + alpha * score
    return forward, edges


def marginals(text: str, table: Table, alpha: float = 1.0) -> Dict[Tuple[int, int, Optional[int]], float]:
    """Forward-backward: the probability of each edge under p(path) ~ exp(alpha * score)."""
    forward, edges = log_partition(text, table, alpha)
    backward = [-math.inf] * (len(text) + 1)
    backward[len(text)] = 0.0
    for s, e, _, score in reversed(edges):  # by decreasing start: backward[e] is final
        v = backward[e] + alpha * score
        backward[s] = _logsumexp([backward[s], v]) if backward[s] > -math.inf else v
    z = forward[len(text)]
    return {(s, e, i): math.exp(forward[s] + alpha * score + backward[e] - z) for s, e, i, score in edges}


def segmentation_probabilities(text: str, table: Table, alpha: float) -> Dict[Tuple[str, ...], float]:
    """Exact probability of each output (pieces) when sampling from all paths: exp(alpha *
    score) / Z, by enumeration."""
    paths = segmentations(text, table)
    z = _logsumexp([alpha * s for s, _ in paths])
    probs: Dict[Tuple[str, ...], float] = {}
    for score, path in paths:
        key = tuple(p for p, _, _ in _tokens(text, path, table))
        probs[key] = probs.get(key, 0.0) + math.exp(alpha * score - z)
    return probs


def sample(text: str, table: Table, alpha: float, rng: random.Random) -> List[Token]:
    """Forward-filtering backward-sampling: from the end, an edge into the current position
    with probability exp(forward[start] + alpha * score - forward[position])."""
    forward, edges = log_partition(text, table, alpha)
    path: List[Edge] = []
    pos = len(text)
    while pos > 0:
        into = [edge for edge in edges if edge[1] == pos]
        weights = [math.exp(forward[s] + alpha * score - forward[pos]) for s, _, _, score in into]
        edge = rng.choices(into, weights)[0]
        path.append(edge)
        pos = edge[0]
    return _tokens(text, path[::-1], table)


def spm_bpe_encode(text: str, table: Table, dropout: float = 0.0,
                   rng: Optional[random.Random] = None) -> List[Token]:
    """SentencePiece's BPE: merge the best-scoring adjacent pair (leftmost on ties) until none is
    a piece; with ``dropout`` each merge is skipped with that probability."""
    users = sorted((p for i, p in enumerate(table.pieces) if table.types[i] == USER_DEFINED), key=len, reverse=True)
    # Symbols: (start, end, frozen).
    symbols: List[Tuple[int, int, bool]] = []
    pos = 0
    while pos < len(text):
        user = next((u for u in users if text.startswith(u, pos)), None)
        end = pos + (len(user) if user else 1)
        symbols.append((pos, end, user is not None))
        pos = end
    made: Dict[str, int] = {}  # UNUSED piece -> length of its left part (the last recorded)
    skipped: Set[Tuple[int, int, int]] = set()  # (start, end, mid) of merges dropout skipped while still valid
    while True:
        best = None
        for k in range(len(symbols) - 1):
            (s, m, fa), (_, e, fb) = symbols[k], symbols[k + 1]
            if fa or fb or (s, e, m) in skipped:
                continue
            i = table.merge_ids.get(text[s:e])
            if i is None:
                continue
            if table.types[i] == UNUSED:
                made[text[s:e]] = m - s
            if best is None or table.scores[i] > best[0]:
                best = (table.scores[i], k)
        if best is None:
            break
        k = best[1]
        if dropout > 0 and rng is not None and rng.random() < dropout:
            skipped.add((symbols[k][0], symbols[k + 1][1], symbols[k][1]))
            continue
        symbols[k:k + 2] = [(symbols[k][0], symbols[k + 1][1], False)]
    path: List[Edge] = []

    def emit(s: int, e: int) -> None:
        # A final symbol: an UNUSED piece goes back to its two parts; a symbol that is no
        # piece (or the unknown piece's text) is an unknown edge.
        piece = text[s:e]
        i = table.ids.get(piece)
        if i is not None and table.types[i] == UNUSED and piece in made:
            emit(s, s + made[piece])
            emit(s + made[piece], e)
        else:  # an UNUSED character that was never merged is unknown too
            unknown = i is None or i == table.unk_id or table.types[i] == UNUSED
            path.append((s, e, None if unknown else i, 0.0))

    for s, e, _ in symbols:
        emit(s, e)
    return _tokens(text, path, table)


# --- training (EM, pruning) ---
# Unigram LM training in plain Python: seed pieces, one EM step, one pruning step.
#
# The oracle the native trainer (``cpp/src/unigram_trainer.cc``) is tested against, on whole
# words (no cutting into script units). Words are texts with counts; pieces are texts with
# log-probability scores.
#
# Example:
#     >>> words = {"▁ab": 3, "▁abc": 1}
#     >>> sorted(seeds(words).items())  # "abc" occurs once; "▁a" is always followed by "b"
#     [('ab', 8), ('▁ab', 12)]
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
