"""The decoder stage's contract: the tokens' bytes back to text (the last stage of decoding).

:class:`Decoder` is what the tokenizer calls; :data:`DECODERS` maps each ``"type"`` name to its
class, and ``ciyuan.decoders.from_dict`` is its :meth:`~ciyuan.registry.Registry.from_dict`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Dict, List, Mapping

from ciyuan.registry import Registry

__all__ = ["Decoder", "DECODERS"]


class Decoder(ABC):
    """The decoder stage: subclasses implement :meth:`decode` and name their ``type_name``.

    ``joins_bytes`` says the decoder only reads the concatenation of the tokens' bytes: the
    tokenizer then joins them natively and passes one ``bytes``. Options are the constructor's
    keyword arguments, stored under the same names: :meth:`to_dict` lists them in ``options``
    and :meth:`from_dict` passes them back, so a decoder with options only names them.
    """

    type_name: str = ""
    joins_bytes: bool = False
    options: tuple = ()  # names of the constructor's arguments, kept as attributes

    @abstractmethod
    def decode(self, tokens: List[bytes]) -> str:
        """The text of ``tokens`` (each token's bytes, in order)."""

    def to_dict(self) -> Dict[str, Any]:
        """Plain data with the ``"type"`` key (read back by ``ciyuan.decoders.from_dict``)."""
        return {"type": self.type_name, **{name: getattr(self, name) for name in self.options}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Decoder":
        """Rebuild from :meth:`to_dict`; a missing option takes its default."""
        return cls(**{name: data[name] for name in cls.options if name in data})  # type: ignore[call-arg]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.options)
        return f"{type(self).__name__}({shown})"


#: ``"type"`` name -> decoder class.
DECODERS: Registry[Decoder] = Registry("decoder")
