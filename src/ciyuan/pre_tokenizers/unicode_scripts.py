"""Hugging Face's ``UnicodeScripts`` pre-tokenizer: split where the writing system changes.

Each character has a script (from ``hf_scripts.py``, measured from Hugging Face itself, whose
Unicode tables are older than Python's); Hiragana, Katakana and the prolonged sound mark
U+30FC count as Han, so Japanese text stays whole. A space belongs to no script: it never
starts a piece and stays with the text before it; spaces at the very start are dropped, as
in Hugging Face; code points of no script (unassigned, private use) behave the same.
Common characters (digits, punctuation, other whitespace) and marks
(Inherited) are scripts of their own. Cost: O(n log s) for s script ranges.
"""

from __future__ import annotations

import bisect
import functools
from typing import List, Optional

from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span
from ciyuan.pre_tokenizers.hf_scripts import NAMES, RANGES

__all__ = ["UnicodeScripts"]

_STARTS = [r[0] for r in RANGES]
_HAN = NAMES.index("Han")
# No script: the space and the code points of the Unknown script (unassigned, private use), which
# Hugging Face treats alike (they join the piece before them; at the start they are dropped).
_UNKNOWN = NAMES.index("Unknown") if "Unknown" in NAMES else -1
_FOLDED = {NAMES.index(n) for n in ("Hiragana", "Katakana") if n in NAMES}


@functools.lru_cache(maxsize=1 << 16)
def _script(c: str) -> Optional[int]:
    """The script index of ``c`` as Hugging Face groups them; None for no script."""
    cp = ord(c)
    if cp == 0x20:
        return None
    if cp == 0x30FC:
        return _HAN
    i = bisect.bisect_right(_STARTS, cp) - 1
    if i < 0 or RANGES[i][1] < cp or RANGES[i][2] == _UNKNOWN:
        return None
    script = RANGES[i][2]
    return _HAN if script in _FOLDED else script


@PRE_TOKENIZERS.register
class UnicodeScripts(PreTokenizer):
    """Split where the script changes (Hugging Face's ``UnicodeScripts``).

    Example:
        >>> UnicodeScripts().pre_tokenize_str("abc ди中文")
        [('abc ', (0, 4)), ('ди', (4, 6)), ('中文', (6, 8))]
    """

    type_name = "UnicodeScripts"

    def split(self, text: str) -> List[Span]:
        """Character spans [start, end) of the pieces of ``text``."""
        cuts: List[int] = []
        last: Optional[int] = None
        for i, c in enumerate(text):
            script = _script(c)
            if script is None:
                continue
            if script != last:
                cuts.append(i)
            last = script
        cuts.append(len(text))
        return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
