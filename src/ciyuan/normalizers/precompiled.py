"""Hugging Face's ``Precompiled`` normalizer: a SentencePiece charsmap applied as Hugging Face does.

The charsmap (SentencePiece's ``precompiled_charsmap``, base64 in tokenizer.json) maps UTF-8
keys to replacements (NFKC and the rest; see :mod:`ciyuan.normalizers.spm_charsmap`).
Hugging Face applies it per extended grapheme cluster, not by SentencePiece's longest match:
a cluster shorter than 6 bytes that starts with a key is replaced whole by the value of the
*shortest* key it starts with; otherwise each character of the cluster that starts with a key
is replaced by that key's value. The alignment follows Hugging Face's ``replace``: the new
characters take the old ones' places in order, extra ones are inserted after them, and
characters removed fold into the one before. Cost: O(n) dictionary look-ups.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Dict, List, Mapping, Optional

import regex

from ciyuan.errors import ModelError
from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer
from ciyuan.normalizers.spm_charsmap import split_charsmap, unit_offset

__all__ = ["Precompiled"]

_GRAPHEME = regex.compile(r"\X")
_LEAF_BIT = 1 << 31


def _replace(dest: List[List[Any]], old: str, new: str) -> None:
    """Append ``new`` in place of ``old`` to the (char, change) list, by Hugging Face's rule."""
    dest.extend([c, 0] for c in new)
    diff = len(new) - len(old)
    if diff > 0:  # the last `diff` characters are inserted
        for item in dest[len(dest) - diff:]:
            item[1] = 1
    elif diff < 0 and dest:  # the characters removed fold into the last one written
        dest[-1][1] += diff


@NORMALIZERS.register
class Precompiled(Normalizer):
    """A precompiled charsmap, as Hugging Face's ``Precompiled`` applies it.

    Args:
        precompiled_charsmap: the charsmap's bytes, or their base64 text (tokenizer.json's form).

    Example:
        >>> from ciyuan.normalizers.spm_charsmap import named_charsmap
        >>> Precompiled(named_charsmap("nmt_nfkc")).normalize_str("ｃｉｙｕａｎ ①")
        'ciyuan 1'
    """

    type_name = "Precompiled"

    def __init__(self, precompiled_charsmap: "bytes | str | None") -> None:
        if precompiled_charsmap is None:
            blob = b""
        elif isinstance(precompiled_charsmap, str):
            try:
                blob = base64.b64decode(precompiled_charsmap, validate=True)
            except (binascii.Error, ValueError) as e:
                raise ModelError(f"Precompiled's precompiled_charsmap is not valid base64: {e}") from None
        elif isinstance(precompiled_charsmap, (bytes, bytearray)):
            blob = bytes(precompiled_charsmap)
        else:
            raise ModelError("precompiled_charsmap must be bytes or base64 text, "
                             f"got {type(precompiled_charsmap).__name__}")
        self.precompiled_charsmap = blob
        self._units, self._strings = split_charsmap(blob)
        self._cache: Dict[str, Optional[str]] = {}

    def _transform(self, chunk: str) -> Optional[str]:
        """The value of the shortest key ``chunk`` starts with (Hugging Face's look-up), or None."""
        if chunk in self._cache:
            return self._cache[chunk]
        units, found = self._units, None
        pos = 0
        if units:
            pos = unit_offset(units[0])
            for c in chunk.encode("utf-8", "surrogatepass"):
                pos ^= c
                if pos >= len(units) or units[pos] & (_LEAF_BIT | 0xFF) != c:
                    break
                unit = units[pos]
                pos ^= unit_offset(unit)
                if (unit >> 8) & 1:  # a key ends here: the first (shortest) one wins
                    if pos >= len(units):
                        raise ModelError("the precompiled charsmap is corrupt: a value lies outside the double array")
                    start = units[pos] & (_LEAF_BIT - 1)
                    end = self._strings.find(b"\0", start)
                    if end < 0:
                        raise ModelError("the precompiled charsmap is corrupt: a rule points outside its strings")
                    found = self._strings[start:end].decode("utf-8", "replace")
                    break
        if len(self._cache) < 1 << 16:
            self._cache[chunk] = found
        return found

    def normalize(self, text: NormalizedString) -> NormalizedString:
        s = text.text
        if not self._units:
            return text
        dest: List[List[Any]] = []
        modified = False
        for grapheme in _GRAPHEME.findall(s):
            if len(grapheme.encode("utf-8", "surrogatepass")) < 6:
                value = self._transform(grapheme)
                if value is not None:
                    modified = True
                    _replace(dest, grapheme, value)
                    continue
            for c in grapheme:
                value = self._transform(c)
                if value is not None:
                    modified = True
                    _replace(dest, c, value)
                else:
                    dest.append([c, 0])
        if not modified:
            return text
        return text.transform((c, change) for c, change in dest)

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name,
                "precompiled_charsmap": base64.b64encode(self.precompiled_charsmap).decode("ascii")}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Precompiled":
        return cls(data.get("precompiled_charsmap"))

    def __repr__(self) -> str:
        return f"Precompiled(<{len(self.precompiled_charsmap)} bytes>)"
