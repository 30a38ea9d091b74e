"""BertNormalizer against Hugging Face's: the normalized text, and for each normalized character
the span of the original it comes from."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings

from ciyuan import normalizers
from ciyuan.errors import ModelError
from ciyuan.normalizers import BertNormalizer, NormalizedString
from tests.conftest import read_prefix, shared
from tests.parity.bert_helpers import TEXT

tokenizers = pytest.importorskip("tokenizers")

OPTIONS = list(itertools.product([True, False], [True, False], [None, True, False], [True, False]))


def hf_alignment(options, text):
    """Hugging Face's normalized characters with their original character spans."""
    norm = tokenizers.normalizers.BertNormalizer(*options)
    pts = tokenizers.PreTokenizedString(text)
    pts.normalize(lambda ns: norm.normalize(ns))
    pts.split(lambda i, ns: ns.split(tokenizers.Regex(r".|\n"), "isolated"))
    return [(s, span) for s, span, _ in pts.get_splits(offset_referential="original", offset_type="char")]


def ours_alignment(options, text):
    n = BertNormalizer(*options).normalize(NormalizedString.from_str(text))
    return [(c, n.original_span(i, i + 1)) for i, c in enumerate(n.text)]


def test_examples():
    n = BertNormalizer()
    assert n.normalize_str("Héllo\t中国!") == "hello  中  国 !"
    assert BertNormalizer(lowercase=False).normalize_str("Héllo") == "Héllo"
    assert BertNormalizer(lowercase=False, strip_accents=True).normalize_str("Héllo") == "Hello"
    assert n.normalize_str("ΑΣ") == "ασ"  # no final-sigma rule, as Hugging Face
    assert n.normalize_str("a\x00b\u200bc\ufffd") == "abc"
    assert n.native_options() == (True, True, True, True)
    assert BertNormalizer(lowercase=False).native_options() == (True, True, False, False)


def test_serialization_and_validation():
    for options in OPTIONS:
        n = BertNormalizer(*options)
        again = normalizers.from_dict(n.to_dict())
        assert again == n and again.to_dict() == n.to_dict()
    with pytest.raises(ModelError):
        BertNormalizer(lowercase="yes")  # type: ignore[arg-type]


def test_composes_with_earlier_normalizers():
    seq = normalizers.Sequence([normalizers.NFKC(), BertNormalizer()])
    norm = seq.normalize(NormalizedString.from_str("ＡＢ ﬁ中"))
    assert norm.text == "ab fi 中 "
    assert [norm.original_span(i, i + 1) for i in range(len(norm.text))] == [
        (0, 1), (1, 2), (2, 3), (3, 4), (3, 4), (4, 5), (4, 5), (4, 5)]


def test_lone_surrogates_do_not_crash():
    assert BertNormalizer().normalize_str("a\ud800b") == "a\ufffdb".replace("\ufffd", "")


@pytest.mark.slow
@pytest.mark.parametrize("folder, name, limit", [
    ("multi", "udhr_sample.txt", None), ("zh", "jinyong_16novels.txt", 300_000), ("multi", "emoji.txt", None)])
def test_corpora_text_and_alignment(folder, name, limit):
    text = read_prefix(shared("corpora", folder, name), limit or 10**9)
    for options in [(True, True, None, True), (True, True, None, False), (False, False, True, False)]:
        assert BertNormalizer(*options).normalize_str(text) == \
            tokenizers.normalizers.BertNormalizer(*options).normalize_str(text)
    lines = text.split("\n")[:3000]
    for line in lines:
        assert ours_alignment((True, True, None, True), line) == hf_alignment((True, True, None, True), line)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_generated_text_every_option(text):
    for options in OPTIONS:
        hf = tokenizers.normalizers.BertNormalizer(*options)
        assert BertNormalizer(*options).normalize_str(text) == hf.normalize_str(text), options


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_generated_alignment(text):
    for options in [(True, True, None, True), (True, True, False, False), (False, True, True, False)]:
        assert ours_alignment(options, text) == hf_alignment(options, text), options


@pytest.mark.slow
@pytest.mark.parametrize("options", [(True, True, None, True), (True, True, False, False), (False, False, True, False),
                                     (False, True, False, True), (True, False, True, True)])
def test_every_code_point(options):
    # The generated tables against the installed Hugging Face, one code point at a time
    # (separated by a starter, so no canonical reordering across them).
    ours, hf = BertNormalizer(*options), tokenizers.normalizers.BertNormalizer(*options)
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for i in range(0, len(chars), 100_000):
        text = "\x02".join(chars[i:i + 100_000])
        assert ours.normalize_str(text) == hf.normalize_str(text)
