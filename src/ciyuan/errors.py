"""One exception hierarchy for everything ciyuan raises.

Every error is a :class:`CiyuanError`; most are also a ``ValueError`` so that code written for
other tokenizer libraries keeps catching them. Errors from the native core arrive as these
classes too.

Example:
    >>> import ciyuan
    >>> try:
    ...     ciyuan.errors.raise_file_error("vocab.txt", 3, "empty token")
    ... except ciyuan.CiyuanError as e:
    ...     print(e)
    vocab.txt:3: empty token
"""

from __future__ import annotations

from typing import NoReturn, Optional, TypeVar

__all__ = [
    "CiyuanError",
    "InvalidInputError",
    "DisallowedSpecialTokenError",
    "UnknownIdError",
    "ModelError",
    "FileFormatError",
    "raise_file_error",
    "check_count",
]

T = TypeVar("T")


class CiyuanError(Exception):
    """Base class of every error ciyuan raises on purpose."""


class InvalidInputError(CiyuanError, ValueError):
    """The input text or arguments cannot be processed (e.g. invalid UTF-8 in a file)."""


class DisallowedSpecialTokenError(InvalidInputError):
    """Special-token text (such as ``<|endoftext|>``) appeared in ordinary input.

    Pass ``allowed_special={...}`` to encode it as the special token, or
    ``disallowed_special=()`` to encode it as plain text.
    """


class UnknownIdError(CiyuanError, ValueError):
    """An id outside the vocabulary was given to decode or id_to_token."""


class ModelError(CiyuanError, ValueError):
    """A model or vocabulary is inconsistent (e.g. a merge producing an unknown token)."""


class FileFormatError(ModelError):
    """A tokenizer or vocabulary file is corrupt; the message names the file and line."""

    def __init__(self, path: str, line: Optional[int], message: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line


def raise_file_error(path: object, line: Optional[int], message: str) -> NoReturn:
    """Raise :class:`FileFormatError` for ``path`` (and ``line``, 1-based, when known)."""
    raise FileFormatError(str(path), line, message)


def check_count(value: T, what: str, *, least: int = 0, allow_none: bool = False) -> T:
    """``value`` if it is an integer (not a bool) of at least ``least`` (0 or 1), or None with
    ``allow_none``; else :class:`InvalidInputError`: "``what`` must be a non-negative integer"
    ("positive" when ``least`` is 1; "... or None" with ``allow_none``), and the value."""
    if value is None and allow_none:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        kind = "non-negative" if least == 0 else "positive"
        or_none = " or None" if allow_none else ""
        raise InvalidInputError(f"{what} must be a {kind} integer{or_none}, not {value!r}")
    return value
