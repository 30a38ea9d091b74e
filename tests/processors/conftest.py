"""Hugging Face BERT tokenizers for the processor parity tests."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import shared


@pytest.fixture(scope="session")
def bert_vocab() -> str:
    return str(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt"))


@pytest.fixture(scope="session")
def hf_plain(bert_vocab: str) -> Any:
    """HF's BERT tokenizer used only for raw encodings (never truncates or pads)."""
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.BertWordPieceTokenizer(bert_vocab, lowercase=True)._tokenizer


@pytest.fixture(scope="session")
def hf_bert(bert_vocab: str) -> Any:
    """HF's BERT tokenizer (BertProcessing); tests set its truncation and padding."""
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.BertWordPieceTokenizer(bert_vocab, lowercase=True)._tokenizer


@pytest.fixture(scope="session")
def hf_custom(hf_bert: Any) -> Any:
    """A copy of HF's BERT tokenizer whose post-processor a test may replace."""
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_str(hf_bert.to_str())
