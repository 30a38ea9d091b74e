"""The model stage's contract: what the Tokenizer and the native encoder need from a model, and
the one registry that rebuilds models from their ``to_dict()`` form.

A model owns one native model (a ``_core.TokenModel``: ``_core.BpeModel`` or
``_core.WordPieceModel``) and is the only class that touches it; the Tokenizer goes through
the methods below. A new model family implements them, registers itself with
``@MODELS.register``, and its native side implements ``TokenModel`` (cpp/include/ciyuan/encoder.h).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ciyuan import _core
from ciyuan.decoders.base import Decoder
from ciyuan.errors import InvalidInputError, ModelError
from ciyuan.registry import Registry

__all__ = ["Model", "MODELS", "check_alpha", "check_id_limit", "MAX_ID_HOLES"]


class Model(ABC):
    """Base class of the models: a vocabulary (token <-> id) and a native encoder over it."""

    #: The ``"type"`` of :meth:`to_dict`, under which :data:`MODELS` finds the class.
    type_name: str = ""
    #: Whether the native encoder may run the BERT front end (``BertNormalizer`` +
    #: ``BertPreTokenizer``) in front of this model; otherwise those stages run in Python.
    accepts_bert_front_end: bool = False

    # -- vocabulary ------------------------------------------------------------------------------

    # Tokens indexed by id (None for a hole): bytes or str, as the model keeps them.
    _tokens: List[Any]
    _ids_cache: Optional[Dict[Any, int]]
    # The native model this model owns: a _core.TokenModel (BpeModel, WordPieceModel).
    _native: Any

    @property
    def _ids(self) -> Dict[Any, int]:
        # token -> id, built on first use (loading a 200k vocabulary need not pay for it).
        if self._ids_cache is None:
            self._ids_cache = {t: i for i, t in enumerate(self._tokens) if t is not None}
        return self._ids_cache

    @property
    def vocab_size(self) -> int:
        """Number of tokens (ids may have holes; see :attr:`id_limit`)."""
        return int(self._native.vocab_size)

    @property
    def id_limit(self) -> int:
        """One past the largest id."""
        return len(self._tokens)

    @abstractmethod
    def token_to_id(self, token: Any) -> Optional[int]:
        """The id of a token, or None."""

    @abstractmethod
    def id_to_token(self, token_id: int) -> str:
        """The token of an id; :class:`~ciyuan.errors.UnknownIdError` outside the vocabulary."""

    @abstractmethod
    def get_vocab(self) -> Dict[str, int]:
        """token -> id."""

    def id_bytes(self, token_id: int) -> Optional[bytes]:
        """The bytes the decoder gets for an id, or None for an id the model does not have."""
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < self.id_limit:
            return None
        return self._native.token_bytes(token_id)

    # -- the pipeline's view ---------------------------------------------------------------------

    @abstractmethod
    def default_decoder(self) -> Decoder:
        """The decoder this model's tokens need when the tokenizer is given none (named by its
        registry type, so a model never imports the decoders' package)."""

    def make_encoder(self, front_end: Optional[_core.FrontEnd] = None,
                     specials: Sequence[Tuple[str, int]] = (), flags: Sequence[int] = ()) -> _core.Encoder:
        """The native encoder of a tokenizer using this model: special tokens (``(text, id)``
        pairs; ``flags``, one per special token when given, mark Hugging Face's added tokens:
        ``_core.ADDED_RAW`` ...), then ``front_end`` (default ``FrontEnd.none()``: each text is
        one piece), then this model. See :func:`ciyuan.front_end.native_front_end` for how a
        tokenizer picks it.

        Example:
            >>> from ciyuan import _core
            >>> from ciyuan.models import WordLevel
            >>> m = WordLevel(["[UNK]", "hello", "world"])
            >>> encoder = m.make_encoder(_core.FrontEnd.scanner(_core.parse_pattern("whitespace")))
            >>> encoder.encode("hello big world", b"").ids
            [1, 0, 2]
        """
        if front_end is None:
            front_end = _core.FrontEnd.none()
        if front_end.kind == _core.FrontEndKind.BERT and not self.accepts_bert_front_end:
            raise ModelError(f"the BERT front end does not run natively with {type(self).__name__} models")
        return _core.Encoder(self._native, front_end, list(specials), list(flags))

    # -- subword regularization ------------------------------------------------------------------

    #: The id whose token, in an Encoding, is the text it covers rather than its piece (Hugging
    #: Face's Unigram names an unknown token by its text), or None.
    text_unk_id: Optional[int] = None

    #: Whether the native model gives the k best segmentations of a text (Unigram models).
    has_nbest: bool = False

    def sample_options(self, alpha: float, nbest_size: int) -> _core.SampleOptions:
        """The native options for sampling segmentations with ``alpha`` and ``nbest_size``
        (see :meth:`ciyuan.Tokenizer.encode`), checked for this model; :class:`~ciyuan.errors.ModelError`
        for a model that does not sample (the default), InvalidInputError for bad values."""
        raise ModelError(f"{type(self).__name__} models do not sample segmentations; subword regularization "
                         "needs a BPE model (BPE-dropout) or a Unigram model")

    def default_sampling(self) -> Optional[_core.SampleOptions]:
        """The sampling every encode does when not asked for (BPE's ``dropout``), or None."""
        return None

    # -- serialization ---------------------------------------------------------------------------

    @abstractmethod
    def to_dict(self) -> Dict[str, Any]:
        """The model as plain data, with its ``"type"``."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Model":
        """Rebuild a model from :meth:`to_dict`'s form."""


#: Ids may leave holes (unused ids), but a model holds a table entry per id up to the largest:
#: one huge id in a hostile file would ask for gigabytes. So the holes are bounded: at most as
#: many as the tokens, or this many, whichever is more.
MAX_ID_HOLES = 1 << 20


def check_id_limit(largest: int, count: int, token: object = None) -> None:
    """:class:`~ciyuan.errors.ModelError` when ids up to ``largest`` for ``count`` tokens would
    leave more holes than :data:`MAX_ID_HOLES` (or than ``count``), or pass 2^31 - 1.

    Example:
        >>> check_id_limit(99, 100)
        >>> check_id_limit(2**32 - 1, 2)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ciyuan.errors.ModelError: id 4294967295 is too large for 2 tokens: ...; renumber the vocabulary
    """
    holes = largest + 1 - count
    if largest >= (1 << 31) - 1 or holes > max(count, MAX_ID_HOLES):
        of = f" (of {token!r})" if token is not None else ""
        raise ModelError(f"id {largest}{of} is too large for {count} tokens: ids may leave at most "
                         f"{max(count, MAX_ID_HOLES)} unused below the largest (here {holes}); renumber the "
                         "vocabulary")


def check_alpha(alpha: float, *, at_most: Optional[float] = None, what: str = "alpha") -> float:
    """``alpha`` as a float if it is a real number >= 0 (and <= ``at_most`` when given), else
    :class:`~ciyuan.errors.InvalidInputError` naming ``what`` and the allowed range.

    Example:
        >>> check_alpha(0.25, at_most=1.0)
        0.25
    """
    ok = not isinstance(alpha, bool) and isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha >= 0
    if not ok or (at_most is not None and alpha > at_most):
        bound = f"a number between 0 and {at_most:g}" if at_most is not None else "a finite number >= 0"
        raise InvalidInputError(f"{what} must be {bound}, not {alpha!r}")
    return float(alpha)


#: type name -> model class, for every model's ``from_dict``.
MODELS: Registry[Model] = Registry("model")
