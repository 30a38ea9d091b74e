"""Load a tokenizer from whichever file format a path holds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ciyuan._io import PathLike
from ciyuan.errors import FileFormatError

if TYPE_CHECKING:
    from ciyuan.tokenizer import Tokenizer

__all__ = ["load_tokenizer"]


def _looks_like_bert_vocab(p: Path) -> bool:
    """A BERT vocab.txt: one token per line, with [UNK]/[CLS]/[SEP] or ``##`` pieces among them."""
    with open(p, "rb") as f:
        head = f.read(1 << 16)
    lines = head.split(b"\n")
    return any(line.strip() in (b"[UNK]", b"[CLS]", b"[SEP]") for line in lines) or \
        sum(line.startswith(b"##") for line in lines) > 10


def load_tokenizer(path: PathLike, pattern: Optional[str] = None, *, lowercase: bool = True) -> "Tokenizer":
    """Load ``path`` as a tokenizer, choosing the reader by what the file is.

    - ``*.tiktoken``: a tiktoken file, split with ``pattern`` (default ``cl100k_base``);
    - ``encoder.json`` (with ``vocab.bpe`` beside it), or a folder holding both: GPT-2's files;
    - any other JSON: a tokenizer saved by ciyuan;
    - a BERT ``vocab.txt`` (one token per line, with ``[UNK]``, ``[CLS]``...): the whole BERT
      pipeline (``lowercase=False`` for cased vocabularies).

    Example:
        >>> tok = load_tokenizer("o200k_base.tiktoken", pattern="o200k_base")   # doctest: +SKIP
    """
    from ciyuan.tokenizer import Tokenizer

    p = Path(path)
    if p.is_dir():
        if (p / "encoder.json").exists() and (p / "vocab.bpe").exists():
            return Tokenizer.from_gpt2(p / "encoder.json", p / "vocab.bpe")
        raise FileFormatError(str(p), None, "a folder must hold GPT-2's encoder.json and vocab.bpe")
    if not p.exists():
        raise FileFormatError(str(p), None, "no such file")
    if p.suffix == ".tiktoken":
        return Tokenizer.from_tiktoken(p, pattern or "cl100k_base")
    if p.name == "encoder.json":
        vocab_bpe = p.with_name("vocab.bpe")
        if not vocab_bpe.exists():
            raise FileFormatError(str(p), None, "GPT-2's encoder.json needs vocab.bpe beside it")
        return Tokenizer.from_gpt2(p, vocab_bpe)
    if p.suffix == ".json":
        return Tokenizer.from_file(p)
    if p.suffix == ".txt" and _looks_like_bert_vocab(p):
        return Tokenizer.from_bert_vocab(p, lowercase=lowercase)
    # No telling suffix: JSON starts with "{", a tiktoken file with "base64 rank" lines.
    with open(p, "rb") as f:
        head = f.read(64).lstrip()
    if head[:1] == b"{":
        return Tokenizer.from_file(p)
    return Tokenizer.from_tiktoken(p, pattern or "cl100k_base")
