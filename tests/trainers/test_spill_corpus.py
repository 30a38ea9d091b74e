"""Issue 16's Must-show for training from corpora larger than memory, on the 105 MB English corpus:
``ciyuan train --memory-limit 64MB`` learns merges identical to the unlimited run, and the peak RSS
of the process (VmHWM from /proc/self/status, read by the child itself) stays under the limit plus
the model.

"The model" is measured, not assumed: a fresh interpreter loads the counted words (as the counter
hands them to the trainer) and trains; its peak RSS above its own start is what building the model
costs. The interpreter of the limited run is *not* left out: its whole peak must fit.

On this corpus the word table needs only ~13 MB (144k distinct words), so 64MB never spills; the
same run with 4MB spills dozens of runs and must give the same bytes too. Vocabulary 32,000: the
three runs take a few seconds each on this machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ciyuan import pre_tokenizers
from ciyuan.trainers.corpus import count_words
from ciyuan.trainers.spill import parse_memory_limit
from tests.conftest import shared

VOCAB = 32000

# Runs `ciyuan train ARGS...` and prints the child's own RSS before and its VmHWM after.
_TRAIN_CHILD = r"""
import json, sys
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
base = status("VmRSS")
from ciyuan.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "base": base, "hwm": status("VmHWM")}))
"""

# Trains on counted words read from a file (WordCounts.to_bytes) and prints the peak above the start.
_MODEL_CHILD = r"""
import json, sys
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
from ciyuan.trainers import BpeTrainer
from ciyuan.trainers.corpus import WordCounts
base = status("VmRSS")
with open(sys.argv[1], "rb") as f:
    counts = WordCounts.from_bytes(f.read())
BpeTrainer(int(sys.argv[2]), byte_level=True).train_words(counts, consume=True)
print(json.dumps({"base": base, "hwm": status("VmHWM")}))
"""


def _child_env() -> dict:
    """The child's environment. Under `make sanitize` (CIYUAN_SANITIZED=1) ASan's quarantine is
    turned off in it: freed memory is otherwise held back (256 MB by default) to catch uses after
    free, and that memory is counted in the peak RSS measured here (seen: a 64MB-limited count
    peaking 214 MB above its start). The shadow memory and redzones remain, in the model's
    measure as in the limited run's."""
    env = dict(os.environ)
    if env.get("CIYUAN_SANITIZED") == "1":
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
    return env


def _run(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600,
                          env=_child_env())
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["stderr"] = done.stderr
    return result


@pytest.mark.slow
def test_memory_limit_64mb_on_the_english_corpus(tmp_path):
    corpus = shared("corpora", "en", "gutenberg_100mb.txt")
    runs = {}
    for limit in (None, "64MB", "4MB"):
        out = tmp_path / f"{limit}"
        out.mkdir()
        args = ["train", "--model", "bpe", "--byte-level", "--vocab-size", str(VOCAB), "--threads", "2",
                "--output", str(out / "tok.json"), "--merges", str(out / "merges.txt"), str(corpus)]
        if limit:
            args += ["--memory-limit", limit, "--spill-dir", str(out)]
        runs[limit] = _run(_TRAIN_CHILD, *args)
        assert runs[limit]["code"] == 0, runs[limit]["stderr"][-2000:]
        runs[limit]["merges"] = (out / "merges.txt").read_bytes()
        runs[limit]["json"] = (out / "tok.json").read_bytes()
        assert sorted(p.name for p in out.iterdir()) == ["merges.txt", "tok.json"]  # no run left behind

    assert runs[None]["merges"].count(b"\n") == 1 + VOCAB - 256  # the "#version" line and the merges
    assert "runs spilled" in runs["4MB"]["stderr"] and "runs spilled" not in runs["64MB"]["stderr"]
    for limit in ("64MB", "4MB"):
        assert runs[limit]["merges"] == runs[None]["merges"], limit
        assert runs[limit]["json"] == runs[None]["json"], limit

    # the model: training from the counted words alone, in a fresh interpreter
    counts_file = tmp_path / "counts.bin"
    counts_file.write_bytes(count_words(corpus, pre_tokenizers.Split("gpt2")).to_bytes())
    model_child = _run(_MODEL_CHILD, str(counts_file), str(VOCAB))
    model = model_child["hwm"] - model_child["base"]
    limit = parse_memory_limit("64MB")
    assert limit is not None
    # The bound holds the whole process (the interpreter and the native core's code included)
    # to the limit plus the model. Under `make sanitize` the sanitized core and its shadow memory
    # alone add more than the ordinary build's margin (seen: 126.1 MB against a bound of 119.0 MB;
    # and the 4MB run 127.1 MB against the unlimited run's 126.2 MB), so there the peaks are not
    # compared; the merges' identity (above) and the 4MB run's spilling still are.
    if os.environ.get("CIYUAN_SANITIZED") != "1":
        assert runs["64MB"]["hwm"] <= limit + model, (runs["64MB"]["hwm"], limit, model)
        assert runs["4MB"]["hwm"] <= runs[None]["hwm"]
    print({k: (v["base"] >> 10, v["hwm"] >> 10) for k, v in runs.items()}, "model KiB", model >> 10)


# Counts the corpus with a limit and prints the digest of the words, the child's RSS once ciyuan is
# loaded and its VmHWM after counting (the trainer does not run).
_COUNT_CHILD = r"""
import hashlib, json, sys
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
from ciyuan import pre_tokenizers
from ciyuan.trainers.corpus import count_words
count_words(["warm up the pre-tokenizer"], pre_tokenizers.Split("gpt2"))
base = status("VmRSS")  # the interpreter with ciyuan loaded
counts = count_words(sys.argv[1], pre_tokenizers.Split("gpt2"), threads=2, memory_limit=sys.argv[2] or None)
hwm = status("VmHWM")
digest = hashlib.sha256(repr((counts.words(), counts.total)).encode()).hexdigest()
print(json.dumps({"base": base, "hwm": hwm, "runs": counts.runs, "digest": digest}))
"""


@pytest.mark.slow
def test_counting_the_chinese_corpus_spills_within_64mb():
    # Byte-level words of Chinese text are whole clauses: the table needs ~84 MB here, so 64MB spills.
    corpus = shared("corpora", "zh", "jinyong_16novels.txt")
    full = _run(_COUNT_CHILD, str(corpus), "")
    limited = _run(_COUNT_CHILD, str(corpus), "64MB")
    assert full["runs"] == 0 and limited["runs"] > 1
    assert limited["digest"] == full["digest"]
    limit = parse_memory_limit("64MB")
    assert limit is not None
    # counting's peak above the interpreter (with ciyuan loaded) stays within the limit
    assert limited["hwm"] - limited["base"] <= limit < full["hwm"] - full["base"]
    print({k: (v["base"] >> 10, v["hwm"] >> 10, v["runs"]) for k, v in (("full", full), ("64MB", limited))})
