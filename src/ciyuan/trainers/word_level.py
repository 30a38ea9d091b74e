"""Word-level and character-level trainers: a vocabulary of whole words, or of characters.

Both count (natively, on all cores, as the BPE trainer does), then keep the special tokens
followed by the most frequent items: by count, most frequent first, equal counts in code point
order - Hugging Face ``tokenizers``' ``WordLevelTrainer`` rule, whose vocabulary
``WordLevelTrainer`` reproduces id for id. Items rarer than ``min_frequency`` are left out, and
the vocabulary (special tokens included) stops at ``vocab_size``.

Example:
    >>> from ciyuan.trainers import CharLevelTrainer, WordLevelTrainer
    >>> WordLevelTrainer(special_tokens=["[UNK]"]).train_vocab({"the": 3, "cat": 1, "a": 3})
    ['[UNK]', 'a', 'the', 'cat']
    >>> CharLevelTrainer(special_tokens=[], unk_token=None).train_vocab({"abba": 1, "cab": 2})
    ['a', 'b', 'c']
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ciyuan import _core
from ciyuan.errors import InvalidInputError
from ciyuan.trainers.bpe import BpeTrainer, TrainingSource, _file_chunks, _iterate, _replace_surrogates

__all__ = ["WordLevelTrainer", "CharLevelTrainer"]


class _CountingTrainer:
    """Shared by the word- and character-level trainers: options, counting, ranking."""

    type_name = ""

    def __init__(
        self,
        vocab_size: int = 30000,
        *,
        min_frequency: int = 0,
        special_tokens: Sequence[str] = ("[UNK]",),
        unk_token: Optional[str] = "[UNK]",
        lowercase: bool = False,
        show_progress: bool = False,
        threads: Optional[int] = None,
    ) -> None:
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
            raise InvalidInputError(f"vocab_size must be a positive integer, not {vocab_size!r}")
        # Option checks and word counting are the BPE trainer's.
        self._counting = BpeTrainer(vocab_size, min_frequency=min_frequency, special_tokens=special_tokens,
                                    unk_token=unk_token, lowercase=lowercase, show_progress=show_progress,
                                    threads=threads)
        if len(self._counting.special_tokens) > vocab_size:
            raise InvalidInputError(f"vocab_size {vocab_size} is smaller than the {len(special_tokens)} special tokens")

    vocab_size = property(lambda self: self._counting.vocab_size)
    min_frequency = property(lambda self: self._counting.min_frequency)
    special_tokens = property(lambda self: self._counting.special_tokens)
    unk_token = property(lambda self: self._counting.unk_token)
    lowercase = property(lambda self: self._counting.lowercase)
    show_progress = property(lambda self: self._counting.show_progress)
    threads = property(lambda self: self._counting.threads)

    def count_words(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Any = None,
                    *, errors: str = "strict") -> "_core.WordCounter":
        """Count the distinct words of ``source``, as :meth:`BpeTrainer.count_words` does."""
        return self._counting.count_words(source, pre_tokenizer, normalizer, errors=errors)

    def _items(self, words: Iterable[Tuple[str, int]]) -> Dict[str, int]:
        raise NotImplementedError

    def words_to_vocab(self, counter: "_core.WordCounter") -> List[str]:
        """The vocabulary from counted words: the tokens in id order."""
        if len(counter) == 0:
            raise InvalidInputError("the training corpus is empty (no words after pre-tokenization)")
        return self._rank(self._items((w.decode("utf-8"), n) for w, n in counter.words()))

    def _rank(self, counts: Dict[str, int]) -> List[str]:
        """The special tokens, then the items by count (most frequent first), then by text."""
        if not counts:
            raise InvalidInputError("the training corpus is empty (no words after pre-tokenization)")
        specials = self.special_tokens
        taken = set(specials)
        ranked = sorted((item for item, n in counts.items() if n >= self.min_frequency and item not in taken),
                        key=lambda item: (-counts[item], item))
        return list(specials) + ranked[: max(0, self.vocab_size - len(specials))]

    def train_vocab(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Any = None,
                    *, errors: str = "strict") -> List[str]:
        """Count ``source`` and return the vocabulary: the tokens in id order."""
        return self.words_to_vocab(self.count_words(source, pre_tokenizer, normalizer, errors=errors))

    def train_words(self, counter: "_core.WordCounter", **_: Any):  # -> model
        return self._model(self.words_to_vocab(counter))

    def train(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Any = None,
              *, errors: str = "strict"):  # -> model
        """Count ``source`` and build the model from the vocabulary."""
        return self._model(self.train_vocab(source, pre_tokenizer, normalizer, errors=errors))

    def _model(self, tokens: List[str]):
        raise NotImplementedError

    def to_dict(self) -> Dict[str, Any]:
        return {
            "type": self.type_name,
            "vocab_size": self.vocab_size,
            "min_frequency": self.min_frequency,
            "special_tokens": list(self.special_tokens),
            "unk_token": self.unk_token,
            "lowercase": self.lowercase,
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]):
        options = {k: v for k, v in data.items() if k != "type"}
        vocab_size = options.pop("vocab_size", 30000)
        return cls(vocab_size, **options)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size}, min_frequency={self.min_frequency})"


class WordLevelTrainer(_CountingTrainer):
    """A vocabulary of whole words (pieces of the pre-tokenizer), most frequent first.

    Args:
        vocab_size: the vocabulary's size, special tokens included.
        min_frequency: leave out words occurring fewer times.
        special_tokens: the first ids, in order.
        unk_token: the trained model's token for unknown words (one of ``special_tokens``, or
            None: unknown words are an encoding error).
        lowercase: lowercase the text before counting.
        show_progress, threads: as for :class:`BpeTrainer` (the result never depends on threads).

    A word equal to a special token is not listed twice.
    """

    type_name = "WordLevelTrainer"

    def _items(self, words: Iterable[Tuple[str, int]]) -> Dict[str, int]:
        return dict(words)

    def _model(self, tokens: List[str]):
        from ciyuan.models import WordLevel  # imported late: the model lives beside the trainer

        return WordLevel(tokens, unk_token=self.unk_token)


class CharLevelTrainer(_CountingTrainer):
    """A vocabulary of characters, most frequent first.

    Without a pre-tokenizer each text (each line of a file, newline included) is counted
    whole, so spaces and newlines are characters like any other; pass a pre-tokenizer to leave
    out what it drops.

    Args: as :class:`WordLevelTrainer`, counting characters instead of words.
    """

    type_name = "CharLevelTrainer"

    def _items(self, words: Iterable[Tuple[str, int]]) -> Dict[str, int]:
        counts: Counter = Counter()
        for word, n in words:
            for ch, k in Counter(word).items():
                counts[ch] += k * n
        return dict(counts)

    def train_vocab(self, source: TrainingSource, pre_tokenizer: Any = None, normalizer: Any = None,
                    *, errors: str = "strict") -> List[str]:
        """Count the characters of ``source`` and return the vocabulary: the tokens in id order.

        Without a pre-tokenizer or normalizer the text is counted natively, character by
        character (files in chunks, with the GIL released), never held whole.
        """
        if pre_tokenizer is not None or normalizer is not None or isinstance(source, Mapping):
            return super().train_vocab(source, pre_tokenizer, normalizer, errors=errors)
        if errors not in ("strict", "replace"):
            raise InvalidInputError(f"errors must be 'strict' or 'replace', not {errors!r}")
        counts: Counter = Counter()

        def add(data: bytes) -> None:
            for cp, n in _core.count_chars(data):
                counts[chr(cp)] += n

        for kind, item in _iterate(source):
            if kind == "file":
                for chunk in _file_chunks(item, errors):
                    add(chunk.decode("utf-8").lower().encode("utf-8") if self.lowercase else chunk)
            else:
                text = "".join(_replace_surrogates(t) for t in item)
                add((text.lower() if self.lowercase else text).encode("utf-8"))
        return self._rank(dict(counts))

    def _model(self, tokens: List[str]):
        from ciyuan.models import CharLevel  # imported late: the model lives beside the trainer

        return CharLevel(tokens, unk_token=self.unk_token)
