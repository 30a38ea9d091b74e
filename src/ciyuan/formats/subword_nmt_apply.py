"""Applying subword-nmt codes exactly as ``subword-nmt apply-bpe`` does (``ciyuan apply-bpe``).

:class:`SubwordNmt` takes subword-nmt's arguments under subword-nmt's names (``codes``,
``merges``, ``separator``, ``vocab``, ``glossaries``; ``dropout`` per call) and gives the same
output line for line: the same words (split at single spaces, leading and trailing spaces and
newlines kept), the same glossary cuts, the same merges (lowest rank first, every occurrence
left to right), the same re-splitting of out-of-vocabulary pieces, and with BPE-dropout the
same draws (one ``random()`` per adjacent pair and step, from a ``random.Random`` seeded as
``apply-bpe --seed`` seeds Python's). The algorithm, in a page: :mod:`ciyuan.reference.subword_nmt`.

Where the time goes: text has few distinct words, so each word is encoded once and its finished
output (``"lo@@ wer"``) cached; a line is then one ``split``, one cache lookup per word and one
``join``. The words a batch of lines has not seen yet are encoded together by ciyuan's native BPE
(:class:`~ciyuan.models.BPE` with ``end_of_word_suffix="</w>"``, or ``end_of_word_symbol`` for
codes 0.1), which merges one occurrence at a time, lowest rank first, leftmost first. That is
subword-nmt's step (every occurrence of the best pair, left to right) whenever no merge ranked
before a pair uses the token the pair makes - true of the codes ``learn-bpe`` writes, checked for
each codes file; otherwise, and for words with a character no merge knows, and with dropout or
glossaries, the Python loop runs (:func:`_merge`, a heap of pair positions on a linked list).

Example:
    >>> bpe = SubwordNmt(BpeCodes([("l", "o"), ("lo", "w</w>"), ("e", "r</w>")]))
    >>> bpe.process_line("lower low\\n")
    'lo@@ w@@ er low\\n'
"""

from __future__ import annotations

import heapq
import random
import re
from typing import Dict, Iterable, Iterator, List, Optional, Pattern, Sequence, Set, Tuple, Union

from ciyuan._io import PathLike
from ciyuan.errors import CiyuanError, InvalidInputError
from ciyuan.formats.subword_nmt import END_OF_WORD, BpeCodes, load_codes, load_vocabulary
from ciyuan.models import BPE
from ciyuan.reference.subword_nmt import isolate_glossary, merge_loop

__all__ = ["SubwordNmt"]

Pair = Tuple[str, str]
_EOW_LEN = len(END_OF_WORD)
# Python's global generator (what random.seed() seeds, as apply-bpe --seed does).
_GLOBAL_RANDOM: random.Random = random._inst


class SubwordNmt:
    """subword-nmt's ``apply_bpe.BPE``: codes, the vocabulary filter and glossaries.

    Args:
        codes: a :class:`~ciyuan.formats.subword_nmt.BpeCodes` or the path of a codes file.
        merges: use only the first ``merges`` merges (-1: all).
        separator: what marks a piece that does not end its word (``"@@"``).
        vocab: the vocabulary (a set of words, or the path of a ``get-vocab`` file, read with
            ``vocabulary_threshold``): pieces outside it are split back into known parts.
        glossaries: regexes (or plain words) that are never split nor merged with their
            neighbours.
        vocabulary_threshold: for a vocabulary path, the least count of a word in it.

    Example:
        >>> bpe = SubwordNmt(BpeCodes([("a", "b"), ("ab", "c</w>")]), glossaries=["USA"])
        >>> bpe.segment("abcUSAabc")
        'abc@@ USA@@ abc'
    """

    def __init__(self, codes: Union[BpeCodes, PathLike], merges: int = -1, separator: str = "@@",
                 vocab: Union[None, Set[str], PathLike] = None, glossaries: Optional[Sequence[str]] = None,
                 vocabulary_threshold: Optional[int] = None) -> None:
        if isinstance(merges, bool) or not isinstance(merges, int) or merges < -1:
            raise InvalidInputError(f"merges must be -1 (all) or a count >= 0, got {merges!r}")
        if not isinstance(codes, BpeCodes):
            codes = load_codes(codes, merges)
        elif merges != -1:
            codes = BpeCodes(codes.merges[:merges], codes.version)
        if not isinstance(vocab, (set, frozenset)) and vocab is not None:
            vocab = load_vocabulary(vocab, vocabulary_threshold)
        self.codes = codes
        self.version = tuple(codes.version)
        self.separator = separator
        self.vocab: Optional[Set[str]] = set(vocab) if vocab else None
        self.glossaries: List[str] = list(glossaries or [])
        for g in self.glossaries:
            try:
                re.compile(g)
            except re.error as e:
                raise InvalidInputError(f"glossary {g!r} is not a valid regular expression: {e}") from None
        self._glossary_regex: Optional[Pattern[str]] = (
            re.compile("^(" + "|".join(self.glossaries) + ")$") if self.glossaries else None)
        self._ranks: Dict[Pair, int] = codes.ranks()
        # Which pair made each token (subword-nmt's reverse table: of pairs making the same
        # token, the one whose last listing comes first).
        last = {pair: i for i, pair in enumerate(codes.merges)}
        self._made_of: Dict[str, Pair] = {}
        for pair in sorted(last, key=last.__getitem__, reverse=True):
            self._made_of[pair[0] + pair[1]] = pair
        self._joiner = separator + " "
        # word -> its output ("lo@@ wer"); words never change their output without dropout.
        self._cache: Dict[str, str] = {}
        self._splits: Dict[Tuple[str, bool], Tuple[str, ...]] = {}  # (piece, final) -> its known parts
        self._native: Optional[_NativeCodes] = None if self.glossaries else _NativeCodes.build(codes)

    # -- lines -------------------------------------------------------------------------------

    def process_line(self, line: str, dropout: float = 0.0, rng: Optional[random.Random] = None) -> str:
        """One line as ``apply-bpe`` writes it: leading and trailing spaces/newlines kept.

        Args:
            dropout: BPE-dropout probability (each merge skipped with it, at every step).
            rng: the random numbers of dropout (``random.Random(seed)``); Python's global
                generator when None, as subword-nmt uses.
        """
        body = line.strip("\r\n ")
        if not body:
            return line
        lead = len(line) - len(line.lstrip("\r\n "))
        trail = len(line) - len(line.rstrip("\r\n "))
        out = self.segment(body, dropout, rng)
        return line[:lead] + out + (line[len(line) - trail:] if trail else "")

    def segment(self, sentence: str, dropout: float = 0.0, rng: Optional[random.Random] = None) -> str:
        """A whitespace-tokenized sentence (words split at single spaces) with its words cut."""
        words = sentence.strip("\r\n ").split(" ")
        if dropout:
            return " ".join(self._word_output(w, dropout, rng) for w in words if w)
        cache = self._cache
        # The hot loop: one dict lookup per word.
        return " ".join([cache[w] if w in cache else self._word_output(w) for w in words if w])

    def segment_tokens(self, tokens: Iterable[str], dropout: float = 0.0,
                       rng: Optional[random.Random] = None) -> List[str]:
        """The pieces of ``tokens`` (each non-final piece of a word ends with the separator)."""
        out: List[str] = []
        for word in tokens:
            if word:
                out += self._word_output(word, dropout, rng).split(" ")
        return out

    def process_lines(self, lines: Iterable[str], dropout: float = 0.0,
                      rng: Optional[random.Random] = None) -> Iterator[str]:
        """Each line of ``lines`` processed (lines keep their newlines); the new words of each
        batch of lines are encoded natively in one call first."""
        if dropout:
            for line in lines:
                yield self.process_line(line, dropout, rng)
            return
        batch: List[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) == _BATCH_LINES:
                yield from self._process_batch(batch)
                batch = []
        yield from self._process_batch(batch)

    def _process_batch(self, lines: List[str]) -> List[str]:
        # process_line for each line: each line split once, the batch's new words encoded first
        # (natively where possible), then every word of every line is a cache hit, looked up
        # and joined by C code (map / filter / join: no Python bytecode per word).
        cache = self._cache
        bodies = [line.strip("\r\n ") for line in lines]
        words = [body.split(" ") for body in bodies]
        # set.difference(dict) walks the (small) set and probes the dict: O(batch), not O(cache).
        new = set().union(*words).difference(cache)
        new.discard("")
        if new:
            if self._native is not None:
                for word, pieces in self._native.encode(new):
                    cache[word] = self._joiner.join(self._check_vocab(pieces) if self.vocab else pieces)
            for word in new:
                if word not in cache:
                    self._word_output(word)
        hit, join = cache.__getitem__, " ".join
        out = []
        for line, body, ws in zip(lines, bodies, words):
            if not body:
                out.append(line)
                continue
            text = join(map(hit, filter(None, ws)))
            if len(body) == len(line):
                out.append(text)
            elif line.startswith(body):  # the usual case: only a line end after the words
                out.append(text + line[len(body):])
            else:
                lead = line.index(body[0])
                out.append(line[:lead] + text + line[lead + len(body):])
        return out

    # -- words -------------------------------------------------------------------------------

    def _word_output(self, word: str, dropout: float = 0.0, rng: Optional[random.Random] = None) -> str:
        pieces: List[str] = []
        segments = [word]
        for g in self.glossaries:
            segments = [s for seg in segments for s in isolate_glossary(seg, g)]
        for seg in segments:
            if not seg:
                # A glossary match followed inside the word by spaces or newlines only (the text
                # after the last match is stripped): subword-nmt's apply-bpe fails here with an
                # IndexError, so there is no output to match (found by fuzz/py/fuzz_subword_nmt.py).
                raise InvalidInputError(f"the word {word!r} leaves an empty piece once the glossaries are isolated; "
                                        "subword-nmt's apply-bpe cannot segment it either")
            if self._glossary_regex is not None and self._glossary_regex.match(seg):
                pieces.append(seg)
            else:
                pieces += self._encode(seg, dropout, rng)
        text = self._joiner.join(pieces)
        if not dropout:
            self._cache[word] = text
        return text

    def encode_word(self, word: str) -> List[str]:
        """The pieces of one word without glossaries (no separators)."""
        return self._encode(word)

    def _encode(self, word: str, dropout: float = 0.0, rng: Optional[random.Random] = None) -> List[str]:
        if len(word) == 1:
            return [word]
        if self.version == (0, 1):
            symbols = list(word) + [END_OF_WORD]
        else:
            symbols = list(word[:-1]) + [word[-1] + END_OF_WORD]
        if dropout:
            # Dropout draws one number per adjacent pair and step: the plain loop, in order.
            symbols = merge_loop(symbols, self._ranks, dropout, rng or _GLOBAL_RANDOM)
        else:
            symbols = _merge(symbols, self._ranks)
        if symbols[-1] == END_OF_WORD:
            symbols.pop()
        elif symbols[-1].endswith(END_OF_WORD):
            symbols[-1] = symbols[-1][:-_EOW_LEN]
        if self.vocab:
            return self._check_vocab(symbols)
        return symbols

    def _check_vocab(self, symbols: List[str]) -> List[str]:
        vocab, sep = self.vocab or set(), self.separator
        out: List[str] = []
        last = len(symbols) - 1
        for k, piece in enumerate(symbols):
            final = k == last
            if (piece if final else piece + sep) in vocab:
                out.append(piece)
            else:
                # The same pieces come back in many words: their splits are cached.
                parts = self._splits.get((piece, final))
                if parts is None:
                    found: List[str] = []
                    self._split_back(piece, final, found)
                    parts = self._splits[(piece, final)] = tuple(found)
                out.extend(parts)
        return out

    def _split_back(self, piece: str, final: bool, out: List[str]) -> None:
        vocab, sep = self.vocab or set(), self.separator
        pair = self._made_of.get(piece + END_OF_WORD if final else piece)
        if pair is None:
            out.append(piece)
            return
        left, right = pair
        if final:
            right = right[:-_EOW_LEN]
        if left + sep in vocab:
            out.append(left)
        else:
            self._split_back(left, False, out)
        if (right in vocab) if final else (right + sep in vocab):
            out.append(right)
        else:
            self._split_back(right, final, out)


_BATCH_LINES = 4096


class _NativeCodes:
    """The codes as ciyuan's native BPE (see the module docstring for when that is exact)."""

    def __init__(self, model: BPE, version: Tuple[int, ...]) -> None:
        self._encoder = model.make_encoder()
        self._tokens = [model.id_to_token(i) for i in range(model.id_limit)]
        # The characters a word may hold: those that start as symbols of their own (inside a
        # word), and those that end a word (their "c</w>" is a symbol; codes 0.1: any inner one).
        singles = {t for t in self._tokens if len(t) == 1}
        self._inner = frozenset(singles)
        if version == (0, 1):
            self._final = self._inner if END_OF_WORD in set(self._tokens) else frozenset()
        else:
            self._final = frozenset(t[0] for t in self._tokens if len(t) == 1 + _EOW_LEN and t.endswith(END_OF_WORD))

    @classmethod
    def build(cls, codes: BpeCodes) -> Optional["_NativeCodes"]:
        """The native codes, or None when the native merge order could differ from subword-nmt's."""
        ranks = codes.ranks()
        merges = sorted(ranks, key=ranks.__getitem__)
        first_use: Dict[str, int] = {}
        for r, (a, b) in enumerate(merges):
            first_use.setdefault(a, r)
            first_use.setdefault(b, r)
        for r, (a, b) in enumerate(merges):
            if first_use.get(a + b, r) < r:  # a pair ranked before (a, b) uses what (a, b) makes
                return None
        symbols = {s for a, b in merges for s in (a, b, a + b)}
        version = tuple(codes.version)
        if version == (0, 1):
            symbols.add(END_OF_WORD)
        vocab = {t: i for i, t in enumerate(sorted(symbols))}
        try:
            model = (BPE(vocab, merges, end_of_word_symbol=END_OF_WORD) if version == (0, 1)
                     else BPE(vocab, merges, end_of_word_suffix=END_OF_WORD))
        except CiyuanError:
            return None
        return cls(model, version)

    def encode(self, words: Iterable[str]) -> List[Tuple[str, List[str]]]:
        """``(word, pieces)`` for each word whose characters the native model knows (the others
        are left to the Python loop), ``</w>`` dropped as subword-nmt drops it."""
        inner, final = self._inner, self._final
        known = [w for w in words if len(w) > 1 and w[-1] in final and inner.issuperset(w[:-1])]
        if not known:
            return []
        tokens = self._tokens
        out = []
        for word, ids in zip(known, self._encoder.encode_batch_ids(known, b"", 0)):
            pieces = [tokens[i] for i in ids]
            last = pieces[-1]
            if last == END_OF_WORD:
                pieces.pop()
            elif last.endswith(END_OF_WORD):
                pieces[-1] = last[:-_EOW_LEN]
            out.append((word, pieces))
        return out


def _merge(symbols: List[str], ranks: Dict[Pair, int]) -> List[str]:
    """The merge loop on a doubly linked list: a heap of (rank, position) of the pairs that are
    merges; the lowest pair is merged at every occurrence left to right (subword-nmt's step),
    and only the pairs next to a merge are looked up again."""
    n = len(symbols)
    if n < 2:
        return symbols
    sym = list(symbols)  # "" marks a symbol merged into its left neighbour (symbols are never empty)
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    heap: List[Tuple[int, int, str, str]] = []
    for i in range(n - 1):
        r = ranks.get((symbols[i], symbols[i + 1]))
        if r is not None:
            heap.append((r, i, symbols[i], symbols[i + 1]))
    heapq.heapify(heap)
    while heap:
        rank, _, a, b = heap[0]
        # Every live occurrence of (a, b) at this rank, in position order (the heap gives the
        # lowest rank first and, within it, the lowest position first).
        positions = []
        while heap and heap[0][0] == rank:
            _, i, x, y = heapq.heappop(heap)
            j = nxt[i]
            if sym[i] == x and j < n and sym[j] == y:
                positions.append(i)
        merged = a + b
        edge = -1
        touched = []
        for i in positions:
            if i <= edge or sym[i] != a:  # overlaps the previous merge
                continue
            j = nxt[i]
            if j >= n or sym[j] != b:
                continue
            sym[i] = merged
            sym[j] = ""
            k = nxt[j]
            nxt[i] = k
            if k < n:
                prv[k] = i
            edge = j
            touched.append(i)
        for i in touched:
            if sym[i] != merged:
                continue
            p = prv[i]
            if p >= 0:
                r = ranks.get((sym[p], merged))
                if r is not None:
                    heapq.heappush(heap, (r, p, sym[p], merged))
            k = nxt[i]
            if k < n:
                r = ranks.get((merged, sym[k]))
                if r is not None:
                    heapq.heappush(heap, (r, i, merged, sym[k]))
    out: List[str] = []
    i = 0
    while i < n:
        out.append(sym[i])
        i = nxt[i]
    return out
