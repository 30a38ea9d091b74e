"""Reading GPT-2's encoder.json and vocab.bpe: the real files load, corrupt ones give clear errors."""

from __future__ import annotations

import json

import pytest

import ciyuan
from ciyuan.tokenizer import Tokenizer
from tests.conftest import shared


def test_gpt2_files_load_and_errors(tmp_path):
    enc_path, bpe_path = shared("tokenizers", "gpt2", "encoder.json"), shared("tokenizers", "gpt2", "vocab.bpe")
    tok = ciyuan.Tokenizer.from_gpt2(enc_path, bpe_path)
    assert tok.encode("Hello world").ids == [15496, 995]
    assert tok.special_tokens == {"<|endoftext|>": 50256}
    assert Tokenizer.load(enc_path.parent).encode_ids("Hello") == [15496]

    bad_bpe = tmp_path / "vocab.bpe"
    bad_bpe.write_text("#version: 0.2\nĠ t\nnot-a-pair\n", encoding="utf-8")
    with pytest.raises(ciyuan.FileFormatError, match="vocab.bpe:3: expected 'left right'"):
        ciyuan.Tokenizer.from_gpt2(enc_path, bad_bpe)
    bad_bpe.write_text("#version: 0.2\nĠ zzzzzz\n", encoding="utf-8")
    with pytest.raises(ciyuan.FileFormatError, match="not in the vocabulary"):
        ciyuan.Tokenizer.from_gpt2(enc_path, bad_bpe)
    bad_json = tmp_path / "encoder.json"
    bad_json.write_text('{"a": 0,', encoding="utf-8")
    with pytest.raises(ciyuan.FileFormatError, match="encoder.json:1: not valid JSON"):
        ciyuan.Tokenizer.from_gpt2(bad_json, bpe_path)
    bad_json.write_text(json.dumps({"a": "zero"}), encoding="utf-8")
    with pytest.raises(ciyuan.FileFormatError, match="not a non-negative integer"):
        ciyuan.Tokenizer.from_gpt2(bad_json, bpe_path)
