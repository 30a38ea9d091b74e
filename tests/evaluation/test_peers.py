"""The figures of evaluate() on the real vocabularies equal those computed from the peer
libraries' own tokens (tiktoken, Hugging Face tokenizers, sentencepiece) by the plain-Python
twin: what ciyuan eval reports is what the peer's tokenizer does."""

from __future__ import annotations

import pytest

from ciyuan.evaluation import evaluate
from ciyuan.evaluation.corpus import read_lines
from ciyuan.reference.evaluation import corpus_figures
from tests.conftest import shared
from tests.evaluation.test_evaluate import FIELDS, _byte_fallback_ids, _length_of, _same, _unknown_ids


def _hold(report, name, tok, lines, encode):
    row = next(m for m in report.metrics if m.tokenizer == name)
    want = corpus_figures(lines, encode, tok.model.id_bytes, tok.vocab_size, words_of=lambda s: len(s.split()),
                          length_of=_length_of(tok), unknown_ids=_unknown_ids(tok),
                          byte_fallback_ids=_byte_fallback_ids(tok))
    for field in FIELDS:
        assert _same(getattr(row, field), want[field]), (name, field, getattr(row, field), want[field])
    assert report.token_lengths[name] == want["token_lengths"]


def _lines(folder):
    return [line for p in sorted(folder.glob("*.txt")) for line in read_lines(p)]


def test_tiktoken_encodings(small_udhr, real_tokenizers, tiktoken_encodings):
    names = {"gpt2": "gpt2", "cl100k": "cl100k_base", "o200k": "o200k_base"}
    report = evaluate({k: real_tokenizers[k] for k in names}, [small_udhr])
    lines = _lines(small_udhr)
    for name, encoding in names.items():
        peer = tiktoken_encodings[encoding]
        _hold(report, name, real_tokenizers[name], lines, peer.encode_ordinary)


def test_bert_against_hugging_face(small_udhr, real_tokenizers):
    tokenizers = pytest.importorskip("tokenizers")
    report = evaluate({"bert": real_tokenizers["bert"]}, [small_udhr])
    peer = tokenizers.BertWordPieceTokenizer(str(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")),
                                             lowercase=True)
    _hold(report, "bert", real_tokenizers["bert"], _lines(small_udhr),
          lambda line: peer.encode(line, add_special_tokens=False).ids)


def test_llama2_against_sentencepiece(small_udhr, real_tokenizers):
    spm = pytest.importorskip("sentencepiece")
    report = evaluate({"llama2": real_tokenizers["llama2"]}, [small_udhr])
    peer = spm.SentencePieceProcessor(model_file=str(shared("tokenizers", "sentencepiece", "llama2.model")))
    _hold(report, "llama2", real_tokenizers["llama2"], _lines(small_udhr), peer.encode)
    assert report.metrics[0].byte_fallback_rate > 0


@pytest.mark.slow
def test_whole_udhr_against_tiktoken_and_hugging_face(real_tokenizers, tiktoken_encodings):
    """All 485 languages: the main table, token lengths and every language's token total from
    tiktoken's (o200k) and Hugging Face's (BERT) own tokens."""
    tokenizers = pytest.importorskip("tokenizers")
    udhr = shared("corpora", "multi", "udhr")
    bert = tokenizers.BertWordPieceTokenizer(str(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")),
                                             lowercase=True)
    peers = {"o200k": tiktoken_encodings["o200k_base"].encode_ordinary,
             "bert": lambda line: bert.encode(line, add_special_tokens=False).ids}
    report = evaluate({k: real_tokenizers[k] for k in peers}, [udhr])
    for name, encode in peers.items():
        _hold(report, name, real_tokenizers[name], _lines(udhr), encode)
        for row in (r for r in report.languages if r.tokenizer == name):
            assert row.tokens == sum(len(encode(line)) for line in read_lines(udhr / f"{row.language}.txt"))
