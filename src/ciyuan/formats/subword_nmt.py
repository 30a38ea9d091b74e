"""subword-nmt's files: BPE codes (``learn-bpe`` output) and vocabularies (``get-vocab`` output).

A codes file is one merge per line, ``left right``, in the order they were learned (the line
number is the merge's rank). Since subword-nmt 0.2 the first line is ``#version: 0.2``: the
end-of-word marker ``</w>`` is glued to a word's last character from the start (``l o w</w>``),
so a word-final merge reads ``o w</w>``. A file without that line is version 0.1, where
``</w>`` is a symbol of its own (``l o w </w>``) and merges such as ``w </w>`` attach it.

A vocabulary file is ``word count`` per line; with a threshold, only the words counted at least
that often are in the vocabulary (``apply-bpe --vocabulary V --vocabulary-threshold N``).

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "codes")
    >>> save_codes(path, BpeCodes([("l", "o"), ("lo", "w</w>")]))
    >>> codes_text(load_codes(path))
    '#version: 0.2\\nl o\\nlo w</w>\\n'
    >>> load_codes(path).merges
    [('l', 'o'), ('lo', 'w</w>')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from ciyuan._io import PathLike, atomic_write_text, read_utf8
from ciyuan.errors import InvalidInputError, raise_file_error

__all__ = ["BpeCodes", "END_OF_WORD", "VERSIONS", "load_codes", "parse_codes", "save_codes", "codes_text",
           "load_vocabulary", "parse_vocabulary"]

#: The end-of-word marker of subword-nmt's merges.
END_OF_WORD = "</w>"
#: The codes versions subword-nmt applies.
VERSIONS = ((0, 1), (0, 2))

Pair = Tuple[str, str]


@dataclass
class BpeCodes:
    """The merges of a codes file, in file order, and the file's version.

    Attributes:
        merges: ``(left, right)`` pairs; the index is the rank (a pair listed twice keeps its
            first rank, as subword-nmt reads it).
        version: ``(0, 2)`` (``</w>`` glued to the last character) or ``(0, 1)``.
    """

    merges: List[Pair] = field(default_factory=list)
    version: Tuple[int, ...] = (0, 2)

    def __post_init__(self) -> None:
        if tuple(self.version) not in VERSIONS:
            raise InvalidInputError(f"subword-nmt codes version {'.'.join(map(str, self.version))} is not one "
                                    "ciyuan (or subword-nmt) applies: use 0.1 or 0.2")
        for pair in self.merges:
            if len(pair) != 2 or not all(isinstance(s, str) and s and " " not in s and "\n" not in s
                                         for s in pair):
                raise InvalidInputError(f"invalid merge {pair!r}: two non-empty symbols without spaces or "
                                        "newlines")

    def ranks(self) -> Dict[Pair, int]:
        """``{pair: rank}``, the first rank of a pair listed twice."""
        out: Dict[Pair, int] = {}
        for i, pair in enumerate(self.merges):
            out.setdefault(pair, i)
        return out


def _version(line: str, path: object) -> Tuple[int, ...]:
    # "#version: 0.2" (trailing ".0"s dropped, so "0.2.0" is 0.2), as subword-nmt reads it.
    text = re.sub(r"(\.0+)*$", "", line.split()[-1]) if line.split() else ""
    try:
        version = tuple(int(x) for x in text.split("."))
    except ValueError:
        raise_file_error(path, 1, f"cannot read the version in {line.strip()!r} (expected '#version: 0.2')")
    if version not in VERSIONS:
        raise_file_error(path, 1, f"subword-nmt codes version {text} is not one ciyuan (or subword-nmt) applies "
                         "(0.1, 0.2)")
    return version


def parse_codes(text: str, merges: int = -1, path: object = "<codes>") -> BpeCodes:
    """Codes from the text of a codes file; only the first ``merges`` merges unless -1.

    Raises:
        FileFormatError: a line that is not exactly two symbols separated by one space (named
            by its line number), or an unknown version.
    """
    lines = text.split("\n")
    offset = 1
    version: Tuple[int, ...] = (0, 1)
    if lines and lines[0].startswith("#version:"):
        version = _version(lines[0], path)
        lines = lines[1:]
        offset = 2
    body = "\n".join(lines).rstrip("\n").split("\n")
    pairs: List[Pair] = []
    for n, line in enumerate(body):
        if merges != -1 and n >= merges:
            break
        parts = line.strip("\r\n ").split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise_file_error(path, n + offset, f"expected two subword units separated by a space, got {line[:80]!r}")
        pairs.append((parts[0], parts[1]))
    return BpeCodes(pairs, version)


def _read(path: PathLike) -> str:
    try:
        return read_utf8(path)
    except OSError as e:
        raise_file_error(path, None, f"cannot read the file: {e.strerror}")


def load_codes(path: PathLike, merges: int = -1) -> BpeCodes:
    """Read a codes file (UTF-8); only the first ``merges`` merges unless -1."""
    return parse_codes(_read(path), merges, path)


def codes_text(codes: BpeCodes) -> str:
    """The text of a codes file: the ``#version: 0.2`` line for version 0.2 (none for 0.1),
    then one merge per line."""
    head = "#version: 0.2\n" if tuple(codes.version) == (0, 2) else ""
    return head + "".join(f"{a} {b}\n" for a, b in codes.merges)


def save_codes(path: PathLike, codes: BpeCodes) -> None:
    """Write a codes file (atomically)."""
    atomic_write_text(path, codes_text(codes))


def parse_vocabulary(text: str, threshold: Optional[int] = None, path: object = "<vocabulary>") -> Set[str]:
    """The words of a vocabulary text (``word count`` per line) counted at least ``threshold``
    times (all of them when None).

    Raises:
        FileFormatError: a line that is not ``word count``.
    """
    vocabulary: Set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.strip("\r\n ").split(" ")
        if len(parts) != 2:
            raise_file_error(path, n, f"expected 'word count', got {line[:80]!r}")
        try:
            count = int(parts[1])
        except ValueError:
            raise_file_error(path, n, f"count {parts[1][:20]!r} is not an integer")
        if threshold is None or count >= threshold:
            vocabulary.add(parts[0])
    return vocabulary


def load_vocabulary(path: PathLike, threshold: Optional[int] = None) -> Set[str]:
    """Read a vocabulary file (``subword-nmt get-vocab`` output), as :func:`parse_vocabulary`."""
    return parse_vocabulary(_read(path), threshold, path)
