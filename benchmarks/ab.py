"""A/B of two ciyuan builds on the benchmark scripts' own ciyuan workers, side by side.

Each configuration is one worker of benchmarks/encode.py, train.py, segment.py or
wordpiece.py (the same code the full benchmarks time). Rounds alternate the builds (A B, then
B A, ...) so that the drift of a shared machine falls on both alike; every worker is a fresh
process (its own peak RSS). Printed: the median of each build's figure, the median of the
per-round ratios (B / A for speeds, A / B for times: > 1 means B is faster), and peak RSS.

    python benchmarks/ab.py --a /path/to/old --b /path/to/new [--rounds 5] [--only encode,segment]

--a and --b are folders that hold a built `ciyuan` package (e.g. a copy of the installed
site-packages/ciyuan); '-' means the build installed in this Python.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, NamedTuple, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import build_env  # noqa: E402


class Config(NamedTuple):
    group: str         # which script
    label: str
    args: List[str]    # the script's --worker arguments
    metric: str        # the key of the worker's JSON line
    higher_is_better: bool


CONFIGS = [
    Config("encode", "cl100k en, 1 thread", ["ciyuan", "cl100k_base", "en", "1", "10", "3", "-"], "mbps", True),
    Config("encode", "o200k en, 1 thread", ["ciyuan", "o200k_base", "en", "1", "10", "3", "-"], "mbps", True),
    Config("encode", "cl100k zh, 1 thread", ["ciyuan", "cl100k_base", "zh", "1", "10", "3", "-"], "mbps", True),
    Config("encode", "o200k en, 2 threads", ["ciyuan", "o200k_base", "en", "2", "10", "3", "-"], "mbps", True),
    Config("wordpiece", "BERT en ids, 1 thread", ["encode", "ciyuan:en:1:ids", "10", "3"], "mbps", True),
    Config("wordpiece", "BERT zh full, 1 thread", ["encode", "ciyuan:zh:1:full", "10", "3"], "mbps", True),
    Config("wordpiece", "WordPiece train (likelihood)", ["train", "ciyuan-likelihood"], "seconds", False),
    Config("train", "BPE train zh, char", ["zh", "ciyuan", "char"], "seconds", False),
    Config("train", "BPE train zh, byte", ["zh", "ciyuan", "byte"], "seconds", False),
    Config("segment", "FMM lcut", ["ciyuan-fmm", "0", "3"], "mbps", True),
    Config("segment", "DAG lcut", ["ciyuan-dag", "0", "3"], "mbps", True),
    Config("segment", "CLI segment FMM", ["ciyuan-cli-fmm", "0", "3"], "mbps", True),
]
RSS_KEYS = ("rss", "rss_mb")


def run(build: str, config: Config) -> Tuple[float, float]:
    """(figure, peak RSS MB) of one worker run on `build`."""
    cmd = [sys.executable, str(HERE / f"{config.group}.py"), "--worker", *config.args]
    out = subprocess.run(cmd, capture_output=True, text=True, env=build_env(build))
    if out.returncode != 0:
        raise RuntimeError(f"{config.label} on {build} failed:\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    rss = next((result[k] for k in RSS_KEYS if k in result), float("nan"))
    return float(result[config.metric]), float(rss)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="folder holding build A's ciyuan package ('-': installed)")
    ap.add_argument("--b", default="-", help="folder holding build B's ciyuan package ('-': installed)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated groups: encode,wordpiece,train,segment")
    args = ap.parse_args()
    groups = set(filter(None, args.only.split(",")))
    configs = [c for c in CONFIGS if not groups or c.group in groups]
    print("| configuration | A | B | B vs A (median of rounds) | A peak RSS | B peak RSS |")
    print("|---|---:|---:|---:|---:|---:|")
    for config in configs:
        figures: Dict[str, List[float]] = {"a": [], "b": []}
        rss: Dict[str, List[float]] = {"a": [], "b": []}
        ratios = []
        for r in range(args.rounds):
            order = ("a", "b") if r % 2 == 0 else ("b", "a")
            this = {}
            for side in order:
                figure, peak = run(getattr(args, side), config)
                figures[side].append(figure)
                rss[side].append(peak)
                this[side] = figure
            ratios.append(this["b"] / this["a"] if config.higher_is_better else this["a"] / this["b"])
        unit = "MB/s" if config.metric == "mbps" else "s"
        print(f"| {config.label} | {statistics.median(figures['a']):.2f} {unit} | "
              f"{statistics.median(figures['b']):.2f} {unit} | {statistics.median(ratios):.3f} | "
              f"{statistics.median(rss['a']):.0f} MB | {statistics.median(rss['b']):.0f} MB |", flush=True)


if __name__ == "__main__":
    main()
