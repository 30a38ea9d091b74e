"""Catalog: unique names, one load per entry whatever the callers, errors kept and named."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from ciyuan import Tokenizer
from ciyuan.errors import CiyuanError, FileFormatError
from ciyuan.serve.catalog import Catalog, UnknownTokenizerError, load_tokenizer_file


def test_names_are_made_unique(tiny_files: Path) -> None:
    catalog = Catalog()
    tok = Tokenizer.load(tiny_files / "tok-bpe.json")
    names = [catalog.add_loaded("x", tok, origin="upload").name for _ in range(3)]
    assert names == ["x", "x-2", "x-3"]
    assert [e.name for e in catalog.entries()] == names


def test_one_load_for_many_callers(tiny_files: Path) -> None:
    calls = []

    def loader() -> Tokenizer:
        calls.append(1)
        time.sleep(0.05)  # long enough for the other threads to arrive while it loads
        return Tokenizer.load(tiny_files / "tok-bpe.json")

    catalog = Catalog()
    catalog.add("lazy", "folder", "somewhere", loader)
    got = []
    threads = [threading.Thread(target=lambda: got.append(catalog.get("lazy"))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 6 and all(g is got[0] for g in got)
    assert catalog.entry("lazy").describe()["loaded"]


def test_a_failed_load_keeps_its_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("??? 1\n")
    catalog = Catalog()
    catalog.add("bad", "folder", str(bad), lambda: load_tokenizer_file(bad))
    with pytest.raises(CiyuanError) as first:
        catalog.get("bad")
    assert catalog.entry("bad").describe()["error"] == str(first.value)
    with pytest.raises(CiyuanError):
        catalog.get("bad")


def test_unknown_name() -> None:
    with pytest.raises(UnknownTokenizerError, match="no tokenizer named 'x'"):
        Catalog().get("x")


def test_bert_vocab_case_follows_the_file_name(tmp_path: Path) -> None:
    vocab = "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "Hello"]) + "\n"
    for name in ("uncased-vocab.txt", "cased-vocab.txt"):
        (tmp_path / name).write_text(vocab)
    assert load_tokenizer_file(tmp_path / "uncased-vocab.txt").encode("Hello").tokens[1] == "hello"
    assert load_tokenizer_file(tmp_path / "cased-vocab.txt").encode("Hello").tokens[1] == "Hello"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="no such file"):
        load_tokenizer_file(tmp_path / "none.json")
