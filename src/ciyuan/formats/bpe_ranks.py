"""Between the two ways of writing a byte-level BPE: merges (GPT-2's ``vocab.bpe``, Hugging Face's
``tokenizer.json``) and token ranks (tiktoken's ``.tiktoken``).

tiktoken merges, at each step, the adjacent pair whose concatenation has the lowest rank; the
merge rule merges the listed pair of the lowest merge rank. The two agree when every token ``t``
(other than a single byte) is made by exactly one listed merge ``(a, b)``, listed in the order of
the tokens' ranks, and ``(a, b)`` is what tiktoken's own rule reaches on ``t``'s bytes using only
the tokens ranked below ``t`` (then both rules take the same path on every word: whenever the
lowest pair present makes ``t``, its two halves are ``a`` and ``b``). :func:`merges_from_ranks`
reads the merges off the ranks that way; :func:`ranks_from_merges` checks a merge list against
that rule before it is written as ranks.

Example:
    >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}
    >>> merges_from_ranks(ranks)
    [(b'a', b'b'), (b'ab', b'b')]
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Tuple

from ciyuan.errors import ModelError

__all__ = ["merges_from_ranks", "ranks_from_merges", "split_by_ranks"]


def split_by_ranks(token: bytes, ranks: Mapping[bytes, int], below: int) -> List[bytes]:
    """tiktoken's merge loop on ``token``'s bytes, using only the tokens ranked below ``below``."""
    parts = [token[i:i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best, at = below, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < best:
                best, at = rank, i
        if at < 0:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return parts


def merges_from_ranks(ranks: Mapping[bytes, int]) -> List[Tuple[bytes, bytes]]:
    """The merge list that encodes exactly as tiktoken does with ``ranks`` (every token longer
    than one byte, in rank order, with the two halves tiktoken reaches it by).

    Raises:
        ModelError: a token that tiktoken's rule never makes (its bytes do not come down to two
            tokens ranked below it), or a single byte missing.
    """
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ModelError(f"{len(missing)} single bytes (e.g. {bytes([missing[0]])!r}) have no rank")
    merges: List[Tuple[bytes, bytes]] = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) == 1:
            continue
        parts = split_by_ranks(token, ranks, rank)
        if len(parts) != 2:
            raise ModelError(f"token {token!r} (rank {rank}) is not made by merging two tokens of lower rank, so no "
                             "merge list can produce it")
        merges.append((parts[0], parts[1]))
    return merges


def ranks_from_merges(tokens: Sequence[bytes], merges: Sequence[Tuple[int, int]]) -> Dict[bytes, int]:
    """The tiktoken ranks of a merge-based byte-level BPE, whose ids must already be those ranks.

    Args:
        tokens: the token bytes by id.
        merges: the merges as id pairs, in merge order.

    Raises:
        ModelError: saying why the ranks would encode differently (or would need other ids).
    """
    ranks = {t: i for i, t in enumerate(tokens)}
    if len(ranks) != len(tokens):
        raise ModelError("two ids share the same bytes, which a rank file cannot hold")
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ModelError(f"{len(missing)} single bytes (e.g. {bytes([missing[0]])!r}) have no token")
    made: Dict[int, Tuple[int, int]] = {}
    last = -1
    for a, b in merges:
        token = tokens[a] + tokens[b]
        t = ranks.get(token)
        if t is None:
            raise ModelError(f"the merge {tokens[a]!r} + {tokens[b]!r} makes no token of the vocabulary")
        if t in made:
            raise ModelError(f"token {token!r} is made by two merges; ranks keep one")
        if t <= last:
            raise ModelError(f"token {token!r} (id {t}) comes from a merge listed after the merge of id {last}: "
                             "as ranks, the ids would have to change")
        made[t] = (a, b)
        last = t
    for t, token in enumerate(tokens):
        if len(token) == 1:
            continue
        pair = made.get(t)
        if pair is None:
            raise ModelError(f"token {token!r} (id {t}) is made by no merge")
        parts = split_by_ranks(token, ranks, t)
        if parts != [tokens[pair[0]], tokens[pair[1]]]:
            raise ModelError(f"token {token!r} (id {t}) is listed as {tokens[pair[0]]!r} + {tokens[pair[1]]!r}, "
                             f"but ranks would make it from {parts!r}")
    return ranks
