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

from typing import Any, Dict

from ciyuan import _core
from ciyuan.models.base import MODELS, check_alpha
from ciyuan.models.pieces import SentencePieceModel, _table

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
    has_nbest = True
    _has_hf_viterbi = True

    def sample_options(self, alpha: float, nbest_size: int) -> _core.SampleOptions:
        """Sentencepiece's sampling: ``alpha`` (>= 0) smooths the distribution, ``nbest_size``
        is 1 (the best segmentation), <= 0 (all segmentations) or k > 1 (the k best)."""
        return _core.SampleOptions(alpha=check_alpha(alpha, what="alpha (the Unigram smoothing)"),
                                   nbest_size=nbest_size)

    def to_dict(self) -> Dict[str, Any]:
        """Hugging Face's form (``tokenizer.json``'s Unigram: ``unk_id``, ``vocab`` as
        ``[[piece, score], ...]``, ``byte_fallback``), plus the piece ``types`` when some piece
        is not what Hugging Face would take it for (a control or user-defined piece) and
        ``"viterbi": "sentencepiece"`` for SentencePiece's arithmetic (Hugging Face's is the
        default of this form; Hugging Face itself ignores the key)."""
        data: Dict[str, Any] = {"type": self.type_name, "unk_id": self.unk_id,
                                "vocab": [[p, s] for p, s in zip(self.pieces, self.scores)],
                                "byte_fallback": self.byte_fallback,
                                "byte_spans": "run" if self.byte_run_spans else "character",
                                "unk_tokens": "text" if self.unk_token_is_text else "piece"}
        # Read back from this form, a model takes Hugging Face's arithmetic unless told.
        if not self.hf_viterbi:
            data["viterbi"] = "sentencepiece"
        if self.types != _table(data["vocab"], self.unk_id, self.byte_fallback, None)[2]:
            data["types"] = [int(t) for t in self.types]
        return data
