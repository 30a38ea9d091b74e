"""from_pretrained on a folder whose tokenizer.model is a tiktoken file: the encoding is recognised
by content, and the config's special tokens take the ids it fixes (as Llama 3.1 renames slots)."""

from __future__ import annotations

import json
import shutil

import pytest

from ciyuan import Tokenizer
from ciyuan.errors import InvalidInputError
from tests.conftest import shared


def test_config_renames_a_named_special_token(tmp_path):
    shutil.copy(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"), tmp_path / "tokenizer.model")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({
        "added_tokens_decoder": {"100257": {"content": "<|eot|>", "special": True}}, "eos_token": "<|eot|>"}))
    tok = Tokenizer.from_pretrained(tmp_path)
    # special tokens of a folder are added tokens, found in any text (as transformers does)
    texts = {i: t.content for i, t in tok.added_tokens.items() if t.special}
    assert texts[100257] == "<|eot|>" and "<|endoftext|>" not in texts.values()
    assert texts[100258] == "<|fim_prefix|>"  # the named encoding's other tokens stay
    assert tok.encode("hello world<|eot|>").ids == [15339, 1917, 100257]


def test_unknown_tiktoken_file_needs_a_pattern(tmp_path):
    lines = shared("tokenizers", "tiktoken", "cl100k_base.tiktoken").read_text().splitlines()[:300]
    (tmp_path / "tokenizer.model").write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidInputError, match="llama3"):
        Tokenizer.from_pretrained(tmp_path)
    tok = Tokenizer.from_pretrained(tmp_path, pattern="cl100k_base", special_tokens={})
    assert tok.encode("ab").ids == [64, 65]  # only 300 ranks: no "ab" token
