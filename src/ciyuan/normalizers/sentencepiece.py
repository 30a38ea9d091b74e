"""SentencePiece's normalizer, identical to sentencepiece's, with offsets.

In order: at each position a user-defined symbol is copied as it is (the longest one), else the
longest rule of the character map replaces its key (NFKC and the rest, see
:mod:`ciyuan.normalizers.spm_charsmap`), else one character is copied; then whitespace:
leading, trailing and repeated spaces are dropped (``remove_extra_whitespaces``), spaces become
``▁`` (``escape_whitespaces``) and one ``▁`` is added in front (``add_dummy_prefix``), or at
the end with ``treat_whitespace_as_suffix``.

The work is native (``_core.FrontEnd.sentencepiece``); a tokenizer with this normalizer and no
pre-tokenizer runs it as its native front end. Each output character points at the original
text it came from, as sentencepiece's alignment does (the added ``▁`` at an empty span).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Dict, Mapping, Optional, Sequence

from ciyuan import _core
from ciyuan._text import replace_surrogates_in_place
from ciyuan.errors import ModelError
from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer
from ciyuan.normalizers.spm_charsmap import RULES, named_charsmap

__all__ = ["SentencePieceNormalizer"]

_FLAGS = ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces", "treat_whitespace_as_suffix")


@NORMALIZERS.register
class SentencePieceNormalizer(Normalizer):
    """SentencePiece's normalizer (a ``.model`` file's ``normalizer_spec``).

    Args:
        rule: the named rule: ``"nmt_nfkc"`` (NFKC, control characters removed, odd spaces made
            spaces), ``"nfkc"``, ``"nmt_nfkc_cf"``, ``"nfkc_cf"`` (with case folding) or
            ``"identity"``.
        charsmap: a precompiled character map (from a ``.model`` file); it wins over ``rule``.
        add_dummy_prefix: put a ``▁`` before the text (so a first word looks like the others).
        remove_extra_whitespaces: drop leading, trailing and repeated spaces.
        escape_whitespaces: write spaces as ``▁`` (U+2581).
        treat_whitespace_as_suffix: the dummy ``▁`` goes at the end instead.
        user_defined_symbols: texts copied unnormalized (matched longest first).

    Raises:
        ModelError: an unknown rule, or a corrupt ``charsmap``.

    Example:
        >>> SentencePieceNormalizer().normalize_str("  Ｈello   world ")
        '▁Hello▁world'
    """

    type_name = "SentencePiece"
    options = ("rule", "charsmap", *_FLAGS, "user_defined_symbols")

    def __init__(
        self,
        rule: str = "nmt_nfkc",
        *,
        charsmap: Optional[bytes] = None,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        user_defined_symbols: Sequence[str] = (),
    ) -> None:
        if rule not in RULES:
            raise ModelError(f"unknown SentencePiece normalization rule {rule!r}; use one of {', '.join(RULES)}")
        if charsmap is not None and not isinstance(charsmap, (bytes, bytearray)):
            raise ModelError(f"charsmap must be bytes (a precompiled character map), got {type(charsmap).__name__}")
        flags = (add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, treat_whitespace_as_suffix)
        for name, value in zip(_FLAGS, flags):
            if not isinstance(value, bool):
                raise ModelError(f"{name} must be True or False, got {value!r}")
        if isinstance(user_defined_symbols, str) or not all(isinstance(s, str) and s for s in user_defined_symbols):
            raise ModelError("user_defined_symbols must be a list of non-empty strings")
        self.rule = rule
        self.charsmap = bytes(charsmap) if charsmap is not None else None
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.user_defined_symbols = list(user_defined_symbols)
        self._front_end = _core.FrontEnd.sentencepiece(self.native_options())  # validates the charsmap

    @property
    def precompiled_charsmap(self) -> bytes:
        """The character map in use: ``charsmap`` if given, else the rule's (built and cached)."""
        return self.charsmap if self.charsmap is not None else named_charsmap(self.rule)

    def native_options(self, split_by_whitespace: bool = True) -> _core.SpmNormalizerOptions:
        """The options as the native front end takes them; ``split_by_whitespace`` matters to
        the trainers' word counting only (False: each sentence is one word)."""
        o = _core.SpmNormalizerOptions()
        o.charsmap = self.precompiled_charsmap
        o.add_dummy_prefix = self.add_dummy_prefix
        o.remove_extra_whitespaces = self.remove_extra_whitespaces
        o.escape_whitespaces = self.escape_whitespaces
        o.treat_whitespace_as_suffix = self.treat_whitespace_as_suffix
        o.split_by_whitespace = split_by_whitespace
        o.user_defined_symbols = list(self.user_defined_symbols)
        return o

    def native_sentencepiece_options(self) -> _core.SpmNormalizerOptions:
        """The native front end's options (see :meth:`native_options`)."""
        return self.native_options()

    def normalize(self, text: NormalizedString) -> NormalizedString:
        s = text.text
        try:
            out, spans = _core.spm_normalize(s, self._front_end)
        except UnicodeEncodeError:
            out, spans = _core.spm_normalize(replace_surrogates_in_place(s), self._front_end)
        if text.spans is not None:
            spans = [_map_span(text, a, b) for a, b in spans]
        return NormalizedString(text.original, out, spans)

    def to_dict(self) -> Dict[str, Any]:
        data = super().to_dict()
        if self.charsmap is not None:
            data["charsmap"] = base64.b64encode(self.charsmap).decode("ascii")
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SentencePieceNormalizer":
        options = {name: data[name] for name in cls.options if name in data}
        charsmap = options.pop("charsmap", None)
        if isinstance(charsmap, str):
            try:
                charsmap = base64.b64decode(charsmap.encode("ascii"), validate=True)
            except (binascii.Error, UnicodeEncodeError):
                raise ModelError("the SentencePiece normalizer's charsmap is not valid base64") from None
        return cls(options.pop("rule", "nmt_nfkc"), charsmap=charsmap, **options)

    def __repr__(self) -> str:
        shown = [f"{self.rule!r}"]
        if self.charsmap is not None:
            shown.append(f"charsmap=<{len(self.charsmap)} bytes>")
        shown += [f"{name}={getattr(self, name)!r}" for name in (*_FLAGS, "user_defined_symbols")]
        return f"SentencePieceNormalizer({', '.join(shown)})"


def _map_span(text: NormalizedString, start: int, end: int) -> tuple[int, int]:
    """A span of text.text -> the span of text.original (an empty span stays empty)."""
    if start == end:
        return text.original_span(start, start) if text.spans is not None else (start, start)
    return text.original_span(start, end)
