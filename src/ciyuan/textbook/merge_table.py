"""BPE with a merge table, and byte-level BPE (document 003; document 004's BBPE).

Training (document 003): cut every document into words at whitespace and count them; split
each word into its characters followed by the end-of-word symbol (``highest -> h, i, g, h, e,
s, t, </w>``); the alphabet, ``</w>`` included, is the first vocabulary. Then, until the
vocabulary reaches its limit or the iterations run out (or no pair is left): take the most
frequent adjacent pair (among equals the one seen first), write it in the merge table, add the
merged symbol to the vocabulary and merge the pair in every word. Pairs never cross words.
The loop runs on ciyuan's native merge loop (``BpeTrainer(tie_break="first",
end_of_word_symbol="</w>")``), which gives the merges of a full recount per step.

Applying: split a text the same way, then go through the merge table in order and apply each
rule to each word's split. :class:`MergeTable` does exactly that without visiting every rule:
it jumps to the next rule (in table order) whose pair is in the word. It is not rank-based
BPE (repeatedly merge the lowest-ranked pair present): the two differ when two rules make the
same symbol, since an early rule can then apply again after a later one.

BBPE (byte-level BPE): the same over the UTF-8 bytes of each word instead of its characters
(text -> UTF-8 bytes -> BPE merges -> subword ids). The alphabet is all 256 bytes, so every
text can be encoded; there is no unknown symbol.

Example:
    >>> bpe = MergeTableBPE(max_iterations=1).train(["hi hi highest"])
    >>> bpe.merge_table.merges
    [('h', 'i')]
    >>> format_word_split("highest", bpe.apply("highest"))
    'highest -> hi, g, h, e, s, t, </w>'
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, Dict, Generic, Iterable, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from ciyuan.errors import InvalidInputError, UnknownIdError, check_count
from ciyuan.trainers import BpeTrainer

__all__ = ["BBPE", "END_OF_WORD", "MergeTable", "MergeTableBPE", "format_word_split", "learn_merges", "merge_pair",
           "split_word", "word_counts"]

#: The end-of-word symbol, the last symbol of every word's split.
END_OF_WORD = "</w>"

S = TypeVar("S", str, bytes)
Symbol = Union[str, bytes]

_CACHE_LIMIT = 1 << 20  # words remembered by MergeTableBPE.apply before the cache is cleared


def split_word(word: str, end_of_word: str = END_OF_WORD) -> List[str]:
    """A word's first split: its characters, then ``end_of_word`` (none if it is empty).

    Example:
        >>> split_word("low")
        ['l', 'o', 'w', '</w>']
        >>> split_word("low", end_of_word="")
        ['l', 'o', 'w']
    """
    return [*word, end_of_word] if end_of_word else list(word)


def format_word_split(word: str, symbols: Sequence[Symbol]) -> str:
    """``"word -> s1, s2, ..."``, as document 003 writes a split (bytes shown as text).

    Example:
        >>> format_word_split("highest", split_word("highest"))
        'highest -> h, i, g, h, e, s, t, </w>'
    """
    shown = [s.decode("utf-8", "backslashreplace") if isinstance(s, bytes) else s for s in symbols]
    return f"{word} -> {', '.join(shown)}"


def word_counts(documents: Union[str, Iterable[str]]) -> Dict[str, int]:
    """The words of ``documents`` (each cut at whitespace) with their counts, in first-seen order.

    Example:
        >>> word_counts(["low low", "lower"])
        {'low': 2, 'lower': 1}
    """
    if isinstance(documents, str):
        documents = [documents]
    counts: Dict[str, int] = {}
    for doc in documents:
        if not isinstance(doc, str):
            raise InvalidInputError(f"documents must be str, got {type(doc).__name__}")
        for word in doc.split():
            counts[word] = counts.get(word, 0) + 1
    return counts


def learn_merges(trainer: BpeTrainer, source: Mapping[str, int]) -> Tuple[List[bytes], List[Tuple[bytes, bytes]]]:
    """The tokens (bytes, in id order) and merges (pairs of token bytes, in order) the native
    ``trainer`` learns from ``{word: count}`` - no model built."""
    result = trainer.learn(trainer.count_words(source), consume=True)
    tokens = result.tokens
    return tokens, [(tokens[a], tokens[b]) for a, b in result.merges]


def merge_pair(split: List[S], left: S, right: S) -> List[S]:
    """``split`` with every ``left right`` made one symbol, left to right (``a a a`` -> ``aa a``).

    Example:
        >>> merge_pair(["a", "a", "a", "</w>"], "a", "a")
        ['aa', 'a', '</w>']
    """
    out: List[S] = []
    i = 0
    while i < len(split):
        if i + 1 < len(split) and split[i] == left and split[i + 1] == right:
            out.append(left + right)
            i += 2
        else:
            out.append(split[i])
            i += 1
    return out


class MergeTable(Generic[S]):
    """A merge table: rules ``(left, right)`` applied to a split in table order.

    :meth:`apply` gives what applying every rule in turn gives (each rule merging its pair
    everywhere in the split, left to right), but only visits the rules whose pair occurs.

    Example:
        >>> MergeTable([("e", "s"), ("es", "t")]).apply(["t", "e", "s", "t", "</w>"])
        ['t', 'est', '</w>']
    """

    def __init__(self, merges: Iterable[Tuple[S, S]]) -> None:
        self.merges: List[Tuple[S, S]] = []
        self._rules: Dict[Tuple[S, S], List[int]] = {}  # pair -> its rule numbers, ascending
        for rule, pair in enumerate(merges):
            try:
                left, right = pair
            except (TypeError, ValueError):
                raise InvalidInputError(f"merge {rule + 1} must be a pair of symbols, got {pair!r}") from None
            if not left or not right:
                raise InvalidInputError(f"merge {rule + 1} has an empty symbol: {pair!r}")
            self.merges.append((left, right))
            self._rules.setdefault((left, right), []).append(rule)

    def __len__(self) -> int:
        return len(self.merges)

    def apply(self, symbols: Iterable[S]) -> List[S]:
        """The split after every rule, in table order.

        A rule never recreates its own pair (the merged symbol is longer than either half), so
        after rule ``r`` only rules after ``r`` can change the split: the next one to apply is
        the first rule after ``r`` whose pair is in the split.
        """
        split = list(symbols)
        after = 0  # the rules before this one are done
        while len(split) > 1:
            rule = -1
            for pair in zip(split, split[1:]):
                numbers = self._rules.get(pair)
                if numbers is None:
                    continue
                k = bisect_left(numbers, after)
                if k < len(numbers) and (rule < 0 or numbers[k] < rule):
                    rule = numbers[k]
            if rule < 0:
                break
            split = merge_pair(split, *self.merges[rule])
            after = rule + 1
        return split


class MergeTableBPE:
    """Document 003's BPE: ``train`` a merge table and vocabulary, ``tokenize`` / ``encode`` /
    ``decode`` with them.

    Args:
        vocab_size: stop when the vocabulary (alphabet, ``</w>``, merged symbols and the
            unknown token if any) has this many symbols; a limit at or below the alphabet's
            size means no merges. None: no limit.
        max_iterations: stop after this many merges. None: no limit. At least one of the two
            limits is needed.
        unk_token: the token for characters outside the alphabet (given the first id); None
            makes them an error of :meth:`encode`.

    Attributes (after :meth:`train`): ``merge_table`` (a :class:`MergeTable`), ``vocab``
    (symbol -> id: the alphabet in code point order, ``</w>``, then the merged symbols in the
    order they were made) and ``merge_counts`` (each merge's pair count when it was chosen).

    Example:
        >>> bpe = MergeTableBPE(vocab_size=14).train("low lower newest widest newest")
        >>> bpe.merge_table.merges
        [('w', 'e'), ('s', 't'), ('st', '</w>')]
        >>> bpe.tokenize("newest lowest")
        ['n', 'e', 'we', 'st</w>', 'l', 'o', 'we', 'st</w>']
        >>> bpe.decode(bpe.encode("newest lowest"))
        'newest lowest'
    """

    byte_level = False

    def __init__(self, vocab_size: Optional[int] = None, max_iterations: Optional[int] = None, *,
                 unk_token: Optional[str] = None) -> None:
        check_count(vocab_size, "vocab_size", least=1, allow_none=True)
        check_count(max_iterations, "max_iterations", allow_none=True)
        if vocab_size is None and max_iterations is None:
            raise InvalidInputError("give vocab_size or max_iterations (or both): training stops at either")
        if unk_token is not None and (not isinstance(unk_token, str) or not unk_token):
            raise InvalidInputError(f"unk_token must be a non-empty str or None, not {unk_token!r}")
        self.vocab_size = vocab_size
        self.max_iterations = max_iterations
        self.unk_token = unk_token
        self.merge_table: MergeTable[Any] = MergeTable([])
        self.vocab: Dict[Any, int] = {}
        self.merge_counts: List[int] = []
        self._tokens: List[Any] = []
        self._cache: Dict[str, List[Any]] = {}

    # -- symbols ----------------------------------------------------------------------------------

    @property
    def end_of_word(self) -> Symbol:
        """The end-of-word symbol (``b"</w>"`` for byte-level BPE)."""
        return END_OF_WORD

    def split(self, word: str) -> List[Any]:
        """A word's first split: its characters (its UTF-8 bytes for BBPE), then ``</w>``."""
        return split_word(word)

    def _alphabet_size(self, counts: Mapping[str, int]) -> int:
        return len({c for w in counts for c in w}) + 1 + (self.unk_token is not None)

    def _symbol(self, token: bytes) -> Any:
        return token.decode("utf-8")

    # -- training ---------------------------------------------------------------------------------

    def train(self, documents: Union[str, Iterable[str]]) -> "MergeTableBPE":
        """Learn the merge table and vocabulary from ``documents`` (a text or texts)."""
        counts = word_counts(documents)
        if not counts:
            raise InvalidInputError("the documents have no words to train on")
        vocab_size, max_merges = self.vocab_size or 0, self.max_iterations
        if vocab_size and vocab_size < self._alphabet_size(counts):
            vocab_size, max_merges = 0, 0  # the vocabulary is already at its limit
        trainer = BpeTrainer(vocab_size, max_merges=max_merges, byte_level=self.byte_level,
                             end_of_word_symbol=END_OF_WORD, tie_break="first",
                             special_tokens=[self.unk_token] if self.unk_token is not None else [])
        tokens, merges = learn_merges(trainer, counts)
        specials = 1 if self.unk_token is not None else 0
        self._tokens = [t.decode("utf-8") for t in tokens[:specials]] + [self._symbol(t) for t in tokens[specials:]]
        self.vocab = {t: i for i, t in enumerate(self._tokens)}
        self.merge_table = MergeTable([(self._symbol(a), self._symbol(b)) for a, b in merges])
        self.merge_counts = list(trainer.report.merge_counts) if trainer.report is not None else []
        self._cache = {}
        return self

    # -- applying ---------------------------------------------------------------------------------

    def apply(self, word: str) -> List[Any]:
        """A word's split after the merge table (remembered per word)."""
        split = self._cache.get(word)
        if split is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            split = self._cache[word] = self.merge_table.apply(self.split(word))
        return list(split)

    def tokenize(self, text: str) -> List[Any]:
        """The symbols of ``text``: each whitespace-separated word split and merged."""
        return [s for word in text.split() for s in self.apply(word)]

    def encode(self, text: str) -> List[int]:
        """The vocabulary ids of :meth:`tokenize`'s symbols."""
        if not self.vocab:
            raise InvalidInputError("call train() first")
        unk = self.vocab.get(self.unk_token) if self.unk_token is not None else None
        ids = []
        for symbol in self.tokenize(text):
            i = self.vocab.get(symbol, unk)
            if i is None:
                raise InvalidInputError(f"{symbol!r} is not in the vocabulary (give unk_token to encode it as unknown)")
            ids.append(i)
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``: the symbols joined, each ``</w>`` ending a word; words are
        separated by one space (the unknown token is kept as it is)."""
        pieces = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self._tokens):
                raise UnknownIdError(f"id {i!r} is not in the vocabulary (0..{len(self._tokens) - 1})")
            pieces.append(self._tokens[i])
        return self._join(pieces)

    def _join(self, pieces: List[Any]) -> str:
        text: str = "".join(pieces).replace(END_OF_WORD, " ")
        return text[:-1] if text.endswith(" ") else text

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(vocab_size={self.vocab_size}, max_iterations={self.max_iterations}, "
                f"{len(self.merge_table)} merges learned)")


class BBPE(MergeTableBPE):
    """Byte-level BPE (documents 003 and 004): :class:`MergeTableBPE` over each word's UTF-8
    bytes. Symbols are ``bytes``; the alphabet is all 256 bytes and ``b"</w>"``, so every text
    encodes.

    Example:
        >>> bbpe = BBPE(max_iterations=2).train("你好 你好 你")
        >>> bbpe.tokenize("你好")
        [b'\\xe4\\xbd\\xa0', b'\\xe5', b'\\xa5', b'\\xbd', b'</w>']
        >>> bbpe.decode(bbpe.encode("你好 🙂"))
        '你好 🙂'
    """

    byte_level = True

    def __init__(self, vocab_size: Optional[int] = None, max_iterations: Optional[int] = None) -> None:
        super().__init__(vocab_size, max_iterations)

    @property
    def end_of_word(self) -> Symbol:
        return END_OF_WORD.encode("ascii")

    def split(self, word: str) -> List[Any]:
        """A word's first split: its UTF-8 bytes, one symbol each, then ``b"</w>"``."""
        data = word.encode("utf-8", "surrogatepass")
        return [data[i : i + 1] for i in range(len(data))] + [self.end_of_word]

    def _alphabet_size(self, counts: Mapping[str, int]) -> int:
        return 256 + 1

    def _symbol(self, token: bytes) -> Any:
        return token

    def _join(self, pieces: List[Any]) -> str:
        data = b"".join(pieces).replace(END_OF_WORD.encode("ascii"), b" ")
        return (data[:-1] if data.endswith(b" ") else data).decode("utf-8", "replace")
