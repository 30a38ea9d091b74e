"""Shared pieces of the dataset tests: corpora written in each input format, tokenizers, and
the shards read back by readers independent of the writers."""

from __future__ import annotations

import contextlib
import gc
import gzip
import json
import warnings
from pathlib import Path
from types import ModuleType
from typing import Callable, Dict, Iterator, List, Optional

import numpy as np
import pytest

from tests.conftest import read_prefix, shared
from tests.datasets.megatron_reader import MegatronShard

CORPORA = {
    "en": ("corpora", "en", "tinyshakespeare.txt"),
    "zh": ("corpora", "zh", "jinyong_16novels.txt"),
    "multi": ("corpora", "multi", "udhr_sample.txt"),
}


def corpus_lines(name: str, limit: int) -> List[str]:
    """The non-empty lines of the first ``limit`` bytes of a corpus (a document each)."""
    return [line for line in read_prefix(shared(*CORPORA[name]), limit).split("\n") if line]


def write_input(docs: List[str], directory: Path, kind: str) -> Path:
    """``docs`` as one input file of ``kind``: txt (a line each), jsonl, jsonl.gz, jsonl.zst, parquet."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"docs.{kind}"
    if kind == "txt":
        path.write_text("".join(d + "\n" for d in docs), encoding="utf-8")
        return path
    if kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"text": docs, "id": list(range(len(docs)))}), path, row_group_size=700)
        return path
    data = "".join(json.dumps({"id": i, "text": d}, ensure_ascii=False) + "\n" for i, d in enumerate(docs)).encode()
    if kind.endswith(".gz"):
        data = gzip.compress(data)
    elif kind.endswith(".zst"):
        import zstandard

        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return path


def read_back(out: Path, fmt: str) -> List[List[int]]:
    """Every document's ids from the shards the manifest lists, in order, read without ciyuan."""
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True
    docs: List[List[int]] = []
    for shard in manifest["shards"]:
        files = [out / f for f in shard["files"]]
        if fmt == "megatron":
            got = MegatronShard(str(files[0])[: -len(".bin")]).documents()
            dtype = MegatronShard(str(files[0])[: -len(".bin")]).dtype
            assert dtype == np.dtype(manifest["job"]["dtype"])
        elif fmt == "flat":
            ids = np.fromfile(files[0], dtype=manifest["job"]["dtype"])
            offsets = np.load(files[1])
            assert offsets.dtype == np.int64 and offsets[0] == 0 and offsets[-1] == len(ids)
            got = [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]
        else:
            import pyarrow.parquet as pq

            table = pq.read_table(files[0])
            assert table.column_names == ["input_ids"]
            got = table.column("input_ids").to_pylist()
        assert len(got) == shard["documents"]
        assert sum(len(d) for d in got) == shard["tokens"]
        docs.extend(got)
    assert len(docs) == manifest["documents"]
    return docs


def tree_bytes(out: Path) -> Dict[str, bytes]:
    """Every file of an output folder, by name (the byte-identity of two runs)."""
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.fixture(scope="session")
def cl100k():  # noqa: ANN201
    import ciyuan

    return ciyuan.Tokenizer.from_tiktoken(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"), "cl100k_base")


@pytest.fixture(scope="session")
def gpt2():  # noqa: ANN201
    import ciyuan

    return ciyuan.Tokenizer.from_gpt2(shared("tokenizers", "gpt2", "encoder.json"),
                                      shared("tokenizers", "gpt2", "vocab.bpe"))


Expect = Callable[[List[str]], List[List[int]]]


@contextlib.contextmanager
def local_ray(by_value: Optional[ModuleType] = None) -> Iterator[None]:
    """A local Ray of 2 CPUs (`by_value`: a module whose classes travel to the workers by value,
    as a test module's must)."""
    import ray

    if by_value is not None:
        ray.cloudpickle.register_pickle_by_value(by_value)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()
        quiet_collect()


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[ModuleType]:
    """A local 2-CPU Ray cluster (``ray.init(num_cpus=2)``) for the tests of one Ray module
    (test_ray_encode.py, test_ray_train.py), stopped when the module is done: it takes seconds
    to start, and left running its processes would take CPU from the tests that follow."""
    ray = pytest.importorskip("ray")
    with local_ray():
        yield ray


def quiet_collect() -> None:
    """Collect now what Ray's shutdown and a failed run leave behind (Ray's process handles, a
    reader stopped mid-file), without their ResourceWarnings: the end-of-session collection
    would report them as errors of no test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
