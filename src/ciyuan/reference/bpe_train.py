"""BPE training as the textbooks teach it (Sennrich et al. 2016), in plain Python.

Start with every word split into symbols (characters or bytes; the end of a word marked by a
suffix on its last character, ``"w</w>"``, or by a separate symbol, ``"w </w>"``). Then repeat:
count every adjacent pair of symbols in all words (each word weighted by its count), take the
most frequent pair, and merge it everywhere, left to right. Stop when the vocabulary is big
enough, after ``max_merges`` merges, or when the best pair occurs fewer than
``min_frequency`` times.

Cost: a full recount per merge, O(merges x symbols in the distinct words). That is fine for
an oracle; the native trainer (``ciyuan.trainers.BpeTrainer``) gets the same merges by updating
only the pairs around each merge.

Example:
    >>> from ciyuan.reference.bpe_train import train_bpe
    >>> tokens, merges = train_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3},
    ...                            max_merges=3, end_of_word_symbol="</w>", tie_break="first")
    >>> merges
    [('e', 's'), ('es', 't'), ('est', '</w>')]
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ciyuan.byte_alphabet import BYTE_TO_CHAR

__all__ = ["train_bpe"]

Symbol = Union[str, bytes]


def train_bpe(
    word_counts: Mapping[str, int],
    *,
    vocab_size: Optional[int] = None,
    max_merges: Optional[int] = None,
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (),
    byte_level: bool = False,
    end_of_word_suffix: str = "",
    end_of_word_symbol: str = "",
    tie_break: str = "hf",
) -> Tuple[List[Symbol], List[Tuple[Symbol, Symbol]]]:
    """Learn BPE merges from ``{word: count}`` (in first-seen order).

    Returns the tokens in id order (``bytes`` when ``byte_level``, else ``str``; the special
    tokens are ``str``) and the merges in order. ``tie_break`` picks among equally frequent
    pairs: ``"hf"`` the smallest (left id, right id), ``"subword-nmt"`` the greatest (left,
    right) text, ``"first"`` the pair seen first.
    """
    # 1. The initial vocabulary: special tokens, then the alphabet in code point order (bytes in
    #    the order of GPT-2's printable characters), then end-of-word variants, then the marker.
    tokens: List[Symbol] = list(special_tokens)
    words: List[List[Symbol]]
    if byte_level:
        alphabet: List[Symbol] = [bytes([b]) for b in sorted(range(256), key=lambda b: BYTE_TO_CHAR[b])]
        words = [[bytes([b]) for b in w.encode("utf-8")] for w in word_counts]
    else:
        alphabet = sorted({c for w in word_counts for c in w})
        if end_of_word_suffix:
            alphabet += [c + end_of_word_suffix for c in sorted({w[-1] for w in word_counts if w})]
        words = [[*w[:-1], w[-1] + end_of_word_suffix] if w else [] for w in word_counts]
    if end_of_word_symbol:
        # Byte-level, the marker is a symbol of bytes too: "</w>" made by merging "<", "/", "w",
        # ">" is then the same symbol, as in the native trainer.
        marker: Symbol = end_of_word_symbol.encode("utf-8") if byte_level else end_of_word_symbol
        alphabet.append(marker)
        words = [w + [marker] if w else w for w in words]
    tokens += [s for s in alphabet if s not in tokens]
    ids: Dict[Symbol, int] = {t: i for i, t in enumerate(tokens)}
    counts = list(word_counts.values())

    def priority(pair: Tuple[Symbol, Symbol], n: int) -> tuple:
        if tie_break == "hf":
            return (n, -ids[pair[0]], -ids[pair[1]])
        if tie_break == "subword-nmt":
            return (n, pair)
        return (n,)  # "first": max() keeps the first of equals, i.e. the pair seen first

    merges: List[Tuple[Symbol, Symbol]] = []
    while (vocab_size is None or len(tokens) < vocab_size) and (max_merges is None or len(merges) < max_merges):
        # 2. Count every adjacent pair; a Counter remembers the order pairs were first seen.
        stats: Counter = Counter()
        for word, n in zip(words, counts):
            for pair in zip(word, word[1:]):
                stats[pair] += n
        if not stats:
            break
        best = max(stats, key=lambda p: priority(p, stats[p]))
        if stats[best] < min_frequency:
            break
        # 3. Merge the pair everywhere, left to right ("a a a" -> "aa a").
        merged = best[0] + best[1]
        if merged not in ids:
            ids[merged] = len(tokens)
            tokens.append(merged)
        merges.append(best)
        for word in words:
            i = 0
            while i < len(word) - 1:
                if word[i] == best[0] and word[i + 1] == best[1]:
                    word[i : i + 2] = [merged]
                i += 1
    return tokens, merges
