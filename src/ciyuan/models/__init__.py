"""Models: turn one pre-tokenized piece into token ids.

Each model implements :class:`~ciyuan.models.base.Model` and registers itself in
:data:`~ciyuan.models.base.MODELS`, which rebuilds any of them from its ``to_dict()`` form.
"""

from __future__ import annotations

from typing import Any, Mapping

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



def from_dict(data: Mapping[str, Any]) -> Model:
    """Rebuild a model from its ``to_dict`` form, or from Hugging Face's (``tokenizer.json``'s
    ``"model"``); ``ModelError`` for an unknown ``"type"``.

    Files of older ``tokenizers`` may leave ``"type"`` out; it is then read from the fields,
    as ``tokenizers`` does: a list vocab is Unigram's, merges make a BPE,
    ``max_input_chars_per_word`` a WordPiece, anything else with a vocab a WordLevel.

    Example:
        >>> from_dict({"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}).merges
        [('a', 'b')]
    """
    if isinstance(data, Mapping) and "type" not in data and "vocab" in data:
        if isinstance(data["vocab"], list):
            kind = "Unigram"
        elif "merges" in data:
            kind = "BPE"
        elif "max_input_chars_per_word" in data or "continuing_subword_prefix" in data:
            kind = "WordPiece"
        else:
            kind = "WordLevel"
        data = {"type": kind, **data}
    return MODELS.from_dict(data)
