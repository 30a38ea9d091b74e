"""Whole pipelines against Hugging Face ``tokenizers`` 0.23: normalizer + pre-tokenizer + a word
model, so that ids and OFFSETS (through normalization and text-rewriting pre-tokenizers, across
special tokens) are compared end to end, on corpus lines.

The model is a WordLevel vocabulary of the most frequent pieces (each piece one token, the rest
``[UNK]``): every difference in normalization, cutting or alignment shows in ids or offsets.
ByteLevel pieces are held by Hugging Face as GPT-2's printable characters and by ciyuan as the
bytes themselves, so the vocabulary is mapped between the two.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Dict, List, Tuple

import pytest

import ciyuan
import ciyuan.normalizers as cn
import ciyuan.pre_tokenizers as cp
from ciyuan.byte_alphabet import printable_to_bytes
from ciyuan.models import WordLevel
from ciyuan.normalizers.spm_charsmap import named_charsmap
from ciyuan.pre_tokenizers.patterns import LLAMA3_PATTERN
from tests.hf_components import corpus_lines

hf = pytest.importorskip("tokenizers")
hn, hp = hf.normalizers, hf.pre_tokenizers

SPECIAL = "<|sep|>"
# name -> (ciyuan normalizer, ciyuan pre-tokenizer, HF normalizer, HF pre-tokenizer, byte-level)
Pipeline = Tuple[Callable[[], Any], Callable[[], Any], Callable[[], Any], Callable[[], Any], bool]
PIPELINES: Dict[str, Pipeline] = {
    "metaspace-first": (lambda: None, lambda: cp.Metaspace(prepend_scheme="first"),
                        lambda: None, lambda: hp.Metaspace(prepend_scheme="first"), False),
    "nfkc-lower-metaspace": (lambda: cn.Sequence([cn.NFKC(), cn.Lowercase()]), cp.Metaspace,
                             lambda: hn.Sequence([hn.NFKC(), hn.Lowercase()]), hp.Metaspace, False),
    "llama2-normalizer": (lambda: cn.Sequence([cn.Prepend("\u2581"), cn.Replace(" ", "\u2581")]),
                          lambda: cp.Metaspace(prepend_scheme="never"),
                          lambda: hn.Sequence([hn.Prepend("\u2581"), hn.Replace(" ", "\u2581")]),
                          lambda: hp.Metaspace(prepend_scheme="never"), False),
    "t5-precompiled": (lambda: cn.Sequence([cn.Precompiled(named_charsmap("nmt_nfkc")),
                                            cn.Replace({"Regex": " {2,}"}, " ")]),
                       lambda: cp.Sequence([cp.WhitespaceSplit(), cp.Metaspace()]),
                       lambda: hn.Sequence([hn.Precompiled(named_charsmap("nmt_nfkc")),
                                            hn.Replace(hf.Regex(" {2,}"), " ")]),
                       lambda: hp.Sequence([hp.WhitespaceSplit(), hp.Metaspace()]), False),
    "bert-like": (lambda: cn.Sequence([cn.NFD(), cn.Lowercase(), cn.StripAccents()]),
                  lambda: cp.Sequence([cp.Whitespace(), cp.Digits(individual_digits=True), cp.Punctuation()]),
                  lambda: hn.Sequence([hn.NFD(), hn.Lowercase(), hn.StripAccents()]),
                  lambda: hp.Sequence([hp.Whitespace(), hp.Digits(individual_digits=True), hp.Punctuation()]),
                  False),
    "bytelevel-prefix": (lambda: None, cp.ByteLevel, lambda: None, hp.ByteLevel, True),
    "llama3-split-bytelevel": (
        lambda: None,
        lambda: cp.Sequence([cp.Split({"Regex": LLAMA3_PATTERN}), cp.ByteLevel(False, use_regex=False)]),
        lambda: None,
        lambda: hp.Sequence([hp.Split(hf.Regex(LLAMA3_PATTERN), "isolated"), hp.ByteLevel(False, use_regex=False)]),
        True),
}


def _vocab(hf_norm: Any, hf_pre: Any, lines: List[str]) -> List[str]:
    counts: Counter = Counter()
    for line in lines:
        text = hf_norm.normalize_str(line) if hf_norm is not None else line
        counts.update(p for p, _ in hf_pre.pre_tokenize_str(text))
    return ["[UNK]", SPECIAL] + [p for p, _ in counts.most_common(3000)]


def _pair(name: str, lines: List[str]) -> Tuple[Any, Any]:
    make_cn, make_cp, make_hn, make_hp, byte_level = PIPELINES[name]
    theirs = hf.Tokenizer(hf.models.WordLevel({t: i for i, t in enumerate(_vocab(make_hn(), make_hp(), lines))},
                                              unk_token="[UNK]"))
    vocab = list(theirs.get_vocab(with_added_tokens=False).items())
    if make_hn() is not None:
        theirs.normalizer = make_hn()
    theirs.pre_tokenizer = make_hp()
    theirs.add_special_tokens([SPECIAL])
    if byte_level:  # ciyuan's byte-level pieces are the bytes themselves
        vocab = [(t if t in ("[UNK]", SPECIAL) else printable_to_bytes(t).decode("utf-8", "replace"), i)
                 for t, i in vocab]
    words: Dict[str, int] = {}
    for token, i in sorted(vocab, key=lambda x: x[1]):
        words.setdefault(token, i)
    mine = ciyuan.Tokenizer(WordLevel(words, unk_token="[UNK]"), normalizer=make_cn(), pre_tokenizer=make_cp(),
                            special_tokens={SPECIAL: words[SPECIAL]})
    return mine, theirs


def _texts(corpus: str, limit: int) -> List[str]:
    lines = [line.rstrip("\n") for line in corpus_lines(corpus, limit)]
    # Special tokens inside and at the start: segments after them start past 0.
    return lines + [f"{a} {SPECIAL}{b}" for a, b in zip(lines[::7], lines[1::7])] + [SPECIAL + " " + lines[0]]


def _check(name: str, limit: int) -> None:
    for corpus in ("en", "zh", "multi"):
        texts = _texts(corpus, limit)
        mine, theirs = _pair(name, texts)
        for text in texts:
            a = mine.encode(text, allowed_special="all")
            b = theirs.encode(text, add_special_tokens=False)
            assert (a.ids, a.offsets) == (b.ids, [tuple(o) for o in b.offsets]), (name, corpus, text)


@pytest.mark.parametrize("name", list(PIPELINES))
def test_pipeline_prefixes(name: str) -> None:
    _check(name, 15_000)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PIPELINES))
def test_pipeline_corpora(name: str) -> None:
    _check(name, 600_000)  # whole corpora: tests/formats/test_hf_json_parity.py
