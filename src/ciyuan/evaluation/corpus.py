"""The corpora ``ciyuan eval`` reads: a text file, or a folder of one file per language.

A **file** is one corpus. A **folder** is a multilingual corpus: each ``*.txt`` in it is one
language, named by its file name; an ``INDEX.tsv`` beside them (the UDHR collection's: a
header line, then ``key<TAB>iso15924<TAB>name...`` per file ``key.txt``) gives each language
its name and script. The figures are then kept per language too (fertility, tokens per
character, the premium over a reference language: tokenization parity).

A corpus is read as lines: each line without its line break is one text to encode (with no
special tokens added), and blank lines are skipped. Sizes (bytes, characters, words) are those
of these texts, so line breaks count nowhere.

Example:
    >>> c = open_corpus("corpora/multi/udhr")                           # doctest: +SKIP
    >>> c.parts[0].key, c.parts[0].script, len(c.parts)                # doctest: +SKIP
    ('007', 'Latn', 485)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Union

from ciyuan._io import read_utf8
from ciyuan.errors import InvalidInputError

__all__ = ["Corpus", "Part", "open_corpus", "read_lines"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Part:
    """One file of a corpus: a language of a multilingual folder (``key`` is the file name
    without ``.txt``; ``name`` and ``script`` from INDEX.tsv, else the key and ``""``), or the
    whole corpus of a single file (``key`` ``""``)."""

    key: str
    name: str
    script: str
    path: Path


@dataclass(frozen=True)
class Corpus:
    """A corpus: its ``name`` (the path as given), its parts, and whether it is a multilingual
    folder (``by_language``)."""

    name: str
    parts: Sequence[Part]
    by_language: bool


def read_lines(path: PathLike, errors: str = "strict") -> List[str]:
    """The non-blank lines of a UTF-8 file, without their line breaks (``\\n``, ``\\r\\n``).

    Invalid UTF-8 is an :class:`~ciyuan.errors.InvalidInputError` naming the file and byte, or
    U+FFFD with ``errors="replace"``.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
        >>> _ = p.write_bytes(b"one two\\r\\n\\n  \\nthree\\n")
        >>> read_lines(p)
        ['one two', 'three']
    """
    try:
        text = read_utf8(path, errors)
    except FileNotFoundError:
        raise InvalidInputError(f"corpus {path}: no such file") from None
    except IsADirectoryError:
        raise InvalidInputError(f"corpus {path}: is a folder; name a text file or a folder of *.txt") from None
    except PermissionError:
        raise InvalidInputError(f"corpus {path}: permission denied") from None
    return [line.rstrip("\r") for line in text.split("\n") if line.strip()]


def _index(folder: Path) -> dict:
    """key -> (script, name) from the folder's INDEX.tsv, if any."""
    index = folder / "INDEX.tsv"
    if not index.is_file():
        return {}
    rows = {}
    for n, line in enumerate(read_utf8(index).splitlines()[1:], start=2):
        fields = line.split("\t")
        if len(fields) < 3:
            raise InvalidInputError(f"{index}:{n}: expected 'key<TAB>script<TAB>name', got {line!r}")
        rows[fields[0]] = (fields[1], fields[2])
    return rows


def open_corpus(path: PathLike, name: Optional[str] = None) -> Corpus:
    """The corpus at ``path`` (a file, or a folder of ``*.txt``, see the module's doc).

    Raises:
        InvalidInputError: a missing path, or a folder without ``*.txt`` files.
    """
    p = Path(path)
    label = name if name is not None else str(path)
    if p.is_dir():
        files = sorted(p.glob("*.txt"))
        if not files:
            raise InvalidInputError(f"corpus {path}: the folder holds no *.txt files (one per language)")
        index = _index(p)
        parts = []
        for f in files:
            script, lang = index.get(f.stem, ("", f.stem))
            parts.append(Part(f.stem, lang, script, f))
        return Corpus(label, parts, True)
    if not p.exists():
        raise InvalidInputError(f"corpus {path}: no such file or folder")
    return Corpus(label, [Part("", label, "", p)], False)
