"""AllowedDirs: nothing outside the --allow-dir folders resolves, whatever the spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from ciyuan.errors import InvalidInputError
from ciyuan.serve import paths
from ciyuan.serve.paths import AllowedDirs, ForbiddenPathError, tokenizer_kind


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    (tmp_path / "allowed" / "gpt2").mkdir(parents=True)
    (tmp_path / "allowed" / "gpt2" / "encoder.json").write_text("{}")
    (tmp_path / "allowed" / "gpt2" / "vocab.bpe").write_text("")
    (tmp_path / "allowed" / "cl100k_base.tiktoken").write_text("")
    (tmp_path / "allowed" / "notes.txt").write_text("")
    (tmp_path / "allowed" / ".git").mkdir()
    (tmp_path / "allowed" / ".git" / "x.tiktoken").write_text("")
    (tmp_path / "secret.tiktoken").write_text("")
    (tmp_path / "allowed" / "out.tiktoken").symlink_to(tmp_path / "secret.tiktoken")
    (tmp_path / "allowed" / "up").symlink_to(tmp_path)
    return tmp_path


def test_inside_resolves(tree: Path) -> None:
    dirs = AllowedDirs([str(tree / "allowed")])
    real = (tree / "allowed" / "cl100k_base.tiktoken").resolve()
    assert dirs.resolve("cl100k_base.tiktoken") == real
    assert dirs.resolve(str(real)) == real
    assert dirs.resolve("gpt2/../cl100k_base.tiktoken") == real


@pytest.mark.parametrize("path", ["../secret.tiktoken", "out.tiktoken", "up/secret.tiktoken", "/etc/passwd",
                                  "gpt2/../../secret.tiktoken", "{root}/secret.tiktoken"])
def test_outside_is_forbidden(tree: Path, path: str) -> None:
    dirs = AllowedDirs([str(tree / "allowed")])
    with pytest.raises(ForbiddenPathError, match="outside the allowed folders"):
        dirs.resolve(path.format(root=tree))


def test_no_folder_allows_nothing(tree: Path) -> None:
    with pytest.raises(ForbiddenPathError):
        AllowedDirs([]).resolve(str(tree / "allowed" / "cl100k_base.tiktoken"))


@pytest.mark.parametrize("path", ["", "a\x00b"])
def test_bad_path_strings(tree: Path, path: str) -> None:
    with pytest.raises(InvalidInputError):
        AllowedDirs([str(tree)]).resolve(path)


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no such folder"):
        AllowedDirs([str(tmp_path / "nope")])


def test_scan_lists_tokenizer_files_inside_only(tree: Path) -> None:
    found = AllowedDirs([str(tree / "allowed")]).scan()
    assert [(f.relative, f.kind) for f in found] == [("cl100k_base.tiktoken", "tiktoken"),
                                                     ("gpt2/encoder.json", "gpt2")]


def test_scan_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(30):
        (tmp_path / f"{i:02}.tiktoken").write_text("")
    monkeypatch.setattr(paths, "MAX_SCANNED", 10)
    assert len(AllowedDirs([str(tmp_path)]).scan()) == 10


def test_tokenizer_kind_needs_vocab_bpe_beside_encoder_json(tmp_path: Path) -> None:
    (tmp_path / "encoder.json").write_text("{}")
    assert tokenizer_kind(tmp_path / "encoder.json") is None
    (tmp_path / "vocab.bpe").write_text("")
    assert tokenizer_kind(tmp_path / "encoder.json") == "gpt2"
