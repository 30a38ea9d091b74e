"""Shared by the BERT parity tests: Hugging Face pipelines and ciyuan encoders built from the
same vocab.txt, and a hypothesis strategy for hostile text."""

from __future__ import annotations

from functools import lru_cache
from typing import List, Optional, Tuple

import pytest
from hypothesis import strategies as st

from tests.conftest import shared

BERT_VOCABS = {
    "uncased": "bert-base-uncased-vocab.txt",
    "chinese": "bert-base-chinese-vocab.txt",
}

# (vocab, lowercase): the configurations the issue asks for.
CONFIGS = [("uncased", True), ("chinese", True), ("chinese", False)]


@lru_cache(maxsize=None)
def vocab_tokens(name: str) -> Tuple[str, ...]:
    from ciyuan.formats.bert_vocab import load_bert_vocab

    return tuple(load_bert_vocab(shared("tokenizers", "bert", BERT_VOCABS[name])))


@lru_cache(maxsize=None)
def hf_pipeline(name: str, clean: bool = True, chinese: bool = True, strip: Optional[bool] = None,
                lower: bool = True):
    """Hugging Face: WordPiece + BertNormalizer + BertPreTokenizer, no post-processor."""
    tokenizers = pytest.importorskip("tokenizers")
    tokens = vocab_tokens(name)
    hf = tokenizers.Tokenizer(tokenizers.models.WordPiece({t: i for i, t in enumerate(tokens)}, unk_token="[UNK]",
                                                          max_input_chars_per_word=100))
    hf.normalizer = tokenizers.normalizers.BertNormalizer(clean_text=clean, handle_chinese_chars=chinese,
                                                          strip_accents=strip, lowercase=lower)
    hf.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    return hf


@lru_cache(maxsize=None)
def ciyuan_encoder(name: str, clean: bool = True, chinese: bool = True, strip: Optional[bool] = None,
                   lower: bool = True):
    from ciyuan.front_end import FrontEnd
    from ciyuan.models import WordPiece
    from ciyuan.normalizers import BertNormalizer

    model = WordPiece(list(vocab_tokens(name)))
    return model.make_encoder(FrontEnd.bert(BertNormalizer(clean, chinese, strip, lower).native_bert_options()))


def mismatches(hf, enc, lines: List[str], limit: int = 5) -> List[str]:
    """Lines whose ids or offsets differ (described), at most `limit`."""
    out = []
    hf_all = hf.encode_batch(lines, add_special_tokens=False)
    ours = enc.encode_batch(lines, b"", 2)
    for line, h, c in zip(lines, hf_all, ours):
        if h.ids != c.ids or h.offsets != c.char_offsets(line):
            out.append(f"{line[:120]!r}: HF {list(zip(h.tokens, h.offsets))[:30]} ciyuan ids {c.ids[:30]} "
                       f"offsets {c.char_offsets(line)[:30]}")
            if len(out) >= limit:
                break
    return out


# Text that stresses the front end: every kind of whitespace and control character, combining
# marks (also in non-canonical order), CJK (incl. compatibility ideographs), accented and
# special-cased letters (İ, ẞ, Σ), punctuation of all scripts, emoji with ZWJ / variation
# selectors, and arbitrary code points.
_SPECIAL = (
    "\t\n\r\x0b\x0c\x1c\x1f \x85\xa0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000"
    "\x00\x01\x7f\u00ad\u200b\u200c\u200d\u2060\ufeff\ufffd\ue000"
    "\u0300\u0301\u0316\u0327\u0345\u05b0\u093c\u094d\u0e38\u302a\u1d165\u20dd\ufe0f"
    "中国字\u3400\u4dbf\u9fff\uf900\ufa6d\U00020000\U0002f800\u3042\u30a2\uac00\u1100"
    "İıẞßΣσςǅǈÅÉéñÑøØæÆœŒĳ\u1e9eﬁＡａ"
    ".,!?;:'\"()[]{}<>-_/\\@#$%^&*+=|~`«»“”‘’—–…。，、！？：；「」《》¡¿·\u037e\u1fef"
    "😀👍🏽🧑\u200d💻🇨🇳"
)
TEXT = st.lists(
    st.one_of(
        st.sampled_from(list(_SPECIAL) + ["\U0001d165", "\U0001d16e", "\U0001d16d", "\u1b44", "\U0001d15e",
                                          "a\u0315\u0300", "e\u0301\u0316"]),
        st.characters(blacklist_categories=("Cs",)),
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ", min_size=1, max_size=12),
    ),
    max_size=40,
).map("".join)
