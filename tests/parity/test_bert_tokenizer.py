"""The whole BERT pipeline (``Tokenizer.from_bert_vocab``) against Hugging Face's
``BertWordPieceTokenizer`` built from the same vocab.txt: ids, tokens, offsets, type ids,
masks, sequence ids and overflowing windows, for single texts and pairs, with truncation and
padding, on the real corpora and on generated text.

Special-token text in the input ("[CLS]") is a special token for Hugging Face; ciyuan refuses
it unless allowed, so these tests pass ``allowed_special="all"`` to compare like with like.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import read_prefix, shared

tokenizers = pytest.importorskip("tokenizers")

FIELDS = ("ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask", "sequence_ids")
VOCABS = {
    "uncased": ("bert-base-uncased-vocab.txt", True),
    "chinese": ("bert-base-chinese-vocab.txt", True),
    "chinese-cased": ("bert-base-chinese-vocab.txt", False),
}
ALL = {"allowed_special": "all"}


def _vocab(name: str) -> Path:
    return shared("tokenizers", "bert", VOCABS[name][0])


_cache: dict = {}


def pipelines(name: str):
    """(ciyuan, Hugging Face) tokenizers for one vocab, built once per test session."""
    if name not in _cache:
        import ciyuan

        path, lowercase = _vocab(name), VOCABS[name][1]
        _cache[name] = (ciyuan.Tokenizer.from_bert_vocab(path, lowercase=lowercase),
                        tokenizers.BertWordPieceTokenizer(str(path), lowercase=lowercase))
    return _cache[name]


def assert_same(ours: Any, theirs: Any, where: str, depth: int = 0) -> None:
    for field in FIELDS:
        a, b = getattr(ours, field), getattr(theirs, field)
        if a != b:
            pytest.fail(f"{where}: {field} differs (overflow depth {depth})\nciyuan {a[:60]}\nHF     {b[:60]}")
    assert len(ours.overflowing) == len(theirs.overflowing), f"{where}: number of overflowing windows"
    for o, t in zip(ours.overflowing, theirs.overflowing):
        assert_same(o, t, where, depth + 1)


def assert_same_lines(name: str, lines: List[str], source: str, fields=("ids", "offsets")) -> None:
    ours, theirs = pipelines(name)
    mine = ours.encode_batch(lines, **ALL)
    hf = theirs.encode_batch(lines)
    for i, (a, b) in enumerate(zip(mine, hf)):
        for field in fields:
            if getattr(a, field) != getattr(b, field):
                pytest.fail(f"{source} line {i} {lines[i][:120]!r}: {field} differs\n"
                            f"ciyuan {getattr(a, field)[:40]}\nHF     {getattr(b, field)[:40]}")
    assert len(mine) == len(hf)


def corpus_lines(*parts: str, limit: int = 0) -> List[str]:
    path = shared(*parts)
    return (read_prefix(path, limit) if limit else path.read_text(encoding="utf-8")).split("\n")


# -- real corpora -------------------------------------------------------------------------------

def test_small_corpus_every_field():
    for name in VOCABS:
        lines = corpus_lines("corpora", "en", "taylorswift.txt") + corpus_lines("corpora", "multi", "emoji.txt")[:2000]
        assert_same_lines(name, lines, "taylorswift+emoji", FIELDS)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(VOCABS))
@pytest.mark.parametrize("parts,limit", [
    (("corpora", "en", "tinyshakespeare.txt"), 0),
    (("corpora", "en", "gutenberg_100mb.txt"), 8_000_000),
    (("corpora", "zh", "jinyong_16novels.txt"), 2_000_000),
    (("corpora", "multi", "udhr_sample.txt"), 0),
    (("corpora", "multi", "wagahaiwa.ja.txt"), 0),
], ids=lambda p: p[-1] if isinstance(p, tuple) else str(p))
def test_every_line_of_the_corpora(name, parts, limit):
    assert_same_lines(name, corpus_lines(*parts, limit=limit), parts[-1])


@pytest.mark.slow
def test_every_udhr_language():
    folder = shared("corpora", "multi", "udhr")
    texts = [p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt"))]
    for name in VOCABS:
        assert_same_lines(name, texts, "udhr/*.txt")  # whole files, newlines and all


# -- pairs, truncation, padding -------------------------------------------------------------------

def _configure(tok, hf, max_length: Optional[int], stride: int, strategy: str, direction: str,
               padding: Optional[str], multiple: Optional[int], pad_direction: str) -> None:
    hf = hf._tokenizer  # the wrapped tokenizers.Tokenizer takes every option (direction)
    tok.no_truncation(), tok.no_padding(), hf.no_truncation(), hf.no_padding()
    if max_length is not None:
        tok.enable_truncation(max_length, stride=stride, strategy=strategy, direction=direction)
        hf.enable_truncation(max_length, stride=stride, strategy=strategy, direction=direction)
    if padding is not None:
        length = (max_length or 16) + 3 if padding == "fixed" else None
        tok.enable_padding(length=length, pad_to_multiple_of=multiple, direction=pad_direction)
        hf.enable_padding(length=length, pad_to_multiple_of=multiple, direction=pad_direction)


def _refused(call) -> bool:
    """Whether Hugging Face refuses: an exception, or a Rust panic (a BaseException)."""
    try:
        call()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        return True
    return False


def _compare_batch(name, pairs, **config) -> None:
    from ciyuan.errors import CiyuanError

    ours, theirs = pipelines(name)
    try:
        if _refused(lambda: _configure(ours, pipelines(name)[1], **config)):
            with pytest.raises(CiyuanError):  # HF refuses the settings: so must we
                _configure(ours, tokenizers.BertWordPieceTokenizer(str(_vocab(name))), **config)
            return
        hf: list = []
        if _refused(lambda: hf.extend(theirs.encode_batch(pairs))):
            with pytest.raises(CiyuanError):
                ours.encode_batch(pairs, **ALL)
            return
        mine = ours.encode_batch(pairs, **ALL)
        for i, (a, b) in enumerate(zip(mine, hf)):
            assert_same(a, b, f"{name} {config} input {i} {pairs[i]!r}")
        for p in pairs[:3]:  # one at a time too
            one = ours.encode(*p, **ALL) if isinstance(p, tuple) else ours.encode(p, **ALL)
            ref = theirs.encode(*p) if isinstance(p, tuple) else theirs.encode(p)
            if config["padding"] != "longest":
                assert_same(one, ref, f"{name} {config} single {p!r}")
    finally:
        ours.no_truncation(), ours.no_padding(), theirs.no_truncation(), theirs.no_padding()


_SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world! Isn't it wonderful?",
    "金庸的小说《射雕英雄传》非常好看。",
    "naïve café déjà vu — résumé",
    "",
    "a",
    "Unbelievably long words like antidisestablishmentarianism get split into many pieces.",
]
_texts = st.one_of(
    st.sampled_from(_SENTENCES),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=60),
    st.text(alphabet="ab cé,.词元\t\u3000\u0301", max_size=40),
)
_inputs = st.one_of(_texts, st.tuples(_texts, _texts))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batch=st.lists(_inputs, min_size=1, max_size=4),
    name=st.sampled_from(list(VOCABS)),
    max_length=st.one_of(st.none(), st.integers(0, 24)),
    stride=st.integers(0, 6),
    strategy=st.sampled_from(["longest_first", "only_first", "only_second"]),
    direction=st.sampled_from(["right", "left"]),
    padding=st.sampled_from([None, "longest", "fixed"]),
    multiple=st.sampled_from([None, 1, 8]),
    pad_direction=st.sampled_from(["right", "left"]),
)
def test_pairs_truncation_padding_generated(batch, name, max_length, stride, strategy, direction, padding,
                                            multiple, pad_direction):
    _compare_batch(name, batch, max_length=max_length, stride=stride, strategy=strategy, direction=direction,
                   padding=padding, multiple=multiple, pad_direction=pad_direction)


@pytest.mark.slow
def test_pairs_of_real_lines():
    lines = [line for line in corpus_lines("corpora", "en", "taylorswift.txt") if line][:400]
    zh = [line for line in corpus_lines("corpora", "zh", "jinyong_16novels.txt", limit=200_000) if line][:400]
    pairs = list(zip(lines, zh))
    for max_length, stride, strategy in [(None, 0, "longest_first"), (128, 0, "longest_first"),
                                         (64, 16, "longest_first"), (96, 8, "only_second")]:
        _compare_batch("chinese", pairs, max_length=max_length, stride=stride, strategy=strategy,
                       direction="right", padding="longest", multiple=8, pad_direction="right")
        _compare_batch("uncased", pairs, max_length=max_length, stride=stride, strategy=strategy,
                       direction="left", padding=None, multiple=None, pad_direction="right")


# -- generated text, single sequences -----------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80), st.sampled_from(list(VOCABS)))
def test_generated_unicode(text, name):
    ours, theirs = pipelines(name)
    assert_same(ours.encode(text, **ALL), theirs.encode(text), f"{name} {text!r}")


# -- behaviour around the edges ------------------------------------------------------------------

def test_special_token_text_is_refused_by_default():
    from ciyuan.errors import DisallowedSpecialTokenError

    ours, _ = pipelines("uncased")
    with pytest.raises(DisallowedSpecialTokenError):
        ours.encode("hello [SEP] world")
    assert ours.encode("hello [SEP] world", disallowed_special=()).tokens[2:5] == ["[", "sep", "]"]


def test_decode_matches_hugging_face():
    ours, theirs = pipelines("uncased")
    for text in _SENTENCES:
        ids = theirs.encode(text).ids
        assert ours.decode(ids, skip_special_tokens=True) == theirs.decode(ids, skip_special_tokens=True)
        assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=False)
