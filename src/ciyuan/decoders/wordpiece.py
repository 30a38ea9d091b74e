"""Decode WordPiece tokens as BERT does: a ``##`` piece joins the token before it, every other
token starts a new word (a space), and optionally the spaces that tokenization put before
punctuation and English contractions are taken out again.

The clean-up works token by token, exactly as Hugging Face's ``decoders.WordPiece``: each
replacement (``" ."`` -> ``"."``, ``" n't"`` -> ``"n't"``, ...) is applied to one token with its
leading space, so a phrase spread over several tokens (``do not``) is left as it is.
"""

from __future__ import annotations

from typing import List

from ciyuan.decoders.base import DECODERS, Decoder

__all__ = ["WordPiece"]

# (before, after) applied in this order to each token with its leading space.
_CLEANUP = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
    (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


@DECODERS.register
class WordPiece(Decoder):
    """Join WordPiece tokens into text.

    Args:
        prefix: the continuation prefix of the model (``"##"``).
        cleanup: remove the spaces before punctuation and contractions (BERT's clean-up).

    Example:
        >>> WordPiece().decode([b"un", b"##afford", b"##able", b"!"])
        'unaffordable!'
    """

    type_name = "WordPiece"
    options = ("prefix", "cleanup")

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix = prefix
        self.cleanup = bool(cleanup)

    def decode(self, tokens: List[bytes]) -> str:
        out: List[str] = []
        prefix = self.prefix
        for i, data in enumerate(tokens):
            token = data.decode("utf-8", "replace")
            if i:
                token = token[len(prefix):] if prefix and token.startswith(prefix) else " " + token
            if self.cleanup:
                for before, after in _CLEANUP:
                    token = token.replace(before, after)
            out.append(token)
        return "".join(out)
