"""Hugging Face's character-level BPE on one pre-token, in plain Python (the oracle for the
native encoder's ``continuing_subword_prefix``, ``byte_fallback``, ``unk_token`` /
``fuse_unk``, ``drop_unknown`` and ``ignore_merges`` options).

A word becomes its initial symbols, one per character:

1. the character, with the continuing prefix in front (``##``) unless it is the first, and the
   end-of-word suffix behind (``</w>``) if it is the last, is looked up;
2. a character that is not a token becomes, with byte fallback, the tokens ``<0xXX>`` of the
   bytes of that string (when all exist; each is one byte long);
3. otherwise it becomes the unknown token, held back so that ``fuse_unk`` can stretch it over
   the next unknown characters (a character that fell back to bytes does not end the held-back
   run, as in Hugging Face); without an unknown token it is left out.

Each symbol's span starts where the previous one ended (so a left-out character takes no room
and the following spans move left, as Hugging Face's do). Then the adjacent pair with the
lowest merge rank, the leftmost on ties, merges until none can; the merge ``(a, b)`` makes
``a + b`` without ``b``'s prefix. With ``ignore_merges`` a word that is a token is taken
whole first. Cost: O(n^2) per word of n characters.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

__all__ = ["encode_word"]

Token = Tuple[int, int, int]  # (id, start byte, end byte) within the word


def encode_word(
    word: str,
    vocab: Dict[str, int],
    merges: Sequence[Tuple[str, str]],
    *,
    continuing_subword_prefix: str = "",
    end_of_word_suffix: str = "",
    unk_token: Optional[str] = None,
    fuse_unk: bool = False,
    byte_fallback: bool = False,
    ignore_merges: bool = False,
) -> List[Token]:
    """The tokens of one word as ``(id, start, end)`` (UTF-8 byte offsets within the word).

    Example:
        >>> v = {"l": 0, "##o": 1, "##w": 2, "lo": 3, "low": 4, "<unk>": 5}
        >>> encode_word("lowx", v, [("l", "##o"), ("lo", "##w")], continuing_subword_prefix="##",
        ...             unk_token="<unk>")
        [(4, 0, 3), (5, 3, 4)]
    """
    if not word:
        return []
    size = len(word.encode("utf-8"))
    if ignore_merges and word in vocab:
        return [(vocab[word], 0, size)]
    prefix_len = len(continuing_subword_prefix)
    ranks = {(vocab[a], vocab[b]): (rank, vocab[a + b[prefix_len:]]) for rank, (a, b) in enumerate(merges)}
    symbols: List[List[int]] = []  # [id, length]
    pending: Optional[List[int]] = None
    for i, ch in enumerate(word):
        s = (continuing_subword_prefix if i else "") + ch + (end_of_word_suffix if i == len(word) - 1 else "")
        length = len(ch.encode("utf-8"))
        if s in vocab:
            if pending is not None:
                symbols.append(pending)
                pending = None
            symbols.append([vocab[s], length])
            continue
        if byte_fallback:
            names = [f"<0x{b:02X}>" for b in s.encode("utf-8")]
            if all(n in vocab for n in names):
                symbols.extend([vocab[n], 1] for n in names)
                continue
        if unk_token is None:
            continue
        if pending is not None and fuse_unk:
            pending[1] += length
        else:
            if pending is not None:
                symbols.append(pending)
            pending = [vocab[unk_token], length]
    if pending is not None:
        symbols.append(pending)
    while len(symbols) > 1:
        best = None
        for k in range(len(symbols) - 1):
            found = ranks.get((symbols[k][0], symbols[k + 1][0]))
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], found[1], k)
        if best is None:
            break
        _, merged, k = best
        symbols[k:k + 2] = [[merged, symbols[k][1] + symbols[k + 1][1]]]
    out: List[Token] = []
    at = 0
    for sid, length in symbols:
        out.append((sid, min(at, size), min(at + length, size)))
        at += length
    return out
