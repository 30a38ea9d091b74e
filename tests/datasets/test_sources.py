"""Document sources: each kind of file, compressed streams, where each document comes from, and
bad input - stopped with file:line, or counted and skipped with skip_bad."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ciyuan.datasets import iter_documents
from ciyuan.datasets.sources import DocumentStream, expand_sources, file_kind
from ciyuan.errors import InvalidInputError
from tests.datasets.conftest import write_input


def _texts_lines(stream) -> list:  # noqa: ANN001
    return [(d.text, d.line) for d in stream]


def test_text_lines_keep_text_and_line_numbers(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_bytes(b"first\r\n\nthird  \nlast without newline")
    assert _texts_lines(iter_documents(p)) == [("first", 1), ("third  ", 3), ("last without newline", 4)]
    assert [d.source for d in iter_documents(p)] == [str(p)] * 3


def test_blocks_start_at_their_first_line(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_text("\n\na\nb\n \t\nc\n\n")
    assert _texts_lines(iter_documents(p, doc_per="block")) == [("a\nb", 3), ("c", 6)]


@pytest.mark.parametrize("kind", ["jsonl", "jsonl.gz", "jsonl.zst", "parquet"])
def test_structured_inputs(tmp_path: Path, kind: str) -> None:
    docs = ["α", "", "line\nbreak", "x" * 5000] * 1000
    src = write_input(docs, tmp_path, kind)
    got = list(iter_documents(src))
    assert [d.text for d in got] == docs
    assert [d.line for d in got] == list(range(1, len(docs) + 1))


def test_compressed_text_lines(tmp_path: Path) -> None:
    p = tmp_path / "a.txt.gz"
    p.write_bytes(gzip.compress("one\ntwo\n".encode()))
    assert [d.text for d in iter_documents(p)] == ["one", "two"]
    assert file_kind(p) == "text" and file_kind(p, "jsonl") == "jsonl"


def test_field_and_column_are_chosen(tmp_path: Path) -> None:
    src = write_input(["a", "b"], tmp_path, "jsonl")
    assert [d.text for d in iter_documents(src, field="text")] == ["a", "b"]
    pq_src = write_input(["a", "b"], tmp_path, "parquet")
    with pytest.raises(InvalidInputError, match=r"no column 'body' \(columns: text, id\)"):
        list(iter_documents(pq_src, column="body"))
    with pytest.raises(InvalidInputError, match="column 'id' holds int64, not strings"):
        list(iter_documents(pq_src, column="id"))


def test_bytes_done_reaches_the_total(tmp_path: Path) -> None:
    a = write_input(["doc"] * 1000, tmp_path / "a", "jsonl.zst")
    b = write_input(["doc"] * 1000, tmp_path / "b", "parquet")
    stream = iter_documents([a, b])
    seen = [stream.bytes_done() for _ in stream]
    assert seen == sorted(seen) and stream.bytes_done() == stream.total_bytes == a.stat().st_size + b.stat().st_size


# -- bad input ----------------------------------------------------------------------------------


def _bad_jsonl(tmp_path: Path) -> Path:
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"text": "ok"}\n'
                  b'{"text": "broken\n'          # 2: not JSON
                  b'{"text": "caf\xe9"}\n'        # 3: invalid UTF-8
                  b'{"body": "no text"}\n'        # 4: missing field
                  b'["a list"]\n'                 # 5: not an object
                  b'{"text": null}\n'             # 6: not a string
                  b'\n'                           # 7: blank, ignored
                  b'{"text": "ok too"}\n')
    return p


@pytest.mark.parametrize("line, message", [
    (2, r"bad\.jsonl:2: not a JSON line"),
    (3, r"bad\.jsonl: invalid UTF-8 at byte 28 \(line 2\): b'\\xe9\"}\\n'"),
    (4, r"bad\.jsonl:2: the object has no field 'text'"),
    (5, r"bad\.jsonl:2: the line is JSON but not an object \(a list\)"),
    (6, r"bad\.jsonl:2: the object has a NoneType, not a string, in field 'text'"),
])
def test_bad_json_lines_name_file_and_line(tmp_path: Path, line: int, message: str) -> None:
    """Each bad line of _bad_jsonl alone after a good line: the error names line 2."""
    p = _bad_jsonl(tmp_path)
    lines = p.read_bytes().split(b"\n")
    p.write_bytes(b"\n".join([lines[0], lines[line - 1], b""]))
    with pytest.raises(InvalidInputError, match=message + ".*skip_bad=True"):
        list(iter_documents(p))


def test_skip_bad_counts_and_continues(tmp_path: Path) -> None:
    stream = iter_documents(_bad_jsonl(tmp_path), skip_bad=True)
    assert _texts_lines(stream) == [("ok", 1), ("ok too", 8)]
    assert stream.skipped == 5 and stream.first_bad is not None and ":2: not a JSON line" in stream.first_bad


def test_invalid_utf8_in_text(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_bytes(b"good\nbad \xff here\n\nblock\xc3\nrest\n")
    with pytest.raises(InvalidInputError, match=r"a\.txt: invalid UTF-8 at byte 9 \(line 2\)"):
        list(iter_documents(p))
    stream = iter_documents(p, skip_bad=True)
    assert [d.text for d in stream] == ["good", "rest"] and stream.skipped == 2
    assert [d.text for d in iter_documents(p, errors="replace")][1] == "bad \ufffd here"
    blocks = iter_documents(p, doc_per="block", skip_bad=True)
    assert [d.text for d in blocks] == [] and blocks.skipped == 2  # a block with a bad line is one bad document
    with pytest.raises(InvalidInputError, match=r"byte 9 \(line 2\)"):
        list(iter_documents(p, doc_per="file"))


def test_null_parquet_cells(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "a.parquet"
    pq.write_table(pa.table({"text": ["a", None, "c"]}), p)
    with pytest.raises(InvalidInputError, match=r"a\.parquet:2: row 2 has no value \(null\)"):
        list(iter_documents(p))
    stream = iter_documents(p, skip_bad=True)
    assert _texts_lines(stream) == [("a", 1), ("c", 3)] and stream.skipped == 1


def test_missing_inputs(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no such file, folder or glob pattern"):
        expand_sources([tmp_path / "nope.txt"])
    with pytest.raises(InvalidInputError, match="the pattern matches no file"):
        expand_sources([str(tmp_path / "*.jsonl")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInputError, match="the folder holds no files"):
        expand_sources([tmp_path / "empty"])
    (tmp_path / "x.parquet").write_text("not parquet")
    with pytest.raises(InvalidInputError, match=r"x\.parquet: cannot read as Parquet"):
        list(iter_documents(tmp_path / "x.parquet"))


def test_encode_dataset_skip_bad_total(tmp_path: Path, gpt2) -> None:  # noqa: ANN001
    from ciyuan.datasets import encode_dataset

    result = encode_dataset(_bad_jsonl(tmp_path), tmp_path / "out", gpt2, format="flat", skip_bad=True)
    assert (result.documents, result.skipped) == (2, 5)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["skipped"] == 5
    with pytest.raises(InvalidInputError, match=r"bad\.jsonl:2: not a JSON line"):
        encode_dataset(_bad_jsonl(tmp_path), tmp_path / "out2", gpt2, format="flat")


# -- the chunked fast paths against the line-by-line ones -----------------------------------------

_TEXT_LINES = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=12).map(str.encode),
    st.sampled_from([b"", b"  ", b"\r", b"a\r", b"\r\r", b"b\r\r", b"\xff", b"x\xe4", b"\xc3", b"\t\x0b",
                     b" \x0c x", b"\xc2\xa0", b"\x1c", b"\xe3\x80\x80"]),
)
_JSON_LINES = st.one_of(
    st.text(max_size=10).map(lambda t: json.dumps({"text": t}).encode()),
    st.sampled_from([b"", b" ", b"{", b'{"body": "x"}', b'{"text": 3}', b"[1]", b'"str"', b'{"text": "\\ud800"}',
                     b'{"text": "a"}\r', b'{"text": NaN}', b'{"text": "\xff"}', b"12345678901234567890123"]),
)


def _line_by_line(path: Path, method: str, doc_per: str) -> tuple:
    """The documents, skipped count and first message of the line-by-line reader alone."""
    stream = iter_documents(path, skip_bad=True, doc_per=doc_per)
    with path.open("rb") as f:
        docs = [(d.text, d.line) for d in getattr(stream, method)(str(path), f)]
    return docs, stream.skipped, stream.first_bad


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(_TEXT_LINES, _JSON_LINES), max_size=30), st.booleans(), st.integers(1, 40))
@example([b"x", b"b\r\r", b"", b"a\r"], False, 40)  # a last line without newline keeps its \r
@example([b"  ", b"x\r", b" \r", b"y"], True, 3)
def test_chunked_reading_equals_line_by_line(tmp_path_factory, monkeypatch, lines, final_newline: bool,  # noqa: ANN001
                                             chunk: int) -> None:
    from ciyuan.datasets import sources

    monkeypatch.setattr(sources, "_CHUNK_BYTES", chunk)  # blocks cut everywhere, lines longer than a chunk
    tmp = tmp_path_factory.mktemp("chunks")
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    for name, method, doc_per in (("a.txt", "_lines", "line"), ("a.jsonl", "_jsonl", "line"),
                                  ("b.txt", "_blocks", "block")):
        path = tmp / name
        path.write_bytes(data)
        stream = iter_documents(path, skip_bad=True, doc_per=doc_per)
        fast = ([(d.text, d.line) for d in stream], stream.skipped, stream.first_bad)
        assert fast == _line_by_line(path, method, doc_per), doc_per


def test_part_batches_read_a_file_in_parts(tmp_path: Path) -> None:
    """A file of lines read as byte ranges cut at line ends (the Ray pipeline's read parts), each
    numbered after the lines before it, gives the documents and lines of reading it whole;
    a bad line in a part is named at its line and byte of the file."""
    from ciyuan.datasets.ray_engine import plan_file_parts

    path = tmp_path / "a.jsonl"
    lines = [json.dumps({"text": f"doc {i} " * (i % 7)}) if i % 5 else "" for i in range(400)]
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    whole = [(d.text, d.line) for d in iter_documents(path)]
    got = []
    before = 0
    for part in plan_file_parts(path, 700):
        for batch in DocumentStream([path]).part_batches(part.start, part.end, before):
            got += list(zip(batch.texts, batch.lines))
        before += path.read_bytes()[part.start:part.end].count(b"\n")
    assert got == whole and len(plan_file_parts(path, 700)) > 5
    text = path.with_suffix(".txt")
    text.write_bytes(b"one\ntwo\n\xff bad\nfour")
    with pytest.raises(InvalidInputError) as whole_error:
        list(iter_documents(text))
    with pytest.raises(InvalidInputError) as part_error:
        list(DocumentStream([text]).part_batches(8, 19, lines_before=2))
    assert str(part_error.value) == str(whole_error.value) and "byte 8 (line 3)" in str(part_error.value)
    with pytest.raises(InvalidInputError, match="file of lines"):
        list(DocumentStream([text], doc_per="block").part_batches(0, 4))
