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
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ciyuan import _core
from ciyuan.errors import InvalidInputError, check_count
from ciyuan.trainers.base import TRAINERS, Pipeline, VocabTrainer
from ciyuan.trainers.corpus import (
    PathLike,
    TrainingSource,
    WordCounts,
    check_errors,
    file_chunks,
    iterate_source,
    replace_surrogates,
)
from ciyuan.trainers.spill import MemoryLimit

if TYPE_CHECKING:
    from ciyuan.models import CharLevel, WordLevel
    from ciyuan.normalizers.base import Normalizer

__all__ = ["WordLevelTrainer", "CharLevelTrainer"]


class _CountingTrainer(VocabTrainer):
    """Shared by the word- and character-level trainers: the vocabulary is the most frequent items."""

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
        memory_limit: MemoryLimit = None,
        spill_dir: Optional[PathLike] = None,
    ) -> None:
        check_count(vocab_size, "vocab_size", least=1)
        super().__init__(vocab_size, min_frequency=min_frequency, special_tokens=special_tokens, unk_token=unk_token,
                         lowercase=lowercase, show_progress=show_progress, threads=threads,
                         memory_limit=memory_limit, spill_dir=spill_dir)
        if len(self.special_tokens) > vocab_size:
            raise InvalidInputError(f"vocab_size {vocab_size} is smaller than the {len(special_tokens)} special tokens")

    def _items(self, words: Iterable[Tuple[str, int]]) -> Dict[str, int]:
        raise NotImplementedError

    def words_to_vocab(self, counts: WordCounts, *, consume: bool = False) -> List[str]:
        """The vocabulary from counted words: the tokens in id order."""
        return self._rank(self._items((w.decode("utf-8"), n) for w, n in counts.words()))

    def _rank(self, counts: Dict[str, int]) -> List[str]:
        """The special tokens, then the items by count (most frequent first), then by text;
        :class:`InvalidInputError` when there are none (an empty corpus)."""
        if not counts:
            raise InvalidInputError("the training corpus is empty (no words after pre-tokenization)")
        specials = self.special_tokens
        taken = set(specials)
        ranked = sorted((item for item, n in counts.items() if n >= self.min_frequency and item not in taken),
                        key=lambda item: (-counts[item], item))
        return list(specials) + ranked[: max(0, self.vocab_size - len(specials))]


@TRAINERS.register
class WordLevelTrainer(_CountingTrainer):
    """A vocabulary of whole words (pieces of the pre-tokenizer), most frequent first.

    Args:
        vocab_size: the vocabulary's size, special tokens included.
        min_frequency: leave out words occurring fewer times.
        special_tokens: the first ids, in order.
        unk_token: the trained model's token for unknown words (one of ``special_tokens``, or
            None: unknown words are an encoding error).
        lowercase: lowercase the text before counting.
        show_progress, threads, memory_limit, spill_dir: as for :class:`BpeTrainer` (the result
            never depends on threads or the memory limit).

    A word equal to a special token is not listed twice.
    """

    type_name = "WordLevelTrainer"

    def _items(self, words: Iterable[Tuple[str, int]]) -> Dict[str, int]:
        return dict(words)

    def default_pipeline(self) -> Pipeline:
        return Pipeline.WORDS

    def _model(self, tokens: List[str]) -> "WordLevel":
        from ciyuan.models import WordLevel  # imported late: the model lives beside the trainer

        return WordLevel(tokens, unk_token=self.unk_token)


@TRAINERS.register
class CharLevelTrainer(_CountingTrainer):
    """A vocabulary of characters, most frequent first.

    Without a pre-tokenizer each text (each line of a file, newline included) is counted
    whole, so spaces and newlines are characters like any other; pass a pre-tokenizer to leave
    out what it drops.

    Args: as :class:`WordLevelTrainer`, counting characters instead of words.
    """

    type_name = "CharLevelTrainer"

    def default_pipeline(self) -> Pipeline:
        return Pipeline.LINES  # every character of a line, spaces included

    def _items(self, words: Iterable[Tuple[str, int]]) -> Dict[str, int]:
        counts: Counter = Counter()
        for word, n in words:
            for ch, k in Counter(word).items():
                counts[ch] += k * n
        return dict(counts)

    def train_vocab(self, source: TrainingSource, pre_tokenizer: Any = None,
                    normalizer: Optional["Normalizer"] = None, *, errors: str = "strict") -> List[str]:
        """Count the characters of ``source`` and return the vocabulary: the tokens in id order.

        Without a pre-tokenizer or normalizer the text is counted natively, character by
        character (files in chunks, with the GIL released), never held whole.
        """
        if pre_tokenizer is not None or normalizer is not None or isinstance(source, Mapping):
            return super().train_vocab(source, pre_tokenizer, normalizer, errors=errors)
        check_errors(errors)
        counts: Counter = Counter()

        def add(data: bytes) -> None:
            for cp, n in _core.count_chars(data):
                counts[chr(cp)] += n

        for kind, item in iterate_source(source):
            if kind == "file":
                for chunk in file_chunks(item, errors):
                    add(chunk.decode("utf-8").lower().encode("utf-8") if self.lowercase else chunk)
            else:
                text = "".join(replace_surrogates(t) for t in item)
                add((text.lower() if self.lowercase else text).encode("utf-8"))
        return self._rank(dict(counts))

    def _model(self, tokens: List[str]) -> "CharLevel":
        from ciyuan.models import CharLevel  # imported late: the model lives beside the trainer

        return CharLevel(tokens, unk_token=self.unk_token)
