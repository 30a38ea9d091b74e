"""The folders the page may read (``--allow-dir``), and the tokenizer files found in them.

A path from the page is resolved (``..`` and symbolic links followed) before it is compared
with the allowed folders, so ``allowed/../../etc/passwd`` and a link out of an allowed folder
are both refused. Nothing outside them is ever opened on the page's behalf.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "cl100k_base.tiktoken").write_text("")
    >>> dirs = AllowedDirs([str(root)])
    >>> dirs.resolve("cl100k_base.tiktoken") == (root / "cl100k_base.tiktoken").resolve()
    True
    >>> dirs.resolve("/etc/passwd")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ciyuan.serve.paths.ForbiddenPathError: /etc/passwd is outside the allowed folders; start ciyuan serve ...
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

from ciyuan.errors import CiyuanError, InvalidInputError

__all__ = ["AllowedDirs", "ForbiddenPathError", "Found", "tokenizer_kind"]

# A folder tree could be huge (someone allows their home folder): the scan stops after this
# many entries and this depth, and the page can still load any other file by its path.
MAX_SCANNED = 20_000
MAX_DEPTH = 4
_SKIPPED_DIRS = {".git", "__pycache__", "node_modules", ".venv", "venv", ".cache"}


class ForbiddenPathError(CiyuanError, PermissionError):
    """A path outside every ``--allow-dir`` folder (answered with 403)."""


@dataclass(frozen=True)
class Found:
    """A tokenizer file found in an allowed folder: its path, its path relative to that
    folder (what the page shows and sends back) and the format it looks like."""

    path: Path
    relative: str
    kind: str


def tokenizer_kind(path: Path) -> Optional[str]:
    """The format a file's name says it holds, or None for a file that is no tokenizer (by
    name only: the scan opens nothing; GPT-2's ``encoder.json`` counts when ``vocab.bpe`` is
    beside it).

    Example:
        >>> [tokenizer_kind(Path(n)) for n in ("o200k_base.tiktoken", "tokenizer.json", "llama2.model",
        ...                                     "bert-base-uncased-vocab.txt", "notes.txt")]
        ['tiktoken', 'huggingface', 'sentencepiece', 'bert_vocab', None]
    """
    name = path.name
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if name == "encoder.json":
        return "gpt2" if (path.parent / "vocab.bpe").exists() else None
    if name.endswith(".model"):
        return "sentencepiece"
    if name == "tokenizer.json" or name.endswith(".tokenizer.json"):
        return "huggingface"
    if name.endswith(".txt") and "vocab" in name.lower():
        return "bert_vocab"
    if name.endswith(".json") and name.startswith(("ciyuan", "tok")):
        return "ciyuan"
    return None


class AllowedDirs:
    """The ``--allow-dir`` folders: the only places the page may read files from."""

    def __init__(self, dirs: Sequence[str]) -> None:
        self.roots: List[Path] = []
        for d in dirs:
            root = Path(d).expanduser().resolve()
            if not root.is_dir():
                raise InvalidInputError(f"--allow-dir {d}: no such folder")
            self.roots.append(root)

    def __bool__(self) -> bool:
        return bool(self.roots)

    def resolve(self, path: str) -> Path:
        """The real path of ``path`` (absolute, or relative to the first allowed folder that
        holds it), if it lies inside an allowed folder.

        Raises:
            ForbiddenPathError: it lies outside every allowed folder (or none is allowed).
        """
        if not isinstance(path, str) or not path or "\x00" in path:
            raise InvalidInputError("path must be a non-empty string")
        candidates = [Path(path)] if os.path.isabs(path) else [root / path for root in self.roots]
        for candidate in candidates:
            real = candidate.resolve()
            for root in self.roots:
                if real == root or root in real.parents:
                    return real
        raise ForbiddenPathError(f"{path} is outside the allowed folders; start ciyuan serve with --allow-dir "
                                 "naming a folder that holds it")

    def scan(self) -> List[Found]:
        """The tokenizer files in the allowed folders (by name; at most :data:`MAX_DEPTH`
        folders deep and :data:`MAX_SCANNED` entries), sorted by folder and name."""
        found: List[Found] = []
        for root in self.roots:
            for path in _walk(root):
                kind = tokenizer_kind(path)
                if kind is not None:
                    found.append(Found(path, path.relative_to(root).as_posix(), kind))
        return found


def _walk(root: Path) -> Iterator[Path]:
    """Files under ``root``, breadth first, within the scan's limits; links that lead out of
    ``root`` are left out (they could not be read anyway)."""
    seen = 0
    level = [root]
    for _ in range(MAX_DEPTH + 1):
        below: List[Path] = []
        for folder in level:
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > MAX_SCANNED:
                    return
                path = Path(entry.path)
                real = path.resolve()
                if real != root and root not in real.parents:
                    continue
                if entry.is_dir():
                    if entry.name not in _SKIPPED_DIRS and not entry.name.startswith("."):
                        below.append(path)
                elif entry.is_file():
                    yield path
        level = below
