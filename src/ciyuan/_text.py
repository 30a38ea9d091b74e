"""Text at the UTF-8 boundary: the one "invalid UTF-8" error message, and lone surrogates.

The native core takes UTF-8, so every text crossing into it must be valid UTF-8:

* bytes read from files are checked, and the first invalid sequence is reported by
  :func:`utf8_error` - the same message (source, byte offset, line, the bad bytes, the fix) for
  the tokenizer, the trainers, the segmenter and the command line;
* a Python ``str`` may hold lone surrogates (U+D800..U+DFFF), which have no UTF-8 form; they are
  read as U+FFFD, as tiktoken does (:func:`replace_surrogates`), or one for one where spans are
  measured on the text as given (:func:`replace_surrogates_in_place`).

Example:
    >>> replace_surrogates("a\\ud800b")
    'a\\ufffdb'
    >>> str(utf8_error("in.txt", b"ok\\n\\xff", 3))
    "in.txt: invalid UTF-8 at byte 3 (line 2): b'\\\\xff'; fix the file or pass errors='replace' (CLI: --errors replace) to read such bytes as U+FFFD"
"""  # noqa: E501 (a doctest's output line)

from __future__ import annotations

from ciyuan.errors import InvalidInputError

__all__ = ["utf8_error", "decode_utf8", "is_utf8_encodable", "replace_surrogates", "replace_surrogates_in_place"]


def utf8_error(source: object, data: bytes, start: int, *, offset: int = 0, first_line: int = 1) -> InvalidInputError:
    """The error for invalid UTF-8 at ``data[start]``.

    Args:
        source: the file (or ``<stdin>``) the bytes came from.
        data: the bytes read (a whole file, a block or one line).
        start: where in ``data`` the invalid sequence starts.
        offset: the byte offset of ``data`` in the source (for a block or a line of a file).
        first_line: the line number of ``data``'s first line in the source.
    """
    line = first_line + data.count(b"\n", 0, start)
    return InvalidInputError(
        f"{source}: invalid UTF-8 at byte {offset + start} (line {line}): {data[start:start + 4]!r}; "
        "fix the file or pass errors='replace' (CLI: --errors replace) to read such bytes as U+FFFD"
    )


def decode_utf8(data: bytes, source: str, errors: str = "strict") -> str:
    """Decode UTF-8; with ``errors="strict"`` invalid bytes raise :func:`utf8_error`'s error."""
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise utf8_error(source, data, e.start) from None


def is_utf8_encodable(text: str) -> bool:
    """Whether ``text`` has a UTF-8 form (holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def replace_surrogates(text: str) -> str:
    """``text`` with lone surrogates as U+FFFD, as tiktoken reads them (a ``str`` holding a
    surrogate *pair* gets the character the pair encodes). Text without any is returned as is."""
    if is_utf8_encodable(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def replace_surrogates_in_place(text: str) -> str:
    """``text`` with every surrogate code point as U+FFFD, one character for one: for stages
    whose character spans must index ``text`` as given."""
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
