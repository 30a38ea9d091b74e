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
