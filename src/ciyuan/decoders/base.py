"""The decoder stage's contract: the tokens' bytes back to text (the last stage of decoding).

:class:`Decoder` is what the tokenizer calls; :data:`DECODERS` maps each ``"type"`` name to its
class, and ``ciyuan.decoders.from_dict`` is its :meth:`~ciyuan.registry.Registry.from_dict`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import List

from ciyuan.registry import Component, Registry

__all__ = ["Decoder", "DECODERS"]


class Decoder(Component, ABC):
    """The decoder stage: subclasses implement :meth:`decode` and name their ``type_name``.

    ``joins_bytes`` says the decoder only reads the concatenation of the tokens' bytes: the
    tokenizer then joins them natively and passes one ``bytes``. A decoder with options names
    them in ``options`` (see :class:`~ciyuan.registry.Component`).
    """

    joins_bytes: bool = False

    @abstractmethod
    def decode(self, tokens: List[bytes]) -> str:
        """The text of ``tokens`` (each token's bytes, in order)."""


#: ``"type"`` name -> decoder class.
DECODERS: Registry[Decoder] = Registry("decoder")
