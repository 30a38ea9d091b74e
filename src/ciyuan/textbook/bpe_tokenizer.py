"""BPE the way the classic tutorials teach it: ``fit`` a corpus, then ``tokenize`` / ``encode`` /
``decode``.

Words come from a basic tokenizer (lowercased by default); each word is split into characters
followed by the end-of-word marker as a separate symbol (``"l o w </w>"``); the most frequent
pair is merged, the one seen first winning ties (Sennrich et al.'s ``max(pairs,
key=pairs.get)``). Training and encoding run on ciyuan's native core (the merges applied by
rank, each word on its own), so both are fast on real corpora.

Example:
    >>> from ciyuan import BPETokenizer
    >>> bpe = BPETokenizer(vocab_size=30).fit({"low": 5, "lower": 2, "newest": 6, "widest": 3},
    ...                                       max_steps=10, out_fn=None)
    >>> bpe.merges[:4]
    [('e', 's'), ('es', 't'), ('est', '</w>'), ('l', 'o')]
    >>> bpe.tokenize("lowest")
    ['low', 'est</w>']
    >>> bpe.decode(bpe.encode("newest low"))
    'newest low'
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import regex

from ciyuan._io import PathLike, atomic_write_text
from ciyuan.errors import InvalidInputError, UnknownIdError
from ciyuan.models import BPE
from ciyuan.tokenizer import Tokenizer

__all__ = ["BPETokenizer", "DEFAULT_SPECIAL_TOKENS", "wordpunct_tokenize"]

DEFAULT_SPECIAL_TOKENS = ("<UNK>", "<PAD>", "<END>", "<MASK>")
_WORDS = regex.compile(r"\w+|[^\w\s]+")


def wordpunct_tokenize(text: str) -> List[str]:
    """Words and runs of punctuation (``\\w+|[^\\w\\s]+``)."""
    return _WORDS.findall(text)


class BPETokenizer:
    """The textbook BPE tokenizer.

    Args:
        vocab_size: the vocabulary size to reach (special tokens, alphabet and merges).
        lowercase: lowercase text before splitting it into words.
        basic_tokenizer: text -> words; a callable, or a pre-tokenizer with ``split(text)``.
            Default: words and runs of punctuation.
        special_tokens: the first ids (default ``<UNK> <PAD> <END> <MASK>``); the first is used
            for characters never seen in training.
        end_of_word: the end-of-word marker, a separate last symbol of every word.
        min_frequency: stop when the best pair occurs fewer times than this.
    """

    def __init__(
        self,
        vocab_size: int = 1000,
        lowercase: bool = True,
        basic_tokenizer: Optional[Union[Callable[[str], List[str]], Any]] = None,
        *,
        special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
        end_of_word: str = "</w>",
        min_frequency: int = 0,
    ) -> None:
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
            raise InvalidInputError(f"vocab_size must be a positive integer, not {vocab_size!r}")
        if not end_of_word:
            raise InvalidInputError("end_of_word must be a non-empty marker such as '</w>'")
        self.vocab_size = vocab_size
        self.lowercase = bool(lowercase)
        self.basic_tokenizer = basic_tokenizer
        self.special_tokens = list(special_tokens)
        self.end_of_word = end_of_word
        self.min_frequency = min_frequency
        self.vocab: Dict[str, int] = {}
        self.merges: List[Tuple[str, str]] = []
        self._tokens: List[str] = []
        self._tokenizer: Optional[Tokenizer] = None  # the trained model, encoding one word per piece

    # -- words ----------------------------------------------------------------------------------

    def words(self, text: str) -> List[str]:
        """The words of ``text`` (lowercased if asked), as the basic tokenizer splits them."""
        if self.lowercase:
            text = text.lower()
        tok = self.basic_tokenizer
        if tok is None:
            return wordpunct_tokenize(text)
        split = getattr(tok, "split", None)
        if split is not None and not isinstance(tok, str):
            return [text[s:e] for s, e in split(text)]
        return list(tok(text))

    # -- training -------------------------------------------------------------------------------

    def fit(
        self,
        corpus: Union[str, Iterable[str], Mapping[str, int]],
        max_steps: int = 10000,
        out_fn: Optional[PathLike] = "vocab.txt",
    ) -> "BPETokenizer":
        """Learn at most ``max_steps`` merges from ``corpus`` and write the vocabulary to ``out_fn``.

        Args:
            corpus: a text, an iterable of texts (sentences), or ``{word: count}``.
            max_steps: the most merges to learn.
            out_fn: where to write the vocabulary, one token per line (ids are line numbers);
                None writes nothing.
        """
        from ciyuan.trainers import BpeTrainer

        if isinstance(corpus, Mapping):
            counts: Dict[str, int] = dict(corpus)
            if self.lowercase:
                lowered: Counter = Counter()
                for w, n in counts.items():
                    lowered[w.lower()] += n
                counts = dict(lowered)
        else:
            texts = [corpus] if isinstance(corpus, str) else corpus
            counter: Counter = Counter()
            for text in texts:
                counter.update(self.words(text))
            counts = dict(counter)
        trainer = BpeTrainer(
            self.vocab_size,
            max_merges=max_steps,
            min_frequency=self.min_frequency,
            special_tokens=self.special_tokens,
            end_of_word_symbol=self.end_of_word,
            tie_break="first",
        )
        model = trainer.train(counts)
        self._tokens = [model.id_to_token(i) for i in range(model.id_limit)]
        self.vocab = {t: i for i, t in enumerate(self._tokens)}
        self.merges = model.merges
        unk = self.special_tokens[0] if self.special_tokens else None
        self._tokenizer = Tokenizer(
            BPE(self.vocab, self.merges, end_of_word_symbol=self.end_of_word, unk_token=unk),
            pre_tokenizer=None,
        )
        if out_fn is not None:
            atomic_write_text(out_fn, "".join(t + "\n" for t in self._tokens))
        return self

    # -- encoding -------------------------------------------------------------------------------

    def encode(self, text: str) -> List[int]:
        """The ids of the tokens of ``text``: each word's characters and the end-of-word marker,
        merged by rank; characters never seen in training become the first special token."""
        if self._tokenizer is None:
            raise InvalidInputError("call fit() first")
        words = self.words(text)
        return [i for ids in self._tokenizer.encode_batch_ids(words, threads=1, disallowed_special=()) for i in ids]

    def tokenize(self, text: str) -> List[str]:
        """The tokens of ``text`` (see :meth:`encode`)."""
        return [self._tokens[i] for i in self.encode(text)]

    def decode(self, ids: Iterable[int]) -> str:
        """Join the tokens; each end-of-word marker becomes a space. ``<PAD>``-like special
        tokens other than the unknown token are left out."""
        out = []
        keep = self.special_tokens[:1]
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self._tokens):
                raise UnknownIdError(f"id {i!r} is not in the vocabulary (0..{len(self._tokens) - 1})")
            t = self._tokens[i]
            if t in self.special_tokens and t not in keep:
                continue
            out.append(t)
        return "".join(out).replace(self.end_of_word, " ").strip()

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={self.vocab_size}, {len(self.merges)} merges learned)"
