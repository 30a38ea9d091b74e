"""Normalizers: the first stage of a tokenizer pipeline (text -> normalized text + alignment).

The contract is :class:`~ciyuan.normalizers.base.Normalizer`; :func:`from_dict` rebuilds any
registered normalizer from its ``to_dict()`` form, which for every component Hugging Face also
has is the form tokenizer.json holds (same ``"type"``, same fields).
"""

from __future__ import annotations

from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer
from ciyuan.normalizers.bert import BertNormalizer
from ciyuan.normalizers.nmt import Nmt
from ciyuan.normalizers.precompiled import Precompiled
from ciyuan.normalizers.replace import Prepend, Replace
from ciyuan.normalizers.sentencepiece import SentencePieceNormalizer
from ciyuan.normalizers.sequence import Sequence
from ciyuan.normalizers.strip import Strip, StripAccents
from ciyuan.normalizers.unicode import NFC, NFD, NFKC, NFKD, Lowercase

__all__ = ["NormalizedString", "Normalizer", "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Sequence", "BertNormalizer",
           "SentencePieceNormalizer", "Strip", "StripAccents", "Replace", "Prepend", "Nmt", "Precompiled",
           "NORMALIZERS", "from_dict"]

#: Rebuild a normalizer from its ``to_dict()`` form.
from_dict = NORMALIZERS.from_dict
