"""The corpora ``ciyuan eval`` reads: a text file, or a folder of one file per language.

A **file** is one corpus. A **folder** is a multilingual corpus: each ``*.txt`` in it is one
language, named by its file name; an ``INDEX.tsv`` beside them (the UDHR collection's: a
header line, then ``key<TAB>iso15924<TAB>name...`` per file ``key.txt``) gives each language
its name and script. The figures are then kept per language too (fertility, tokens per
character, the premium over a reference language: tokenization parity).

A corpus is read as lines: each line without its line break is one text to encode (with no
special tokens added), and blank lines are skipped. Sizes (bytes, characters, words) are those
of these texts, so line breaks count nowhere. Files are read block by block (8 MB), each pass
anew, so a corpus of any size takes the memory of one block.

Example:
    >>> c = open_corpus("corpora/multi/udhr")                           # doctest: +SKIP
    >>> c.parts[0].key, c.parts[0].script, len(c.parts)                # doctest: +SKIP
    ('007', 'Latn', 485)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Sequence, Union

from ciyuan._io import line_blocks, read_utf8
from ciyuan._text import utf8_error
from ciyuan.errors import InvalidInputError

__all__ = ["Corpus", "Part", "open_corpus", "read_lines", "iter_line_blocks", "text_corpus"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Part:
    """One file of a corpus: a language of a multilingual folder (``key`` is the file name
    without ``.txt``; ``name`` and ``script`` from INDEX.tsv, else the key and ``""``), or the
    whole corpus of a single file (``key`` ``""``)."""

    key: str
    name: str
    script: str
    #: the file, or None for text given in memory (``lines``)
    path: Optional[Path]
    lines: Optional[Sequence[str]] = None

    def blocks(self, errors: str = "strict") -> Iterator[List[str]]:
        """The part's non-blank lines, block by block (see :func:`iter_line_blocks`)."""
        if self.lines is not None:
            if self.lines:
                yield list(self.lines)
            return
        assert self.path is not None
        yield from iter_line_blocks(self.path, errors, BLOCK_BYTES)


@dataclass(frozen=True)
class Corpus:
    """A corpus: its ``name`` (the path as given), its parts, and whether it is a multilingual
    folder (``by_language``)."""

    name: str
    parts: Sequence[Part]
    by_language: bool


#: How much of a file is read at once (cut after its last line break): what a pass over a
#: corpus holds in memory, whatever the file's size.
BLOCK_BYTES = 8 << 20


def iter_line_blocks(path: PathLike, errors: str = "strict", block_bytes: int = BLOCK_BYTES, *,
                     what: str = "corpus") -> Iterator[List[str]]:
    """The non-blank lines of a UTF-8 file, without their line breaks (``\\n``, ``\\r\\n``), in
    lists of the lines of about ``block_bytes`` of the file each (a longer line is a block of
    its own).

    Invalid UTF-8 is an :class:`~ciyuan.errors.InvalidInputError` naming the file, byte and
    line, or U+FFFD with ``errors="replace"`` (blocks end at line breaks, so a character is
    never cut between two).
    """
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed by the with below; the try is for the open)
    except FileNotFoundError:
        raise InvalidInputError(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise InvalidInputError(f"{what} {path}: is a folder; name a text file") from None
    except OSError as e:
        raise InvalidInputError(f"{what} {path}: cannot read it: {e.strerror}") from None
    with f:
        offset, line = 0, 1
        for block in line_blocks(f, block_bytes):
            try:
                text = block.decode("utf-8", errors)
            except UnicodeDecodeError as e:
                raise utf8_error(path, block, e.start, offset=offset, first_line=line) from None
            offset += len(block)
            line += block.count(b"\n")
            lines = [ln.rstrip("\r") for ln in text.split("\n") if ln.strip()]
            if lines:
                yield lines


def read_lines(path: PathLike, errors: str = "strict", *, what: str = "corpus") -> List[str]:
    """All the lines :func:`iter_line_blocks` gives, in one list.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
        >>> _ = p.write_bytes(b"one two\\r\\n\\n  \\nthree\\n")
        >>> read_lines(p)
        ['one two', 'three']
    """
    return [line for block in iter_line_blocks(path, errors, what=what) for line in block]


def text_corpus(name: str, texts: Iterable[str]) -> Corpus:
    """A corpus of texts in memory (a web page's text box): each text cut into lines as a
    file's would be, blank lines left out.

    Example:
        >>> text_corpus("box", ["one\\r\\ntwo", "", "three"]).parts[0].lines
        ('one', 'two', 'three')
    """
    lines = []
    for text in texts:
        if not isinstance(text, str):
            raise InvalidInputError(f"corpus {name}: texts must be str, got {type(text).__name__}")
        lines += [line.rstrip("\r") for line in text.split("\n") if line.strip()]
    return Corpus(name, [Part("", name, "", None, tuple(lines))], False)


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
