"""Decode WordPiece tokens as BERT does: a ``##`` piece joins the token before it, every other
token starts a new word (a space), and optionally the spaces that tokenization put before
punctuation and English contractions are taken out again.

The clean-up works token by token, exactly as Hugging Face's ``decoders.WordPiece``: each
replacement (``" ."`` -> ``"."``, ``" n't"`` -> ``"n't"``, ...) is applied to one token with its
leading space, so a phrase spread over several tokens (``do not``) is left as it is.
"""

from __future__ import annotations

import re
from typing import List

from ciyuan.decoders.base import DECODERS, Decoder

__all__ = ["WordPiece", "cleanup"]

# (before, after) applied in this order to each token with its leading space.
_CLEANUP = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
    (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


# Every `before` is a space and one of these: a text without such a pair is left as it is.
_MAYBE_CLEANED = re.compile(r" [.?!,'nd]")


def cleanup(text: str) -> str:
    """BERT's clean-up of one token with its leading space (also the CTC decoder's).

    Example:
        >>> cleanup(" n't"), cleanup(" do not")
        ("n't", " don't")
    """
    if _MAYBE_CLEANED.search(text) is None:  # most tokens: one search instead of 11 replaces
        return text
    for before, after in _CLEANUP:
        text = text.replace(before, after)
    return text


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
        return "".join(self.decode_chain([data.decode("utf-8", "replace") for data in tokens]))

    def decode_chain(self, tokens: List[str]) -> List[str]:
        """Hugging Face's step: each token joined to its word or given its leading space."""
        out: List[str] = []
        prefix = self.prefix
        for i, token in enumerate(tokens):
            if i:
                # An empty prefix starts every token: the tokens join without spaces (as in HF).
                token = token[len(prefix):] if token.startswith(prefix) else " " + token
            out.append(cleanup(token) if self.cleanup else token)
        return out
