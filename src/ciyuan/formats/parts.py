"""What a format reader gives: the parts of a tokenizer, as ``Tokenizer``'s keyword arguments.

The readers build the pipeline's components and stop there, so that ``formats`` never needs the
``Tokenizer`` class: ``Tokenizer.from_tiktoken(...)`` is ``Tokenizer(**tiktoken_parts(...))``.
"""

from __future__ import annotations

from typing import Dict, Optional, TypedDict

from ciyuan.decoders.base import Decoder
from ciyuan.models.base import Model
from ciyuan.normalizers.base import Normalizer
from ciyuan.pre_tokenizers.base import PreTokenizer
from ciyuan.processors import Padding, Truncation
from ciyuan.processors.base import PostProcessor
from ciyuan.special_tokens import AddedToken

__all__ = ["TokenizerParts"]


class TokenizerParts(TypedDict, total=False):
    """``Tokenizer(**parts)``: the model and the stages around it."""

    model: Model
    normalizer: Optional[Normalizer]
    pre_tokenizer: Optional[PreTokenizer]
    post_processor: Optional[PostProcessor]
    decoder: Optional[Decoder]
    special_tokens: Dict[str, int]
    sentencepiece_proto: Optional[bytes]
    added_tokens: Dict[int, AddedToken]
    truncation: Optional[Truncation]
    padding: Optional[Padding]
