"""The WordPiece model (BERT): greedy longest-match-first subwords with a ``##`` prefix.

Each pre-tokenized word is split from left to right: at each position the longest token that
matches is taken; tokens after the first are looked up with the continuing-subword prefix
(``un``, ``##aff``, ``##able``). If some position matches no token, or the word is longer
than ``max_input_chars_per_word`` characters, the whole word becomes the unknown token (with
the whole word's offsets) - exactly Hugging Face's rules.

The loop runs natively: a byte trie of the vocabulary gives the longest match at a position in
one walk, so a word costs time linear in its length (times the longest token), and words that
are tokens (most of them) cost one hash lookup.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from ciyuan import _core
from ciyuan._io import PathLike
from ciyuan.decoders.base import DECODERS, Decoder
from ciyuan.errors import FileFormatError, ModelError
from ciyuan.models.base import MODELS
from ciyuan.models.vocab import VocabLike, _VocabModel

__all__ = ["WordPiece"]


@MODELS.register
class WordPiece(_VocabModel):
    """WordPiece model: greedy longest-match-first subwords (BERT).

    Args:
        vocab: token -> id, or the tokens in id order (``None`` for an unused id).
        unk_token: the token for words that cannot be split; ``None`` makes them an error
            (:class:`~ciyuan.errors.InvalidInputError`).
        continuing_subword_prefix: marks tokens that continue a word.
        max_input_chars_per_word: longer words (in characters) become ``unk_token``.

    Example:
        >>> m = WordPiece(["[UNK]", "un", "##aff", "##able"])
        >>> enc = m.make_encoder()
        >>> enc.encode("unaffable", b"").ids
        [1, 2, 3]
    """

    type_name = "WordPiece"
    _kind = _core.WordModelKind.WORDPIECE

    def __init__(
        self,
        vocab: VocabLike,
        *,
        unk_token: Optional[str] = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> None:
        if not isinstance(continuing_subword_prefix, str):
            raise ModelError(f"continuing_subword_prefix must be a str, got {continuing_subword_prefix!r}")
        if isinstance(max_input_chars_per_word, bool) or not isinstance(max_input_chars_per_word, int) \
                or max_input_chars_per_word < 0:
            raise ModelError("max_input_chars_per_word must be a non-negative integer, "
                             f"got {max_input_chars_per_word!r}")
        self.continuing_subword_prefix = continuing_subword_prefix
        self.max_input_chars_per_word = min(max_input_chars_per_word, (1 << 64) - 1)
        self._setup(vocab, unk_token, continuing_subword_prefix, self.max_input_chars_per_word)

    @classmethod
    def from_file(cls, vocab_txt: PathLike, **options: Any) -> "WordPiece":
        """Load a BERT ``vocab.txt`` (one token per line, line number = id).

        Example:
            >>> WordPiece.from_file("bert-base-uncased-vocab.txt").vocab_size   # doctest: +SKIP
            30522
        """
        from ciyuan.models.vocab_txt import load_bert_vocab

        tokens = load_bert_vocab(vocab_txt)
        try:
            return cls(tokens, **options)
        except FileFormatError:
            raise
        except ModelError as e:  # e.g. no unk_token in the file: say which file
            raise FileFormatError(str(vocab_txt), None, str(e)) from None

    def save_vocab(self, path: PathLike) -> None:
        """Write the vocabulary as BERT's ``vocab.txt`` (atomically; ids must have no holes)."""
        from ciyuan.models.vocab_txt import save_bert_vocab

        if any(t is None for t in self._tokens):
            missing = next(i for i, t in enumerate(self._tokens) if t is None)
            raise ModelError(f"id {missing} is unused; vocab.txt needs consecutive ids from 0")
        save_bert_vocab(path, self._tokens)

    def default_decoder(self) -> Decoder:
        """``decoders.WordPiece``: joins ``##`` pieces to their word."""
        return DECODERS.from_dict({"type": "WordPiece", "prefix": self.continuing_subword_prefix})

    def to_dict(self) -> Dict[str, Any]:
        return {
            "type": self.type_name,
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "max_input_chars_per_word": self.max_input_chars_per_word,
            "vocab": self.get_vocab(),
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "WordPiece":
        if "vocab" not in data:
            raise ModelError("WordPiece model description lacks the key 'vocab'")
        return cls(
            data["vocab"],
            unk_token=data.get("unk_token", "[UNK]"),
            continuing_subword_prefix=data.get("continuing_subword_prefix", "##"),
            max_input_chars_per_word=data.get("max_input_chars_per_word", 100),
        )

    def __repr__(self) -> str:
        return (f"WordPiece({self.vocab_size} tokens, unk_token={self.unk_token!r}, "
                f"continuing_subword_prefix={self.continuing_subword_prefix!r})")
