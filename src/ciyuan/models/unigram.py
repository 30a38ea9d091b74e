"""The Unigram language model (SentencePiece's ``unigram`` model type).

Each piece has a score, its log probability; a normalized text is cut into the pieces whose
scores sum highest (Viterbi over the lattice of all pieces the text contains). What enters the
lattice, and how ties and unknown characters go, is exactly SentencePiece's (see
``cpp/include/ciyuan/unigram.h``): a user-defined piece scores ``0.1 * bytes - 0.1``, an unknown
character ``min(score) - 10``, consecutive unknown characters are one unknown token, and with
byte fallback an unknown character becomes its bytes' ``<0xXX>`` pieces. The plain-Python
twin is :mod:`ciyuan.reference.unigram`.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from ciyuan import _core
from ciyuan.models.base import MODELS
from ciyuan.models.pieces import SentencePieceModel

__all__ = ["Unigram"]


@MODELS.register
class Unigram(SentencePieceModel):
    """Unigram language model over typed, scored pieces (arguments: see
    :class:`~ciyuan.models.pieces.SentencePieceModel`).

    Example:
        >>> m = Unigram([("<unk>", 0.0), ("▁a", -1.0), ("b", -2.0), ("▁ab", -2.5)], unk_id=0)
        >>> m.make_encoder().encode("▁ab▁ac", b"").ids
        [3, 1, 0]
    """

    type_name = "Unigram"
    _native_class = _core.UnigramModel

    def __init__(self, pieces: Sequence[Tuple[str, float]], *, unk_id: Optional[int] = None,
                 byte_fallback: bool = False, types: Optional[Sequence[int]] = None) -> None:
        super().__init__(pieces, unk_id=unk_id, byte_fallback=byte_fallback, types=types)
