"""Segmentation dictionaries: file formats, merging, bad lines, edits, build time."""

from __future__ import annotations

from pathlib import Path

import pytest

from ciyuan.errors import FileFormatError, InvalidInputError
from ciyuan.segment import Dictionary, Segmenter


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def test_formats_and_merge(tmp_path):
    plain = write(tmp_path, "words.txt", "\ufeff中国\n\n  人民 \r\n研究生\n")
    jieba = write(tmp_path, "dict.txt", "中国 100 ns\n银行 20\n起源 nz\n")
    d = Dictionary.load(plain, jieba)
    assert len(d) == 5 and d.paths == [str(plain), str(jieba)]
    assert d.freq("中国") == 100  # the later file sets the frequency
    assert d.freq("人民") == 1 and d.freq("起源") == 1 and d.freq("银行") == 20
    assert d.total == 100 + 1 + 1 + 20 + 1
    assert d.max_word_len == 3 and d.has_frequencies
    assert "人民" in d and "人" not in d and 5 not in d
    assert sorted(d) == sorted(["中国", "人民", "研究生", "银行", "起源"])


@pytest.mark.parametrize("line, reason", [
    ("中国 abc ns", "frequency must be a non-negative integer"),
    ("中国 1 ns extra", "got 4 fields"),
    ("中国\t1 ns  a\tb", "got 5 fields"),
    ("中国 -5", "frequency must be a non-negative integer"),
    ("中国 99999999999999999999", "too large"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, reason):
    path = write(tmp_path, "bad.txt", f"人民\n\n{line}\n银行\n")
    with pytest.raises(FileFormatError) as e:
        Dictionary.load(path)
    assert e.value.path == str(path) and e.value.line == 3 and reason in str(e.value)
    assert "bad.txt:3: " in str(e.value)
    d = Dictionary.load(path, strict=False)
    assert sorted(d) == ["人民", "银行"]
    assert len(d.skipped) == 1 and d.skipped[0][:2] == (str(path), 3)


def test_invalid_utf8_line_and_missing_file(tmp_path):
    path = write(tmp_path, "bad.txt", b"\xe4\xb8\xad\xe5\x9b\xbd\n\xff\xfe\n")
    with pytest.raises(FileFormatError, match=r"bad.txt:2: invalid UTF-8"):
        Dictionary.load(path)
    with pytest.raises(InvalidInputError, match="cannot read dictionary"):
        Dictionary.load(tmp_path / "missing.txt")
    with pytest.raises(InvalidInputError):
        Dictionary.load()


def test_empty_and_blank_dictionary(tmp_path):
    d = Dictionary.load(write(tmp_path, "blank.txt", "\n \n\t\n"))
    assert len(d) == 0 and d.max_word_len == 0
    for method in ("fmm", "bmm", "bimm", "dag"):
        assert Segmenter(d, method).lcut("中国abc，") == ["中", "国", "abc", "，"]


def test_add_and_del_word_take_effect():
    d = Dictionary(["研究", "生命"])
    seg = Segmenter(d, "fmm")
    assert seg.lcut("研究生命") == ["研究", "生命"]
    d.add_word("研究生")
    assert seg.lcut("研究生命") == ["研究生", "命"]
    assert d.del_word("研究生") and not d.del_word("研究生")
    assert seg.lcut("研究生命") == ["研究", "生命"]
    d.add_word("研究", 7)
    assert d.freq("研究") == 7 and len(d) == 2
    for bad in ("", "two words", "tab\there"):
        with pytest.raises(InvalidInputError):
            d.add_word(bad)
    with pytest.raises(InvalidInputError):
        d.add_word("好", -1)
    with pytest.raises(TypeError):
        d.add_word(b"bytes")  # type: ignore[arg-type]


def test_add_word_without_freq_suggests_one_like_jieba():
    d = Dictionary([("中", 5), ("国", 5)])
    d.add_word("中国")
    assert d.freq("中国") == 3  # int(10 * 0.5 * 0.5) + 1
    assert Segmenter(d, "dag").lcut("中国") == ["中国"]


def test_to_dict_round_trip(tmp_path):
    path = write(tmp_path, "words.txt", "中国\n人民\n")
    d = Dictionary.load(path)
    assert d.to_dict() == {"paths": [str(path)]}
    assert sorted(Dictionary.from_dict(d.to_dict())) == ["中国", "人民"]
    d.add_word("银行", 3)  # edited: the words themselves are stored
    data = d.to_dict()
    assert data == {"words": [["中国", 1], ["人民", 1], ["银行", 3]]}
    assert Dictionary.from_dict(data).items() == d.items()


def test_jiebas_350k_word_dictionary_loads():
    # jieba's own full dictionary (349,046 'word freq tag' lines), shipped inside the jieba package.
    # How long the load takes is measured in benchmarks/segment.py (docs/benchmarks.md), not here:
    # a time bound in a test fails on a loaded machine, not on slow code.
    jieba = pytest.importorskip("jieba")
    path = Path(jieba.__file__).parent / "dict.txt"
    if not path.exists():
        pytest.skip("jieba's dict.txt not found")
    d = Dictionary.load(path)  # reads, parses, builds both tries
    assert len(d) > 340_000 and d.total > 0
    assert d.load_seconds > 0
    assert Segmenter(d, "dag").lcut("我来到北京清华大学") == ["我", "来到", "北京", "清华大学"]
