"""Models: turn one pre-tokenized piece into token ids.

Each model implements :class:`~ciyuan.models.base.Model` and registers itself in
:data:`~ciyuan.models.base.MODELS`, which rebuilds any of them from its ``to_dict()`` form.
"""

from __future__ import annotations

from ciyuan.models.base import MODELS, Model
from ciyuan.models.bpe import BPE
from ciyuan.models.pieces import PieceType
from ciyuan.models.sentencepiece_bpe import SentencePieceBPE
from ciyuan.models.unigram import Unigram
from ciyuan.models.word_level import CharLevel, WordLevel
from ciyuan.models.wordpiece import WordPiece

__all__ = [
    "Model", "MODELS", "BPE", "WordPiece", "WordLevel", "CharLevel", "Unigram", "SentencePieceBPE", "PieceType",
    "from_dict",
]

#: Rebuild a model from its ``to_dict`` form (``ModelError`` for an unknown ``"type"``).
from_dict = MODELS.from_dict
