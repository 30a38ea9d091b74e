"""WordPiece trainer: learn a BERT-style vocabulary (``##`` continuation pieces) from a corpus.

Two criteria:

- ``"likelihood"`` (default): WordPiece as its authors describe it (Schuster & Nakajima 2012,
  BERT). Words start as characters, ``"hug"`` -> ``h ##u ##g``; each step merges the adjacent
  pair with the highest ``count(ab) / (count(a) * count(b))`` (counts weighted by word
  frequency, in the current segmentation) - rare symbols that always occur together merge
  first. Native and incremental: a priority queue of exact scores (compared as fractions in
  128-bit integers) and a pair -> words index, so a merge touches only the words holding the
  pair. Ties go to the higher ``count(ab)``, then to the smaller (left id, right id).
- ``"frequency"``: Hugging Face ``tokenizers``' ``WordPieceTrainer``, which is frequency BPE
  with the ``##`` prefix on non-initial characters, its vocabulary taken as the WordPiece
  vocabulary. Same merges and vocabulary as Hugging Face's, except that Hugging Face numbers
  the ``##c`` characters in hash order (so its own runs differ from one another); ciyuan
  numbers them in code point order.

Vocabulary ids: the special tokens, then the alphabet's characters in code point order, then
the prefixed characters (``"##a"``...), then merged tokens in the order they are made. The
likelihood criterion puts both forms of *every* alphabet character in the vocabulary (as
BERT's vocab.txt does, so any word of known characters encodes without ``[UNK]``); the
frequency criterion, as Hugging Face, only the ``##c`` forms that occur.

See ``ciyuan.reference.wordpiece`` for the likelihood algorithm in a page of Python.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ciyuan import _core
from ciyuan.errors import InvalidInputError
from ciyuan.trainers.bpe import BpeTrainer, TrainingReport, TrainingSource, _NO_LIMIT, _ProgressBar

__all__ = ["WordPieceTrainer"]

BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_CRITERIA = ("likelihood", "frequency")


class WordPieceTrainer:
    """Options for training a WordPiece vocabulary.

    Args:
        vocab_size: stop when the vocabulary (special tokens included) has this many tokens;
            0 means no limit (then ``max_merges`` must stop training).
        min_frequency: pairs occurring fewer times are never merged (frequency criterion: stop
            when the most frequent pair is rarer, as Hugging Face does).
        special_tokens: the first ids, in order.
        limit_alphabet: keep only this many characters (the most frequent; equally frequent
            ones: the smaller code point); the others are dropped from the words.
        initial_alphabet: characters always in the alphabet (only each string's first character).
        continuing_subword_prefix: marks a piece that continues a word (``"##"``).
        criterion: ``"likelihood"`` or ``"frequency"`` (see the module docstring).
        max_merges: stop after this many merges (None: no limit).
        max_token_length: never make a token longer than this many characters (prefix not
            counted).
        lowercase: lowercase the text before counting.
        show_progress: draw a progress bar on standard error.
        threads: threads for word counting (None: all cores); the result never depends on it.
        unk_token: the trained model's unknown token (one of ``special_tokens``, or None).
        max_input_chars_per_word: passed to the trained model (longer words become unk).

    Example:
        >>> from ciyuan.trainers import WordPieceTrainer
        >>> trainer = WordPieceTrainer(20, special_tokens=["[UNK]"], unk_token="[UNK]")
        >>> trainer.train_vocab({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5})[-5:]
        ['##gs', 'pu', 'hu', 'bu', 'hugs']
    """

    type_name = "WordPieceTrainer"

    def __init__(
        self,
        vocab_size: int = 30000,
        *,
        min_frequency: int = 0,
        special_tokens: Sequence[str] = BERT_SPECIAL_TOKENS,
        limit_alphabet: Optional[int] = None,
        initial_alphabet: Sequence[str] = (),
        continuing_subword_prefix: str = "##",
        criterion: str = "likelihood",
        max_merges: Optional[int] = None,
        max_token_length: Optional[int] = None,
        lowercase: bool = False,
        show_progress: bool = False,
        threads: Optional[int] = None,
        unk_token: Optional[str] = "[UNK]",
        max_input_chars_per_word: int = 100,
    ) -> None:
        if criterion not in _CRITERIA:
            raise InvalidInputError(f"criterion must be 'likelihood' or 'frequency', not {criterion!r}")
        if not isinstance(continuing_subword_prefix, str):
            raise InvalidInputError("continuing_subword_prefix must be a string")
        if criterion == "frequency" and not continuing_subword_prefix:
            raise InvalidInputError("the frequency criterion needs a non-empty continuing_subword_prefix")
        if isinstance(max_input_chars_per_word, bool) or not isinstance(max_input_chars_per_word, int) \
                or max_input_chars_per_word < 1:
            raise InvalidInputError("max_input_chars_per_word must be a positive integer, "
                                    f"not {max_input_chars_per_word!r}")
        # The shared options (and their checks), word counting and the frequency criterion's
        # merge loop come from the BPE trainer.
        # Training always ends (at worst when no pair is left), so no limit at all is allowed;
        # the BPE trainer's own check would refuse it.
        self._bpe = BpeTrainer(
            vocab_size, min_frequency=min_frequency,
            max_merges=_NO_LIMIT if max_merges is None and vocab_size == 0 and vocab_size is not False else max_merges,
            special_tokens=special_tokens,
            lowercase=lowercase, limit_alphabet=limit_alphabet, initial_alphabet=initial_alphabet,
            max_token_length=max_token_length, show_progress=show_progress, threads=threads, unk_token=unk_token,
        )
        self.continuing_subword_prefix = continuing_subword_prefix
        self.criterion = criterion
        self.max_input_chars_per_word = max_input_chars_per_word
        self.report: Optional[TrainingReport] = None
        # Merges of the last run, as (left, right) token pairs.
        self.merges: List[Tuple[str, str]] = []

    # The options, read through to the BPE trainer that holds them.
    vocab_size = property(lambda self: self._bpe.vocab_size)
    min_frequency = property(lambda self: self._bpe.min_frequency)
    max_merges = property(lambda self: None if self._bpe.max_merges == _NO_LIMIT else self._bpe.max_merges)
    special_tokens = property(lambda self: self._bpe.special_tokens)
    limit_alphabet = property(lambda self: self._bpe.limit_alphabet)
    initial_alphabet = property(lambda self: self._bpe.initial_alphabet)
    max_token_length = property(lambda self: self._bpe.max_token_length)
    lowercase = property(lambda self: self._bpe.lowercase)
    show_progress = property(lambda self: self._bpe.show_progress)
    threads = property(lambda self: self._bpe.threads)
    unk_token = property(lambda self: self._bpe.unk_token)

    def count_words(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Any = None,
                    *, errors: str = "strict") -> "_core.WordCounter":
        """Count the distinct words of ``source``, as :meth:`BpeTrainer.count_words` does."""
        return self._bpe.count_words(source, pre_tokenizer, normalizer, errors=errors)

    def words_to_vocab(self, counter: "_core.WordCounter", *, consume: bool = False,
                       _continuing_order: Sequence[str] = ()) -> List[str]:
        """Learn the vocabulary from counted words: the tokens in id order.

        With ``consume=True`` the counter's words are freed once training has copied them.
        """
        if len(counter) == 0:
            raise InvalidInputError("the training corpus is empty (no words after pre-tokenization)")
        if self.criterion == "frequency":
            # _continuing_order numbers those "##c" first (to reproduce a Hugging Face run's ids).
            raw, merges = self._bpe._learn(counter, consume=consume,
                                           continuing_subword_prefix=self.continuing_subword_prefix,
                                           continuing_order=_continuing_order, label="training WordPiece")
            self.report = self._bpe.report
        else:
            bpe = self._bpe
            bar = _ProgressBar("training WordPiece") if bpe.show_progress else None
            words, total = len(counter), counter.total
            start = time.perf_counter()
            try:
                raw, merges, merge_counts, alphabet, stop = _core.train_wordpiece(
                    counter,
                    bpe.vocab_size,
                    _NO_LIMIT if bpe.max_merges is None else bpe.max_merges,
                    bpe.min_frequency,
                    bpe.special_tokens,
                    bpe.initial_alphabet,
                    -1 if bpe.limit_alphabet is None else bpe.limit_alphabet,
                    bpe.max_token_length or 0,
                    self.continuing_subword_prefix,
                    bar,
                    consume,
                )
            finally:
                if bar is not None:
                    bar.close()
            self.report = TrainingReport(words, total, alphabet, merge_counts, stop, time.perf_counter() - start)
        tokens = [t.decode("utf-8") for t in raw]
        self.merges = [(tokens[a], tokens[b]) for a, b in merges]
        return tokens

    def train_vocab(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Any = None,
                    *, errors: str = "strict") -> List[str]:
        """Count the words of ``source`` and learn the vocabulary: the tokens in id order."""
        return self.words_to_vocab(self.count_words(source, pre_tokenizer, normalizer, errors=errors), consume=True)

    def train_words(self, counter: "_core.WordCounter", *, consume: bool = False):  # -> models.WordPiece
        """Learn a :class:`ciyuan.models.WordPiece` from counted words."""
        return self._model(self.words_to_vocab(counter, consume=consume))

    def train(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Any = None,
              *, errors: str = "strict"):  # -> models.WordPiece
        """Count the words of ``source`` and learn a :class:`ciyuan.models.WordPiece` from them."""
        return self._model(self.train_vocab(source, pre_tokenizer, normalizer, errors=errors))

    def _model(self, tokens: List[str]):
        from ciyuan.models import WordPiece  # imported late: the model lives beside the trainer

        return WordPiece(tokens, unk_token=self.unk_token, continuing_subword_prefix=self.continuing_subword_prefix,
                         max_input_chars_per_word=self.max_input_chars_per_word)

    # -- serialization --------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        return {
            "type": self.type_name,
            "vocab_size": self.vocab_size,
            "min_frequency": self.min_frequency,
            "special_tokens": list(self.special_tokens),
            "limit_alphabet": self.limit_alphabet,
            "initial_alphabet": list(self.initial_alphabet),
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "criterion": self.criterion,
            "max_merges": self.max_merges,
            "max_token_length": self.max_token_length,
            "lowercase": self.lowercase,
            "unk_token": self.unk_token,
            "max_input_chars_per_word": self.max_input_chars_per_word,
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "WordPieceTrainer":
        options = {k: v for k, v in data.items() if k != "type"}
        vocab_size = options.pop("vocab_size", 30000)
        return cls(vocab_size, **options)

    def __repr__(self) -> str:
        return (f"WordPieceTrainer(vocab_size={self.vocab_size}, criterion={self.criterion!r}, "
                f"min_frequency={self.min_frequency}, prefix={self.continuing_subword_prefix!r})")
