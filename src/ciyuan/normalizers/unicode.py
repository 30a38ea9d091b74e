"""Unicode normalization forms (NFC, NFD, NFKC, NFKD) and lowercasing, with Hugging Face's offsets.

The text and the alignment both equal Hugging Face's: each character is decomposed (the first
character of its decomposition keeps its place, the others are inserted after it), marks are
put in canonical order, and, for NFC/NFKC, a mark that composes into the starter before it is
absorbed by the starter (the composed character then points at the starter's source only, as
in Hugging Face: ``e`` + U+0301 -> ``é`` at the ``e``). The alignment is
:meth:`NormalizedString.transform`'s rule. Hugging Face's Unicode tables are older than
Python's: the characters where they differ are in ``hf_tables.py`` (generated from Hugging Face
itself). Cost: O(n) Python steps on text that is not already normalized; none on text that is.

``Lowercase`` runs natively on the BERT front end's lowercase table, which was also generated
from Hugging Face (Rust's ``char::to_lowercase``, character by character, so a final sigma
stays ``σ``).
"""

from __future__ import annotations

import functools
import unicodedata
from typing import List, Literal, Optional, Tuple, Type

import regex

from ciyuan import _core
from ciyuan._text import replace_surrogates_in_place
from ciyuan.normalizers.base import NORMALIZERS, NormalizedString, Normalizer
from ciyuan.normalizers.hf_tables import NORMALIZATION_EXCEPTIONS

__all__ = ["NFC", "NFD", "NFKC", "NFKD", "Lowercase", "hf_unchanged"]

_Form = Literal["NFC", "NFD", "NFKC", "NFKD"]
Change = Tuple[str, int]


def _exception_class(form: str) -> Optional["regex.Pattern[str]"]:
    table = NORMALIZATION_EXCEPTIONS[form]
    return regex.compile("[" + "".join(f"\\U{cp:08x}" for cp in table) + "]") if table else None


_EXCEPTIONS = {form: _exception_class(form) for form in NORMALIZATION_EXCEPTIONS}


@functools.lru_cache(maxsize=1 << 16)
def _decomposition(ch: str, form: _Form) -> str:
    """Hugging Face's decomposition (NFD or NFKD) of one character."""
    special = NORMALIZATION_EXCEPTIONS[form].get(ord(ch))
    return special if special is not None else unicodedata.normalize(form, ch)


@functools.lru_cache(maxsize=1 << 16)
def _composite(a: str, b: str) -> Optional[str]:
    """The primary composite of starter ``a`` and ``b``, if they compose."""
    c = unicodedata.normalize("NFC", a + b)
    return c if len(c) == 1 else None


def _decompose(text: str, form: _Form) -> List[Change]:
    out: List[Change] = []
    for ch in text:
        d = _decomposition(ch, form)
        out.append((d[0], 0))
        out.extend((c, 1) for c in d[1:])
    # Canonical order: each run of marks (combining class > 0) stably sorted by class.
    i, n = 0, len(out)
    while i < n:
        if unicodedata.combining(out[i][0]) == 0:
            i += 1
            continue
        j = i
        while j < n and unicodedata.combining(out[j][0]) != 0:
            j += 1
        if j - i > 1:
            out[i:j] = sorted(out[i:j], key=lambda item: unicodedata.combining(item[0]))
        i = j
    return out


def _compose(chars: List[Change]) -> List[Change]:
    out: List[Change] = []
    starter = -1  # index in out of the last starter
    last_class = -1  # class of the last character kept after the starter (-1: none yet)
    for ch, change in chars:
        cls = unicodedata.combining(ch)
        if starter >= 0 and (last_class == -1 or (last_class < cls)):
            composed = _composite(out[starter][0], ch)
            if composed is not None:  # the starter absorbs ch (and its change)
                out[starter] = (composed, out[starter][1] + change - 1)
                continue
        if cls == 0:
            starter, last_class = len(out), -1
        else:
            last_class = cls
        out.append((ch, change))
    return out


def hf_unchanged(text: str, form: _Form) -> bool:
    """Whether Hugging Face's ``form`` leaves ``text`` as it is (Python's check, and none of the
    characters where Hugging Face's tables differ).

    Example:
        >>> hf_unchanged("café", "NFC"), hf_unchanged("cafe\u0301", "NFC")
        (True, False)
    """
    special = _EXCEPTIONS[form]
    return unicodedata.is_normalized(form, text) and (special is None or special.search(text) is None)


def hf_normalize(text: NormalizedString, form: _Form) -> NormalizedString:
    """``text`` in ``form`` as Hugging Face normalizes it, with its alignment."""
    s = text.text
    if hf_unchanged(s, form):
        return text
    decomposition: _Form = "NFKD" if form.startswith("NFK") else "NFD"
    chars = _decompose(s, decomposition)
    if form in ("NFC", "NFKC"):
        chars = _compose(chars)
    return text.transform(chars)


class _UnicodeForm(Normalizer):
    """One Unicode normalization form; the subclass's ``type_name`` names the form."""

    type_name: _Form

    def normalize(self, text: NormalizedString) -> NormalizedString:
        return hf_normalize(text, self.type_name)


def _form(name: _Form, doc: str) -> Type[_UnicodeForm]:
    """The normalizer class of one form (they differ only by name)."""
    return NORMALIZERS.register(
        type(name, (_UnicodeForm,), {"type_name": name, "__doc__": doc, "__module__": __name__}))


NFC = _form("NFC", """Canonical composition: ``NFC().normalize_str("e\\u0301") == "é"``.""")
NFD = _form("NFD", """Canonical decomposition.""")
NFKC = _form("NFKC", """Compatibility composition (``ﬁ`` -> ``fi``, full-width -> ASCII).

    Example:
        >>> NFKC().normalize_str("ｃｉｙｕａｎ")
        'ciyuan'
    """)
NFKD = _form("NFKD", """Compatibility decomposition.""")

_LOWERCASE = _core.BertOptions(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=True)


@NORMALIZERS.register
class Lowercase(Normalizer):
    """Lowercase every character as Hugging Face does, keeping each output character's source.

    Example:
        >>> Lowercase().normalize_str("Ciyuan İ")
        'ciyuan i̇'
    """

    type_name = "Lowercase"

    def normalize(self, text: NormalizedString) -> NormalizedString:
        s = text.text
        if s.isascii() and s.lower() == s:
            return text
        try:
            out, spans = _core.bert_normalize(s, _LOWERCASE)
        except UnicodeEncodeError:
            out, spans = _core.bert_normalize(replace_surrogates_in_place(s), _LOWERCASE)
        if out == s:
            return text
        if text.spans is not None:
            spans = [text.original_span(a, b) for a, b in spans]
        return NormalizedString(text.original, out, spans)
