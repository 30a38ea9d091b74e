"""Founding document 000's BPETokenizer in plain Python: its ``fit`` and its ``tokenize``.

Fit. Words (each with ``</w>`` as a separate last symbol) are counted in first-seen order.
Each step recounts every adjacent pair, reading the words in their current order, and merges
the first pair with the highest count (whole symbols, left to right). A word that changes
moves behind all the others, as it does in the document's dict. After each step the
vocabulary is recomputed: the symbols the words still use, most used first, ties in the order
they are met. Training stops once that vocabulary has ``vocab_size`` symbols, when no pair is
left, or after ``max_steps`` steps. The special tokens are then put in front one after
another, so they end up in reverse order.

Tokenize. Each word's units (its characters, then ``</w>``) are cut greedily from the left:
the longest run of units whose text is in the vocabulary, or ``<UNK>`` for one unit that is
not.

Cost: a full recount per step, O(steps x symbols of the distinct words); ciyuan's textbook
class gets the same result from the native merge loop.

Example:
    >>> vocab, merges = fit([("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)], 1000, 3)
    >>> merges
    [('e', 's'), ('es', 't'), ('est', '</w>')]
    >>> vocab[:8]
    ['<MASK>', '<END>', '<PAD>', '<UNK>', 'w', 'est</w>', 'e', 'l']
    >>> tokenize(["lowest"], vocab)
    ['l', 'o', 'w', 'est</w>']
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable, List, Sequence, Tuple

__all__ = ["SPECIAL", "fit", "merge_symbols", "symbol_counts", "tokenize"]

SPECIAL = ("<UNK>", "<PAD>", "<END>", "<MASK>")
Word = Tuple[str, ...]


def merge_symbols(word: Sequence[str], pair: Tuple[str, str]) -> Word:
    """``word`` with every ``pair`` of adjacent whole symbols joined, left to right ("a a a" ->
    "aa a")."""
    out: List[str] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def symbol_counts(words: Dict[Word, int]) -> List[Tuple[str, int]]:
    """The symbols the words use with their counts, most used first (ties: first met)."""
    counts: Counter = Counter()
    for word, n in words.items():
        for s in word:
            counts[s] += n
    return sorted(counts.items(), key=lambda kv: -kv[1])


def fit(word_counts: Iterable[Tuple[str, int]], vocab_size: int, max_steps: int,
        special: Sequence[str] = SPECIAL, marker: str = "</w>") -> Tuple[List[str], List[Tuple[str, str]]]:
    """The vocabulary (file order) and the merges ``fit`` learns from ``(word, count)`` pairs
    in first-seen order."""
    words: Dict[Word, int] = {}
    for w, n in word_counts:
        key = tuple(w) + (marker,)
        words[key] = words.get(key, 0) + n
    vocab = symbol_counts(words)
    merges: List[Tuple[str, str]] = []
    for _ in range(max_steps):
        pairs: Dict[Tuple[str, str], int] = {}  # filled in reading order: max() keeps the first
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] = pairs.get(pair, 0) + n
        if not pairs:
            break
        best = max(pairs, key=lambda p: pairs[p])
        merges.append(best)
        moved = {}
        for word in list(words):
            merged = merge_symbols(word, best)
            if merged != word:
                moved[merged] = words.pop(word)
        words.update(moved)  # the changed words go last, in the order they had
        vocab = symbol_counts(words)
        if len(vocab) >= vocab_size:
            break
    tokens = [s for s, _ in vocab]
    for s in special:
        tokens.insert(0, s)
    return tokens, merges


def tokenize(words: Iterable[str], vocab: Sequence[str], add_post: str = "</w>", unk: str = "<UNK>") -> List[str]:
    """The tokens of the words: greedy longest run of units (characters, then ``add_post``)
    whose text is in ``vocab``; one ``unk`` for a unit that is not."""
    known = set(vocab)
    out: List[str] = []
    for word in words:
        units = list(word) + ([add_post] if add_post else [])
        start = 0
        while start < len(units):
            for end in range(len(units), start, -1):
                piece = "".join(units[start:end])
                if piece in known:
                    out.append(piece)
                    break
            else:
                out.append(unk)
                end = start + 1
            start = end
    return out
