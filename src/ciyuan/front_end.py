"""The one decision of which native front end (if any) runs in front of a model.

The native encoder (``_core.Encoder``) cuts text into pieces itself when the tokenizer's
normalizer and pre-tokenizer have a native form:

* no normalizer and no pre-tokenizer: each text (between special tokens) is one piece;
* no normalizer and a pre-tokenizer with a ``native_pattern``: that scanner;
* SentencePiece's normalizer (``native_sentencepiece_options()``: also Hugging Face's Llama 2
  Sequence of Prepend and Replace) and no pre-tokenizer: the SentencePiece front end (each
  normalized segment is one piece; the model handles ``▁``);
* the ``BertPreTokenizer`` after a normalizer with ``native_bert_options()`` (``BertNormalizer``)
  or after none (the BERT front end with every option off), in front of a model that
  ``accepts_bert_front_end``: the BERT front end.

The trainers' word counting asks the same question (``model=None``), so a tokenizer and its
trainer always cut text alike.

Anything else returns None: the Python stages then cut the text and the native encoder encodes
the pieces (``encode_spans``). Both paths give the same ids and offsets.

One normalizer has a native path on most texts only: NFC, which leaves almost every text as it
is (Qwen2's files put it before a pattern with a scanner). :func:`nfc_front_end` is then the
pre-tokenizer's front end without the normalizer, and the tokenizer gives it only the texts NFC
leaves unchanged (or, for ids alone, their NFC form); the others take the Python stages.

Example:
    >>> from ciyuan.models import WordPiece
    >>> from ciyuan.pre_tokenizers import Split
    >>> native_front_end(None, Split("cl100k_base"), WordPiece(["[UNK]"]))
    FrontEnd.scanner(PreTokPattern.CL100K)
"""

from __future__ import annotations

from typing import Any, Optional

from ciyuan import _core
from ciyuan.normalizers.base import Normalizer
from ciyuan.pre_tokenizers.base import PreTokenizer

__all__ = ["FrontEnd", "native_front_end", "nfc_front_end", "scanner", "sentencepiece"]

#: The typed description the native encoder takes: ``FrontEnd.none()``, ``FrontEnd.scanner(...)``
#: or ``FrontEnd.bert(BertOptions)``.
FrontEnd = _core.FrontEnd


#: BertPreTokenizer alone: the BERT front end splits words and normalizes nothing.
_NO_BERT_NORMALIZATION = _core.BertOptions(clean_text=False, handle_chinese_chars=False, strip_accents=False,
                                           lowercase=False)


def scanner(name: str) -> FrontEnd:
    """The front end of a native scanner by name (``"gpt2"``, ``"cl100k_base"``, ``"o200k_base"``,
    ``"wordpunct"``, ``"whitespace"``, ...); :class:`~ciyuan.errors.InvalidInputError` otherwise."""
    return FrontEnd.scanner(_core.parse_pattern(name))


def sentencepiece(normalizer: Normalizer, *, split_by_whitespace: bool = True) -> Optional[FrontEnd]:
    """The SentencePiece front end of `normalizer` (None if it is not SentencePiece's);
    ``split_by_whitespace=False`` makes the trainers' word counting keep each sentence whole.

    Example:
        >>> from ciyuan.normalizers import SentencePieceNormalizer
        >>> sentencepiece(SentencePieceNormalizer("identity")).kind
        FrontEndKind.SENTENCEPIECE
    """
    options = normalizer.native_sentencepiece_options()
    if options is None:
        return None
    options.split_by_whitespace = split_by_whitespace
    return FrontEnd.sentencepiece(options)


def native_front_end(normalizer: Optional[Any], pre_tokenizer: Optional[Any],
                     model: Optional[Any]) -> Optional[FrontEnd]:
    """The native front end equivalent to ``normalizer`` then ``pre_tokenizer`` in front of
    ``model``, or None when the Python stages must run. ``model=None`` asks for any model (the
    trainers' word counting takes every front end)."""
    # Stages that are not ciyuan's (any object with split() or normalize()) have no native form.
    if (pre_tokenizer is not None and not isinstance(pre_tokenizer, PreTokenizer)) or \
            (normalizer is not None and not isinstance(normalizer, Normalizer)):
        return None
    if pre_tokenizer is None:
        # No normalizer either: each text is one piece; SentencePiece's: its front end. Hugging
        # Face's Llama 2 normalizer runs on it too when encoding; its trainers count whole texts
        # (the SentencePiece front end would count whitespace words): the Python stages.
        if normalizer is None:
            return FrontEnd.none()
        front_end = sentencepiece(normalizer)
        options = front_end.sentencepiece_options if front_end is not None else None
        if model is None and options is not None and options.hf_offsets:
            return None
        return front_end
    if pre_tokenizer.bert_words:
        # BertPreTokenizer: the BERT front end, after BertNormalizer or no normalizer.
        bert = _NO_BERT_NORMALIZATION if normalizer is None else normalizer.native_bert_options()
        if bert is None or (model is not None and not model.accepts_bert_front_end):
            return None
        return FrontEnd.bert(bert)
    if normalizer is None and pre_tokenizer.native_pattern is not None:
        return scanner(pre_tokenizer.native_pattern)  # no normalizer and a native scanner
    return None


def nfc_front_end(normalizer: Optional[Any], pre_tokenizer: Optional[Any], model: Optional[Any]) -> Optional[FrontEnd]:
    """When ``normalizer`` is NFC alone: the native front end of ``pre_tokenizer`` without it,
    right for every text NFC leaves unchanged (the caller checks each text); None otherwise.

    Example:
        >>> from ciyuan.normalizers import NFC
        >>> from ciyuan.pre_tokenizers import Split
        >>> nfc_front_end(NFC(), Split("qwen2"), None)
        FrontEnd.scanner(PreTokPattern.QWEN2)
    """
    # (By its registered name: the trainers import this module, and stages may not import
    # each other - only their base protocols.)
    if not isinstance(normalizer, Normalizer) or normalizer.type_name != "NFC":
        return None
    return native_front_end(None, pre_tokenizer, model)
