"""Tell which file format a path holds (``Tokenizer.load`` then reads it)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Tuple

from ciyuan._io import PathLike
from ciyuan.errors import FileFormatError
from ciyuan.formats.hf_json import looks_like_hf_json
from ciyuan.formats.sentencepiece import looks_like_sentencepiece

__all__ = ["detect_format"]


def _looks_like_bert_vocab(p: Path) -> bool:
    """A BERT vocab.txt: one token per line, with [UNK]/[CLS]/[SEP] or ``##`` pieces among them."""
    with open(p, "rb") as f:
        head = f.read(1 << 16)
    lines = head.split(b"\n")
    return any(line.strip() in (b"[UNK]", b"[CLS]", b"[SEP]") for line in lines) or \
        sum(line.startswith(b"##") for line in lines) > 10


def detect_format(path: PathLike) -> Tuple[str, Path, Optional[Path]]:
    """Which reader a path needs: ``(kind, file, second file)``, kind one of ``"gpt2"`` (with
    ``vocab.bpe`` as the second file), ``"tiktoken"``, ``"ciyuan"`` (ciyuan JSON),
    ``"huggingface"`` (a ``tokenizer.json``), ``"sentencepiece"`` (a ``.model`` protobuf),
    ``"bert_vocab"`` or ``"folder"`` (a model folder, read by ``Tokenizer.from_pretrained``).

    - ``*.tiktoken``: a tiktoken file;
    - ``encoder.json`` (with ``vocab.bpe`` beside it), or a folder holding both: GPT-2's files;
    - any other folder: a model folder (``tokenizer.json``, ``tokenizer.model``, ...);
    - any other JSON: Hugging Face's ``tokenizer.json`` (told by its first keys) or a tokenizer
      saved by ciyuan;
    - ``*.model``, or any file whose content parses as a SentencePiece ``ModelProto``;
    - a BERT ``vocab.txt`` (one token per line, with ``[UNK]``, ``[CLS]``...);
    - no telling suffix: JSON starts with ``{``, anything else is read as a tiktoken file.

    Raises:
        FileFormatError: no such file, or an ``encoder.json`` without ``vocab.bpe``.
    """
    p = Path(path)
    if p.is_dir():
        if (p / "encoder.json").exists() and (p / "vocab.bpe").exists():
            return "gpt2", p / "encoder.json", p / "vocab.bpe"
        return "folder", p, None
    if not p.exists():
        raise FileFormatError(str(p), None, "no such file")
    if p.suffix == ".tiktoken":
        return "tiktoken", p, None
    if p.suffix == ".model" or looks_like_sentencepiece(p):
        return "sentencepiece", p, None
    if p.name == "encoder.json":
        vocab_bpe = p.with_name("vocab.bpe")
        if not vocab_bpe.exists():
            raise FileFormatError(str(p), None, "GPT-2's encoder.json needs vocab.bpe beside it")
        return "gpt2", p, vocab_bpe
    if p.suffix == ".json":
        with open(p, "rb") as f:
            return ("huggingface" if looks_like_hf_json(f.read(4096)) else "ciyuan"), p, None
    if p.suffix == ".txt" and _looks_like_bert_vocab(p):
        return "bert_vocab", p, None
    with open(p, "rb") as f:
        head = f.read(64).lstrip()
    if head[:1] == b"{":
        with open(p, "rb") as f:
            return ("huggingface" if looks_like_hf_json(f.read(4096)) else "ciyuan"), p, None
    return "tiktoken", p, None
