"""What each id of a tokenizer is, for the rates of ``ciyuan eval``: its length in bytes,
whether it is the unknown token, a byte-fallback piece, or a piece of a character.

- **length**: the bytes of the text the token stands for: without WordPiece's ``##`` (a
  model's continuing-subword prefix) or an end-of-word suffix (``</w>``), SentencePiece's
  ``▁`` counted as the one space it is. The unknown token and special tokens stand for no
  text of their own: length 0.

- **unknown**: the model's unknown token (``[UNK]``, ``<unk>``): text the vocabulary cannot
  write at all.
- **byte fallback**: the ``<0xXX>`` pieces of a model with byte fallback (Llama 2's
  SentencePiece BPE, Hugging Face BPE with ``byte_fallback``): a character the vocabulary lacks,
  written as its UTF-8 bytes.
- **partial character**: a token whose bytes are not whole UTF-8 characters on their own -
  where a byte-level BPE (GPT-2, tiktoken) cuts a character in pieces, which is where Chinese
  text "falls apart into bytes". Byte-fallback pieces of non-ASCII bytes are partial too.

Example:
    >>> from ciyuan import Tokenizer                                   # doctest: +SKIP
    >>> kinds = TokenKinds.of(Tokenizer.load("cl100k_base.tiktoken"))  # doctest: +SKIP
    >>> kinds.partial[kinds.limit - 1]                                  # doctest: +SKIP
    False
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Set

from ciyuan.models.pieces import PieceType

if TYPE_CHECKING:
    from ciyuan.tokenizer import Tokenizer

__all__ = ["TokenKinds"]

_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>\Z")


def _whole_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _surface_length(data: bytes, prefix: bytes, suffix: bytes, metaspace: bool) -> int:
    """Bytes of the text a token stands for (see the module's doc)."""
    if prefix and data.startswith(prefix) and len(data) > len(prefix):
        data = data[len(prefix):]
    if suffix and data.endswith(suffix):
        data = data[:-len(suffix)]
    if metaspace:
        data = data.replace("\u2581".encode("utf-8"), b" ")
    return len(data)


@dataclass
class TokenKinds:
    """Per-id tables (index = id, up to ``limit``): ``lengths`` in bytes (0 for ids without
    bytes of their own, e.g. special tokens), and the three flags of the module's doc."""

    limit: int
    lengths: List[int]
    unknown: List[bool]
    byte_fallback: List[bool]
    partial: List[bool]

    @classmethod
    def of(cls, tok: "Tokenizer") -> "TokenKinds":
        """The tables of ``tok``: every id below its model's limit and its special and added
        ids (which have no bytes of their own: length 0, no flag)."""
        model = tok.model
        extra = [*tok.special_tokens.values(), *tok.added_tokens]
        limit = max([model.id_limit, *(i + 1 for i in extra)])
        unknown_ids: Set[int] = set()
        unk_id = getattr(model, "unk_id", None)
        if isinstance(unk_id, int):
            unknown_ids.add(unk_id)
        unk_token = getattr(model, "unk_token", None)
        if isinstance(unk_token, str):
            found = model.token_to_id(unk_token)
            if found is not None:
                unknown_ids.add(found)
        fallback = bool(getattr(model, "byte_fallback", False))
        types = getattr(model, "types", None)  # SentencePiece models: typed pieces
        prefix = (getattr(model, "continuing_subword_prefix", "") or "").encode("utf-8")
        suffix = (getattr(model, "end_of_word_suffix", "") or "").encode("utf-8")
        lengths, unknown, byte_fallback, partial = [0] * limit, [False] * limit, [False] * limit, [False] * limit
        for i in range(model.id_limit):
            data = model.id_bytes(i)
            if data is None:
                continue
            unknown[i] = i in unknown_ids
            lengths[i] = 0 if unknown[i] else _surface_length(data, prefix, suffix, types is not None)
            if fallback:
                if types is not None:
                    byte_fallback[i] = types[i] == PieceType.BYTE
                else:
                    byte_fallback[i] = bool(_BYTE_PIECE.match(model.id_to_token(i)))
            # The unknown token's bytes are its own text, not a piece of a character.
            partial[i] = not unknown[i] and not _whole_utf8(data)
        return cls(limit, lengths, unknown, byte_fallback, partial)
