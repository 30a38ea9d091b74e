"""The native BERT pipeline (BertNormalizer + BertPreTokenizer + WordPiece) against Hugging Face
`tokenizers` built from the same vocab.txt, with no post-processor: ids and offsets into the
original text must be identical, on every line of the real corpora and on generated text."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import read_prefix, shared
from tests.parity.bert_helpers import CONFIGS, TEXT, ciyuan_encoder, hf_pipeline, mismatches, vocab_tokens

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


def python_path(name, options, text):
    """The same pipeline through the Python stages (what a Tokenizer does when some stage has no
    native form): BertNormalizer -> BertPreTokenizer -> the model on byte spans."""
    from ciyuan.normalizers import BertNormalizer, NormalizedString
    from ciyuan.pre_tokenizers import BertPreTokenizer

    enc = ciyuan_encoder(name, *options)
    norm = BertNormalizer(*options).normalize(NormalizedString.from_str(text))
    byte_at = [0]
    for c in norm.text:
        byte_at.append(byte_at[-1] + len(c.encode("utf-8")))
    spans = [(byte_at[s], byte_at[e]) for s, e in BertPreTokenizer().split(norm.text)]
    data = enc.encode_spans(norm.text, spans)
    return data.ids, [norm.original_span(s, e) for s, e in data.char_offsets(norm.text)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_python_stages_match_the_native_front_end(text):
    for options in [(True, True, None, True), (True, True, None, False), (False, False, True, False)]:
        data = ciyuan_encoder("uncased", *options).encode(text, b"")
        assert python_path("uncased", options, text) == (data.ids, data.char_offsets(text)), options


def test_hostile_inputs_do_not_crash():
    enc = ciyuan_encoder("uncased")
    hf = hf_pipeline("uncased")
    for text in ["", " \t\n", "\x00" * 1000, "a" * 1_000_000, "é" * 200_000 + " x", "中" * 100_000,
                 "\u0301" * 10_000, "İ" * 1000, "a\u200db" * 1000]:
        d = enc.encode(text, b"")
        h = hf.encode(text, add_special_tokens=False)
        assert d.ids == h.ids and d.char_offsets(text) == h.offsets


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(TEXT, st.sampled_from(["[CLS]", "[SEP]", "[MASK]", "[sep]", "[SEP"])),
               max_size=6).map("".join))
def test_special_tokens_split_before_normalization(text):
    # Hugging Face matches added special tokens in the original text, then normalizes and
    # pre-tokenizes the text between them: the native encoder with the "allowed" policy.
    import tokenizers

    from ciyuan.front_end import FrontEnd
    from ciyuan.models import WordPiece
    from ciyuan.normalizers import BertNormalizer

    hf = tokenizers.Tokenizer.from_str(hf_pipeline("uncased").to_str())
    hf.add_special_tokens(["[CLS]", "[SEP]", "[MASK]"])
    model = WordPiece(list(vocab_tokens("uncased")))
    specials = [(t, model.token_to_id(t)) for t in ("[CLS]", "[SEP]", "[MASK]")]
    enc = model.make_encoder(FrontEnd.bert(BertNormalizer().native_bert_options()), specials)
    h = hf.encode(text, add_special_tokens=False)
    d = enc.encode(text, b"\x01\x01\x01")
    assert d.ids == h.ids
    assert d.char_offsets(text) == h.offsets


REORDERED = ["x\u1b44\u093cy", "x\U0001d16d\U0001d165y hello", "x\U0001d16d\u0301\U0001d165", "a\u0315\u0300b",
             "Ünïcödé e\u0301\u0316 x\U0001d16d\U0001d165 中\u0301\u0316",
             "\U0001d15e\U0001d16d x\u0316\u0301\U0001d16d"]


@pytest.mark.parametrize("text", REORDERED)
def test_marks_out_of_canonical_order(text):
    # NFD reorders marks across characters; Hugging Face's alignments stay in place while the
    # characters move. The native encoder redoes such segments through its exact path.
    for options in OPTIONS:
        assert mismatches(hf_pipeline("uncased", *options), ciyuan_encoder("uncased", *options), [text]) == [], options


def test_one_encoder_from_many_python_threads():
    import threading

    enc = ciyuan_encoder("uncased")
    lines = read_prefix(shared("corpora", "en", "taylorswift.txt"), 100_000).split("\n")
    expected = [d.ids for d in enc.encode_batch(lines, b"", 1)]
    results, errors = [], []

    def work():
        try:
            for _ in range(3):
                results.append([d.ids for d in enc.encode_batch(lines, b"", 2)])
                results.append([enc.encode_ids(line, b"") for line in lines])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 24 and all(r == expected for r in results)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_pre_tokenizer_alone_is_the_front_end_with_every_option_off(text):
    # A pipeline with BertPreTokenizer but no normalizer runs natively as bert=(False,) * 4.
    import tokenizers

    hf = tokenizers.Tokenizer.from_str(hf_pipeline("uncased").to_str())
    hf.normalizer = None
    h = hf.encode(text, add_special_tokens=False)
    d = ciyuan_encoder("uncased", False, False, False, False).encode(text, b"")
    assert (d.ids, d.char_offsets(text)) == (h.ids, h.offsets)
