"""ciyuan._io: atomic writes and their errors."""

from __future__ import annotations

import pytest

from ciyuan import InvalidInputError
from ciyuan._io import atomic_write_text


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
