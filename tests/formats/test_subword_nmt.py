"""subword-nmt's codes and vocabulary files: reading, writing, and the errors."""

from __future__ import annotations

import pytest

from ciyuan.errors import FileFormatError, InvalidInputError
from ciyuan.formats.subword_nmt import (
    BpeCodes,
    codes_text,
    load_codes,
    load_vocabulary,
    parse_codes,
    parse_vocabulary,
    save_codes,
)


def test_version_02_round_trip(tmp_path):
    codes = parse_codes("#version: 0.2\nt h\nth e</w>\na n\n")
    assert codes.version == (0, 2) and codes.merges == [("t", "h"), ("th", "e</w>"), ("a", "n")]
    path = tmp_path / "codes"
    save_codes(path, codes)
    assert path.read_text(encoding="utf-8") == "#version: 0.2\nt h\nth e</w>\na n\n"
    assert load_codes(path) == codes
    assert load_codes(path, merges=2).merges == codes.merges[:2]


def test_version_01_has_no_header():
    codes = parse_codes("t h\nth e\ne </w>\n")
    assert codes.version == (0, 1) and codes.merges[-1] == ("e", "</w>")
    assert codes_text(codes) == "t h\nth e\ne </w>\n"
    assert parse_codes("#version: 0.2.0\na b\n").version == (0, 2)
    assert parse_codes("#version: 0.1\na b\n").version == (0, 1)


def test_windows_line_ends_and_first_rank_wins():
    codes = parse_codes("#version: 0.2\r\na b\r\nc d\r\na b\r\n")
    assert codes.merges == [("a", "b"), ("c", "d"), ("a", "b")]
    assert codes.ranks() == {("a", "b"): 0, ("c", "d"): 1}


@pytest.mark.parametrize("text, line", [("#version: 0.2\na b\nabc\n", 3), ("a b c\n", 1), ("#version: 0.2\n", 2),
                                        ("a  b\n", 1)])
def test_bad_lines_are_named(text, line):
    with pytest.raises(FileFormatError) as e:
        parse_codes(text, path="codes.txt")
    assert str(e.value).startswith(f"codes.txt:{line}: ")


def test_bad_versions():
    with pytest.raises(FileFormatError, match="version 0.3"):
        parse_codes("#version: 0.3\na b\n")
    with pytest.raises(FileFormatError, match="cannot read the version"):
        parse_codes("#version: x\na b\n")
    with pytest.raises(InvalidInputError, match="version 1.0"):
        BpeCodes([("a", "b")], (1, 0))
    with pytest.raises(InvalidInputError, match="invalid merge"):
        BpeCodes([("a b", "c")])


def test_vocabulary(tmp_path):
    text = "the 10\nand 5\nthou 1\n"
    assert parse_vocabulary(text) == {"the", "and", "thou"}
    path = tmp_path / "vocab"
    path.write_text(text, encoding="utf-8")
    assert load_vocabulary(path, threshold=5) == {"the", "and"}
    with pytest.raises(FileFormatError, match=":2: "):
        parse_vocabulary("the 10\nand\n")
    with pytest.raises(FileFormatError, match="not an integer"):
        parse_vocabulary("the ten\n")
