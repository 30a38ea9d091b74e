"""Byte-level BPE encoding in plain Python (the test oracle for the native core).

Encoding a text:
  1. split it into pieces with the pre-tokenizer pattern (the ``regex`` module);
  2. turn each piece into its bytes, one symbol per byte;
  3. repeatedly merge the adjacent pair with the lowest rank (the leftmost one on ties) until
     no pair has a rank.

Two rank rules exist. tiktoken: a pair's rank is the rank of the token the two symbols make
together (the pair cannot merge if that is not a token), and a piece that is already a token is
taken whole. GPT-2 / Hugging Face / subword-nmt: a pair's rank is its position in the merges
list. Cost: O(n^2) per piece of n bytes, which is fine for an oracle.

BPE-dropout (Provilkov et al., 2019), as Hugging Face's ``BPE(dropout=p)`` behaves: step 3
becomes a queue of candidate merges (rank, position), best first. Each candidate taken from the
queue is set aside with probability ``p``; otherwise the candidates set aside go back to the
queue, and the candidate merges if it still applies (an earlier merge of a neighbour may have
outdated it; it was still drawn for). A merge queues the new pairs on either side of the new
symbol. The piece is done when the queue is empty. ``p = 0`` is plain BPE; ``p = 1`` leaves the
single bytes. While sampling, a piece that is a token is not taken whole.

Long pieces in windows (``encode_in_windows``): when a token's rank does not depend on the pair
that makes it (tiktoken's rule, or a merges list that makes each token once), a list of tokens
is the encoding of its bytes exactly when every two neighbours are the encoding of their own
bytes. So a long piece can be encoded window by window (each window starting at the last few
tokens so far, taken back): a window's tokens are appended when the seam's two tokens are such
a pair; otherwise the k tokens on each side of the seam are encoded again as one span,
k = 1, 2, 4..., until the span fits the tokens on both sides.
"""

from __future__ import annotations

import random
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import regex

__all__ = [
    "encode_piece_by_token_rank",
    "encode_piece_by_merges",
    "encode_word_by_merges",
    "encode_longest_match",
    "encode_in_windows",
    "encode",
    "decode",
]


def _merge_loop(parts: list, rank_of, dropout: float = 0.0, rng: Optional[random.Random] = None) -> list:
    """Merge adjacent parts (bytes or str), lowest rank first, the leftmost on ties; with
    ``dropout``, BPE-dropout drawing from ``rng``."""
    if dropout:
        if rng is None:
            raise ValueError("BPE-dropout needs a random.Random to draw from (rng=)")
        return _dropout_loop(parts, rank_of, dropout, rng)
    while len(parts) > 1:
        best, at = None, -1
        for i in range(len(parts) - 1):
            r = rank_of(parts[i], parts[i + 1])
            if r is not None and (best is None or r < best):  # `<` keeps the leftmost on ties
                best, at = r, i
        if best is None:
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return parts


def _dropout_loop(parts: list, rank_of, dropout: float, rng: random.Random) -> list:
    """BPE-dropout (see the top of this file). A symbol is known by the position of its first
    part, which never changes; a queued candidate is (rank, position, the symbol it makes)."""
    symbols = dict(enumerate(parts))  # position -> symbol, in order

    def neighbour(pos, step):
        order = sorted(symbols)
        k = order.index(pos) + step
        return order[k] if 0 <= k < len(order) else None

    def candidate(left):
        right = neighbour(left, 1) if left is not None else None
        if right is None:
            return []
        r = rank_of(symbols[left], symbols[right])
        return [] if r is None else [(r, left, symbols[left] + symbols[right])]

    queue = [c for pos in list(symbols) for c in candidate(pos)]
    aside = []
    while queue:
        best = min(queue)
        queue.remove(best)
        if rng.random() < dropout:
            aside.append(best)
            continue
        queue += aside
        aside = []
        _, left, made = best
        right = neighbour(left, 1) if left in symbols else None
        if right is None or symbols[left] + symbols[right] != made:
            continue  # outdated by an earlier merge
        symbols[left] = made
        del symbols[right]
        queue += candidate(neighbour(left, -1)) + candidate(left)
    return [symbols[pos] for pos in sorted(symbols)]


def encode_piece_by_token_rank(
    piece: bytes, ranks: Dict[bytes, int], dropout: float = 0.0, rng: Optional[random.Random] = None
) -> List[int]:
    """tiktoken's rule: ``ranks`` maps token bytes to rank (= id). ``dropout``: BPE-dropout
    with draws from ``rng``."""
    if piece in ranks and not dropout:  # tiktoken's shortcut: a piece that is a token is one token
        return [ranks[piece]]
    parts = _merge_loop([bytes([b]) for b in piece], lambda a, b: ranks.get(a + b), dropout, rng)
    return [ranks[p] for p in parts]


def encode_in_windows(piece: bytes, encode_span: Callable[[bytes], List[bytes]], window: int) -> List[bytes]:
    """``encode_span(piece)`` (the parts of one merge loop) computed window by window of ``window``
    bytes, the seams checked (see the top of this file)."""

    def pair_fits(a: bytes, b: bytes) -> bool:
        return encode_span(a + b) == [a, b]

    out: List[bytes] = []
    for pos in range(0, len(piece), window):
        # The window starts at out's last tokens, so that it does not start inside a token.
        back = out[len(out) - min(8, len(out)) :]
        out = out[: len(out) - len(back)]
        parts = encode_span(b"".join(back) + piece[pos : pos + window])
        if out and not pair_fits(out[-1], parts[0]):
            k = 1
            while True:
                left, right = min(k, len(out)), min(k, len(parts))
                middle = encode_span(b"".join(out[-left:] + parts[:right]))
                if (left == len(out) or pair_fits(out[-left - 1], middle[0])) and (
                    right == len(parts) or pair_fits(middle[-1], parts[right])
                ):
                    out, parts = out[:-left] + middle, parts[right:]
                    break
                k *= 2
        out += parts
    return out


def encode_piece_by_merges(
    piece: bytes,
    vocab: Dict[bytes, int],
    merge_ranks: Dict[Tuple[bytes, bytes], int],
    dropout: float = 0.0,
    rng: Optional[random.Random] = None,
) -> List[int]:
    """The merges-list rule: ``merge_ranks`` maps (left, right) to the merge's position.
    ``dropout``: BPE-dropout with draws from ``rng``."""
    parts = _merge_loop([bytes([b]) for b in piece], lambda a, b: merge_ranks.get((a, b)), dropout, rng)
    return [vocab[p] for p in parts]


def encode_word_by_merges(
    word: str,
    merges: Sequence[Tuple[str, str]],
    suffix: str = "",
    dropout: float = 0.0,
    rng: Optional[random.Random] = None,
) -> List[str]:
    """Character-level BPE as the classic tutorials teach it: start from the characters, the
    last one carrying the end-of-word ``suffix`` (e.g. ``</w>``), and apply the merges by rank
    (``dropout``: BPE-dropout with draws from ``rng``)."""
    merge_ranks = {pair: i for i, pair in reversed(list(enumerate(merges)))}
    symbols = list(word)
    if suffix and symbols:
        symbols[-1] += suffix
    return _merge_loop(symbols, lambda a, b: merge_ranks.get((a, b)), dropout, rng)


def encode_longest_match(piece: bytes, vocab: Dict[bytes, int], longest: int = 0) -> List[int]:
    """The textbook greedy alternative to BPE: take the longest prefix that is a token, repeat.
    ``longest`` is the longest token's length (computed when 0)."""
    longest = longest or max(len(t) for t in vocab)
    ids, i = [], 0
    while i < len(piece):
        for j in range(min(len(piece), i + longest), i, -1):
            if piece[i:j] in vocab:
                ids.append(vocab[piece[i:j]])
                i = j
                break
        else:
            raise KeyError(f"byte {piece[i]:#x} has no token")
    return ids


def encode(
    text: str,
    pattern: str,
    ranks: Dict[bytes, int],
    merges: Optional[Sequence[Tuple[bytes, bytes]]] = None,
    dropout: float = 0.0,
    rng: Optional[random.Random] = None,
) -> List[int]:
    """Encode ``text``: tiktoken's rule when ``merges`` is None, else the merges-list rule
    (``dropout``: BPE-dropout with draws from ``rng``)."""
    merge_ranks = {pair: i for i, pair in reversed(list(enumerate(merges)))} if merges is not None else None
    ids: List[int] = []
    for piece in regex.findall(pattern, text):
        data = piece.encode("utf-8")
        if merge_ranks is None:
            ids.extend(encode_piece_by_token_rank(data, ranks, dropout, rng))
        else:
            ids.extend(encode_piece_by_merges(data, ranks, merge_ranks, dropout, rng))
    return ids


def decode(ids: Sequence[int], ranks: Dict[bytes, int]) -> str:
    """Join the tokens' bytes and read them as UTF-8 (bad sequences become U+FFFD)."""
    by_id = {i: t for t, i in ranks.items()}
    return b"".join(by_id[i] for i in ids).decode("utf-8", "replace")
