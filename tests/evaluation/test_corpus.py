"""Corpora read block by block (ciyuan.evaluation.corpus) against reading the whole file."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan.errors import InvalidInputError
from ciyuan.evaluation import corpus as corpus_module
from ciyuan.evaluation import evaluate
from ciyuan.evaluation.corpus import iter_line_blocks, open_corpus, read_lines


def _whole(data: bytes):
    return [line.rstrip("\r") for line in data.decode("utf-8", "replace").split("\n") if line.strip()]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([b"abc", b"\n", b"\r\n", b"  ", "词元".encode(), b"\xff", b"\xe8\xaf"]), max_size=40),
       st.integers(1, 16))
def test_blocks_are_the_whole_files_lines(tmp_path, parts, block_bytes):
    data = b"".join(parts)
    path = tmp_path / "c.txt"
    path.write_bytes(data)
    blocks = list(iter_line_blocks(path, "replace", block_bytes))
    assert [line for b in blocks for line in b] == _whole(data)
    assert all(blocks)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        with pytest.raises(InvalidInputError, match=rf"at byte {e.start} \(line {line}\)"):
            list(iter_line_blocks(path, "strict", block_bytes))
    else:
        assert read_lines(path) == _whole(data)


def test_small_blocks_change_no_figure(tmp_path, monkeypatch, real_tokenizers):
    path = tmp_path / "c.txt"
    path.write_text("".join(f"line {i} 词元 tokens, Привет\n" for i in range(300)), encoding="utf-8")
    tok = real_tokenizers["cl100k"]
    whole = evaluate({"t": tok}, [path], curves=True, curve_sizes=[1000]).to_json()
    monkeypatch.setattr(corpus_module, "BLOCK_BYTES", 100)
    assert evaluate({"t": tok}, [path], curves=True, curve_sizes=[1000]).to_json() == whole


def test_open_corpus(tmp_path):
    (tmp_path / "a.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("y\n", encoding="utf-8")
    (tmp_path / "INDEX.tsv").write_text("key\tiso15924\tname\na\tLatn\tAlpha\n", encoding="utf-8")
    c = open_corpus(tmp_path)
    assert c.by_language and [(p.key, p.name, p.script) for p in c.parts] == [("a", "Alpha", "Latn"), ("b", "b", "")]
    (tmp_path / "INDEX.tsv").write_text("key\tiso15924\tname\nbad line\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"INDEX.tsv:2"):
        open_corpus(tmp_path)
    with pytest.raises(InvalidInputError, match="no such file or folder"):
        open_corpus(tmp_path / "missing")
    with pytest.raises(InvalidInputError, match="is a folder"):
        read_lines(tmp_path)
