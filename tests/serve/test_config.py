"""ServeConfig: sizes, NAME=PATH specs, what counts as this machine only, and the Host names."""

from __future__ import annotations

import pytest

from ciyuan.errors import InvalidInputError
from ciyuan.serve.config import ServeConfig, format_size, parse_size, split_spec


@pytest.mark.parametrize("text,size", [("1", 1), ("2MB", 2 << 20), ("512k", 512 << 10), ("1.5GiB", 3 << 29),
                                       (" 64 mb ", 64 << 20)])
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "-1", "0", "1XB", "0.1"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(InvalidInputError, match="--max-request-size"):
        parse_size(text, "--max-request-size")


def test_format_size() -> None:
    assert [format_size(n) for n in (0, 1023, 1024, 1536, 2 << 20, 3 << 30)] == \
        ["0 bytes", "1023 bytes", "1 KiB", "1.5 KiB", "2 MiB", "3 GiB"]


def test_split_spec() -> None:
    assert split_spec("gpt2=a/b/tokenizer.json") == ("gpt2", "a/b/tokenizer.json")
    assert split_spec("a/o200k_base.tiktoken") == ("o200k_base", "a/o200k_base.tiktoken")
    assert split_spec("models/gpt2") == ("gpt2", "models/gpt2")
    assert split_spec("dir with = sign/x.json") == ("x", "dir with = sign/x.json")  # not a plain name before '='


@pytest.mark.parametrize("host,loopback", [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True),
                                           ("[::1]", True), ("localhost", True), ("0.0.0.0", False),
                                           ("192.168.1.5", False), ("example.org", False)])
def test_loopback(host: str, loopback: bool) -> None:
    config = ServeConfig(host=host)
    assert config.loopback is loopback
    assert (config.allowed_hosts() == ["*"]) is (not loopback)


def test_defaults_are_safe() -> None:
    config = ServeConfig()
    assert config.host == "127.0.0.1" and config.port == 8765 and config.allow_dirs == ()
    assert "localhost" in config.allowed_hosts() and "*" not in config.allowed_hosts()
