"""BERT's normalizer, identical to Hugging Face's ``BertNormalizer``, with offsets.

In order, per character: ``clean_text`` removes control and format characters (and NUL,
U+FFFD) and turns every whitespace character into a space; ``handle_chinese_chars`` puts spaces
around CJK ideographs (so each becomes its own word); ``strip_accents`` decomposes (NFD) and
drops the nonspacing marks; ``lowercase`` lowercases. ``strip_accents=None`` follows
``lowercase``, as in Hugging Face (uncased BERT strips accents, cased BERT keeps them).

The work is native (tables generated from Hugging Face itself, so both see the same Unicode
version); every output character points at the original character it came from.
"""

from __future__ import annotations

from typing import Optional, Tuple

from ciyuan import _core
from ciyuan._text import replace_surrogates_in_place
from ciyuan.errors import ModelError
from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer

__all__ = ["BertNormalizer"]


@NORMALIZERS.register
class BertNormalizer(Normalizer):
    """Hugging Face's ``BertNormalizer``.

    Args:
        clean_text: remove control characters, turn whitespace into spaces.
        handle_chinese_chars: surround each CJK ideograph with spaces.
        strip_accents: NFD and drop nonspacing marks; ``None``: the same as ``lowercase``.
        lowercase: lowercase everything.

    Example:
        >>> BertNormalizer().normalize_str("Héllo\\t中国!")
        'hello  中  国 !'
    """

    type_name = "BertNormalizer"
    options = ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase")

    def __init__(
        self,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: Optional[bool] = None,
        lowercase: bool = True,
    ) -> None:
        for name, value in (("clean_text", clean_text), ("handle_chinese_chars", handle_chinese_chars),
                            ("lowercase", lowercase)):
            if not isinstance(value, bool):
                raise ModelError(f"{name} must be True or False, got {value!r}")
        if strip_accents is not None and not isinstance(strip_accents, bool):
            raise ModelError(f"strip_accents must be True, False or None, got {strip_accents!r}")
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = strip_accents
        self.lowercase = lowercase

    def native_options(self) -> Tuple[bool, bool, bool, bool]:
        """``(clean_text, handle_chinese_chars, strip_accents, lowercase)`` with ``strip_accents``
        resolved (``None`` follows ``lowercase``)."""
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        return (self.clean_text, self.handle_chinese_chars, strip, self.lowercase)

    def native_bert_options(self) -> _core.BertOptions:
        """The options as the native BERT front end takes them (see :meth:`native_options`)."""
        clean, chinese, strip, lower = self.native_options()
        return _core.BertOptions(clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip, lowercase=lower)

    def normalize(self, text: NormalizedString) -> NormalizedString:
        s = text.text
        try:
            out, spans = _core.bert_normalize(s, self.native_bert_options())
        except UnicodeEncodeError:
            out, spans = _core.bert_normalize(replace_surrogates_in_place(s), self.native_bert_options())
        if out == s and all(a == i for i, (a, _) in enumerate(spans)) and len(spans) == len(s):
            return text
        if text.spans is not None:
            spans = [text.original_span(a, b) for a, b in spans]
        return NormalizedString(text.original, out, spans)
