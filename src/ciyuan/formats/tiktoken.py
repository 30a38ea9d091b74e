"""tiktoken's ``.tiktoken`` files: one ``base64(token bytes) rank`` pair per line.

The rank is the token's id and also its merge priority (tiktoken's BPE rule), so these files
load as a byte-level :class:`~ciyuan.models.BPE` with ``rank_by_token=True``. The file holds no
pattern and no special tokens: they come from the encoding's name
(:mod:`ciyuan.formats.tiktoken_encodings`), and the file of a published encoding is recognised
by its content when no name is given.

Example:
    >>> tok = Tokenizer.from_tiktoken("o200k_base.tiktoken")      # doctest: +SKIP
    >>> tok.pre_tokenizer.pattern                                   # doctest: +SKIP
    'o200k_base'
"""

from __future__ import annotations

import base64
import binascii
import itertools
import operator
import re
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

import regex

from ciyuan._io import PathLike, atomic_write_text
from ciyuan.decoders import ByteLevel
from ciyuan.errors import FileFormatError, InvalidInputError, ModelError, raise_file_error
from ciyuan.formats.parts import TokenizerParts
from ciyuan.formats.tiktoken_encodings import ENCODING_NAMES, ENCODINGS, identify_tiktoken_bytes
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import Split

__all__ = ["load_tiktoken_ranks", "save_tiktoken_ranks", "tiktoken_parts", "looks_like_tiktoken",
           "resolve_pattern", "SPECIAL_TOKENS"]

#: The special tokens of the named encodings (:data:`~ciyuan.formats.tiktoken_encodings.ENCODINGS`).
SPECIAL_TOKENS: Dict[str, Dict[str, int]] = {n: dict(e.special_tokens) for n, e in ENCODINGS.items()}

# One "base64 rank" line: what a tiktoken file starts with.
_FIRST_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} [0-9]+\r?")

# A name-like pattern (letters, digits, '_', '-', '.'): meant as an encoding's name, never as a
# regex (as a regex it would keep only its own literal text and drop the rest of every text).
_NAME_LIKE = re.compile(r"[A-Za-z0-9_.\-]+")


def looks_like_tiktoken(path: PathLike) -> bool:
    """Whether ``path`` starts as a tiktoken file does (a ``base64 rank`` line); Llama 3's
    ``tokenizer.model`` is one, a SentencePiece ``tokenizer.model`` is not.

    Example:
        >>> looks_like_tiktoken("o200k_base.tiktoken")        # doctest: +SKIP
        True
    """
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return _FIRST_LINE.fullmatch(head.split(b"\n", 1)[0]) is not None


# The first line that is not "base64 rank" (searched at C speed before the fast path). One
# pattern over the whole file would do, but sre keeps state per repetition: 62 MB for o200k.
_BAD_LINE = re.compile(rb"^(?![A-Za-z0-9+/]+={0,2} [0-9]+\r?$).*$", re.MULTILINE)


def load_tiktoken_ranks(path: PathLike) -> Dict[bytes, int]:
    """Read a ``.tiktoken`` file into ``{token bytes: rank}``; corrupt lines raise
    :class:`~ciyuan.errors.FileFormatError` naming the file and line."""
    return _parse_ranks(path, _read(path))


def _read(path: PathLike) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise FileFormatError(str(path), None, f"cannot read the file: {e.strerror}") from None


_CHUNK = 1 << 20  # bytes of lines split at a time by _parse_ranks


def _parse_ranks(path: PathLike, data: bytes) -> Dict[bytes, int]:
    if _BAD_LINE.search(data.rstrip()) is None:
        # Fast path: split and decode with C functions; any doubt goes to the line-by-line
        # reader below, which names the first bad line. A megabyte of lines at a time: the
        # fields of a whole 200,000-token file are 400,000 objects beside the results.
        tokens: list = []
        rank_list: list = []
        start = 0
        try:
            while start < len(data):
                end = data.find(b"\n", start + _CHUNK) + 1 or len(data)  # a line's end, or the end
                fields = data[start:end].split()
                tokens += map(binascii.a2b_base64, fields[0::2])
                rank_list += map(int, fields[1::2])
                start = end
        except binascii.Error:
            tokens = []
        ranks = dict(zip(tokens, rank_list))
        # Distinct ranks: rising ones (every published file) are checked without a set of them.
        rising = all(map(operator.lt, rank_list, itertools.islice(rank_list, 1, None)))
        if (tokens and len(ranks) == len(tokens) and (rising or len(set(rank_list)) == len(rank_list))
                and all(tokens)):
            return ranks
    return _load_line_by_line(path, data)


def _load_line_by_line(path: PathLike, data: bytes) -> Dict[bytes, int]:
    ranks: Dict[bytes, int] = {}
    seen_ranks: Dict[int, int] = {}
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        parts = [p.decode("ascii", "replace") for p in line.split()]
        if len(parts) != 2:
            shown = line[:80].decode("utf-8", "replace")
            raise_file_error(path, number, f"expected 'base64-token rank', got {shown!r}")
        try:
            token = base64.b64decode(parts[0], validate=True)
        except (binascii.Error, ValueError):
            raise_file_error(path, number, f"{parts[0][:60]!r} is not valid base64")
        try:
            rank = int(parts[1])
        except ValueError:
            raise_file_error(path, number, f"rank {parts[1][:20]!r} is not an integer")
        if rank < 0:
            raise_file_error(path, number, f"rank {rank} is negative")
        if not token:
            raise_file_error(path, number, "the token is empty")
        if token in ranks:
            raise_file_error(path, number, f"token {token!r} already appeared with rank {ranks[token]}")
        if rank in seen_ranks:
            raise_file_error(path, number, f"rank {rank} already appeared on line {seen_ranks[rank]}")
        ranks[token] = rank
        seen_ranks[rank] = number
    if not ranks:
        raise_file_error(path, None, "the file holds no tokens")
    return ranks


def save_tiktoken_ranks(path: PathLike, ranks: Mapping[bytes, int]) -> None:
    """Write ``{token bytes: rank}`` as a ``.tiktoken`` file, in rank order (atomically)."""
    lines = [f"{base64.b64encode(t).decode('ascii')} {r}\n" for t, r in sorted(ranks.items(), key=lambda x: x[1])]
    atomic_write_text(path, "".join(lines))


def resolve_pattern(pattern: Optional[str], path: PathLike = "", identified: Optional[str] = None
                    ) -> Tuple[str, Optional[str]]:
    """The pre-tokenizer pattern to split with, and the encoding name it stands for (None for a
    regex of the caller's).

    Args:
        pattern: an encoding's name (:data:`~ciyuan.formats.tiktoken_encodings.ENCODING_NAMES`),
            a regular expression, or None to use the encoding ``identified``.
        path: the file (named in errors).
        identified: the encoding the file was recognised as, if any.

    Raises:
        InvalidInputError: no pattern for a file of no known encoding; a name-like pattern that
            is no encoding's name; a pattern that is not a valid regular expression.

    Example:
        >>> resolve_pattern("o200k_base")
        ('o200k_base', 'o200k_base')
        >>> resolve_pattern(None, "x.tiktoken", identified="cl100k_base")
        ('cl100k_base', 'cl100k_base')
    """
    names = ", ".join(ENCODING_NAMES)
    if pattern is None:
        if identified is None:
            raise InvalidInputError(
                f"{path}: not the file of a known encoding ({names}; recognised by rank count and "
                "sha256), so the pattern that splits text is unknown: pass pattern= one of those names or "
                "a regular expression (--pattern on the command line)")
        return ENCODINGS[identified].pattern, identified
    if pattern in ENCODINGS:
        return ENCODINGS[pattern].pattern, pattern
    if _NAME_LIKE.fullmatch(pattern):
        raise InvalidInputError(f"unknown encoding name {pattern!r}: the names are {names} "
                                "(or pass a regular expression that matches the pieces of a text)")
    try:
        regex.compile(pattern)
    except regex.error as e:
        raise InvalidInputError(f"the pattern {pattern!r} is neither a known encoding name ({names}) nor a "
                                f"valid regular expression: {e}") from None
    return pattern, None


def _check_special_tokens(path: PathLike, ranks: Dict[bytes, int], special_tokens: Mapping[str, int],
                          name: Optional[str], identified: Optional[str], chosen: bool) -> None:
    """Special tokens whose ids the file already gives to ranks: one error that says what to do."""
    top = max(ranks.values())
    by_id: Dict[int, bytes] = {}
    for text, i in special_tokens.items():
        if i > top:
            continue
        by_id = by_id or {r: t for t, r in ranks.items()}
        if i not in by_id:
            continue
        held = by_id[i].decode("utf-8", "replace")
        whose = (f"the special tokens of {name}" if name and not chosen else "the special tokens given")
        hint = ""
        if identified is not None and identified != name:
            hint = f" The file is {identified}'s: pass pattern={identified!r} (or no pattern)."
        raise ModelError(
            f"{path}: {whose} collide with the file's {len(ranks)} ranks: {text!r} has id {i}, which the file "
            f"gives to {held!r}.{hint} Pass special_tokens={{}} for none, or the model's own "
            "special tokens as {text: id} (ids the file does not use)")


def tiktoken_parts(
    path: PathLike, pattern: Optional[str] = None, special_tokens: Optional[Mapping[str, int]] = None
) -> TokenizerParts:
    """The parts of a :class:`~ciyuan.Tokenizer` that encodes exactly as tiktoken does with the
    same file, pattern and special tokens (``Tokenizer.from_tiktoken`` builds it).

    Args:
        path: the ``.tiktoken`` file.
        pattern: an encoding's name (its pattern, and its special tokens by default), a regular
            expression, or None: the file's own encoding, recognised by content.
        special_tokens: text -> id; by default the named encoding's (none for a regex).

    Raises:
        FileFormatError: a corrupt file, or one that misses single bytes.
        InvalidInputError: see :func:`resolve_pattern`.
        ModelError: special tokens on ids the file gives to ranks (the message says what to pass).
    """
    data = _read(path)
    ranks = _parse_ranks(path, data)
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise_file_error(path, None, f"{len(missing)} single bytes (e.g. {bytes([missing[0]])!r}) have no token; "
                         "a byte-level vocabulary must cover all 256 bytes")
    identified = identify_tiktoken_bytes(data)
    del data  # a few MB less at the model's construction, the peak of a load
    split_pattern, name = resolve_pattern(pattern, path, identified)
    chosen = special_tokens is not None
    if special_tokens is None:
        special_tokens = ENCODINGS[name].special_tokens if name is not None else {}
    _check_special_tokens(path, ranks, special_tokens, name, identified, chosen)
    try:
        model = BPE(ranks, byte_level=True, rank_by_token=True)
    except FileFormatError:
        raise
    except ModelError as e:  # e.g. one huge rank (a table entry per id below it): name the file
        raise FileFormatError(str(path), None, str(e)) from None
    return TokenizerParts(model=model, pre_tokenizer=Split(split_pattern), decoder=ByteLevel(),
                          special_tokens=dict(special_tokens))
