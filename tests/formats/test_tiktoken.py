"""Reading and writing tiktoken rank files: round trips, corrupt lines give clear errors."""

from __future__ import annotations

import base64

import pytest

import ciyuan
from ciyuan.formats import load_tiktoken_ranks, save_tiktoken_ranks
from ciyuan.tokenizer import Tokenizer


def write_ranks(path, lines):
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def byte_lines():
    return [base64.b64encode(bytes([b])) + b" " + str(b).encode() for b in range(256)]


def test_tiktoken_round_trip(tmp_path):
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    path = tmp_path / "small.tiktoken"
    save_tiktoken_ranks(path, ranks)
    assert load_tiktoken_ranks(path) == ranks
    tok = ciyuan.Tokenizer.from_tiktoken(path, "gpt2", special_tokens={})
    assert tok.encode("abc").ids == [256, ord("c")]


@pytest.mark.parametrize(
    "line, message",
    [
        (b"!!!! 256", "'!!!!' is not valid base64"),
        (b"YWI= x", "rank 'x' is not an integer"),
        (b"YWI=", "expected 'base64-token rank'"),
        (b"YQ== 300", "token b'a' already appeared"),
        (b"YWI= 5", "rank 5 already appeared"),
        (b"YWI= -3", "rank -3 is negative"),
    ],
)
def test_corrupt_tiktoken_lines(tmp_path, line, message):
    path = write_ranks(tmp_path / "bad.tiktoken", byte_lines() + [line])
    with pytest.raises(ciyuan.FileFormatError, match=f"bad.tiktoken:257: {message}"):
        load_tiktoken_ranks(path)


def test_tiktoken_needs_every_byte(tmp_path):
    path = write_ranks(tmp_path / "short.tiktoken", byte_lines()[:200])
    with pytest.raises(ciyuan.FileFormatError, match="56 single bytes"):
        ciyuan.Tokenizer.from_tiktoken(path)
    with pytest.raises(ciyuan.FileFormatError, match="no such file"):
        Tokenizer.load(tmp_path / "missing.tiktoken")
    (tmp_path / "empty.tiktoken").write_bytes(b"")
    with pytest.raises(ciyuan.FileFormatError, match="no tokens"):
        load_tiktoken_ranks(tmp_path / "empty.tiktoken")
