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

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from ciyuan import _core
from ciyuan.errors import InvalidInputError, check_count
from ciyuan.trainers.base import TRAINERS, Pipeline, VocabTrainer
from ciyuan.trainers.corpus import PathLike, WordCounts
from ciyuan.trainers.merges import MergeTrainer
from ciyuan.trainers.spill import MemoryLimit

if TYPE_CHECKING:
    from ciyuan.models import WordPiece

__all__ = ["WordPieceTrainer"]

BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_CRITERIA = ("likelihood", "frequency")


@TRAINERS.register
class WordPieceTrainer(MergeTrainer, VocabTrainer):
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
        memory_limit, spill_dir: word counting within this many bytes (``"64MB"``), spilling
            sorted runs to ``spill_dir``; the result never depends on it (see :class:`Trainer`).
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
        memory_limit: MemoryLimit = None,
        spill_dir: Optional[PathLike] = None,
        unk_token: Optional[str] = "[UNK]",
        max_input_chars_per_word: int = 100,
    ) -> None:
        if criterion not in _CRITERIA:
            raise InvalidInputError(f"criterion must be 'likelihood' or 'frequency', not {criterion!r}")
        if not isinstance(continuing_subword_prefix, str):
            raise InvalidInputError("continuing_subword_prefix must be a string")
        if criterion == "frequency" and not continuing_subword_prefix:
            raise InvalidInputError("the frequency criterion needs a non-empty continuing_subword_prefix")
        check_count(max_input_chars_per_word, "max_input_chars_per_word", least=1)
        super().__init__(vocab_size, min_frequency=min_frequency, max_merges=max_merges, special_tokens=special_tokens,
                         lowercase=lowercase, limit_alphabet=limit_alphabet, initial_alphabet=initial_alphabet,
                         max_token_length=max_token_length, show_progress=show_progress, threads=threads,
                         unk_token=unk_token, memory_limit=memory_limit, spill_dir=spill_dir)
        self.continuing_subword_prefix = continuing_subword_prefix
        self.criterion = criterion
        self.max_input_chars_per_word = max_input_chars_per_word
        # Merges of the last run, as (left, right) token pairs.
        self.merges: List[Tuple[str, str]] = []

    def default_pipeline(self) -> Pipeline:
        return Pipeline.BERT

    def words_to_vocab(self, counts: WordCounts, *, consume: bool = False,
                       _continuing_order: Sequence[str] = ()) -> List[str]:
        """Learn the vocabulary from counted words: the tokens in id order.

        With ``consume=True`` the words are freed once training has copied them.
        """
        if self.criterion == "frequency":
            # Hugging Face's rule is BPE's merge loop; _continuing_order numbers those "##c" first
            # (to reproduce a Hugging Face run's ids).
            bpe_config = self._config(_core.BpeTrainerConfig())
            bpe_config.continuing_subword_prefix = self.continuing_subword_prefix
            bpe_config.continuing_order = list(_continuing_order)
            result = self._run(counts, _core.train_bpe, bpe_config, consume=consume, label="training WordPiece")
            raw, merges = result.tokens, result.merges
        else:
            config = self._config(_core.WordPieceTrainerConfig())
            config.continuing_subword_prefix = self.continuing_subword_prefix
            result = self._run(counts, _core.train_wordpiece, config, consume=consume, label="training WordPiece")
            raw, merges = result.tokens, result.merges
        tokens = [t.decode("utf-8") for t in raw]
        self.merges = [(tokens[a], tokens[b]) for a, b in merges]
        return tokens

    def _model(self, tokens: List[str]) -> "WordPiece":
        from ciyuan.models import WordPiece  # imported late: the model lives beside the trainer

        return WordPiece(tokens, unk_token=self.unk_token, continuing_subword_prefix=self.continuing_subword_prefix,
                         max_input_chars_per_word=self.max_input_chars_per_word)

    # -- serialization --------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        data = super().to_dict()
        data.update(continuing_subword_prefix=self.continuing_subword_prefix, criterion=self.criterion,
                    max_input_chars_per_word=self.max_input_chars_per_word)
        return data

    def __repr__(self) -> str:
        return (f"WordPieceTrainer(vocab_size={self.vocab_size}, criterion={self.criterion!r}, "
                f"min_frequency={self.min_frequency}, prefix={self.continuing_subword_prefix!r})")
