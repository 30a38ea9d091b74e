"""BERT's ``vocab.txt``: one token per line, a token's id is its line number counted from 0.

This is the vocabulary file of every BERT-family checkpoint (``bert-base-uncased``,
``bert-base-chinese``, ...). A final line break is optional; a trailing ``\\r`` (a file saved
with Windows line ends) is dropped. Empty lines, tokens listed twice and invalid UTF-8 are
errors that name the file and line: a silently shifted line would shift every id after it.

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> save_bert_vocab(path, ["[PAD]", "[UNK]", "hello", "##s"])
    >>> load_bert_vocab(path)
    ['[PAD]', '[UNK]', 'hello', '##s']
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, List

from ciyuan._io import PathLike, atomic_write_text
from ciyuan.errors import FileFormatError, ModelError

__all__ = ["load_bert_vocab", "save_bert_vocab", "parse_bert_vocab"]


def parse_bert_vocab(data: bytes, source: str = "<vocab.txt>") -> List[str]:
    """The tokens of a ``vocab.txt`` held in memory, in id order.

    Raises:
        FileFormatError: invalid UTF-8, an empty line or a token listed twice (``source:line``).
    """
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    tokens: List[str] = []
    seen = {}
    for number, raw in enumerate(lines, start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            token = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FileFormatError(source, number, f"invalid UTF-8 at byte {e.start} of the line: {raw[e.start:e.start + 4]!r}") from None
        if not token:
            raise FileFormatError(source, number, "empty line: every line must hold one token (its id is the line number - 1)")
        if token in seen:
            raise FileFormatError(source, number, f"the token {token!r} is listed twice (first on line {seen[token]})")
        seen[token] = number
        tokens.append(token)
    if not tokens:
        raise FileFormatError(source, None, "the vocabulary is empty")
    return tokens


def load_bert_vocab(path: PathLike) -> List[str]:
    """Read ``vocab.txt``: the tokens in id order (line 1 is id 0).

    Example:
        >>> load_bert_vocab("bert-base-uncased-vocab.txt")[:2]   # doctest: +SKIP
        ['[PAD]', '[unused0]']
    """
    return parse_bert_vocab(Path(path).read_bytes(), str(path))


def save_bert_vocab(path: PathLike, tokens: Iterable[str]) -> None:
    """Write ``vocab.txt`` atomically (temp file + rename): one token per line, in id order.

    Raises:
        ModelError: a token is empty or holds a line break (the format cannot represent it).
    """
    lines = []
    for i, token in enumerate(tokens):
        if not isinstance(token, str) or not token or "\n" in token or "\r" in token:
            raise ModelError(
                f"token {i} ({token!r}) cannot be written to vocab.txt: tokens must be non-empty strings "
                "without line breaks; save the tokenizer as JSON instead"
            )
        lines.append(token + "\n")
    atomic_write_text(path, "".join(lines))
