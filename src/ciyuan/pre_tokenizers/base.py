"""The pre-tokenizer stage's contract: cut (normalized) text into pieces the model encodes one
by one, as character spans.

:class:`PreTokenizer` is what the pipeline (and every trainer) calls; :data:`PRE_TOKENIZERS`
maps each ``"type"`` name to its class, and ``ciyuan.pre_tokenizers.from_dict`` is its
:meth:`~ciyuan.registry.Registry.from_dict`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ciyuan.registry import Registry

__all__ = ["PreTokenizer", "PRE_TOKENIZERS", "Span"]

Span = Tuple[int, int]


class PreTokenizer(ABC):
    """The pre-tokenizer stage: subclasses implement :meth:`split` and name their ``type_name``.

    ``native_pattern`` names the native scanner that cuts the same pieces (the tokenizer and
    the trainers then run it inside the core, with the GIL released); None means the pieces come
    from :meth:`split`. A pre-tokenizer with options overrides :meth:`to_dict` and
    :meth:`from_dict`; register a new class with ``@PRE_TOKENIZERS.register``.
    """

    type_name: str = ""
    native_pattern: Optional[str] = None

    @abstractmethod
    def split(self, text: str) -> List[Span]:
        """Character spans ``[start, end)`` of the pieces of ``text``, in order."""

    def pre_tokenize_str(self, text: str) -> List[Tuple[str, Span]]:
        """The pieces of ``text`` with their character spans."""
        return [(text[s:e], (s, e)) for s, e in self.split(text)]

    def to_dict(self) -> Dict[str, Any]:
        """Plain data with the ``"type"`` key (read back by ``ciyuan.pre_tokenizers.from_dict``)."""
        return {"type": self.type_name}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PreTokenizer":
        """Rebuild from :meth:`to_dict` (a pre-tokenizer without options takes none)."""
        return cls()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


#: ``"type"`` name -> pre-tokenizer class.
PRE_TOKENIZERS: Registry[PreTokenizer] = Registry("pre-tokenizer")
