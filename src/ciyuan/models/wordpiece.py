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

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ciyuan import _core
from ciyuan._io import PathLike
from ciyuan.errors import ModelError, UnknownIdError

__all__ = ["WordPiece"]

VocabLike = Union[Mapping[str, int], Sequence[Optional[str]]]


def tokens_by_id(vocab: VocabLike) -> List[Optional[str]]:
    """token -> id mapping (or tokens in id order) -> list indexed by id, ``None`` for holes."""
    if isinstance(vocab, Mapping):
        if not vocab:
            raise ModelError("the vocabulary is empty")
        tokens: List[Optional[str]] = []
        for token, i in vocab.items():
            if not isinstance(token, str):
                raise ModelError(f"tokens must be str, got {type(token).__name__} ({token!r})")
            if isinstance(i, bool) or not isinstance(i, int) or i < 0:
                raise ModelError(f"the id of {token!r} must be a non-negative integer, got {i!r}")
            if i >= len(tokens):
                if i >= 1 << 31:
                    raise ModelError(f"the id of {token!r} ({i}) is too large")
                tokens.extend([None] * (i + 1 - len(tokens)))
            if tokens[i] is not None:
                raise ModelError(f"id {i} is given to both {tokens[i]!r} and {token!r}")
            tokens[i] = token
        return tokens
    if isinstance(vocab, (str, bytes)):
        raise ModelError("the vocabulary must be a mapping token -> id or a sequence of tokens, not a string")
    tokens = list(vocab)
    if not any(t is not None for t in tokens):
        raise ModelError("the vocabulary is empty")
    seen: Dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token is None:  # an unused id
            continue
        if not isinstance(token, str):
            raise ModelError(f"tokens must be str, got {type(token).__name__} ({token!r}) at id {i}")
        if token in seen:
            raise ModelError(f"the token {token!r} has two ids: {seen[token]} and {i}")
        seen[token] = i
    return tokens  # type: ignore[return-value]


class _VocabModel:
    """What WordPiece, WordLevel and CharLevel share: a vocabulary, an unknown token, a native
    model and encoder."""

    type_name = ""
    _kind = ""
    accepts_bert_front_end = True  # the native encoder runs BertNormalizer + BertPreTokenizer itself

    def _setup(self, vocab: VocabLike, unk_token: Optional[str], prefix: str, max_chars: int) -> None:
        self._tokens = tokens_by_id(vocab)
        self._ids_cache: Optional[Dict[str, int]] = None
        self.unk_token = unk_token
        unk_id = -1
        if unk_token is not None:
            if not isinstance(unk_token, str):
                raise ModelError(f"unk_token must be a str or None, got {unk_token!r}")
            found = self._ids.get(unk_token)
            if found is None:
                raise ModelError(
                    f"unk_token {unk_token!r} is not in the vocabulary; add it, or pass unk_token=None to make "
                    "unknown text an error"
                )
            unk_id = found
        try:
            self.native = _core.WordPieceModel(self._tokens, self._kind, prefix, unk_id, max_chars)
        except UnicodeEncodeError:
            raise ModelError("a token holds a lone surrogate, which is not valid text") from None

    @property
    def _ids(self) -> Dict[str, int]:
        if self._ids_cache is None:
            self._ids_cache = {t: i for i, t in enumerate(self._tokens) if t is not None}
        return self._ids_cache

    @property
    def unk_id(self) -> Optional[int]:
        """The id of :attr:`unk_token`, or None."""
        return None if self.unk_token is None else self._ids[self.unk_token]

    @property
    def vocab_size(self) -> int:
        """Number of tokens (ids may have holes; see :attr:`id_limit`)."""
        return self.native.vocab_size

    @property
    def id_limit(self) -> int:
        """One past the largest id."""
        return len(self._tokens)

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token``, or None."""
        return self._ids.get(token) if isinstance(token, str) else None

    def id_to_token(self, token_id: int) -> str:
        """The token of an id; :class:`~ciyuan.errors.UnknownIdError` outside the vocabulary."""
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < len(self._tokens) \
                or self._tokens[token_id] is None:
            raise UnknownIdError(f"id {token_id!r} is not in the model's vocabulary (0..{len(self._tokens) - 1})")
        return self._tokens[token_id]  # type: ignore[return-value]

    def token_bytes(self, token_id: int) -> bytes:
        """The UTF-8 bytes of a token."""
        return self.id_to_token(token_id).encode("utf-8")

    def get_vocab(self) -> Dict[str, int]:
        """token -> id."""
        return dict(self._ids)

    @property
    def tokens(self) -> List[Optional[str]]:
        """Tokens indexed by id (``None`` for unused ids)."""
        return list(self._tokens)

    def make_encoder(self, pattern: str, specials: Sequence[Tuple[str, int]],
                     bert: Optional[Tuple[bool, bool, Optional[bool], bool]] = None) -> Any:
        """The native encoder: special tokens, then the BERT front end (``bert`` options) or the
        native pre-tokenizer ``pattern`` (``""``: each text is one word), then this model."""
        return _core.WordPieceEncoder(self.native, pattern or "", list(specials), bert)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()  # type: ignore[attr-defined]

    def to_dict(self) -> Dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError


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
        >>> enc = m.make_encoder("", [])
        >>> enc.encode("unaffable", b"").ids
        [1, 2, 3]
    """

    type_name = "WordPiece"
    _kind = "wordpiece"

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
            raise ModelError(f"max_input_chars_per_word must be a non-negative integer, got {max_input_chars_per_word!r}")
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

        return cls(load_bert_vocab(vocab_txt), **options)

    def save_vocab(self, path: PathLike) -> None:
        """Write the vocabulary as BERT's ``vocab.txt`` (atomically; ids must have no holes)."""
        from ciyuan.models.vocab_txt import save_bert_vocab

        if any(t is None for t in self._tokens):
            missing = next(i for i, t in enumerate(self._tokens) if t is None)
            raise ModelError(f"id {missing} is unused; vocab.txt needs consecutive ids from 0")
        save_bert_vocab(path, self._tokens)  # type: ignore[arg-type]

    def default_decoder(self) -> Any:
        """``decoders.WordPiece``: joins ``##`` pieces to their word."""
        from ciyuan import decoders

        return decoders.WordPiece(self.continuing_subword_prefix)  # type: ignore[attr-defined]

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
