"""Hugging Face's CTC decoder (speech models' character vocabularies): repeated tokens
collapse into one, the padding token disappears, and with ``cleanup`` the word delimiter
becomes a space after BERT's clean-up of each token."""

from __future__ import annotations

from typing import List

from ciyuan.decoders.base import DECODERS, TokenDecoder
from ciyuan.decoders.wordpiece import cleanup as _cleanup

__all__ = ["CTC"]


@DECODERS.register
class CTC(TokenDecoder):
    """Collapse repeats, drop ``pad_token``, ``word_delimiter_token`` -> space.

    Example:
        >>> CTC().decode_tokens(["<pad>", "h", "h", "i", "|", "y", "o", "o", "<pad>", "o"])
        'hi yoo'
    """

    type_name = "CTC"
    options = ("pad_token", "word_delimiter_token", "cleanup")

    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        self.pad_token = pad_token
        self.word_delimiter_token = word_delimiter_token
        self.cleanup = bool(cleanup)

    def decode_chain(self, tokens: List[str]) -> List[str]:
        out: List[str] = []
        previous = None
        for token in tokens:
            if token == previous:  # consecutive repeats are one token
                continue
            previous = token
            text = token.replace(self.pad_token, "") if self.pad_token else token
            if self.cleanup:
                text = _cleanup(text).replace(self.word_delimiter_token, " ")
            if text:
                out.append(text)
        return out
