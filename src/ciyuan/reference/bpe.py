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
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import regex

__all__ = [
    "encode_piece_by_token_rank",
    "encode_piece_by_merges",
    "encode_word_by_merges",
    "encode_longest_match",
    "encode",
    "decode",
]


def _merge_loop(parts: List[bytes], rank_of) -> List[bytes]:
    while len(parts) > 1:
        # Find the lowest-ranked adjacent pair; `<` keeps the leftmost on ties.
        best, at = None, -1
        for i in range(len(parts) - 1):
            r = rank_of(parts[i], parts[i + 1])
            if r is not None and (best is None or r < best):
                best, at = r, i
        if best is None:
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return parts


def encode_piece_by_token_rank(piece: bytes, ranks: Dict[bytes, int]) -> List[int]:
    """tiktoken's rule: ``ranks`` maps token bytes to rank (= id)."""
    if piece in ranks:  # tiktoken's shortcut: a piece that is a token is one token
        return [ranks[piece]]
    parts = _merge_loop([bytes([b]) for b in piece], lambda a, b: ranks.get(a + b))
    return [ranks[p] for p in parts]


def encode_piece_by_merges(
    piece: bytes, vocab: Dict[bytes, int], merge_ranks: Dict[Tuple[bytes, bytes], int]
) -> List[int]:
    """The merges-list rule: ``merge_ranks`` maps (left, right) to the merge's position."""
    parts = _merge_loop([bytes([b]) for b in piece], lambda a, b: merge_ranks.get((a, b)))
    return [vocab[p] for p in parts]


def encode_word_by_merges(word: str, merges: Sequence[Tuple[str, str]], suffix: str = "") -> List[str]:
    """Character-level BPE as the classic tutorials teach it: start from the characters, the
    last one carrying the end-of-word ``suffix`` (e.g. ``</w>``), and apply the merges by rank."""
    merge_ranks = {pair: i for i, pair in reversed(list(enumerate(merges)))}
    symbols = list(word)
    if suffix and symbols:
        symbols[-1] += suffix
    while len(symbols) > 1:
        ranked = [(merge_ranks.get((a, b)), i) for i, (a, b) in enumerate(zip(symbols, symbols[1:]))]
        ranked = [(r, i) for r, i in ranked if r is not None]
        if not ranked:
            break
        _, i = min(ranked)  # lowest rank, then leftmost
        symbols[i : i + 2] = [symbols[i] + symbols[i + 1]]
    return symbols


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
) -> List[int]:
    """Encode ``text``: tiktoken's rule when ``merges`` is None, else the merges-list rule."""
    merge_ranks = {pair: i for i, pair in reversed(list(enumerate(merges)))} if merges is not None else None
    ids: List[int] = []
    for piece in regex.findall(pattern, text):
        data = piece.encode("utf-8")
        if merge_ranks is None:
            ids.extend(encode_piece_by_token_rank(data, ranks))
        else:
            ids.extend(encode_piece_by_merges(data, ranks, merge_ranks))
    return ids


def decode(ids: Sequence[int], ranks: Dict[bytes, int]) -> str:
    """Join the tokens' bytes and read them as UTF-8 (bad sequences become U+FFFD)."""
    by_id = {i: t for t, i in ranks.items()}
    return b"".join(by_id[i] for i in ids).decode("utf-8", "replace")
