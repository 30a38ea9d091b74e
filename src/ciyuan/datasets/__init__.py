"""Datasets at scale: a corpus in, token shards out.

- :mod:`ciyuan.datasets.sources` - :func:`iter_documents`: documents (text, file, line) of text
  files, JSON Lines (also ``.gz``/``.zst``) and Parquet, from files, folders or glob patterns;
- :mod:`ciyuan.datasets.writers` - :func:`open_writer`: shards in the Megatron-LM indexed dataset
  format, a flat token file with a numpy index, or Parquet;
- :mod:`ciyuan.datasets.manifest` - the resumable run's manifest;
- :mod:`ciyuan.datasets.encode` - :func:`encode_dataset` (behind ``ciyuan encode-dataset``).

The names below load their module on first use, so ``import ciyuan.datasets`` is cheap.

Example:
    >>> from ciyuan.datasets import iter_documents, open_writer, encode_dataset
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ciyuan.datasets.encode import EncodeResult, encode_dataset
    from ciyuan.datasets.manifest import Manifest
    from ciyuan.datasets.sources import Document, DocumentStream, expand_sources, iter_documents
    from ciyuan.datasets.writers import ShardInfo, ShardWriter, open_writer, token_dtype

__all__ = [
    "Document", "DocumentStream", "iter_documents", "expand_sources",
    "ShardInfo", "ShardWriter", "open_writer", "token_dtype",
    "Manifest", "encode_dataset", "EncodeResult",
]

_HOME = {
    "Document": "sources", "DocumentStream": "sources", "iter_documents": "sources", "expand_sources": "sources",
    "ShardInfo": "writers", "ShardWriter": "writers", "open_writer": "writers", "token_dtype": "writers",
    "Manifest": "manifest", "encode_dataset": "encode", "EncodeResult": "encode",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'ciyuan.datasets' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ciyuan.datasets.{home}"), name)
