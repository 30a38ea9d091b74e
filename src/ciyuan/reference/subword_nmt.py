"""``subword-nmt apply-bpe`` in plain Python: the oracle of :mod:`ciyuan.formats.subword_nmt_apply`.

A line keeps its leading and trailing spaces/newlines; in between, words are what single spaces
separate (empty words from runs of spaces are dropped). Each word is cut at its glossaries
first (a glossary is a regex; a word that is wholly a glossary is one piece). Each other piece
of one character stays as it is; a longer one becomes its characters with the end-of-word
marker (``c</w>`` glued to the last character for codes 0.2, a symbol ``</w>`` of its own for
0.1), then the merge loop runs: of the adjacent pairs that are merges, take the one of lowest
rank (leftmost among equals), merge all its occurrences left to right without overlap, repeat
until no pair is a merge. The marker is then dropped. With a vocabulary, every piece that is not
in it (a non-final piece as ``piece@@``) is split back along the merge that made it, recursively,
until its parts are in the vocabulary or are single symbols. The pieces are joined by
``"@@ "`` (the separator and a space). BPE-dropout skips each adjacent pair with probability
``dropout`` at every step (one ``rng.random()`` per pair, in order).

Cost: per word, O(n^2) for n characters (each step scans the pairs); callers cache words.

Example:
    >>> codes = [("l", "o"), ("lo", "w</w>"), ("e", "r</w>")]
    >>> apply_line("lower low\\n", codes, (0, 2))
    'lo@@ w@@ er low\\n'
"""

from __future__ import annotations

import random
import re
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

__all__ = ["apply_line", "encode_word", "isolate_glossary", "merge_loop"]

Pair = Tuple[str, str]
EOW = "</w>"


def isolate_glossary(word: str, glossary: str) -> List[str]:
    """``word`` cut around every match of the regex ``glossary``: a word that is wholly a match,
    or has none, is itself; otherwise the matches and the text between them, in order (empty
    text dropped; the text after the last match has its spaces/newlines stripped)."""
    if re.match("^" + glossary + "$", word) or not re.search(glossary, word):
        return [word]
    parts = re.split("(" + glossary + ")", word)
    pieces = [p for p in parts[:-1] if p]
    last = parts[-1]
    return pieces + [last.strip("\r\n ")] if last != "" else pieces


def merge_loop(symbols: List[str], ranks: Dict[Pair, int], dropout: float, rng: random.Random) -> List[str]:
    """The merge steps on a word's symbols (see the module docstring)."""
    while len(symbols) > 1:
        candidates = []
        for i in range(len(symbols) - 1):
            kept = not dropout or rng.random() > dropout
            pair = (symbols[i], symbols[i + 1])
            if kept and pair in ranks:
                candidates.append((ranks[pair], i, pair))
        if not candidates:
            break
        best = min(candidates)[2]
        at = [i for _, i, pair in candidates if pair == best]
        merged: List[str] = []
        i = 0
        for j in at:
            if j < i:  # overlaps the previous merge ("a a a" merges once at the left)
                continue
            merged += symbols[i:j]
            merged.append(best[0] + best[1])
            i = j + 2
        symbols = merged + symbols[i:]
    return symbols


def _split_back(piece: str, made_of: Dict[str, Pair], vocab: Set[str], sep: str, final: bool) -> Iterator[str]:
    # Undo the merge that made `piece` (for a final piece, the merge made `piece</w>`), keeping
    # each half that is in the vocabulary and splitting the others again.
    key = piece + EOW if final else piece
    if key not in made_of:
        yield piece
        return
    left, right = made_of[key]
    if final:
        right = right[: -len(EOW)]
    if left + sep in vocab:
        yield left
    else:
        yield from _split_back(left, made_of, vocab, sep, False)
    if (final and right in vocab) or (not final and right + sep in vocab):
        yield right
    else:
        yield from _split_back(right, made_of, vocab, sep, final)


def encode_word(word: str, codes: Sequence[Pair], version: Tuple[int, ...], vocab: Optional[Set[str]] = None,
                sep: str = "@@", dropout: float = 0.0, rng: Optional[random.Random] = None) -> List[str]:
    """The pieces of one glossary-free word."""
    if len(word) == 1:
        return [word]
    ranks: Dict[Pair, int] = {}
    for i, pair in enumerate(codes):
        ranks.setdefault(pair, i)
    symbols = list(word) + [EOW] if version == (0, 1) else list(word[:-1]) + [word[-1] + EOW]
    symbols = merge_loop(symbols, ranks, dropout, rng or random.Random())
    if symbols[-1] == EOW:
        symbols = symbols[:-1]
    elif symbols[-1].endswith(EOW):
        symbols[-1] = symbols[-1][: -len(EOW)]
    if not vocab:
        return symbols
    # Which pair made each token: of pairs making the same token, the one whose last listing
    # comes first in the codes (subword-nmt's reverse table, built from the last line up).
    last = {pair: i for i, pair in enumerate(codes)}
    made_of: Dict[str, Pair] = {}
    for pair in sorted(last, key=last.__getitem__, reverse=True):
        made_of[pair[0] + pair[1]] = pair
    out: List[str] = []
    for k, piece in enumerate(symbols):
        final = k == len(symbols) - 1
        if (piece if final else piece + sep) in vocab:
            out.append(piece)
        else:
            out.extend(_split_back(piece, made_of, vocab, sep, final))
    return out


def apply_line(line: str, codes: Sequence[Pair], version: Tuple[int, ...] = (0, 2), vocab: Optional[Set[str]] = None,
               glossaries: Sequence[str] = (), sep: str = "@@", dropout: float = 0.0,
               rng: Optional[random.Random] = None) -> str:
    """One line as ``subword-nmt apply-bpe`` writes it."""
    body = line.strip("\r\n ")
    lead = line[: len(line) - len(line.lstrip("\r\n "))]
    trail = line[len(line.rstrip("\r\n ")):] if body else ""
    tokens: List[str] = []
    for word in body.split(" "):
        if not word:
            continue
        segments = [word]
        for g in glossaries:
            segments = [s for seg in segments for s in isolate_glossary(seg, g)]
        pieces: List[str] = []
        for seg in segments:
            if glossaries and re.match("^(" + "|".join(glossaries) + ")$", seg):
                pieces.append(seg)
            else:
                pieces += encode_word(seg, codes, version, vocab, sep, dropout, rng)
        tokens += [p + sep for p in pieces[:-1]] + pieces[-1:]
    return lead + " ".join(tokens) + trail
