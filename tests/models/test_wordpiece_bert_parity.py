"""The native BERT pipeline (BertNormalizer + BertPreTokenizer + WordPiece) against Hugging Face
`tokenizers` built from the same vocab.txt, with no post-processor: ids and offsets into the
original text must be identical, on every line of the real corpora and on generated text."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings

from tests.conftest import read_prefix, shared
from tests.models.bert_helpers import CONFIGS, TEXT, ciyuan_encoder, hf_pipeline, mismatches

pytest.importorskip("tokenizers")

CORPORA = [
    ("en", "tinyshakespeare.txt", None),
    ("en", "taylorswift.txt", None),
    ("en", "gutenberg_100mb.txt", 4_000_000),
    ("zh", "jinyong_16novels.txt", 2_000_000),
    ("multi", "udhr_sample.txt", None),
    ("multi", "wagahaiwa.ja.txt", None),
    ("multi", "emoji.txt", None),
]


def corpus_lines(folder, name, limit):
    path = shared("corpora", folder, name)
    text = read_prefix(path, limit) if limit else path.read_text(encoding="utf-8")
    return text.split("\n")


@pytest.mark.slow
@pytest.mark.parametrize("vocab, lower", CONFIGS)
@pytest.mark.parametrize("folder, name, limit", CORPORA)
def test_corpus_lines(vocab, lower, folder, name, limit):
    lines = corpus_lines(folder, name, limit)
    assert mismatches(hf_pipeline(vocab, lower=lower), ciyuan_encoder(vocab, lower=lower), lines) == []


@pytest.mark.slow
@pytest.mark.parametrize("vocab, lower", CONFIGS)
def test_udhr_every_language(vocab, lower):
    folder = shared("corpora", "multi", "udhr")
    lines = []
    for path in sorted(folder.glob("*.txt")):
        lines.extend(path.read_text(encoding="utf-8").split("\n"))
    assert len(lines) > 1000
    assert mismatches(hf_pipeline(vocab, lower=lower), ciyuan_encoder(vocab, lower=lower), lines) == []


def test_whole_text_at_once():
    # Offsets across many lines in one text (not just per line).
    text = read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 200_000)
    for vocab, lower in CONFIGS:
        assert mismatches(hf_pipeline(vocab, lower=lower), ciyuan_encoder(vocab, lower=lower), [text]) == []


SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(TEXT)
def test_generated_text_default_configs(text):
    for vocab, lower in CONFIGS:
        assert mismatches(hf_pipeline(vocab, lower=lower), ciyuan_encoder(vocab, lower=lower), [text]) == []


OPTIONS = list(itertools.product([True, False], [True, False], [None, True, False], [True, False]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_generated_text_every_option(text):
    for options in OPTIONS:
        hf = hf_pipeline("uncased", *options)
        ours = ciyuan_encoder("uncased", *options)
        assert mismatches(hf, ours, [text]) == [], options
