"""ciyuan._io: atomic writes and their errors; reading files in blocks of whole lines."""

from __future__ import annotations

import doctest
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ciyuan._io
from ciyuan import InvalidInputError
from ciyuan._io import atomic_write_text, line_blocks


def test_atomic_write_replaces_the_file_whole(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old", encoding="utf-8")
    atomic_write_text(path, "新的")
    assert path.read_text(encoding="utf-8") == "新的"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temporary file left


def test_a_missing_folder_is_a_clear_error(tmp_path):
    path = tmp_path / "missing" / "out.txt"
    with pytest.raises(InvalidInputError, match=r"cannot write .*missing.out\.txt: No such file or directory"):
        atomic_write_text(path, "x")


def test_written_files_get_ordinary_permissions(tmp_path):
    import os
    import stat

    mask = os.umask(0o022)
    os.umask(mask)
    new = tmp_path / "new.txt"
    atomic_write_text(new, "x")  # as open(..., "w") would make it, not mkstemp's private 0600
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~mask
    kept = tmp_path / "kept.txt"
    kept.write_text("old", encoding="utf-8")
    kept.chmod(0o640)
    atomic_write_text(kept, "new")  # a replaced file keeps its permissions
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_doctests():
    assert doctest.testmod(ciyuan._io).failed == 0


@given(st.lists(st.text("ab\n", max_size=30), max_size=8).map("".join).map(str.encode), st.integers(1, 12))
def test_line_blocks_are_whole_lines_of_the_stream(data: bytes, chunk: int) -> None:
    blocks = list(line_blocks(io.BytesIO(data), chunk))
    assert b"".join(blocks) == data
    assert all(blocks)  # no empty block
    assert all(b.endswith(b"\n") for b in blocks[:-1])  # only the last may lack its line break
    # a block is the carried start of a line longer than a chunk, then lines of one chunk read
    assert all(len(b) - b.find(b"\n") <= chunk for b in blocks if b"\n" in b)


def test_line_blocks_cut_where_told() -> None:
    """A cut function other than the default: after a blank line (paragraphs), 0 to read on."""
    def after_blank_line(data: bytes, carried: int) -> int:
        at = data.rfind(b"\n\n")
        return at + 2 if at >= 0 else 0

    blocks = list(line_blocks(io.BytesIO(b"a\nb\n\nc\n\nd"), 3, after_blank_line))
    assert blocks == [b"a\nb\n\n", b"c\n\n", b"d"]
