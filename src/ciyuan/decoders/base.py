"""The decoder stage's contract: the tokens' bytes back to text (the last stage of decoding).

:class:`Decoder` is what the tokenizer calls; :data:`DECODERS` maps each ``"type"`` name to its
class, and ``ciyuan.decoders.from_dict`` is its :meth:`~ciyuan.registry.Registry.from_dict`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import List

from ciyuan.registry import Component, Registry

__all__ = ["Decoder", "TokenDecoder", "DECODERS"]


class Decoder(Component, ABC):
    """The decoder stage: subclasses implement :meth:`decode` and name their ``type_name``.

    ``joins_bytes`` says the decoder only reads the concatenation of the tokens' bytes: the
    tokenizer then joins them natively and passes one ``bytes``. A decoder with options names
    them in ``options`` (see :class:`~ciyuan.registry.Component`).

    Hugging Face's decoders read token *strings* (``"Ġthe"``, ``"<0x0A>"``, ``"##ing"``) and
    form a chain: each takes the list of strings the previous one gave (``decode_chain``) and
    the text is their concatenation. Every decoder here has that face too
    (:meth:`decode_chain`); one with ``reads_tokens`` gets from the tokenizer the tokens as
    :meth:`ciyuan.Tokenizer.id_to_token` writes them (:meth:`decode_tokens`), not their bytes.
    """

    joins_bytes: bool = False
    reads_tokens: bool = False

    @abstractmethod
    def decode(self, tokens: List[bytes]) -> str:
        """The text of ``tokens`` (each token's bytes, in order)."""

    def decode_chain(self, tokens: List[str]) -> List[str]:
        """Hugging Face's step: token strings in, strings out (joined by the last step).
        Default: the whole text of :meth:`decode` over the tokens' UTF-8, as one string."""
        return [self.decode([t.encode("utf-8", "surrogatepass") for t in tokens])]

    def decode_tokens(self, tokens: List[str]) -> str:
        """The text of token strings: :meth:`decode_chain`, joined (Hugging Face's ``decode``).

        Example:
            >>> from ciyuan.decoders import WordPiece
            >>> WordPiece().decode_tokens(["un", "##able", "."])
            'unable.'
        """
        return "".join(self.decode_chain(list(tokens)))


class TokenDecoder(Decoder):
    """A decoder that works on token strings (Hugging Face's decoders): it implements
    :meth:`decode_chain`; :meth:`decode` reads bytes as UTF-8 token strings."""

    reads_tokens = True

    def decode(self, tokens: List[bytes]) -> str:
        return self.decode_tokens([t.decode("utf-8", "replace") for t in tokens])

    @abstractmethod
    def decode_chain(self, tokens: List[str]) -> List[str]:
        """Token strings in, strings out."""


#: ``"type"`` name -> decoder class.
DECODERS: Registry[Decoder] = Registry("decoder")
