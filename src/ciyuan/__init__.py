"""ciyuan (词元, "token"): train, run and explain tokenizers, with a fast C++ core.

Example:
    >>> import ciyuan
    >>> tok = ciyuan.Tokenizer.from_tiktoken("cl100k_base.tiktoken")   # doctest: +SKIP
    >>> tok.encode("词元 tokens").tokens                                # doctest: +SKIP
"""

from ciyuan import decoders, errors, formats, models, normalizers, pre_tokenizers
from ciyuan.encoding import Encoding
from ciyuan.errors import (
    CiyuanError,
    DisallowedSpecialTokenError,
    FileFormatError,
    InvalidInputError,
    ModelError,
    UnknownIdError,
)
from ciyuan.tokenizer import Tokenizer
from ciyuan import trainers
from ciyuan import segment
from ciyuan.textbook import BPETokenizer

__version__ = "0.1.0"

__all__ = [
    "Tokenizer",
    "BPETokenizer",
    "Encoding",
    "CiyuanError",
    "InvalidInputError",
    "DisallowedSpecialTokenError",
    "UnknownIdError",
    "ModelError",
    "FileFormatError",
    "decoders",
    "errors",
    "formats",
    "models",
    "normalizers",
    "pre_tokenizers",
    "trainers",
    "segment",
]
