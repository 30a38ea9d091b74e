"""The pre-tokenizer stage's contract: cut (normalized) text into pieces the model encodes one
by one, as character spans.

:class:`PreTokenizer` is what the pipeline (and every trainer) calls; :data:`PRE_TOKENIZERS`
maps each ``"type"`` name to its class, and ``ciyuan.pre_tokenizers.from_dict`` is its
:meth:`~ciyuan.registry.Registry.from_dict`.

Two methods, one optional:

* :meth:`PreTokenizer.split` (required): the character spans of the pieces of a text.
* :meth:`PreTokenizer.pre_tokenize` (the hook the pipeline calls): a
  :class:`~ciyuan.normalizers.NormalizedString` in, the text the pieces are cut from (with its
  alignment to the original) and their spans out. By default the text is unchanged and the
  spans are :meth:`split`'s. The few pre-tokenizers that change the text as Hugging Face's do
  (``Metaspace`` turns spaces into ``▁`` and may prepend one; ``ByteLevel`` may prepend a
  space; a ``Sequence`` holding either) override it, keeping every character's original span,
  so offsets still point at the user's text. The Tokenizer's Python path and the trainers'
  word counting call it; a pre-tokenizer that rewrites text has no ``native_pattern``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import List, Optional, Tuple

from ciyuan.normalizers.base import NormalizedString
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
    ``passthrough`` is True for one that leaves its text whole and unchanged (``ByteLevel`` with
    neither regex nor prefix space), which a ``Sequence`` can then skip.
    """

    native_pattern: Optional[str] = None
    bert_words: bool = False
    passthrough: bool = False

    @abstractmethod
    def split(self, text: str) -> List[Span]:
        """Character spans ``[start, end)`` of the pieces of ``text``, in order."""

    def pre_tokenize(self, text: NormalizedString, offset: int = 0) -> Tuple[NormalizedString, List[Span]]:
        """The text the pieces are cut from and their character spans in it.

        ``offset`` is where ``text`` starts in the whole input (a segment after a special token
        starts past 0): Hugging Face's ``Metaspace(prepend_scheme="first")`` prepends only at the
        start of the input. The default keeps the text and returns :meth:`split`'s spans.
        """
        return text, self.split(text.text)

    def pre_tokenize_str(self, text: str) -> List[Tuple[str, Span]]:
        """The pieces of ``text`` (as the model sees them) with their spans in ``text``."""
        norm, spans = self.pre_tokenize(NormalizedString.from_str(text))
        return [(norm.text[s:e], norm.original_span(s, e)) for s, e in spans]


#: ``"type"`` name -> pre-tokenizer class.
PRE_TOKENIZERS: Registry[PreTokenizer] = Registry("pre-tokenizer")
