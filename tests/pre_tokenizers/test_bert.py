"""BertPreTokenizer against Hugging Face's BertPreTokenizer."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from ciyuan import pre_tokenizers
from ciyuan.pre_tokenizers import BertPreTokenizer
from tests.conftest import read_prefix, shared
from tests.parity.bert_helpers import TEXT

tokenizers = pytest.importorskip("tokenizers")
HF = tokenizers.pre_tokenizers.BertPreTokenizer()


def test_examples():
    p = BertPreTokenizer()
    assert p.pre_tokenize_str("Hello, world!") == [
        ("Hello", (0, 5)), (",", (5, 6)), ("world", (7, 12)), ("!", (12, 13))]
    assert p.split("") == [] and p.split("  \t\n") == []
    assert p.pre_tokenize_str("中文，好") == [("中文", (0, 2)), ("，", (2, 3)), ("好", (3, 4))]
    assert p.native_pattern is None
    assert pre_tokenizers.from_dict(p.to_dict()) == p
    assert p.split("a\ud800b") == [(0, 3)]


@pytest.mark.slow
@pytest.mark.parametrize("folder, name", [("multi", "udhr_sample.txt"), ("multi", "emoji.txt"),
                                          ("zh", "jinyong_16novels.txt"), ("en", "taylorswift.txt")])
def test_corpora(folder, name):
    text = read_prefix(shared("corpora", folder, name), 500_000)
    assert BertPreTokenizer().pre_tokenize_str(text) == HF.pre_tokenize_str(text)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_generated(text):
    assert BertPreTokenizer().pre_tokenize_str(text) == HF.pre_tokenize_str(text)


@pytest.mark.slow
def test_every_code_point_pre_tokenizer():
    from ciyuan.pre_tokenizers import BertPreTokenizer

    hf = tokenizers.pre_tokenizers.BertPreTokenizer()
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for i in range(0, len(chars), 100_000):
        text = "x".join(chars[i:i + 100_000])
        assert BertPreTokenizer().pre_tokenize_str(text) == hf.pre_tokenize_str(text)
