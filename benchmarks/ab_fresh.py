"""A/B of two ciyuan builds on new text, both running at once, one on each core.

benchmarks/ab.py runs the builds in turn on text they have seen before; on this noisy 2-core
machine the drift between two runs is often larger than the change being measured, and a
repeated text flatters the piece caches. Here each pair of runs starts build A and build B at
the same moment, each pinned to a core of its own (swapped every pair, so that neither build
keeps the better core), and both encode the same slices of a corpus, in the same order, each
slice new to both (a warm-up slice first). What the host does to one core in that time it
mostly does to the other: the ratio of the two builds' speeds on a slice is steadier than
either speed. Printed: the median MB/s of each build and the median of the per-slice ratios
B / A (> 1: B is faster), over pairs x slices; each pair starts at another place in the corpus.

    python benchmarks/ab_fresh.py --a /path/to/old --b /path/to/new
                                  [--encoding cl100k_base] [--corpus en] [--pairs 10] [--mb 1]

--a and --b are folders that hold a built `ciyuan` package (e.g. a copy of src/ciyuan with the
build's _core module beside it); '-' means the build installed in this Python. A run of one
build against itself (--a X --b X) shows the method's own noise: 0.975 in the eighth session of
docs/benchmarks.md. The call timed is encode_ids(text, as_array=True), one thread.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import build_env  # noqa: E402

SLICES_PER_RUN = 6


def worker(encoding: str, corpus: str, mb: float, first: int) -> None:
    """One build's run: the MB/s of each of SLICES_PER_RUN new slices, as a JSON list."""
    import ciyuan
    import encode  # the benchmark's encodings and corpora, loaded in the worker

    enc = encode.encoding(encoding)
    tok = ciyuan.Tokenizer.from_tiktoken(enc.ranks, enc.name)
    texts = encode.slices(corpus, first + SLICES_PER_RUN + 1, int(mb * 1e6))[first:]
    tok.encode_ids(texts[0], disallowed_special=(), as_array=True)  # warm-up: load, first caches
    speeds = []
    for text in texts[1:]:
        size = len(text.encode("utf-8"))
        start = time.perf_counter()
        tok.encode_ids(text, disallowed_special=(), as_array=True)
        speeds.append(size / 1e6 / (time.perf_counter() - start))
    print(json.dumps(speeds))


def run_pair(builds: List[str], cores: List[str], args: argparse.Namespace, first: int) -> List[List[float]]:
    """Both builds at once, build i on cores[i]; their per-slice MB/s."""
    procs = []
    for build, core in zip(builds, cores):
        cmd = ["taskset", "-c", core, sys.executable, str(Path(__file__).resolve()), "--worker",
               "--encoding", args.encoding, "--corpus", args.corpus, "--mb", str(args.mb), "--first", str(first)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=build_env(build),
                                      text=True))
    results = []
    for build, proc in zip(builds, procs):
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"the run of {build} failed:\n{err[-2000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", default="-", help="folder holding build A's ciyuan package ('-': installed)")
    ap.add_argument("--b", default="-", help="folder holding build B's ciyuan package ('-': installed)")
    ap.add_argument("--encoding", default="cl100k_base", help="gpt2, cl100k_base, o200k_base or llama3")
    ap.add_argument("--corpus", default="en", help="en, zh, multi or code (as benchmarks/encode.py)")
    ap.add_argument("--pairs", type=int, default=10, help="pairs of runs (each: a warm-up and 6 new slices)")
    ap.add_argument("--mb", type=float, default=1.0, help="slice size in MB")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.encoding, args.corpus, args.mb, args.first)
        return
    if (os.cpu_count() or 1) < 2:
        raise SystemExit("ab_fresh.py runs the two builds on two cores at once; this machine has one")
    speeds_a: List[float] = []
    speeds_b: List[float] = []
    ratios: List[float] = []
    for pair in range(args.pairs):
        cores = ["0", "1"] if pair % 2 == 0 else ["1", "0"]
        first = pair * 7 % 40  # another stretch of the corpus for each pair
        a, b = run_pair([args.a, args.b], cores, args, first)
        speeds_a += a
        speeds_b += b
        ratios += [y / x for x, y in zip(a, b)]
    print(f"{args.encoding} {args.corpus}: A {statistics.median(speeds_a):.1f} MB/s, "
          f"B {statistics.median(speeds_b):.1f} MB/s; B / A median {statistics.median(ratios):.3f} "
          f"(n = {len(ratios)} slices, {args.pairs} pairs)")


if __name__ == "__main__":
    main()
