"""The Megatron shards read by megatron-core's own ``IndexedDataset``, on real PyTorch.

``make install`` installs megatron-core with the CPU build of PyTorch (``torch==2.13.0``: the
CPU wheel this machine keeps on disk; a plain ``torch`` from PyPI would bring gigabytes of
CUDA libraries). The test imports ``megatron.core.datasets.indexed_dataset`` as Megatron-LM's
training does and reads every document of every shard back through it (``IndexedDataset[i]``
returns the numpy ids, with ``torch.utils.data.Dataset`` as its base), so the format is held
against the reader it is written for. Skipped when megatron-core or torch is missing, except
under CI (``CI`` set), where it fails: CI must run it.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ciyuan.datasets import encode_dataset
from tests.datasets.conftest import corpus_lines, write_input


def _megatron_indexed_dataset() -> Any:
    try:
        import torch  # noqa: F401  (megatron-core's own requirement: imported first for a clear reason)

        with warnings.catch_warnings():
            # megatron-core warns at import that NVIDIA's Transformer Engine and Apex are absent
            # (GPU training kernels); reading an indexed dataset uses neither.
            warnings.simplefilter("ignore")
            from megatron.core.datasets import indexed_dataset
    except ImportError as e:
        reason = f"megatron-core on torch is not installed ({e}); make install adds torch==2.13.0 (CPU) and it"
        if os.environ.get("CI"):
            pytest.fail(f"CI must read the shards with megatron-core: {reason}")
        pytest.skip(reason)
    return indexed_dataset


def test_real_torch() -> None:
    """The reader runs on PyTorch itself, not on a stand-in."""
    _megatron_indexed_dataset()
    import torch
    from megatron.core.datasets.indexed_dataset import IndexedDataset
    from torch.utils.data import Dataset

    assert torch.__version__.startswith("2.")
    assert issubclass(IndexedDataset, Dataset)


@pytest.mark.parametrize("tokenizer", ["gpt2", "cl100k"])
def test_megatron_core_reads_every_document(tmp_path: Path, request: pytest.FixtureRequest, tokenizer: str) -> None:
    indexed_dataset = _megatron_indexed_dataset()
    tok = request.getfixturevalue(tokenizer)
    docs = corpus_lines("multi", 30_000) + corpus_lines("zh", 20_000) + corpus_lines("en", 20_000)
    src = write_input(docs, tmp_path / "in", "parquet")
    eos = tok.token_to_id("<|endoftext|>")
    result = encode_dataset(src, tmp_path / "out", tok, format="megatron", eos=eos, shard_tokens=4000)
    assert len(result.shards) > 3
    got = []
    for shard in result.shards:
        ds = indexed_dataset.IndexedDataset(str(tmp_path / "out" / shard.files[0][: -len(".bin")]))
        assert len(ds) == shard.documents
        assert ds.document_indices.tolist() == list(range(shard.documents + 1))
        assert ds.index.dtype == (np.uint16 if tokenizer == "gpt2" else np.int32)
        assert ds.sequence_lengths.sum() == shard.tokens
        got += [ds[i].tolist() for i in range(len(ds))]
        # A slice of a document, as Megatron's GPT dataset reads samples across documents.
        if len(ds) > 1 and len(ds[1]) > 2:
            assert ds.get(1, offset=1, length=2).tolist() == ds[1].tolist()[1:3]
    assert got == [tok.encode_ids(d) + [eos] for d in docs]
