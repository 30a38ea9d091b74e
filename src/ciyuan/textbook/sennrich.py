"""BPE learning as Sennrich et al. teach it (document 001), and document 004's printed BPE run.

A corpus becomes a vocabulary of split words, ``{"l o w </w>": 5, ...}``: each word's
characters and the end-of-word symbol ``</w>``, separated by spaces, with the word's count
(:func:`build_vocab`). One learning step counts every adjacent pair of symbols
(:func:`get_stats`, in the order the pairs are first met), takes the most frequent one (the
first met among equals) and merges it wherever both halves are whole symbols
(:func:`merge_vocab`). :func:`learn_bpe` runs many steps on ciyuan's native merge loop
(incremental counts, never a full recount) with the same result; :func:`bpe` is document 004's
loop that prints the vocabulary after every merge.

The learned symbols and their counts (:func:`build_dict_from_vocab`) then encode words greedily:
:func:`subword_tokenize` / :func:`tokenize` take the longest known piece of ``word + "</w>"``
at each position, one ``<unk>`` per character no piece covers; :func:`detokenize` turns each
``</w>`` back into a space. :func:`tokenize_word_by_substrings` is the other encoder the
document describes in prose (tokens tried in a given order, the gaps between their matches
split recursively by the tokens after them).

Example:
    >>> vocab = {"l o w </w>": 5, "l o w e r </w>": 2, "n e w e s t </w>": 6, "w i d e s t </w>": 3}
    >>> merges, vocab = learn_bpe(vocab, 3)
    >>> merges
    [('e', 's'), ('es', 't'), ('est', '</w>')]
    >>> vocab
    {'l o w </w>': 5, 'l o w e r </w>': 2, 'n e w est</w>': 6, 'w i d est</w>': 3}
    >>> tokenize("lowest", build_dict_from_vocab(vocab))
    ['l', 'o', 'w', 'est</w>']
"""

from __future__ import annotations

from collections import Counter
from typing import Collection, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ciyuan._text import is_utf8_encodable
from ciyuan.errors import InvalidInputError, check_count
from ciyuan.textbook.merge_table import END_OF_WORD, MergeTable, learn_merges, merge_pair, word_counts
from ciyuan.trainers import BpeTrainer

__all__ = [
    "UNK",
    "bpe",
    "build_dict_from_vocab",
    "build_vocab",
    "detokenize",
    "format_top_subwords",
    "get_stats",
    "learn_bpe",
    "merge_vocab",
    "run_bpe",
    "sort_by_length",
    "subword_tokenize",
    "tokenize",
    "tokenize_word_by_substrings",
]

#: The token for characters no subword covers.
UNK = "<unk>"

Pair = Tuple[str, str]


# -- learning -----------------------------------------------------------------------------------


def build_vocab(lines: Union[str, Iterable[str]]) -> Dict[str, int]:
    """The learning vocabulary of ``lines``: ``{"c h a r s </w>": count}`` for every
    whitespace-separated word, in first-seen order. A single str is one text.

    Example:
        >>> build_vocab(["low low", "lower"])
        {'l o w </w>': 2, 'l o w e r </w>': 1}
    """
    return {" ".join(word) + " " + END_OF_WORD: n for word, n in word_counts(lines).items()}


def get_stats(vocab: Mapping[str, int]) -> Dict[Pair, int]:
    """Every adjacent pair of symbols with its count (the words' counts summed), in the order
    the pairs are first met (word by word, left to right).

    Example:
        >>> get_stats({"l o w </w>": 5, "l o w e r </w>": 2})
        {('l', 'o'): 7, ('o', 'w'): 7, ('w', '</w>'): 5, ('w', 'e'): 2, ('e', 'r'): 2, ('r', '</w>'): 2}
    """
    stats: Dict[Pair, int] = {}
    for word, n in vocab.items():
        symbols = word.split()
        for pair in zip(symbols, symbols[1:]):
            stats[pair] = stats.get(pair, 0) + n
    return stats


def merge_vocab(pair: Pair, v_in: Mapping[str, int]) -> Dict[str, int]:
    """``v_in`` with ``pair`` merged wherever both halves are whole symbols, left to right
    (``a a a`` -> ``aa a``); words keep their order and counts.

    Example:
        >>> merge_vocab(("w", "e"), {"l o w e r </w>": 2, "n e w es t </w>": 6})
        {'l o we r </w>': 2, 'n e w es t </w>': 6}
    """
    left, right = pair
    out: Dict[str, int] = {}
    for word, n in v_in.items():
        if left in word and right in word:  # a cheap test before splitting
            merged = merge_pair(word.split(), left, right)
            out[" ".join(merged)] = n
        else:
            out[word] = n
    return out


def _initial_words(vocab: Mapping[str, int]) -> Optional[Dict[str, int]]:
    """``{word: count}`` if every key of ``vocab`` is a word's first split (single characters,
    then ``</w>``, one space apart) with a positive integer count; else None."""
    words: Dict[str, int] = {}
    for key, n in vocab.items():
        if not isinstance(key, str):
            raise InvalidInputError(f"vocabulary keys must be str, got {key!r}")
        symbols = key.split(" ")
        if not is_utf8_encodable(key):
            return None  # the core reads lone surrogates as U+FFFD; the Python steps keep them
        if (isinstance(n, bool) or not isinstance(n, int) or n <= 0 or len(symbols) < 2
                or symbols[-1] != END_OF_WORD or any(len(s) != 1 or s.isspace() for s in symbols[:-1])):
            return None
        words["".join(symbols[:-1])] = n
    return words


def _learn_merges(vocab: Mapping[str, int], num_merges: int) -> Tuple[List[Pair], Optional[Dict[str, int]]]:
    """The merges of ``num_merges`` steps, and ``{word: count}`` when they were learned natively."""
    check_count(num_merges, "num_merges")
    words = _initial_words(vocab)
    if words is None or num_merges == 0:
        # A vocabulary already partly merged (or with counts the native trainer does not
        # take): the document's steps, one full count per merge.
        merges: List[Pair] = []
        for _ in range(num_merges):
            stats = get_stats(vocab)
            if not stats:
                break
            best = max(stats, key=stats.__getitem__)  # the first of the most frequent
            vocab = merge_vocab(best, vocab)
            merges.append(best)
        return merges, None
    trainer = BpeTrainer(0, max_merges=num_merges, end_of_word_symbol=END_OF_WORD, tie_break="first")
    _, learned = learn_merges(trainer, words)
    return [(a.decode("utf-8"), b.decode("utf-8")) for a, b in learned], words


def learn_bpe(vocab: Mapping[str, int], num_merges: int) -> Tuple[List[Pair], Dict[str, int]]:
    """``num_merges`` learning steps (fewer if no pair is left): ``(merges, vocabulary after them)``.

    The same as calling :func:`get_stats` and :func:`merge_vocab` once per merge, but the
    merge loop runs natively when ``vocab`` holds first splits (as :func:`build_vocab` makes
    them); a vocabulary already partly merged is learned step by step in Python.

    Example:
        >>> learn_bpe(build_vocab(["aaa aa"]), 2)
        ([('a', 'a'), ('aa', 'a')], {'aaa </w>': 1, 'aa </w>': 1})
    """
    merges, words = _learn_merges(vocab, num_merges)
    if words is None:
        for pair in merges:
            vocab = merge_vocab(pair, vocab)
        return merges, dict(vocab)
    table = MergeTable(merges)
    return merges, {" ".join(table.apply([*word, END_OF_WORD])): n for word, n in words.items()}


def bpe(vocab: Mapping[str, int], num_merges: int, verbose: bool = True) -> Mapping[str, int]:
    """Document 004's BPE run: ``num_merges`` steps; with ``verbose`` each prints
    ``Merge i: (left, right), vocab: {...}``. Returns the vocabulary after them (``vocab``
    itself if there was no merge).

    Example:
        >>> v = bpe({"l o w </w>": 1, "l o w e r </w>": 1}, 1)
        Merge 1: ('l', 'o'), vocab: {'lo w </w>': 1, 'lo w e r </w>': 1}
    """
    if not verbose:
        merges, final = learn_bpe(vocab, num_merges)
        return final if merges else vocab
    merges, _ = _learn_merges(vocab, num_merges)
    for i, pair in enumerate(merges, 1):
        vocab = merge_vocab(pair, vocab)
        print(f"Merge {i}: {pair}, vocab: {vocab}")
    return vocab


def run_bpe(words: Iterable[str], num_merges: int = 10) -> Mapping[str, int]:
    """Document 004's cell: count ``words`` into a learning vocabulary (a ``Counter``), print
    it (``Initial vocab: Counter(...)``), run :func:`bpe` and print ``Final vocab: ...``.

    Example:
        >>> v = run_bpe(["ab", "ab"], 1)
        Initial vocab: Counter({'a b </w>': 2})
        Merge 1: ('a', 'b'), vocab: {'ab </w>': 2}
        Final vocab: {'ab </w>': 2}
    """
    vocab: Counter = Counter()
    for word in words:
        if not isinstance(word, str) or not word or any(c.isspace() for c in word):
            raise InvalidInputError(f"each word must be a non-empty str without whitespace, got {word!r}")
        vocab[" ".join(word) + " " + END_OF_WORD] += 1
    print("Initial vocab:", vocab)
    final = bpe(vocab, num_merges)
    print("Final vocab:", final)
    return final


# -- the learned subwords -------------------------------------------------------------------------


def build_dict_from_vocab(vocab: Mapping[str, int]) -> Dict[str, int]:
    """Every symbol of the learned vocabulary with its count (summed over the words), in
    first-seen order.

    Example:
        >>> build_dict_from_vocab({"l o w </w>": 5, "n e w est</w>": 6})
        {'l': 5, 'o': 5, 'w': 11, '</w>': 5, 'n': 6, 'e': 6, 'est</w>': 6}
    """
    counts: Dict[str, int] = {}
    for word, n in vocab.items():
        for symbol in word.split():
            counts[symbol] = counts.get(symbol, 0) + n
    return counts


def format_top_subwords(subword_dict: Mapping[str, int], n: int = 20) -> str:
    """The ``n`` most frequent subwords (ties in first-seen order), one line each: the subword
    padded to 20 characters, a space, the count.

    Example:
        >>> print(format_top_subwords({"a": 1, "est</w>": 6}, 2))
        est</w>              6
        a                    1
    """
    check_count(n, "n")
    ranked = sorted(subword_dict.items(), key=lambda item: -item[1])[:n]
    return "\n".join(f"{subword.ljust(20)} {count}" for subword, count in ranked)


def sort_by_length(subwords: Iterable[str]) -> List[str]:
    """``subwords`` longest first (equally long ones keep their order): the order
    :func:`tokenize_word_by_substrings` tries them in.

    Example:
        >>> sort_by_length(["a", "est</w>", "low"])
        ['est</w>', 'low', 'a']
    """
    return sorted(subwords, key=len, reverse=True)


# -- encoding and decoding ------------------------------------------------------------------------


def _longest_first(text: str, subwords: Collection[str], longest: int, unk: str) -> List[str]:
    """The greedy split of ``text`` (a word with ``</w>``): at each position the longest known
    piece of at most ``longest`` characters; ``unk`` for a character no piece starts with. The
    split stops at a ``</w>`` that is not itself known and no longer piece covers."""
    tokens: List[str] = []
    pos = 0
    while pos < len(text):
        for size in range(min(longest, len(text) - pos), 0, -1):
            piece = text[pos : pos + size]
            if piece in subwords:
                tokens.append(piece)
                pos += size
                break
            if piece == END_OF_WORD:
                return tokens
        else:
            tokens.append(unk)
            pos += 1
    return tokens


def _longest_key(subwords: Collection[str]) -> int:
    longest = max((len(s) for s in subwords), default=0)
    if longest == 0:
        raise InvalidInputError("the subword dictionary is empty (it needs at least one non-empty subword)")
    return longest


def subword_tokenize(word: str, subword_dict: Collection[str], unk: str = UNK) -> List[str]:
    """The subwords of ``word``: greedy longest match over ``word + "</w>"``, pieces at most as
    long as the longest key of ``subword_dict``, one ``unk`` per character nothing covers;
    it stops when what is left is an unknown ``</w>``.

    Example:
        >>> subword_tokenize("highest", {"high": 2, "est</w>": 4})
        ['high', 'est</w>']
    """
    return _longest_first(word + END_OF_WORD, subword_dict, _longest_key(subword_dict), unk)


def tokenize(sentence: str, subword_dict: Collection[str], unk: str = UNK) -> List[str]:
    """:func:`subword_tokenize` of every whitespace-separated word of ``sentence``.

    Example:
        >>> tokenize("the highest", {"the</w>": 5, "high": 2, "est</w>": 4})
        ['the</w>', 'high', 'est</w>']
    """
    longest = _longest_key(subword_dict)
    seen: Dict[str, List[str]] = {}  # a sentence repeats words: split each once
    tokens: List[str] = []
    for word in sentence.split():
        split = seen.get(word)
        if split is None:
            split = seen[word] = _longest_first(word + END_OF_WORD, subword_dict, longest, unk)
        tokens += split
    return tokens


def tokenize_word_by_substrings(word: str, tokens: Sequence[str], unk: str = UNK) -> List[str]:
    """The encoder document 001 describes in prose: try ``tokens`` in order (longest first, see
    :func:`sort_by_length`); the first one found in ``word`` splits it at each of its
    occurrences (left to right, not overlapping), and each piece between them is split the
    same way by the tokens after it. A non-empty piece no token is found in is one ``unk``.
    ``word`` includes its ``</w>``.

    Example:
        >>> tokenize_word_by_substrings("highest</w>", ["tain</w>", "est</w>", "high"])
        ['high', 'est</w>']
    """
    order = [t for t in tokens if t]

    def split(text: str, first: int) -> List[str]:
        if not text:
            return []
        for k in range(first, len(order)):
            token = order[k]
            hit = text.find(token)
            if hit < 0:
                continue
            out: List[str] = []
            pos = 0
            while hit >= 0:
                out += split(text[pos:hit], k + 1)
                out.append(token)
                pos = hit + len(token)
                hit = text.find(token, pos)
            return out + split(text[pos:], k + 1)
        return [unk]

    return split(word, 0)


def detokenize(tokens: Iterable[str]) -> str:
    """The text of ``tokens``: joined, every ``</w>`` a space, every ``<unk>`` dropped (so a
    sentence ends with a space).

    Example:
        >>> detokenize(["high", "est</w>", "l", "<unk>", "w</w>"])
        'highest lw '
    """
    return "".join(tokens).replace(END_OF_WORD, " ").replace(UNK, "")
