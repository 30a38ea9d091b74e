"""What the two SentencePiece model families share: typed pieces with scores.

A SentencePiece model (``Unigram`` or ``SentencePieceBPE``) is a list of pieces, each with a
score and a :class:`PieceType`, numbered as SentencePiece's ``ModelProto`` numbers them:

- ``NORMAL`` pieces are matched from text and scored;
- ``UNKNOWN`` is the one piece for text no piece covers (its id is ``unk_id``);
- ``CONTROL`` pieces (``<s>``, ``</s>``) are never matched from text and decode to nothing;
- ``USER_DEFINED`` pieces are always kept whole where they occur;
- ``UNUSED`` pieces are in the table but never produced;
- ``BYTE`` pieces ``<0x00>``..``<0xFF>`` stand for single bytes (byte fallback).

The native model encodes *normalized* text (spaces already ``▁``), as SentencePiece's model
does after its normalizer. :class:`SentencePieceModel` is the base of both families: it checks
and converts the table once and owns the native model.
"""

from __future__ import annotations

import enum
import math
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from ciyuan import _core
from ciyuan.decoders.base import DECODERS, Decoder
from ciyuan.errors import ModelError, UnknownIdError
from ciyuan.models.base import Model

__all__ = ["PieceType", "SentencePieceModel", "byte_piece"]


class PieceType(enum.IntEnum):
    """A piece's type, with SentencePiece's numbers.

    Example:
        >>> PieceType.BYTE, int(PieceType.USER_DEFINED)
        (<PieceType.BYTE: 6>, 4)
    """

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


def byte_piece(b: int) -> str:
    """The name of the piece of byte ``b`` in byte fallback.

    Example:
        >>> byte_piece(10)
        '<0x0A>'
    """
    return f"<0x{b:02X}>"


_BYTE_PIECES = {byte_piece(b) for b in range(256)}


def _table(pieces: Sequence[Tuple[str, float]], unk_id: Optional[int], byte_fallback: bool,
           types: Optional[Sequence[int]]) -> Tuple[List[str], List[float], List[PieceType], Optional[int]]:
    """Checks the arguments and fills in the default types (see :class:`SentencePieceModel`)."""
    if isinstance(pieces, (str, bytes)) or not isinstance(pieces, Sequence):
        raise ModelError("pieces must be a sequence of (piece, score) pairs")
    if not pieces:
        raise ModelError("the model has no pieces")
    texts: List[str] = []
    scores: List[float] = []
    for i, entry in enumerate(pieces):
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise ModelError(f"piece {i} must be a (piece, score) pair, got {entry!r}")
        text, score = entry
        if not isinstance(text, str) or not text:
            raise ModelError(f"piece {i} must be a non-empty str, got {text!r}")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score):
            raise ModelError(f"the score of piece {i} ({text!r}) must be a number, got {score!r}")
        texts.append(text)
        scores.append(float(score))
    if not isinstance(byte_fallback, bool):
        raise ModelError(f"byte_fallback must be True or False, got {byte_fallback!r}")
    if unk_id is not None and (isinstance(unk_id, bool) or not isinstance(unk_id, int)
                               or not 0 <= unk_id < len(texts)):
        raise ModelError(f"unk_id must be the id of a piece (0..{len(texts) - 1}) or None, got {unk_id!r}")
    if types is None:
        kinds = [PieceType.NORMAL] * len(texts)
        if unk_id is not None:
            kinds[unk_id] = PieceType.UNKNOWN
        if byte_fallback:
            for i, text in enumerate(texts):
                if text in _BYTE_PIECES:
                    kinds[i] = PieceType.BYTE
    else:
        if isinstance(types, (str, bytes)) or len(types) != len(texts):
            raise ModelError(f"types must give one PieceType per piece ({len(texts)})")
        kinds = []
        for i, t in enumerate(types):
            try:
                kinds.append(PieceType(t))
            except ValueError:
                raise ModelError(f"the type of piece {i} ({texts[i]!r}) must be a PieceType (1..6), got {t!r}") \
                    from None
        if unk_id is None:
            unknown = [i for i, t in enumerate(kinds) if t == PieceType.UNKNOWN]
            if len(unknown) > 1:
                raise ModelError(f"pieces {unknown} are all typed UNKNOWN; a model has one unknown piece")
            unk_id = unknown[0] if unknown else None
    return texts, scores, kinds, unk_id


class SentencePieceModel(Model):
    """Base of :class:`~ciyuan.models.Unigram` and :class:`~ciyuan.models.SentencePieceBPE`.

    Args:
        pieces: ``(piece, score)`` pairs in id order.
        unk_id: the id of the unknown piece; ``None``: the piece typed ``UNKNOWN`` in ``types``,
            or no unknown piece (then text no piece covers is an
            :class:`~ciyuan.errors.InvalidInputError`, unless byte fallback covers it).
        byte_fallback: unknown characters become the ``<0xXX>`` pieces of their UTF-8 bytes
            (all 256 must be in ``pieces``).
        hf_viterbi: (Unigram only) Hugging Face's Viterbi instead of SentencePiece's: the scores
            as given (double, not rounded to float) summed in double, each pre-token from 0
            (SentencePiece carries the sum over adjacent ones and re-centres it past 1e5), an
            unknown character scoring the lowest score of all pieces less 10. The default for a
            model read from Hugging Face's form (``vocab``).
        types: one :class:`PieceType` per piece. Default: ``NORMAL``, ``UNKNOWN`` at
            ``unk_id``, ``BYTE`` for ``<0x00>``..``<0xFF>`` with byte fallback.

    Raises:
        ModelError: for two pieces with one text, an ``unk_id`` outside the pieces, byte
            fallback without all byte pieces, or a malformed argument.
    """

    #: The native class (``_core.UnigramModel`` or ``_core.SpmBpeModel``).
    _native_class: ClassVar[Any]
    #: The model's arithmetic can be Hugging Face's instead of SentencePiece's (Unigram).
    _has_hf_viterbi: ClassVar[bool] = False

    def __init__(self, pieces: Sequence[Tuple[str, float]], *, unk_id: Optional[int] = None,
                 byte_fallback: bool = False, types: Optional[Sequence[int]] = None,
                 byte_run_spans: bool = False, unk_token_is_text: bool = False, hf_viterbi: bool = False) -> None:
        texts, scores, kinds, unk = _table(pieces, unk_id, byte_fallback, types)
        if not isinstance(hf_viterbi, bool):
            raise ModelError(f"hf_viterbi must be True or False, got {hf_viterbi!r}")
        if hf_viterbi and not self._has_hf_viterbi:
            raise ModelError(f"{type(self).__name__} has no Hugging Face Viterbi (hf_viterbi is for Unigram)")
        config = _core.SpmModelConfig()
        config.unk_id = -1 if unk is None else unk
        config.byte_fallback = byte_fallback
        config.byte_run_spans = bool(byte_run_spans)
        config.hf_viterbi = hf_viterbi
        try:
            self._native = self._native_class(texts, scores, [_core.PieceType(int(t)) for t in kinds], config)
        except UnicodeEncodeError:
            raise ModelError("a piece holds a lone surrogate, which is not valid text") from None
        self._tokens = texts
        self._ids_cache: Optional[Dict[str, int]] = None
        self.pieces: List[str] = texts
        self.scores: List[float] = scores
        self.types: List[PieceType] = kinds
        self.unk_id: Optional[int] = unk
        self.byte_fallback: bool = byte_fallback
        #: Byte-fallback pieces span their whole run of unknown characters (Hugging Face's
        #: Unigram) instead of their own character (SentencePiece).
        self.byte_run_spans: bool = bool(byte_run_spans)
        #: An Encoding names the unknown token by the text it covers (Hugging Face's Unigram).
        self.unk_token_is_text: bool = bool(unk_token_is_text)
        self.text_unk_id = unk if self.unk_token_is_text else None
        #: Hugging Face's Viterbi (Unigram): double scores and sums, each pre-token from 0.
        self.hf_viterbi: bool = hf_viterbi

    def token_to_id(self, token: Any) -> Optional[int]:
        """The id of a piece, or None."""
        return self._ids.get(token) if isinstance(token, str) else None

    def id_to_token(self, token_id: int) -> str:
        """The piece of an id; :class:`~ciyuan.errors.UnknownIdError` outside the model."""
        if type(token_id) is int and token_id >= 0:  # (a bool is not an id)
            try:
                return self.pieces[token_id]
            except IndexError:
                pass
        raise UnknownIdError(f"id {token_id!r} is not in the model's pieces (0..{len(self.pieces) - 1})")

    def get_vocab(self) -> Dict[str, int]:
        """piece -> id."""
        return dict(self._ids)

    def default_decoder(self) -> Decoder:
        """``decoders.SentencePiece``: pieces joined, ``▁`` back to spaces, byte pieces to bytes."""
        return DECODERS.from_dict({"type": "SentencePiece"})

    def to_dict(self) -> Dict[str, Any]:
        return {
            "type": self.type_name,
            "pieces": [[p, s] for p, s in zip(self.pieces, self.scores)],
            "unk_id": self.unk_id,
            "byte_fallback": self.byte_fallback,
            "types": [int(t) for t in self.types],
            "byte_spans": "run" if self.byte_run_spans else "character",
            "unk_tokens": "text" if self.unk_token_is_text else "piece",
            **({"viterbi": "huggingface"} if self.hf_viterbi else {}),
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "SentencePieceModel":
        """Read :meth:`to_dict`'s form; the pieces may be under ``"pieces"`` or, as Hugging
        Face's Unigram writes them, ``"vocab"`` (``[[piece, score], ...]``)."""
        key = "pieces" if isinstance(data, dict) and "pieces" in data else "vocab"
        if not isinstance(data, dict) or key not in data:
            raise ModelError(f"{cls.type_name} model description lacks the key 'pieces' (or 'vocab')")
        raw = data[key]
        if not isinstance(raw, list):
            raise ModelError(f"{cls.type_name} model description: 'pieces' must be a list of [piece, score]")
        pieces = [tuple(p) if isinstance(p, list) else p for p in raw]
        # Hugging Face's form (under "vocab") takes Hugging Face's conventions unless told.
        hf_form = key == "vocab"
        spans = data.get("byte_spans", "run" if hf_form else "character")
        if spans not in ("character", "run"):
            raise ModelError(f"byte_spans must be 'character' or 'run', got {spans!r}")
        unk_tokens = data.get("unk_tokens", "text" if hf_form else "piece")
        if unk_tokens not in ("piece", "text"):
            raise ModelError(f"unk_tokens must be 'piece' or 'text', got {unk_tokens!r}")
        extra: Dict[str, Any] = {}
        if cls._has_hf_viterbi:
            # Hugging Face's form means Hugging Face's arithmetic unless told "sentencepiece".
            viterbi = data.get("viterbi", "huggingface" if hf_form else "sentencepiece")
            if viterbi not in ("sentencepiece", "huggingface"):
                raise ModelError(f"viterbi must be 'sentencepiece' or 'huggingface', got {viterbi!r}")
            extra["hf_viterbi"] = viterbi == "huggingface"
        return cls(pieces, unk_id=data.get("unk_id"), byte_fallback=data.get("byte_fallback", False),
                   types=data.get("types"), byte_run_spans=spans == "run", unk_token_is_text=unk_tokens == "text",
                   **extra)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SentencePieceModel) and type(self) is type(other) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({len(self.pieces)} pieces, unk_id={self.unk_id}, "
                f"byte_fallback={self.byte_fallback})")
