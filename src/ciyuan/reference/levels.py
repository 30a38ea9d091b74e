"""Word-level tokens in plain Python (document 003's word level; the oracle of
``ciyuan.textbook.word_level``).

The text is split on whitespace. A chunk with no Han character (CJK unified or compatibility
ideograph) is one word. A chunk with one is cut into pieces by ``cut`` (a dictionary
segmenter); then every piece made only of punctuation (Unicode category P*) is glued to the
word before it - or, when no word came before it in the chunk, to the word after it - the way
whitespace splitting leaves ``"books."`` in one piece.

Example:
    >>> word_level("好，走吧。 ok.", lambda s: list(s))
    ['好，', '走', '吧。', 'ok.']
"""

from __future__ import annotations

import unicodedata
from typing import Callable, List

__all__ = ["word_level"]


def _han(c: str) -> bool:
    return unicodedata.name(c, "").startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH"))


def word_level(sentence: str, cut: Callable[[str], List[str]]) -> List[str]:
    words: List[str] = []
    for chunk in sentence.split():
        if not any(_han(c) for c in chunk):
            words.append(chunk)
            continue
        out: List[str] = []
        opening = ""  # punctuation before the chunk's first word
        for piece in cut(chunk):
            if all(unicodedata.category(c).startswith("P") for c in piece):
                if out:
                    out[-1] += piece
                else:
                    opening += piece
            else:
                out.append(opening + piece)
                opening = ""
        words += out + ([opening] if opening else [])
    return words
