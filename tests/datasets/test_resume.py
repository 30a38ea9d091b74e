"""Resume: ``ciyuan encode-dataset`` killed with SIGKILL at random (seeded) moments and started
again each time ends with the same bytes as a run that was never interrupted - no document
missing or repeated - and no temporary file left behind."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

from tests.conftest import shared
from tests.datasets.conftest import corpus_lines, read_back, tree_bytes, write_input

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")


def _command(src: Path, out: Path, fmt: str) -> List[str]:
    # BERT's vocab.txt loads fastest, and its [CLS] ... [SEP] come from the post-processor
    return [sys.executable, "-m", "ciyuan", "encode-dataset", "-t", str(_bert()), str(src), "-o", str(out),
            "--format", fmt, "--shard-tokens", "4000", "--threads", "1", "--no-progress"]


def _bert() -> Path:
    return shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")


def _run(command: List[str]) -> None:
    subprocess.run(command, check=True, stderr=subprocess.PIPE)


def _finished_shards(out: Path) -> int:
    try:
        return len(json.loads((out / "manifest.json").read_text())["shards"])
    except (OSError, ValueError):  # not written yet
        return 0


@pytest.mark.parametrize("fmt", ["megatron", "parquet"])
def test_killed_runs_resume_to_the_same_bytes(tmp_path: Path, fmt: str) -> None:
    docs = corpus_lines("en", 200_000) + corpus_lines("zh", 100_000)
    src = write_input(docs, tmp_path / "in", "jsonl.gz")
    whole = tmp_path / "whole"
    _run(_command(src, whole, fmt))
    shards = len(json.loads((whole / "manifest.json").read_text())["shards"])
    out = tmp_path / "out"
    rng = random.Random(f"resume-{fmt}")
    # Kill moments: after a random number of finished shards (increasing, so that each restart
    # makes progress) plus a random fraction of the next one.
    targets = sorted(rng.sample(range(1, shards), 4))
    kills = 0
    for target in targets:
        proc = subprocess.Popen(_command(src, out, fmt), stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while _finished_shards(out) < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.02))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills >= 3
    first_shard = next(out.glob("shard_00000.*"))
    written = first_shard.stat().st_mtime_ns
    final = subprocess.run(_command(src, out, fmt), check=True, stderr=subprocess.PIPE, text=True)
    assert "from an earlier run" in final.stderr  # resumed, not started again
    assert first_shard.stat().st_mtime_ns == written  # finished shards are not rewritten
    assert tree_bytes(out) == tree_bytes(whole)
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    from ciyuan import Tokenizer

    bert = Tokenizer.load(_bert())
    assert read_back(out, fmt) == [bert.encode_ids(d) for d in docs]
    assert read_back(out, fmt)[0][0] == bert.token_to_id("[CLS]")
