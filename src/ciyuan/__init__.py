"""ciyuan (词元, "token"): train, run and explain tokenizers, with a fast C++ core.

The public names are loaded on first use (PEP 562), so ``import ciyuan`` and the command line
pay only for what they touch: ``ciyuan segment`` never loads the BPE pipeline.

Example:
    >>> import ciyuan
    >>> tok = ciyuan.Tokenizer.from_tiktoken("cl100k_base.tiktoken")   # doctest: +SKIP
    >>> tok.encode("词元 tokens").tokens                                # doctest: +SKIP
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ciyuan.errors import (
    CiyuanError,
    DisallowedSpecialTokenError,
    FileFormatError,
    InvalidInputError,
    ModelError,
    UnknownIdError,
)

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from ciyuan import decoders, formats, models, normalizers, pre_tokenizers, processors, segment, trainers
    from ciyuan.encoding import Encoding
    from ciyuan.special_tokens import AddedToken
    from ciyuan.textbook import BPETokenizer
    from ciyuan.tokenizer import Tokenizer

__version__ = "0.1.0"

# public name -> (module, attribute or None for the module itself)
_LAZY = {
    "Tokenizer": ("ciyuan.tokenizer", "Tokenizer"),
    "BPETokenizer": ("ciyuan.textbook", "BPETokenizer"),
    "Encoding": ("ciyuan.encoding", "Encoding"),
    "AddedToken": ("ciyuan.special_tokens", "AddedToken"),
    **{name: (f"ciyuan.{name}", None) for name in (
        "decoders", "errors", "formats", "models", "normalizers", "pre_tokenizers", "processors",
        "segment", "trainers",
    )},
}

__all__ = [
    "Tokenizer",
    "BPETokenizer",
    "Encoding",
    "AddedToken",
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
    "processors",
    "segment",
    "trainers",
]


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'ciyuan' has no attribute {name!r}") from None
    module = import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__))
