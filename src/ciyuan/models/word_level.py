"""Word-level and character-level models: one token per word, or per character.

``WordLevel`` maps each pre-tokenized word to its id as a whole (Hugging Face's WordLevel);
``CharLevel`` maps each character to its id. What is not in the vocabulary becomes the unknown
token (one per word, or one per character), or an error when there is no unknown token.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from ciyuan import _core
from ciyuan.decoders.base import DECODERS, Decoder
from ciyuan.errors import ModelError
from ciyuan.models.base import MODELS
from ciyuan.models.vocab import VocabLike, _VocabModel

__all__ = ["WordLevel", "CharLevel"]


@MODELS.register
class WordLevel(_VocabModel):
    """Whole words: each word is one token, else ``unk_token``.

    Args:
        vocab: token -> id, or the tokens in id order.
        unk_token: token for unknown words; ``None`` makes them an error.

    Example:
        >>> m = WordLevel(["[UNK]", "hello", "world"])
        >>> from ciyuan import _core
        >>> ws = _core.FrontEnd.scanner(_core.parse_pattern("whitespace"))
        >>> m.make_encoder(ws).encode("hello big world", b"").ids
        [1, 0, 2]
    """

    type_name = "WordLevel"
    _kind = _core.WordModelKind.WORDLEVEL

    def __init__(self, vocab: VocabLike, *, unk_token: Optional[str] = "[UNK]") -> None:
        self._setup(vocab, unk_token, "", 0)

    def default_decoder(self) -> Decoder:
        """``decoders.WordLevel``: tokens joined with spaces."""
        return DECODERS.from_dict({"type": "WordLevel"})

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "unk_token": self.unk_token, "vocab": self.get_vocab()}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "WordLevel":
        if "vocab" not in data:
            raise ModelError(f"{cls.type_name} model description lacks the key 'vocab'")
        # Hugging Face's WordLevel defaults its unknown token to "<unk>".
        return cls(data["vocab"], unk_token=data.get("unk_token", "<unk>"))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.vocab_size} tokens, unk_token={self.unk_token!r})"


@MODELS.register
class CharLevel(WordLevel):
    """Characters: each character is one token, else ``unk_token`` (one per character).

    Args:
        vocab: token -> id, or the tokens in id order (multi-character tokens are allowed in the
            vocabulary but never produced).
        unk_token: token for unknown characters; ``None`` makes them an error.

    Example:
        >>> m = CharLevel(["[UNK]", "你", "好"])
        >>> m.make_encoder().encode("你好吗", b"").ids
        [1, 2, 0]
    """

    type_name = "CharLevel"
    _kind = _core.WordModelKind.CHARLEVEL

    def default_decoder(self) -> Decoder:
        """``decoders.CharLevel``: tokens joined without separator."""
        return DECODERS.from_dict({"type": "CharLevel"})
