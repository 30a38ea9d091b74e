"""encode-dataset as a Ray Data pipeline (read tasks -> map_batches over a pool of tokenizer
actors -> shards written in order; ciyuan.datasets.ray_engine.encode_dataset_ray, ``ciyuan
encode-dataset --ray``) writes the same bytes as the local run: every shard file and the
manifest, for real corpora in each input format and each output format, with bad documents
skipped or refused alike, with a tokenizer actor killed mid-job, and when an interrupted run is
resumed with or without Ray.

One local 2-CPU Ray cluster (the ``ray_cluster`` fixture) serves this module's tests.
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from ciyuan.datasets import encode_dataset
from ciyuan.errors import InvalidInputError
from tests.conftest import shared
from tests.datasets.conftest import corpus_lines, quiet_collect, read_back, write_input

ray = pytest.importorskip("ray")
from ciyuan.datasets import ray_engine  # noqa: E402  (after the skip: the module needs Ray)


@pytest.fixture(scope="module", autouse=True)
def on_ray(ray_cluster: Any) -> None:
    """The module's local Ray of 2 CPUs (tests/datasets/conftest.py)."""


@pytest.fixture(scope="module")
def cl100k() -> Tokenizer:
    return Tokenizer.from_tiktoken(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"), "cl100k_base")


def files_of(out: Path) -> Dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> List[Path]:
    """English as JSONL, Chinese as .jsonl.zst, the multilingual sample as Parquet, and text."""
    d = tmp_path_factory.mktemp("inputs")
    return [write_input(corpus_lines("en", 300_000), d / "en", "jsonl"),
            write_input(corpus_lines("zh", 200_000), d / "zh", "jsonl.zst"),
            write_input(corpus_lines("multi", 150_000), d / "multi", "parquet"),
            write_input(corpus_lines("en", 60_000), d / "text", "txt")]


@pytest.mark.parametrize("fmt", ["megatron", "flat", "parquet"])
def test_same_bytes_as_local(fmt: str, inputs: List[Path], cl100k: Tokenizer, tmp_path: Path) -> None:
    options: Dict[str, Any] = dict(format=fmt, eos="<|endoftext|>", bos=[100257], shard_tokens=60_000,
                                   batch_chars=40_000)
    local = encode_dataset(inputs, tmp_path / "local", cl100k, **options)
    # The English JSON Lines (~480 KB) read in parts of ~100 KB, the other files whole.
    distributed = ray_engine.encode_dataset_ray(inputs, tmp_path / "ray", cl100k, part_bytes=100_000, **options)
    assert distributed == local._replace(output=tmp_path / "ray")
    assert len(local.shards) > 3
    assert files_of(tmp_path / "ray") == files_of(tmp_path / "local")
    docs = [d for path in inputs for d in corpus_lines_of(path)]
    got = read_back(tmp_path / "ray", fmt)
    assert len(got) == len(docs)
    for ids, doc in zip(got[::97], docs[::97]):  # a sample against encode_ids itself
        assert ids == [100257] + cl100k.encode_ids(doc) + [100257]


def corpus_lines_of(path: Path) -> List[str]:
    """The documents written_input wrote to ``path`` (read back with the library's own reader)."""
    from ciyuan.datasets import iter_documents

    return [doc.text for doc in iter_documents([path])]


def test_bad_documents_as_local(cl100k: Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    lines = [json.dumps({"text": f"document {i}"}) for i in range(300)]
    lines[17] = "{not json"
    lines[120] = json.dumps({"text": "a special <|endoftext|> inside"})
    lines[250] = json.dumps({"other": "no text field"})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    options: Dict[str, Any] = dict(format="flat", shard_tokens=500, batch_chars=300)
    parts = dict(part_bytes=2000)  # ~10 KB read in parts: the lines of a later part are the file's
    local = encode_dataset(path, tmp_path / "local", cl100k, skip_bad=True, **options)
    distributed = ray_engine.encode_dataset_ray(path, tmp_path / "ray", cl100k, skip_bad=True, **parts, **options)
    assert distributed.skipped == local.skipped == 3
    assert files_of(tmp_path / "ray") == files_of(tmp_path / "local")
    lines[17] = json.dumps({"text": "fine"})
    lines[250] = lines[17]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError) as e_local:
        encode_dataset(path, tmp_path / "local2", cl100k, **options)
    with pytest.raises(InvalidInputError) as e_ray:
        ray_engine.encode_dataset_ray(path, tmp_path / "ray2", cl100k, **parts, **options)
    assert type(e_ray.value) is type(e_local.value)
    assert str(e_ray.value) == str(e_local.value)
    assert f"{path}:121" in str(e_ray.value)
    # A bad JSON line in a later part, before the refused document: the reader's error, same line.
    lines[90] = "[1, 2"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError) as e_local:
        encode_dataset(path, tmp_path / "local3", cl100k, **options)
    with pytest.raises(InvalidInputError) as e_ray:
        ray_engine.encode_dataset_ray(path, tmp_path / "ray3", cl100k, **parts, **options)
    assert str(e_ray.value) == str(e_local.value)
    assert f"{path}:91" in str(e_ray.value)
    del e_local, e_ray
    quiet_collect()


def test_cli_ray(inputs: List[Path], tmp_path: Path) -> None:
    from ciyuan.cli import main

    tok = str(shared("tokenizers", "tiktoken", "o200k_base.tiktoken"))
    args = ["encode-dataset", "--tokenizer", tok, "--pattern", "o200k_base", "--eos", "<|endoftext|>",
            "--shard-tokens", "50000", "--no-progress", *map(str, inputs[:2])]
    assert main(args + ["--output", str(tmp_path / "local")]) == 0
    assert main(args + ["--ray", "--output", str(tmp_path / "ray")]) == 0
    assert files_of(tmp_path / "ray") == files_of(tmp_path / "local")


def _encoder_actor() -> Optional[int]:
    """The process of a live tokenizer actor, from Ray's control store (no dashboard needed)."""
    from ray._private import state

    for actor in state.actors().values():
        name = actor.get("ActorClassName", "")  # Ray Data's MapWorker(MapBatches(_EncodeStage))
        if "_EncodeStage" in name and actor.get("State") == "ALIVE" and actor.get("Pid"):
            return int(actor["Pid"])
    return None


def _reader() -> Optional[int]:
    """The process of a running read task: Ray titles a worker ``ray::`` + its task while it runs
    it (``ray::MapBatches(_read_part)``), ``ray::IDLE`` between tasks."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes()
            except OSError:  # gone meanwhile
                continue
            if title.startswith(b"ray::") and b"_read_part" in title:
                return int(entry.name)
    return None


@pytest.mark.parametrize("victim", ["actor", "reader"])
def test_worker_killed_mid_job(victim: str, inputs: List[Path], cl100k: Tokenizer, tmp_path: Path) -> None:
    """SIGKILL a Ray worker while the pipeline runs - a tokenizer actor (after the first shard is
    written: mid-job), or a read task's worker (as soon as one runs): Ray restarts the actor and
    sends its batch again, or runs the read task again; the output is the local run's."""
    options: Dict[str, Any] = dict(format="megatron", eos="<|endoftext|>", shard_tokens=40_000, batch_chars=4_000)
    local = encode_dataset(inputs, tmp_path / "local", cl100k, **options)
    result: Dict[str, Any] = {}

    def job() -> None:
        try:
            result["ray"] = ray_engine.encode_dataset_ray(inputs, tmp_path / "ray", cl100k, part_bytes=100_000,
                                                          **options)
        except BaseException as e:  # reported below
            result["error"] = e

    thread = threading.Thread(target=job)
    thread.start()
    killed = None
    deadline = time.monotonic() + 60
    manifest = tmp_path / "ray" / "manifest.json"
    while killed is None and thread.is_alive() and time.monotonic() < deadline:
        if victim == "reader":
            killed = _reader()
        elif manifest.exists() and json.loads(manifest.read_text())["shards"]:
            killed = _encoder_actor()
        if killed is not None:
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.005 if victim == "reader" else 0.02)
    thread.join()
    assert "error" not in result, result.get("error")
    assert killed is not None, f"the job ended before a {victim} could be killed"
    assert result["ray"].documents == local.documents
    assert files_of(tmp_path / "ray") == files_of(tmp_path / "local")


@pytest.mark.parametrize("first,second", [("ray", "ray"), ("local", "ray"), ("ray", "local")])
def test_interrupted_run_resumes(first: str, second: str, inputs: List[Path], cl100k: Tokenizer,
                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run stopped after its 3rd shard, started again (with or without Ray), ends with the
    bytes of an uninterrupted run: the Ray pipeline skips exactly the documents the finished
    shards hold, also in the middle of a batch."""
    from ciyuan.datasets import encode

    # The Ray runs read the English JSON Lines in parts: the resumed run leaves whole parts out.
    runs = {"local": encode_dataset, "ray": functools.partial(ray_engine.encode_dataset_ray, part_bytes=60_000)}
    options: Dict[str, Any] = dict(format="flat", eos="<|endoftext|>", shard_tokens=30_000, batch_chars=25_000)
    whole = encode_dataset(inputs[:2], tmp_path / "whole", cl100k, **options)
    on_shard = encode._Run._on_shard
    seen: List[int] = []

    def stop_after_three(self: Any, info: Any) -> None:
        on_shard(self, info)
        seen.append(info.number)
        if len(seen) == 3:
            raise KeyboardInterrupt("stopped after the 3rd shard")

    with monkeypatch.context() as m:
        m.setattr(encode._Run, "_on_shard", stop_after_three)
        with pytest.raises(KeyboardInterrupt):
            runs[first](inputs[:2], tmp_path / "out", cl100k, **options)
    result = runs[second](inputs[:2], tmp_path / "out", cl100k, **options)
    assert result.resumed_shards == 3
    assert files_of(tmp_path / "out") == files_of(tmp_path / "whole")
    assert result._replace(resumed_shards=0, output=whole.output) == whole


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.text(st.characters(blacklist_categories=["Cs"]), max_size=60), min_size=1, max_size=40),
       batch_chars=st.integers(1, 200), skip_bad=st.booleans(), part_bytes=st.integers(1, 3000))
def test_generated_documents(docs: List[str], batch_chars: int, skip_bad: bool, part_bytes: int, cl100k: Tokenizer,
                             tmp_path_factory: pytest.TempPathFactory) -> None:
    d = tmp_path_factory.mktemp("generated")
    src = d / "docs.jsonl"
    # Some documents hold a special token's text: refused (named, or skipped) alike.
    src.write_text("".join(json.dumps({"text": t if i % 7 else t + "<|endoftext|>"}) + "\n"
                           for i, t in enumerate(docs)), encoding="utf-8")
    options: Dict[str, Any] = dict(format="flat", bos="<|endoftext|>", shard_tokens=64, batch_chars=batch_chars,
                                   skip_bad=skip_bad)
    try:
        local = encode_dataset(src, d / "local", cl100k, **options)
    except InvalidInputError as e:
        with pytest.raises(InvalidInputError, match=re.escape(str(e))):
            ray_engine.encode_dataset_ray(src, d / "ray", cl100k, part_bytes=part_bytes, **options)
        return
    distributed = ray_engine.encode_dataset_ray(src, d / "ray", cl100k, part_bytes=part_bytes, **options)
    assert distributed == local._replace(output=d / "ray")
    assert files_of(d / "ray") == files_of(d / "local")


@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")  # Ray Data's own settings
def test_ray_data_stage(cl100k: Tokenizer) -> None:
    """tokenize_dataset: a map_batches stage over tokenizer actors in the user's Ray Data
    pipeline; every row's ids are encode_ids of its text, with BOS/EOS."""
    docs = corpus_lines("en", 60_000) + corpus_lines("zh", 40_000) + corpus_lines("multi", 30_000)
    ds = ray.data.from_items([{"n": i, "text": t} for i, t in enumerate(docs)])
    rows = ray_engine.tokenize_dataset(ds, cl100k, bos=[100257], eos="<|endoftext|>", actors=1).take_all()
    assert sorted(r["n"] for r in rows) == list(range(len(docs)))
    for r in rows:
        assert list(r["input_ids"]) == [100257] + cl100k.encode_ids(docs[r["n"]]) + [100257]
