"""The Megatron shards read by megatron-core's own ``IndexedDataset``.

megatron-core requires PyTorch, whose Linux wheels on PyPI come with the CUDA libraries
(gigabytes; the CPU-only wheels are not on PyPI). So ``make install`` installs megatron-core
with ``--no-deps`` and, when torch is not installed, this test loads megatron-core's real
``megatron/core/datasets/indexed_dataset.py`` with the few names it imports from torch and from
the rest of megatron-core (a ``Dataset`` base class, a logging helper, the object-storage
switch) stubbed: reading an index is numpy only, so the code under test is megatron-core's
reader itself. With torch installed the module is imported as it is. Skipped when megatron-core
is not installed at all.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ciyuan.datasets import encode_dataset
from tests.datasets.conftest import corpus_lines, write_input


def _megatron_indexed_dataset(monkeypatch: pytest.MonkeyPatch) -> Any:
    spec = importlib.util.find_spec("megatron")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    path = next((Path(p) / "core" / "datasets" / "indexed_dataset.py" for p in locations
                 if (Path(p) / "core" / "datasets" / "indexed_dataset.py").exists()), None)
    if path is None:
        pytest.skip("megatron-core is not installed (make install adds it with --no-deps)")
    if importlib.util.find_spec("torch") is not None:
        from megatron.core.datasets import indexed_dataset

        return indexed_dataset

    def module(name: str, **names: Any) -> types.ModuleType:
        m = types.ModuleType(name)
        m.__dict__.update(names)
        m.__path__ = []  # a package, so that submodules can be set
        monkeypatch.setitem(sys.modules, name, m)
        return m

    class _Dataset:
        pass

    class _NoObjectStorage:
        @staticmethod
        def is_enabled() -> bool:
            return False

    torch = module("torch", Tensor=object)
    torch.utils = module("torch.utils")  # type: ignore[attr-defined]
    torch.utils.data = module("torch.utils.data", Dataset=_Dataset)  # type: ignore[attr-defined]
    module("megatron")
    module("megatron.core")
    module("megatron.core.datasets")
    module("megatron.core.utils", log_single_rank=lambda *args, **kwargs: None)
    module("megatron.core.msc_utils", MultiStorageClientFeature=_NoObjectStorage)
    loaded = None
    for name in ("object_storage_utils", "indexed_dataset"):
        full = f"megatron.core.datasets.{name}"
        file_spec = importlib.util.spec_from_file_location(full, path.parent / f"{name}.py")
        assert file_spec is not None and file_spec.loader is not None
        loaded = importlib.util.module_from_spec(file_spec)
        monkeypatch.setitem(sys.modules, full, loaded)
        file_spec.loader.exec_module(loaded)
    return loaded


@pytest.mark.parametrize("tokenizer", ["gpt2", "cl100k"])
def test_megatron_core_reads_every_document(tmp_path: Path, request: pytest.FixtureRequest, tokenizer: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    indexed_dataset = _megatron_indexed_dataset(monkeypatch)
    tok = request.getfixturevalue(tokenizer)
    docs = corpus_lines("multi", 30_000) + corpus_lines("zh", 20_000) + corpus_lines("en", 20_000)
    src = write_input(docs, tmp_path / "in", "parquet")
    eos = tok.token_to_id("<|endoftext|>")
    result = encode_dataset(src, tmp_path / "out", tok, format="megatron", eos=eos, shard_tokens=4000)
    got = []
    for shard in result.shards:
        ds = indexed_dataset.IndexedDataset(str(tmp_path / "out" / shard.files[0][: -len(".bin")]))
        assert len(ds) == shard.documents
        assert ds.document_indices.tolist() == list(range(shard.documents + 1))
        assert ds.index.dtype == (np.uint16 if tokenizer == "gpt2" else np.int32)
        got += [ds[i].tolist() for i in range(len(ds))]
    assert got == [tok.encode_ids(d) + [eos] for d in docs]
