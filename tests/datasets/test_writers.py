"""Shard writers alone: the cut (whole documents, a long one alone) equal to its pure-Python twin
(ciyuan.reference.shard_cut) and independent of batching;
the dtype rule; an aborted shard leaves nothing under a shard's name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan.datasets.writers import FORMATS, open_writer, shard_files, token_dtype
from ciyuan.errors import InvalidInputError, ModelError
from ciyuan.reference.shard_cut import shard_sizes
from tests.datasets.megatron_reader import MegatronShard


def _read(out: Path, fmt: str, shards) -> List[List[int]]:  # noqa: ANN001
    docs: List[List[int]] = []
    for s in shards:
        files = [out / f for f in s.files]
        if fmt == "megatron":
            docs += MegatronShard(str(files[0])[:-4]).documents()
        elif fmt == "flat":
            ids, off = np.fromfile(files[0], dtype=np.uint16), np.load(files[1])
            docs += [ids[off[i]:off[i + 1]].tolist() for i in range(len(off) - 1)]
        else:
            import pyarrow.parquet as pq

            docs += pq.read_table(files[0]).column("input_ids").to_pylist()
    return docs


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.integers(0, 65535), max_size=15), min_size=1, max_size=25), st.integers(1, 20),
       st.lists(st.integers(1, 6), min_size=1, max_size=5), st.sampled_from(FORMATS))
def test_cut_is_the_rule_whatever_the_batches(tmp_path_factory, docs: List[List[int]], limit: int,
                                              batch_sizes: List[int], fmt: str) -> None:
    outs = []
    for batching in ("one by one", "batches"):
        out = tmp_path_factory.mktemp("w")
        with open_writer(fmt, out, dtype="uint16", shard_tokens=limit) as w:
            if batching == "one by one":
                for d in docs:
                    w.add(d)
            else:
                i = k = 0
                while i < len(docs):
                    part = docs[i:i + batch_sizes[k % len(batch_sizes)]]
                    flat = np.array([t for d in part for t in d], dtype=np.uint32)
                    offsets = np.cumsum([0] + [len(d) for d in part])
                    w.add_batch(flat, offsets)
                    i += len(part)
                    k += 1
        assert [s.documents for s in w.shards] == shard_sizes([len(d) for d in docs], limit)
        assert _read(out, fmt, w.shards) == docs
        outs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert outs[0] == outs[1]


def test_abort_leaves_finished_shards_only(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), open_writer("megatron", tmp_path, dtype="uint16", shard_tokens=3) as w:
        w.add([1, 2, 3])
        w.add([4])  # shard 0 finished here, shard 1 open
        raise RuntimeError("stop")
    assert sorted(p.name for p in tmp_path.iterdir()) == shard_files("megatron", "shard", 0)


def test_dtype_rule() -> None:
    assert [token_dtype("flat", n) for n in (256, 65536, 65537)] == ["uint16", "uint16", "uint32"]
    assert [token_dtype("megatron", n) for n in (65536, 65537)] == ["uint16", "int32"]
    with pytest.raises(InvalidInputError, match="uint16 holds ids below 65536"):
        token_dtype("parquet", 100_000, "uint16")
    assert token_dtype("parquet", 1000, "uint32") == "uint32"


def test_an_id_too_large_for_the_dtype_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="id 70000 does not fit the output dtype uint16"), \
            open_writer("flat", tmp_path, dtype="uint16") as w:
        w.add(np.array([1, 70000], dtype=np.uint32))
    with pytest.raises(ModelError, match="id -1 does not fit"), open_writer("megatron", tmp_path, dtype="int32") as w:
        w.add([5, -1])
    assert list(tmp_path.iterdir()) == []


def test_first_shard_and_prefix(tmp_path: Path) -> None:
    seen = []
    with open_writer("parquet", tmp_path, dtype="uint32", prefix="train", first_shard=7, on_shard=seen.append) as w:
        w.add([1])
    assert seen == w.shards and seen[0].files == ["train_00007.parquet"] and seen[0].number == 7
    assert json.dumps(seen[0]._asdict())  # plain data, for the manifest
