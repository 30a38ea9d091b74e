"""Founding document 000: the ``BPETokenizer`` class - ``fit`` a vocabulary, then ``tokenize``,
``encode`` and ``decode`` - giving the document's ``vocab.txt`` and tokens.

``fit`` counts the words of the (lowercased) sentences, each word its characters plus a
separate ``</w>``, and merges the most frequent adjacent pair step by step. The document's
choices, kept exactly:

- the pair merged is the first of the most frequent ones in the order its counter was filled:
  the words in dict order, where a word a merge changed has moved to the end;
- the vocabulary is the set of symbols the words still use after the merges (it can shrink:
  document 001's +1/0/-1 rule), most used first, ties in the order they are first met;
- training stops once that vocabulary has ``vocab_size`` symbols (checked after each step, so
  one step is always made), when no pair is left, or after ``max_steps`` steps;
- ``<UNK> <PAD> <END> <MASK>`` are inserted at the front one after another, so the file starts
  ``<MASK> <END> <PAD> <UNK>``, and a token's id is its line number.

``tokenize`` cuts each word (its characters, then ``</w>``) greedily from the left into the
longest runs that are in the vocabulary; a unit that is in no run is ``<UNK>``.

Both loops run on ciyuan's native core (the merge loop of ``ciyuan.trainers.BpeTrainer`` with
``tie_break="first-moved"`` and ``live_vocab=True``; the longest-match encoder of
``ciyuan.models.BPE``). ``ciyuan.reference.textbook_bpe`` is the same algorithm in plain
Python; docs/seeds.md lists where the document's code is not followed (its substring merge
can join symbols across a boundary; its ``encode`` indexes a method).

Example:
    >>> from ciyuan.textbook import BPETokenizer
    >>> bpe = BPETokenizer(vocab_size=1000)
    >>> corpus = ["low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3]
    >>> bpe.fit(corpus, max_steps=3, out_fn=None)[:7]
    [('<MASK>', 99999), ('<END>', 99999), ('<PAD>', 99999), ('<UNK>', 99999), ('w', 16), ('est</w>', 9), ('e', 8)]
    >>> bpe.merges
    [('e', 's'), ('es', 't'), ('est', '</w>')]
    >>> bpe.tokenize("lowest")
    ['l', 'o', 'w', 'est</w>']
    >>> bpe.decode(bpe.encode("newest low"))
    'newest low '
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ciyuan._io import PathLike, atomic_write_text
from ciyuan.errors import InvalidInputError, UnknownIdError, check_count
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import WordPunct
from ciyuan.tokenizer import Tokenizer
from ciyuan.trainers import BpeTrainer
from ciyuan.trainers.corpus import count_words

__all__ = ["BPETokenizer", "wordpunct_tokenize"]

_WORDPUNCT = re.compile(r"\w+|[^\w\s]+")
# ASCII characters Python's \s matches but the native scanner's whitespace does not.
_ODD_ASCII_SPACE = re.compile("[\x1c-\x1f]")


def wordpunct_tokenize(text: str) -> List[str]:
    """Runs of word characters and runs of other non-space characters (the document's basic
    tokenizer, with Python's ``re``).

    Example:
        >>> wordpunct_tokenize("Hello, world!!")
        ['Hello', ',', 'world', '!!']
    """
    return _WORDPUNCT.findall(text)


class BPETokenizer:
    """Document 000's BPE tokenizer.

    Args:
        vocab_size: stop training once the words use this many symbols (special tokens not
            counted).
        lowercase: lowercase the sentences (and the text to tokenize).
        basic_tokenizer: text -> words (default :func:`wordpunct_tokenize`).

    Attributes:
        special: the special tokens, inserted one after another at the front of the vocabulary
            (so in reverse order); ``special[0]`` is the unknown token.
        vocab: the vocabulary after :meth:`fit`: tokens in id order.
        merges: the pairs merged, in order.
    """

    special = ["<UNK>", "<PAD>", "<END>", "<MASK>"]

    def __init__(self, vocab_size: int = 1000, lowercase: bool = True,
                 basic_tokenizer: Callable[[str], Iterable[str]] = wordpunct_tokenize) -> None:
        check_count(vocab_size, "vocab_size")
        if not callable(basic_tokenizer):
            raise InvalidInputError(f"basic_tokenizer must be a function text -> words, not {basic_tokenizer!r}")
        self.vocab_size = vocab_size
        self.lowercase = bool(lowercase)
        self.basic_tokenizer = basic_tokenizer
        self.vocab: List[str] = []
        self.merges: List[Tuple[str, str]] = []
        self._ids: Dict[str, int] = {}  # token -> its first line
        self._encoders: Dict[Tuple[str, bool], Tokenizer] = {}  # the native longest-match encoders

    # -- training -------------------------------------------------------------------------------

    def fit(self, corpus: Union[str, Iterable[str], Mapping[str, int]], max_steps: int = 10000,
            out_fn: Optional[PathLike] = "vocab.txt") -> List[Tuple[str, int]]:
        """Learn the vocabulary from ``corpus`` and write it to ``out_fn``, one token per line.

        Args:
            corpus: sentences (a list, or one string), or ``{word: count}``.
            max_steps: the most merge steps.
            out_fn: where the vocabulary goes (lines joined by ``"\\n"``, no final newline, as
                the document writes it); None writes no file.

        Returns:
            The vocabulary as ``(token, count)`` in file order (the special tokens with 99999).
        """
        check_count(max_steps, "max_steps")
        counts = count_words(self._word_counts(corpus))
        trainer = BpeTrainer(self.vocab_size, max_merges=max_steps, end_of_word_symbol="</w>",
                             tie_break="first-moved", live_vocab=True)
        result = trainer.learn(counts, consume=True)
        tokens = [t.decode("utf-8") for t in result.tokens]
        vocab = [(tokens[i], n) for i, n in result.live_vocab]
        for s in self.special:
            vocab.insert(0, (s, 99999))
        self.vocab = [t for t, _ in vocab]
        self.merges = [(tokens[a], tokens[b]) for a, b in result.merges]
        self._ids = {}
        for i, t in enumerate(self.vocab):
            self._ids.setdefault(t, i)
        self._encoders = {}
        if out_fn is not None:
            atomic_write_text(out_fn, "\n".join(self.vocab))
        return vocab

    def _word_counts(self, corpus: Union[str, Iterable[str], Mapping[str, int]]) -> Dict[str, int]:
        """Words with their counts, in first-seen order."""
        if isinstance(corpus, Mapping):
            words: Counter = Counter()
            for w, n in corpus.items():
                words[w.lower() if self.lowercase else w] += n
            return dict(words)
        if not isinstance(corpus, Iterable):
            raise InvalidInputError(f"the corpus must be sentences (a list of str) or {{word: count}}, "
                                    f"not {type(corpus).__name__}")
        sentences = [corpus] if isinstance(corpus, str) else corpus
        counter: Counter = Counter()
        for s in sentences:
            if not isinstance(s, str):
                raise InvalidInputError(f"the corpus must hold strings (sentences), not {type(s).__name__}")
            counter.update(self.basic_tokenizer(s.lower() if self.lowercase else s))
        return dict(counter)

    # -- encoding -------------------------------------------------------------------------------

    def _ids_of(self, text: str, add_post: str) -> List[int]:
        """The token ids of ``text``, the words' ids one after another."""
        if not self._ids:
            raise InvalidInputError("this BPETokenizer has no vocabulary yet: call fit() first")
        if self.lowercase:
            text = text.lower()
        if self.basic_tokenizer is wordpunct_tokenize and text.isascii() and not _ODD_ASCII_SPACE.search(text):
            # Plain ASCII: the native WordPunct scanner cuts exactly what Python's re does, so the
            # whole text goes to the core in one call.
            return self._encoder(add_post, whole_text=True).encode_ids(text, disallowed_special=())
        words = list(self.basic_tokenizer(text))
        ids = self._encoder(add_post).encode_batch_ids(words, threads=1, disallowed_special=())
        return [i for word in ids for i in word]

    def _encoder(self, add_post: str, whole_text: bool = False) -> Tokenizer:
        """The native longest-match encoder: of words, or (``whole_text``) of ASCII text it cuts
        into words itself."""
        key = (add_post, whole_text)
        if key not in self._encoders:
            model = BPE(self._ids, end_of_word_symbol=add_post, unk_token=self.special[0], encode_mode="longest_match")
            self._encoders[key] = Tokenizer(model, pre_tokenizer=WordPunct() if whole_text else None)
        return self._encoders[key]

    def tokenize(self, text: str, add_post: Optional[str] = "</w>") -> List[str]:
        """The tokens of ``text``: each word's characters and ``add_post`` cut into the longest
        runs found in the vocabulary, left to right; a unit in no run is ``<UNK>``."""
        vocab = self.vocab
        return [vocab[i] for i in self._ids_of(text, add_post or "")]

    def encode(self, text: str) -> List[int]:
        """The ids of :meth:`tokenize`'s tokens (a token's id is its line in the vocabulary)."""
        return self._ids_of(text, "</w>")

    def decode(self, token_ids: Sequence[Union[int, Sequence[int]]]) -> Union[str, List[str]]:
        """The text of ids: the tokens joined, each ``</w>`` a space. A list of id lists (the
        document's form) gives a list of sentences."""
        if token_ids and not isinstance(token_ids[0], int):
            return [self._decode_one(ids) for ids in token_ids]  # type: ignore[arg-type]
        return self._decode_one(token_ids)  # type: ignore[arg-type]

    def _decode_one(self, ids: Sequence[int]) -> str:
        tokens = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self.vocab):
                raise UnknownIdError(f"id {i!r} is not in the vocabulary (ids 0..{len(self.vocab) - 1}); "
                                     "decode ids that encode() gave")
            tokens.append(self.vocab[i])
        return "".join(tokens).replace("</w>", " ")

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={self.vocab_size}, {len(self.vocab)} tokens, {len(self.merges)} merges)"
