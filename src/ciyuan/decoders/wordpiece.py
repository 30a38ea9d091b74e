"""Decode WordPiece tokens as BERT does: a ``##`` piece joins the token before it, every other
token starts a new word (a space), and optionally the spaces that tokenization put before
punctuation and English contractions are taken out again.

The clean-up works token by token, exactly as Hugging Face's ``decoders.WordPiece``: each
replacement (``" ."`` -> ``"."``, ``" n't"`` -> ``"n't"``, ...) is applied to one token with its
leading space, so a phrase spread over several tokens (``do not``) is left as it is.
"""

from __future__ import annotations

from typing import Any, Dict, List

__all__ = ["WordPiece", "WordLevel", "CharLevel"]

# (before, after) applied in this order to each token with its leading space.
_CLEANUP = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
    (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


def _text(token: bytes) -> str:
    return token.decode("utf-8", "replace")


class WordPiece:
    """Join WordPiece tokens into text.

    Args:
        prefix: the continuation prefix of the model (``"##"``).
        cleanup: remove the spaces before punctuation and contractions (BERT's clean-up).

    Example:
        >>> WordPiece().decode([b"un", b"##afford", b"##able", b"!"])
        'unaffordable!'
    """

    type_name = "WordPiece"
    joins_bytes = False

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix = prefix
        self.cleanup = bool(cleanup)

    def decode(self, tokens: List[bytes]) -> str:
        out: List[str] = []
        prefix = self.prefix
        for i, data in enumerate(tokens):
            token = _text(data)
            if i:
                token = token[len(prefix):] if prefix and token.startswith(prefix) else " " + token
            if self.cleanup:
                for before, after in _CLEANUP:
                    token = token.replace(before, after)
            out.append(token)
        return "".join(out)

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "prefix": self.prefix, "cleanup": self.cleanup}

    def __repr__(self) -> str:
        return f"WordPiece(prefix={self.prefix!r}, cleanup={self.cleanup})"


class WordLevel:
    """Join whole-word tokens with a space.

    Example:
        >>> WordLevel().decode([b"hello", b"world"])
        'hello world'
    """

    type_name = "WordLevel"
    joins_bytes = False

    def __init__(self, separator: str = " ") -> None:
        self.separator = separator

    def decode(self, tokens: List[bytes]) -> str:
        return self.separator.join(_text(t) for t in tokens)

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "separator": self.separator}

    def __repr__(self) -> str:
        return f"WordLevel(separator={self.separator!r})"


class CharLevel(WordLevel):
    """Join character tokens with nothing between them.

    Example:
        >>> CharLevel().decode([b"\\xe8\\xaf\\x8d", b"\\xe5\\x85\\x83"])
        '词元'
    """

    type_name = "CharLevel"

    def __init__(self, separator: str = "") -> None:
        super().__init__(separator)

    def __repr__(self) -> str:
        return "CharLevel()" if self.separator == "" else f"CharLevel(separator={self.separator!r})"
