"""Shared by the normalizer and pre-tokenizer parity tests: corpus lines and generated text, and
how a ciyuan component's output is compared with Hugging Face ``tokenizers``' (0.23).

Pre-tokenizers are compared by ``pre_tokenize_str`` (pieces and character offsets in the
original text); Hugging Face's ``ByteLevel`` shows each piece's bytes as GPT-2's printable
characters, so ciyuan's pieces are mapped the same way before comparing. Normalizers are
compared by ``normalize_str`` and by the original span of every normalized character (read
from Hugging Face through a ``Split`` into single characters).
"""

from __future__ import annotations

import functools
from typing import Any, List, Tuple

from hypothesis import strategies as st

from ciyuan.byte_alphabet import bytes_to_printable
from tests.conftest import read_prefix, shared

CORPORA = {
    "en": ("corpora", "en", "tinyshakespeare.txt"),
    "zh": ("corpora", "zh", "jinyong_16novels.txt"),
    "multi": ("corpora", "multi", "udhr_sample.txt"),
    "emoji": ("corpora", "multi", "emoji.txt"),
}


@functools.lru_cache(maxsize=None)
def corpus_lines(name: str, limit: int = 200_000) -> Tuple[str, ...]:
    """The lines (newline kept) of the first ``limit`` bytes of a corpus; skips without the data."""
    text = read_prefix(shared(*CORPORA[name]), limit)
    return tuple(text.splitlines(keepends=True))


# Characters that exercise the corners: whitespace of every kind, controls, marks, digits of
# other scripts, punctuation and symbols, CJK, emoji (with joiners), unassigned code points.
TRICKY = [" ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u1680", "\u2000",
          "\u200b", "\u2028", "\u3000", "\ufeff", "\x00", "\x7f", "\x9f", "\u200d", "\u0301", "\u20dd", "a", "Z",
          "é", "É", "ß", "İ", "ǅ", "Σ", "ﬁ", "Ａ", "ｶ", "0", "7", "٣", "½", "²", "Ⅻ", "_", "'", "'s", "'LL", "-",
          ",", ".", "!", "¿", "$", "^", "`", "“", "。", "，", "中", "國", "あ", "ー", "한", "😀", "👍🏽", "👨\u200d👩",
          "▁", "Ġ", "\ufffd", "\U000e0001", "\u0378", "\U0003ffff", "\U0010fffd", "\ue000"]
tricky_text = st.lists(st.sampled_from(TRICKY), max_size=20).map("".join)
any_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
texts = st.one_of(tricky_text, any_text)
# For components that run a general regular expression: the regex module's Unicode tables are
# newer than Oniguruma's (Hugging Face), so code points assigned since differ in class; the
# text keeps to characters Python's (older) Unicode assigns.
assigned_text = st.one_of(tricky_text, st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cn")),
                                               max_size=40))


def hf_pieces(hf: Any, text: str) -> List[Tuple[str, Tuple[int, int]]]:
    return [(p, tuple(o)) for p, o in hf.pre_tokenize_str(text)]  # type: ignore[misc]


def ours_pieces(pre: Any, text: str, byte_level: bool = False) -> List[Tuple[str, Tuple[int, int]]]:
    out = pre.pre_tokenize_str(text)
    if byte_level:
        return [(bytes_to_printable(p.encode("utf-8")), o) for p, o in out]
    return out
