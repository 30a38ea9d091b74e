"""Fixtures the model tests share: GPT-2's byte-level BPE from the files in shared/data."""

from __future__ import annotations

import pytest

import ciyuan
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import Split
from tests.conftest import shared


@pytest.fixture(scope="module")
def gpt2_files():
    """(vocab, merges, special tokens) of GPT-2."""
    from ciyuan.formats.gpt2 import load_gpt2

    return load_gpt2(shared("tokenizers", "gpt2", "encoder.json"), shared("tokenizers", "gpt2", "vocab.bpe"))


@pytest.fixture(scope="module")
def gpt2(gpt2_files):
    """GPT-2's tokenizer (byte-level BPE behind the gpt2 scanner)."""
    vocab, merges, special = gpt2_files
    return ciyuan.Tokenizer(BPE(vocab, merges, byte_level=True), pre_tokenizer=Split("gpt2"), special_tokens=special)
