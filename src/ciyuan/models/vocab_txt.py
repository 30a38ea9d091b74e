"""BERT's ``vocab.txt`` file: one token per line, a token's id is its line number counted from 0.

This is the vocabulary file of every BERT-family checkpoint (``bert-base-uncased``,
``bert-base-chinese``, ...). It is read exactly as Hugging Face reads it: whitespace at the end
of a line is not part of the token (so ``bert-base-chinese``'s line ``"\\u2028"`` is the empty
token, and ``"##\\u2028"`` is ``"##"``); if that trimming makes two lines the same token, the
later line wins and the earlier id is unused. A final line break is optional. Errors that name
the file and line: an empty line (zero characters), the same line twice, invalid UTF-8 - a
silently lost or shifted line would shift the ids after it.

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> save_bert_vocab(path, ["[PAD]", "[UNK]", "hello", "##s"])
    >>> load_bert_vocab(path)
    ['[PAD]', '[UNK]', 'hello', '##s']
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from ciyuan._io import PathLike, atomic_write_text
from ciyuan.errors import FileFormatError, ModelError

__all__ = ["load_bert_vocab", "save_bert_vocab", "parse_bert_vocab"]

# Unicode White_Space (what Hugging Face's reader trims from the end of each line).
_WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                "\u2028\u2029\u202f\u205f\u3000")


def parse_bert_vocab(data: bytes, source: str = "<vocab.txt>") -> List[Optional[str]]:
    """The tokens of a ``vocab.txt`` held in memory, indexed by id (``None``: an unused id).

    Raises:
        FileFormatError: invalid UTF-8, an empty line or a line listed twice (``source:line``).
    """
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    tokens: List[Optional[str]] = []
    seen: Dict[str, Tuple[int, str]] = {}  # token -> (line, the line as written)
    for number, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            bad = raw[e.start:e.start + 4]
            raise FileFormatError(source, number, f"invalid UTF-8 at byte {e.start} of the line: {bad!r}") from None
        if line in ("", "\r"):
            raise FileFormatError(source, number,
                                  "empty line: every line must hold one token (its id is the line number - 1)")
        token = line.rstrip(_WHITE_SPACE)
        if token in seen:
            first, written = seen[token]
            if written == line:
                raise FileFormatError(source, number, f"the token {token!r} is listed twice (first on line {first})")
            tokens[first - 1] = None  # trimmed to the same token: the later line wins, as in Hugging Face
        seen[token] = (number, line)
        tokens.append(token)
    if not tokens:
        raise FileFormatError(source, None, "the vocabulary is empty")
    return tokens


def load_bert_vocab(path: PathLike) -> List[Optional[str]]:
    """Read ``vocab.txt``: the tokens in id order (line 1 is id 0; ``None`` for an unused id).

    Example:
        >>> load_bert_vocab("bert-base-uncased-vocab.txt")[:2]   # doctest: +SKIP
        ['[PAD]', '[unused0]']
    """
    return parse_bert_vocab(Path(path).read_bytes(), str(path))


def save_bert_vocab(path: PathLike, tokens: Iterable[str]) -> None:
    """Write ``vocab.txt`` atomically (temp file + rename): one token per line, in id order.

    The empty token is written as a line holding one space (which every reader trims to it).

    Raises:
        ModelError: a token holds a line break or ends with whitespace (the format cannot
            represent it).
    """
    lines = []
    for i, token in enumerate(tokens):
        if not isinstance(token, str) or "\n" in token or "\r" in token or token.rstrip(_WHITE_SPACE) != token:
            raise ModelError(
                f"token {i} ({token!r}) cannot be written to vocab.txt: tokens must be strings without line "
                "breaks or trailing whitespace; save the tokenizer as JSON instead"
            )
        lines.append((token or " ") + "\n")
    atomic_write_text(path, "".join(lines))
