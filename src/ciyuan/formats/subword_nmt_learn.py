"""Learning subword-nmt codes with ciyuan's BPE trainer (``ciyuan learn-bpe``).

``subword-nmt learn-bpe`` counts the words of each line (split at single spaces), spells each
word as its characters with ``</w>`` glued to the last one, and repeatedly merges the most
frequent adjacent pair, the greatest pair (as text) among equally frequent ones, until it has
made the asked number of merges or the best pair is seen fewer than ``min_frequency`` times.
ciyuan's :class:`~ciyuan.trainers.BpeTrainer` runs that loop natively with
``end_of_word_suffix="</w>"`` and ``tie_break="subword-nmt"``; words are cut at spaces and line
ends (the runs of characters between ``[ \\r\\n]+``, what ``line.strip().split(" ")`` keeps for
lines ending in ``\\n``).

Example:
    >>> learn_codes(["low lower lowest", "low low"], 2).merges
    [('l', 'o'), ('lo', 'w</w>')]
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Set, Union

from ciyuan.errors import InvalidInputError, check_count
from ciyuan.formats.subword_nmt import END_OF_WORD, BpeCodes
from ciyuan.pre_tokenizers import Split
from ciyuan.trainers import BpeTrainer

__all__ = ["learn_codes", "WORD_SEPARATORS"]

#: What separates subword-nmt's words: spaces and line ends (removed; the words are the rest).
WORD_SEPARATORS = r"[ \r\n]+"


def _alphabet_size(words: Iterable[str]) -> int:
    # learn-bpe --total-symbols: the characters inside words and the word-final characters are
    # separate symbols ("e" and "e</w>"); both count against the total.
    inner: Set[str] = set()
    final: Set[str] = set()
    for word in words:
        inner.update(word[:-1])
        final.add(word[-1])
    return len(inner) + len(final)


def learn_codes(source: Union[Iterable[str], Dict[str, int]], symbols: int, min_frequency: int = 2,
                total_symbols: bool = False) -> BpeCodes:
    """The codes ``subword-nmt learn-bpe -s symbols`` writes for the same text (version 0.2).

    Args:
        source: texts (lines), or ``{word: count}`` (``learn-bpe --dict-input``).
        symbols: how many merges to make (at most).
        min_frequency: stop when the best pair is seen fewer times.
        total_symbols: ``symbols`` counts the characters too (``--total-symbols``).
    """
    check_count(symbols, "symbols")
    check_count(min_frequency, "min_frequency", least=1)
    words: List[str] = []
    if isinstance(source, dict):
        counts: Union[List[str], Dict[str, int]] = dict(source)
        for word in counts:
            if not word or any(c in word for c in " \r\n"):
                raise InvalidInputError(f"word {word!r}: words are non-empty and hold no spaces or line ends")
        words = list(counts)
    else:
        texts = list(source)
        counts = texts
        if total_symbols:
            words = [w for t in texts for w in t.replace("\r", "\n").replace("\n", " ").split(" ") if w]
    if total_symbols:
        symbols = max(0, symbols - _alphabet_size(words))
    if symbols == 0:
        return BpeCodes([], (0, 2))
    trainer = BpeTrainer(0, max_merges=symbols, min_frequency=min_frequency, end_of_word_suffix=END_OF_WORD,
                         tie_break="subword-nmt")
    model = trainer.train(counts, None if isinstance(counts, dict) else Split(WORD_SEPARATORS, behavior="Removed"))
    return BpeCodes(model.merges, (0, 2))
