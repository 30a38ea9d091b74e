"""SentencePiece's BPE model (``model_type=bpe``, as in Llama 2).

A normalized text starts as characters (a user-defined piece is one symbol that never merges);
the adjacent pair whose concatenation is a piece with the highest score merges, the leftmost
on ties, until no pair is a piece. Characters in no piece become the unknown piece (one token
for a run of them), or their bytes' ``<0xXX>`` pieces with byte fallback. Identical to
SentencePiece; the plain-Python twin is :func:`ciyuan.reference.unigram.spm_bpe_encode`.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from ciyuan import _core
from ciyuan.models.base import MODELS
from ciyuan.models.pieces import SentencePieceModel

__all__ = ["SentencePieceBPE"]


@MODELS.register
class SentencePieceBPE(SentencePieceModel):
    """SentencePiece BPE over typed, scored pieces (arguments: see
    :class:`~ciyuan.models.pieces.SentencePieceModel`).

    Example:
        >>> m = SentencePieceBPE([("<unk>", 0.0), ("▁", -1.0), ("a", -2.0), ("b", -3.0), ("ab", -0.5)], unk_id=0)
        >>> m.make_encoder().encode("▁abc", b"").ids
        [1, 4, 0]
    """

    type_name = "SentencePieceBPE"
    _native_class = _core.SpmBpeModel

    def __init__(self, pieces: Sequence[Tuple[str, float]], *, unk_id: Optional[int] = None,
                 byte_fallback: bool = False, types: Optional[Sequence[int]] = None) -> None:
        super().__init__(pieces, unk_id=unk_id, byte_fallback=byte_fallback, types=types)
