"""OpenAI's GPT-2 files: ``encoder.json`` (token -> id, tokens in GPT-2's printable byte
alphabet) and ``vocab.bpe`` (a ``#version`` line, then one merge ``left right`` per line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Tuple

from ciyuan._io import PathLike, read_utf8
from ciyuan.byte_alphabet import printable_to_bytes
from ciyuan.decoders import ByteLevel
from ciyuan.errors import FileFormatError, ModelError, raise_file_error
from ciyuan.formats.parts import TokenizerParts
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import Split

__all__ = ["load_gpt2", "gpt2_parts"]

GPT2_SPECIAL = "<|endoftext|>"


def load_gpt2(encoder_json: PathLike, vocab_bpe: PathLike
              ) -> Tuple[Dict[bytes, int], List[Tuple[bytes, bytes]], Dict[str, int]]:
    """Read the two files: ``(vocab {token bytes: id}, merges [(left, right)], special tokens)``.

    ``<|endoftext|>`` is a special token (as in tiktoken's ``gpt2``), not a model token.
    """
    try:
        encoder = json.loads(read_utf8(encoder_json))
    except json.JSONDecodeError as e:
        raise FileFormatError(str(encoder_json), e.lineno, f"not valid JSON: {e.msg}") from None
    except RecursionError:  # [[[[...: json recurses once per level
        raise FileFormatError(str(encoder_json), None, "JSON nested too deeply") from None
    except OSError as e:
        raise FileFormatError(str(encoder_json), None, f"cannot read the file: {e.strerror}") from None
    if not isinstance(encoder, dict):
        raise_file_error(encoder_json, None, "expected a JSON object mapping tokens to ids")
    vocab: Dict[bytes, int] = {}
    special: Dict[str, int] = {}
    for token, i in encoder.items():
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise_file_error(encoder_json, None, f"token {token!r} has id {i!r}, not a non-negative integer")
        if token == GPT2_SPECIAL:
            special[token] = i
            continue
        try:
            vocab[printable_to_bytes(token)] = i
        except KeyError:
            raise_file_error(encoder_json, None, f"token {token!r} is not written in GPT-2's byte alphabet")
    merges: List[Tuple[bytes, bytes]] = []
    try:
        lines = read_utf8(vocab_bpe).split("\n")
    except OSError as e:
        raise FileFormatError(str(vocab_bpe), None, f"cannot read the file: {e.strerror}") from None
    for number, line in enumerate(lines, 1):
        if not line or (number == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise_file_error(vocab_bpe, number, f"expected 'left right', got {line[:80]!r}")
        try:
            merges.append((printable_to_bytes(parts[0]), printable_to_bytes(parts[1])))
        except KeyError:
            raise_file_error(vocab_bpe, number, f"{line[:80]!r} is not written in GPT-2's byte alphabet")
    return vocab, merges, special


def gpt2_parts(encoder_json: PathLike, vocab_bpe: PathLike) -> TokenizerParts:
    """The parts of GPT-2's tokenizer from its two files (merge ranks from ``vocab.bpe``, as
    GPT-2 does; ``Tokenizer.from_gpt2`` builds it)."""
    vocab, merges, special = load_gpt2(encoder_json, vocab_bpe)
    try:
        model = BPE(vocab, merges, byte_level=True)
    except ModelError as e:
        raise FileFormatError(f"{Path(encoder_json)} + {Path(vocab_bpe)}", None, str(e)) from None
    return TokenizerParts(model=model, pre_tokenizer=Split("gpt2"), decoder=ByteLevel(), special_tokens=special)
