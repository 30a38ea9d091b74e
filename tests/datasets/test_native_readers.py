"""The native readers of encode-dataset (cpp/src/line_readers.cc: ``_core.jsonl_field_strings`` for
JSON Lines, ``_core.text_lines`` for a document per line of text) and the encoder's UTF-8 batch
input, held against orjson's reading, the Python reader of lines and the str path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Optional, Tuple

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer, _core
from ciyuan.datasets import encode_dataset
from ciyuan.datasets.encode import _local_pipeline
from ciyuan.datasets.sources import DocumentStream, Utf8Texts
from ciyuan.errors import InvalidInputError
from tests.conftest import shared
from tests.datasets.conftest import corpus_lines, tree_bytes, write_input

FIELD = "text"


def orjson_reading(block: bytes, field: str, first_line: int) -> Optional[Tuple[List[str], List[int]]]:
    """What the Python reader makes of a block: each non-blank line's field, or None when a line
    is bad (orjson refuses it, the field is missing or not a string)."""
    texts, lines = [], []
    for number, raw in enumerate(block.split(b"\n"), first_line + 1):
        if not raw.strip():
            continue
        try:
            value = orjson.loads(raw)[field]
        except (orjson.JSONDecodeError, TypeError, KeyError, IndexError):
            return None
        if type(value) is not str:
            return None
        texts.append(value)
        lines.append(number)
    return texts, lines


def native_reading(block: bytes, field: str, first_line: int) -> Optional[Tuple[List[str], List[int]]]:
    found = _core.jsonl_field_strings(block, field, first_line)
    if found is None:
        return None
    data, ends, lines = found
    return list(Utf8Texts(data, ends)), lines


def check_block(block: bytes, first_line: int = 0) -> None:
    """Whatever the native reader accepts, orjson reads to the same texts and lines."""
    native = native_reading(block, FIELD, first_line)
    if native is not None:
        assert native == orjson_reading(block, FIELD, first_line)


json_values = st.recursive(  # floats json.dumps writes without an exponent
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.sampled_from([0.5, -2.25, 3.0, 123.456])
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8)


@st.composite
def json_lines(draw: Any) -> Tuple[bytes, List[str]]:
    """A block of JSON lines, each an object with a str field "text" among other fields, written
    with escapes or without, spaces here and there, blank lines and CRLF mixed in."""
    lines, texts = [], []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", "  ", "\t", "\r", " \x0b "])))
            continue
        text = draw(st.text(st.characters(blacklist_categories=["Cs"]), max_size=40))
        others = draw(st.dictionaries(st.text(max_size=5).filter(lambda k: k != FIELD), json_values, max_size=3))
        items = list(others.items())
        items.insert(draw(st.integers(0, len(items))), (FIELD, text))
        ensure_ascii = draw(st.booleans())
        sep = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,\t", " :  ")]))
        line = "{" + sep[0].join(json.dumps(k, ensure_ascii=ensure_ascii) + sep[1]
                                 + json.dumps(v, ensure_ascii=ensure_ascii) for k, v in items) + "}"
        if draw(st.booleans()):
            line = " " + line + draw(st.sampled_from(["", " ", "\r", "\t \r"]))
        lines.append(line)
        texts.append(text)
    end = draw(st.sampled_from(["", "\n"]))
    return ("\n".join(lines) + end).encode("utf-8"), texts


@settings(max_examples=120, deadline=None)
@given(json_lines(), st.integers(0, 10**6))
def test_generated_lines_read_as_orjson_reads_them(generated: Tuple[bytes, List[str]], first_line: int) -> None:
    block, texts = generated
    native = native_reading(block, FIELD, first_line)
    assert native is not None, block  # plain lines (no exponent: json.dumps writes floats with one rarely)
    assert native == orjson_reading(block, FIELD, first_line)
    assert native[0] == texts


# A float json.dumps writes with an exponent (1e-05) makes a line not plain; so does each of these,
# which the Python reader then takes (orjson reads some of them, refuses the others).
NOT_PLAIN = [
    b'{"text": "a", "text": "b"}',  # the field twice: orjson keeps the last
    b'{"text": 1}', b'{"text": null}', b'{"other": "a"}', b'["text"]', b'"text"', b'{}',
    b'{"text": "a"', b'{"text": "a"} x', b'{"text": "a"}}', b'{"text" "a"}', b'{"text": "a",}',
    b'{"text": "a\x01b"}',  # a raw control character
    b'{"text": "\\ud800"}', b'{"text": "\\udc00x"}', b'{"text": "\\ud800\\u0041"}',  # lone surrogates
    b'{"text": "\\x41"}', b'{"text": "\\u12"}', b'{"text": "a\\', b'{"text": "\xff"}', b'{"text": "\xc3"}',
    b'\xef\xbb\xbf{"text": "a"}',  # a byte order mark
    b'{"text": "a", "n": 1e5}', b'{"text": "a", "n": 01}', b'{"text": "a", "n": 1.}', b'{"text": "a", "n": -}',
    b'{"text": "a", "n": ' + b'1' * 65 + b'}', b'{"text": "a", "n": tru}', b'{"text": "a", "n": [1,]}',
    b'{"text": "a", "n": ' + b'[' * 70 + b']' * 70 + b'}',  # deeper than the native reader goes
    b'{"text": "a"}\x0b', b'\x0c{"text": "a"}',
]


@pytest.mark.parametrize("line", NOT_PLAIN)
def test_lines_that_are_not_plain_are_left_to_orjson(line: bytes) -> None:
    block = b'{"text": "fine"}\n' + line + b"\n"
    assert _core.jsonl_field_strings(block, FIELD, 0) is None
    assert _core.jsonl_field_strings(b'{"text": "fine"}\n', FIELD, 0) is not None


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=60) | json_lines().map(lambda g: g[0]), st.data())
def test_mangled_blocks_never_read_otherwise_than_orjson(block: bytes, data: st.DataObject) -> None:
    """Bytes cut, dropped or put in anywhere: what the native reader still accepts, orjson reads
    to the same texts."""
    if block:
        at = data.draw(st.integers(0, len(block) - 1))
        action = data.draw(st.sampled_from(["cut", "drop", "insert"]))
        if action == "cut":
            block = block[:at]
        elif action == "drop":
            block = block[:at] + block[at + 1:]
        else:
            block = block[:at] + data.draw(st.sampled_from([b'"', b"\\", b"{", b"}", b",", b":", b"\x00", b"\xe4",
                                                            b"e", b"\n", b" ", b"u"])) + block[at:]
    check_block(block, 7)


def test_keys_are_compared_decoded_and_nested_fields_ignored() -> None:
    block = b'{"te\\u0078t": "a", "meta": {"text": 1}}\n{"meta": [{"text": "x"}], "text": "b\\/\\u00e9"}'
    assert native_reading(block, FIELD, 0) == (["a", "b/\u00e9"], [1, 2])


def test_utf8_texts_act_as_a_list_of_str() -> None:
    docs = ["ab", "", "\u00e9\u8bcd\U0001f600", "z"]
    data = "".join(docs).encode()
    ends = list(np.cumsum([len(d.encode()) for d in docs]))
    texts = Utf8Texts(data, [int(e) for e in ends])
    assert list(texts) == docs and len(texts) == 4 and texts[-1] == "z" and texts[2] == docs[2]
    assert list(texts[1:3]) == docs[1:3] and list(texts[3:1]) == [] and list(texts[2:][1:]) == ["z"]
    assert texts[1:3].sizes() == [0, 9] and texts[2:].utf8() == (docs[2].encode() + b"z", [9, 10])
    assert texts.utf8() == (data, texts.ends)
    with pytest.raises(IndexError):
        texts[4]


def test_stream_reads_the_same_documents_natively(tmp_path: Path) -> None:
    docs = corpus_lines("en", 200_000) + corpus_lines("zh", 200_000) + corpus_lines("multi", 100_000)
    path = write_input(docs, tmp_path, "jsonl")
    with path.open("ab") as f:  # blank lines, escapes, CRLF and another field order
        f.write(b"\n  \r\n" + json.dumps({"text": "tab\there \U0001f600", "id": -1}).encode() + b"\r\n")
    slow = DocumentStream([path])
    fast = DocumentStream([path], utf8_texts=True)
    assert list(fast) == list(slow)
    text = write_input(docs, tmp_path / "txt", "txt")
    with text.open("ab") as f:
        f.write(b"\r\n\ncrlf line\r\nlast\r")
    assert list(DocumentStream([text], utf8_texts=True)) == list(DocumentStream([text]))
    assert [d.text for d in DocumentStream([path], utf8_texts=True)][-1] == "tab\there \U0001f600"


def python_lines(block: bytes, first_line: int) -> Tuple[List[str], List[int]]:
    """A document per non-empty line, as DocumentStream's Python reader cuts them."""
    stream = DocumentStream([])
    batch = stream._lines_block("x", block, first_line, 0)
    return list(batch.texts), list(batch.lines)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b c", "\r", "\n", "\r\n", "\u00e9", "\u8bcd", " ", "\t", "\U0001f600"]),
                max_size=30).map("".join), st.integers(0, 10**6))
def test_text_lines_read_as_python_reads_them(text: str, first_line: int) -> None:
    block = text.encode()
    data, ends, lines = _core.text_lines(block, first_line)
    assert (list(Utf8Texts(data, ends)), lines) == python_lines(block, first_line)


def test_text_lines_leave_invalid_utf8_to_python(tmp_path: Path) -> None:
    assert _core.text_lines(b"good\nbad \xff\n", 0) is None
    path = tmp_path / "bad.txt"
    path.write_bytes(b"one\r\n\ntwo\nbad \xff\nthree")
    with pytest.raises(InvalidInputError, match=r"bad.txt: invalid UTF-8 at byte 14 \(line 4\)"):
        list(DocumentStream([path], utf8_texts=True))
    kept = DocumentStream([path], utf8_texts=True, skip_bad=True)
    assert [(d.text, d.line) for d in kept] == [("one", 1), ("two", 3), ("three", 5)] and kept.skipped == 1


@pytest.fixture(scope="module")
def bert() -> Tokenizer:
    return Tokenizer.from_bert_vocab(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt"), lowercase=True)


def test_encoder_takes_utf8_buffers_as_it_takes_str(cl100k: Tokenizer, bert: Tokenizer) -> None:
    docs = corpus_lines("en", 50_000) + corpus_lines("zh", 50_000) + ["", "<|endoftext|> as text"]
    data = "".join(docs).encode()
    ends = [int(e) for e in np.cumsum([len(d.encode()) for d in docs])]
    for tok, options in [(cl100k, dict(allowed_special="all")), (bert, {})]:
        found = tok._encode_utf8_batch_ids_array(data, ends, threads=2, **options)
        assert found is not None
        ids, offsets = tok.encode_batch_ids(docs, as_array=True, threads=2, **options)
        assert np.array_equal(found[0], ids) and np.array_equal(found[1], offsets)
    with pytest.raises(Exception, match="special"):
        cl100k._encode_utf8_batch_ids_array(data, ends)
    with pytest.raises(ValueError, match="not valid UTF-8"):
        cl100k._encode_utf8_batch_ids_array(b"ok\xff", [3])
    with pytest.raises(ValueError, match="rise"):
        cl100k._encode_utf8_batch_ids_array(b"abc", [2, 1])
    with pytest.raises(ValueError, match="within"):
        cl100k._encode_utf8_batch_ids_array(b"abc", [4])


def run(tmp_path: Path, name: str, inputs: Any, tok: Tokenizer, native: bool, **options: Any) -> Any:
    """encode_dataset with the native reader (the default pipeline) or the str one (the same
    local pipeline given explicitly reads with orjson)."""
    out = tmp_path / name
    try:
        result = encode_dataset(inputs, out, tok, pipeline=None if native else _local_pipeline, **options)
    except InvalidInputError as e:
        return str(e)
    return result._replace(output=None), tree_bytes(out)


@pytest.mark.parametrize("options", [
    dict(format="megatron", bos="<|endoftext|>"),
    dict(format="flat", batch_chars=300, shard_tokens=500),
    dict(format="parquet", skip_bad=True, batch_chars=5000),
    dict(format="flat", skip_bad=False),
])
def test_encode_dataset_gives_the_same_bytes_natively(tmp_path: Path, cl100k: Tokenizer,
                                                      options: dict) -> None:
    """Documents refused for a special token's text, bad lines (a block the native reader leaves
    to orjson) and blank lines among good ones: the same shards, manifest and errors."""
    docs = corpus_lines("en", 30_000) + corpus_lines("zh", 30_000)
    docs[5] += "<|endoftext|>"
    good = write_input(docs, tmp_path / "in", "jsonl")
    lines = good.read_bytes().split(b"\n")
    bad = tmp_path / "in" / "mixed.jsonl"
    bad.write_bytes(b"\n".join(lines[:40] + [b"", b'{"text": 5}'] + lines[40:80] + [b'{"id": 1}'] + lines[80:]))
    text = write_input(docs, tmp_path / "in", "txt")
    for inputs in ([good], [good, bad], [text, bad]):
        native = run(tmp_path, "native", inputs, cl100k, True, overwrite=True, **options)
        slow = run(tmp_path, "slow", inputs, cl100k, False, overwrite=True, **options)
        assert native == slow
