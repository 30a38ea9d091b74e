"""What the vocabulary models share (WordPiece, WordLevel, CharLevel): tokens by id, an unknown
token, and one native ``_core.WordPieceModel`` that does the per-word work for all three."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Union

from ciyuan import _core
from ciyuan.errors import ModelError, UnknownIdError
from ciyuan.models.base import Model, check_id_limit

__all__ = ["VocabLike", "tokens_by_id"]

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
                check_id_limit(i, len(vocab), token)  # before the table grows to i entries
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
    for i, entry in enumerate(tokens):
        if entry is None:  # an unused id
            continue
        if not isinstance(entry, str):
            raise ModelError(f"tokens must be str, got {type(entry).__name__} ({entry!r}) at id {i}")
        if entry in seen:
            raise ModelError(f"the token {entry!r} has two ids: {seen[entry]} and {i}")
        seen[entry] = i
    return tokens


class _VocabModel(Model):
    """What WordPiece, WordLevel and CharLevel share: a vocabulary, an unknown token, and the
    native model."""

    _kind = _core.WordModelKind.WORDPIECE
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
        config = _core.WordPieceConfig()
        config.kind = self._kind
        config.continuing_subword_prefix = prefix
        config.unk_id = unk_id
        config.max_input_chars_per_word = max_chars
        try:
            self._native = _core.WordPieceModel(self._tokens, config)
        except UnicodeEncodeError:
            raise ModelError("a token holds a lone surrogate, which is not valid text") from None

    @property
    def unk_id(self) -> Optional[int]:
        """The id of :attr:`unk_token`, or None."""
        return None if self.unk_token is None else self._ids[self.unk_token]

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token``, or None."""
        return self._ids.get(token) if isinstance(token, str) else None

    def id_to_token(self, token_id: int) -> str:
        """The token of an id; :class:`~ciyuan.errors.UnknownIdError` outside the vocabulary."""
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < len(self._tokens) \
                or self._tokens[token_id] is None:
            raise UnknownIdError(f"id {token_id!r} is not in the model's vocabulary (0..{len(self._tokens) - 1})")
        return self._tokens[token_id]

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

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()
