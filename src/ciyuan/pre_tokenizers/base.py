"""The pre-tokenizer stage's contract: cut (normalized) text into pieces the model encodes one
by one, as character spans.

:class:`PreTokenizer` is what the pipeline (and every trainer) calls; :data:`PRE_TOKENIZERS`
maps each ``"type"`` name to its class, and ``ciyuan.pre_tokenizers.from_dict`` is its
:meth:`~ciyuan.registry.Registry.from_dict`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import List, Optional, Tuple

from ciyuan.registry import Component, Registry

__all__ = ["PreTokenizer", "PRE_TOKENIZERS", "Span"]

Span = Tuple[int, int]


class PreTokenizer(Component, ABC):
    """The pre-tokenizer stage: subclasses implement :meth:`split` and name their ``type_name``.

    ``native_pattern`` names the native scanner that cuts the same pieces (the tokenizer and
    the trainers then run it inside the core, with the GIL released); None means the pieces come
    from :meth:`split`. ``bert_words`` is True for the pre-tokenizer whose words the native BERT
    front end cuts (``BertPreTokenizer``): after ``BertNormalizer`` (or no normalizer) the core
    runs both stages in one pass. A pre-tokenizer with options names them in ``options`` (see
    :class:`~ciyuan.registry.Component`); register a new class with ``@PRE_TOKENIZERS.register``.
    """

    native_pattern: Optional[str] = None
    bert_words: bool = False

    @abstractmethod
    def split(self, text: str) -> List[Span]:
        """Character spans ``[start, end)`` of the pieces of ``text``, in order."""

    def pre_tokenize_str(self, text: str) -> List[Tuple[str, Span]]:
        """The pieces of ``text`` with their character spans."""
        return [(text[s:e], (s, e)) for s, e in self.split(text)]


#: ``"type"`` name -> pre-tokenizer class.
PRE_TOKENIZERS: Registry[PreTokenizer] = Registry("pre-tokenizer")
