"""The post-processor stage's contract: what turns a model's tokens into a model's input (a
template's special tokens around one sequence or a pair).

:class:`PostProcessor` is what the tokenizer calls; :data:`PROCESSORS` maps each ``"type"`` name
to its class, and ``ciyuan.processors.from_dict`` is its :meth:`~ciyuan.registry.Registry.from_dict`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ciyuan.encoding import AddedTokens, Encoding
from ciyuan.errors import check_count  # re-exported: the processors check their counts with it
from ciyuan.registry import Registry

__all__ = ["PostProcessor", "PROCESSORS", "check_count"]


class PostProcessor(ABC):
    """The post-processor stage: subclasses implement :meth:`process` and
    :meth:`num_special_tokens_to_add`, and name their ``type_name``; register a new class with
    ``@PROCESSORS.register``."""

    type_name: str = ""

    @abstractmethod
    def process(self, encoding: Encoding, pair: Optional[Encoding] = None,
                add_special_tokens: bool = True) -> Encoding:
        """The model input made of ``encoding`` (and ``pair``): a new Encoding, inputs unchanged."""

    @abstractmethod
    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many tokens :meth:`process` adds to one sequence (or a pair)."""

    def single_wrapper(self, add_special_tokens: bool = True
                       ) -> Optional[Tuple[List[AddedTokens], Optional[int], List[AddedTokens]]]:
        """When a single sequence is only wrapped (tokens added before and after it, one type id
        for its tokens): ``(added before, type id, added after)``, so that a batch encoder builds
        each result directly; None (the default) when :meth:`process` must run."""
        return None

    def single_trim(self) -> Optional[bool]:
        """When :meth:`single_wrapper` is not None: whether a single sequence's offsets are first
        trimmed the byte-level way (:func:`ciyuan.encoding.trim_spans`) - its ``add_prefix_space``
        then, None (the default) when they are not."""
        return None

    @abstractmethod
    def to_dict(self) -> Dict[str, Any]:
        """Plain data with the ``"type"`` key (read back by ``ciyuan.processors.from_dict``)."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PostProcessor":
        """Rebuild from :meth:`to_dict`."""


#: ``"type"`` name -> post-processor class.
PROCESSORS: Registry[PostProcessor] = Registry("post-processor")
