"""tiktoken's ``.tiktoken`` files: one ``base64(token bytes) rank`` pair per line.

The rank is the token's id and also its merge priority (tiktoken's BPE rule), so these files
load as a byte-level :class:`~ciyuan.models.BPE` with ``rank_by_token=True``.
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import Dict, Mapping, Optional

from ciyuan._io import PathLike, atomic_write_text
from ciyuan.decoders import ByteLevel
from ciyuan.errors import FileFormatError, raise_file_error
from ciyuan.formats.parts import TokenizerParts
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import Split

__all__ = ["load_tiktoken_ranks", "save_tiktoken_ranks", "tiktoken_parts", "SPECIAL_TOKENS"]

#: The special tokens of OpenAI's published encodings (tiktoken's openai_public).
SPECIAL_TOKENS: Dict[str, Dict[str, int]] = {
    "gpt2": {"<|endoftext|>": 50256},
    "r50k_base": {"<|endoftext|>": 50256},
    "p50k_base": {"<|endoftext|>": 50256},
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}


# A whole well-formed file: lines of "base64 rank" (checked at C speed before the fast path).
_WELL_FORMED = re.compile(rb"(?:[A-Za-z0-9+/]+={0,2} [0-9]+\r?\n)*(?:[A-Za-z0-9+/]+={0,2} [0-9]+)?\s*")


def load_tiktoken_ranks(path: PathLike) -> Dict[bytes, int]:
    """Read a ``.tiktoken`` file into ``{token bytes: rank}``; corrupt lines raise
    :class:`~ciyuan.errors.FileFormatError` naming the file and line."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise FileFormatError(str(path), None, f"cannot read the file: {e.strerror}") from None
    if _WELL_FORMED.fullmatch(data):
        # Fast path: split and decode with C functions; any doubt goes to the line-by-line
        # reader below, which names the first bad line.
        fields = data.split()
        try:
            tokens = list(map(binascii.a2b_base64, fields[0::2]))
        except binascii.Error:
            tokens = []
        ranks = dict(zip(tokens, map(int, fields[1::2])))
        if tokens and len(ranks) == len(tokens) and len(set(ranks.values())) == len(ranks) and all(tokens):
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


def tiktoken_parts(
    path: PathLike, pattern: str = "cl100k_base", special_tokens: Optional[Mapping[str, int]] = None
) -> TokenizerParts:
    """The parts of a :class:`~ciyuan.Tokenizer` that encodes exactly as tiktoken does with the
    same file, pattern and special tokens (``Tokenizer.from_tiktoken`` builds it)."""
    ranks = load_tiktoken_ranks(path)
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise_file_error(path, None, f"{len(missing)} single bytes (e.g. {bytes([missing[0]])!r}) have no token; "
                         "a byte-level vocabulary must cover all 256 bytes")
    if special_tokens is None:
        special_tokens = SPECIAL_TOKENS.get(pattern, {})
    model = BPE(ranks, byte_level=True, rank_by_token=True)
    return TokenizerParts(model=model, pre_tokenizer=Split(pattern), decoder=ByteLevel(),
                          special_tokens=dict(special_tokens))
