"""Decoders: token bytes -> text (the last stage of decoding).

The contract is :class:`~ciyuan.decoders.base.Decoder`; :func:`from_dict` rebuilds any
registered decoder from its ``to_dict()`` form.
"""

from __future__ import annotations

from ciyuan.decoders.base import DECODERS, Decoder, TokenDecoder
from ciyuan.decoders.bpe_decoder import BPEDecoder
from ciyuan.decoders.bpe_suffix import BPESuffix
from ciyuan.decoders.byte_fallback import ByteFallback, Fuse
from ciyuan.decoders.byte_level import ByteLevel
from ciyuan.decoders.ctc import CTC
from ciyuan.decoders.metaspace import Metaspace
from ciyuan.decoders.replace import Replace
from ciyuan.decoders.sentencepiece import SentencePiece
from ciyuan.decoders.sequence import Sequence
from ciyuan.decoders.strip import Strip
from ciyuan.decoders.word_level import CharLevel, WordLevel
from ciyuan.decoders.wordpiece import WordPiece

__all__ = ["ByteLevel", "BPESuffix", "WordPiece", "WordLevel", "CharLevel", "SentencePiece", "Metaspace",
           "ByteFallback", "Fuse", "Strip", "Replace", "CTC", "BPEDecoder", "Sequence", "Decoder", "TokenDecoder",
           "DECODERS", "from_dict"]

#: Rebuild a decoder from its ``to_dict()`` form.
from_dict = DECODERS.from_dict
