"""Join the tokens' bytes and read them as UTF-8 (byte-level BPE, and any model whose tokens
simply concatenate)."""

from __future__ import annotations

from typing import Any, Dict, List

from ciyuan.byte_alphabet import printable_to_bytes
from ciyuan.decoders.base import DECODERS, Decoder

__all__ = ["ByteLevel"]


@DECODERS.register
class ByteLevel(Decoder):
    """Concatenate token bytes and decode UTF-8; invalid sequences (a character cut between
    tokens) become U+FFFD with ``errors="replace"``, as tiktoken and Hugging Face do.

    In a chain of token strings (:meth:`decode_chain`, Hugging Face's ``decoders.ByteLevel``)
    each token written in GPT-2's printable alphabet stands for its bytes, any other token for
    its UTF-8, and the chain goes on with one string. ``add_prefix_space``, ``trim_offsets`` and
    ``use_regex`` are kept for Hugging Face's form only (they do not change decoding).

    Example:
        >>> ByteLevel().decode([b"Hel", b"lo", b" \\xe4\\xb8", b"\\x96"])
        'Hello 世'
        >>> ByteLevel().decode_chain(["Hel", "loĠä¸", "ĸ"])
        ['Hello 世']
    """

    type_name = "ByteLevel"
    joins_bytes = True  # lets the tokenizer join bytes natively
    options = ("errors", "add_prefix_space", "trim_offsets", "use_regex")

    def __init__(self, errors: str = "replace", add_prefix_space: bool = True, trim_offsets: bool = True,
                 use_regex: bool = True) -> None:
        self.errors = errors
        self.add_prefix_space = bool(add_prefix_space)
        self.trim_offsets = bool(trim_offsets)
        self.use_regex = bool(use_regex)

    def decode(self, tokens: List[bytes]) -> str:
        return b"".join(tokens).decode("utf-8", self.errors)

    def decode_chain(self, tokens: List[str]) -> List[str]:
        out = bytearray()
        for token in tokens:
            try:
                out += printable_to_bytes(token)
            except KeyError:  # not in the alphabet (an added token): its own UTF-8
                out += token.encode("utf-8", "surrogatepass")
        return [out.decode("utf-8", self.errors)]

    def to_dict(self) -> Dict[str, Any]:
        """Hugging Face's form (plus ``errors`` when it is not ``"replace"``)."""
        data: Dict[str, Any] = {"type": self.type_name, "add_prefix_space": self.add_prefix_space,
                                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}
        if self.errors != "replace":
            data["errors"] = self.errors
        return data
