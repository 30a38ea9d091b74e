"""``vocab.txt`` and ``merges.txt``: the plain-text form of a BPE model.

- ``vocab.txt``: one token per line; a token's id is its line number counted from 0 (special
  tokens first, as the trainer assigns them).
- ``merges.txt``: a ``#version: 0.2`` header, then one merge per line, ``left right``, in merge
  order - the merges files of Hugging Face and subword-nmt (``codes``).

Byte-level tokens are written in GPT-2's printable byte alphabet (``Ġthe``), as ``vocab.bpe``
does; character-level tokens as they are. Both files are written atomically.

Example:
    >>> from ciyuan.models import BPE
    >>> from ciyuan.formats.vocab_merges import merges_lines
    >>> merges_lines(BPE({"l": 0, "o": 1, "lo": 2}, [("l", "o")]))
    ['#version: 0.2', 'l o']
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ciyuan._io import PathLike, atomic_write_text, read_utf8
from ciyuan.errors import FileFormatError, ModelError
from ciyuan.models import BPE
from ciyuan.models.base import Model

__all__ = ["vocab_lines", "merges_lines", "save_vocab_txt", "save_merges_txt", "load_vocab_txt",
           "load_merges_txt", "load_bpe"]

MERGES_HEADER = "#version: 0.2"


def _check_token(token: str, what: str, space_ok: bool) -> str:
    if "\n" in token or "\r" in token or (not space_ok and " " in token):
        raise ModelError(
            f"the token {token!r} holds a {'space or ' if not space_ok else ''}line break, which {what} cannot "
            "represent; save the tokenizer as ciyuan JSON instead (or train byte-level)"
        )
    return token


def vocab_lines(model: Model) -> List[str]:
    """The lines of ``vocab.txt`` (the model's ids must have no holes)."""
    lines = []
    for i in range(model.id_limit):
        try:
            token = model.id_to_token(i)
        except Exception:
            raise ModelError(f"id {i} is unused; vocab.txt needs consecutive ids") from None
        lines.append(_check_token(token, "vocab.txt", space_ok=True))
    return lines


def merges_lines(model: BPE, header: bool = True) -> List[str]:
    """The lines of ``merges.txt``."""
    lines = [MERGES_HEADER] if header else []
    for left, right in model.merges:
        lines.append(f"{_check_token(left, 'merges.txt', False)} {_check_token(right, 'merges.txt', False)}")
    return lines


def save_vocab_txt(model: BPE, path: PathLike) -> None:
    """Write ``vocab.txt`` atomically."""
    atomic_write_text(path, "".join(line + "\n" for line in vocab_lines(model)))


def save_merges_txt(model: BPE, path: PathLike, header: bool = True) -> None:
    """Write ``merges.txt`` atomically."""
    atomic_write_text(path, "".join(line + "\n" for line in merges_lines(model, header)))


def load_vocab_txt(path: PathLike) -> Dict[str, int]:
    """token -> id (its line number from 0)."""
    vocab: Dict[str, int] = {}
    for number, token in enumerate(read_utf8(path).split("\n")[:-1]):
        if token in vocab:
            raise FileFormatError(str(path), number + 1, f"the token {token!r} is listed twice")
        vocab[token] = number
    return vocab


def load_merges_txt(path: PathLike) -> List[Tuple[str, str]]:
    """The merges in order (a ``#version`` header line is skipped)."""
    merges = []
    for number, line in enumerate(read_utf8(path).split("\n"), 1):
        if not line or (number == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise FileFormatError(str(path), number, f"expected 'left right', got {line!r}")
        merges.append((parts[0], parts[1]))
    return merges


def load_bpe(vocab_txt: PathLike, merges_txt: PathLike, *, byte_level: bool = False,
             end_of_word_suffix: str = "", unk_token: Optional[str] = None) -> BPE:
    """A :class:`~ciyuan.models.BPE` from ``vocab.txt`` and ``merges.txt``.

    Example:
        >>> model = load_bpe("vocab.txt", "merges.txt", byte_level=True)   # doctest: +SKIP
    """
    vocab = load_vocab_txt(vocab_txt)
    merges = load_merges_txt(merges_txt)
    try:
        return BPE(vocab, merges, byte_level=byte_level, end_of_word_suffix=end_of_word_suffix, unk_token=unk_token)
    except FileFormatError:
        raise
    except ModelError as e:  # the two files disagree (or one is empty): name both
        raise FileFormatError(f"{vocab_txt} + {merges_txt}", None, str(e)) from None
