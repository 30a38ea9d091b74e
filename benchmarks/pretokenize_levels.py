"""The pre-tokenizer scanners alone at each SIMD level, side by side in one process.

For each pattern and corpus (1 MB of English, Chinese, udhr and the running Python's standard
library), the scanner runs at every level this CPU has (``_core._count_pieces``: batches of 256
pieces as the encoder takes them, no Python objects), the levels alternating within each round;
printed are the median MB/s of the rounds and the pieces (the same at every level, or the script
stops).

    python benchmarks/pretokenize_levels.py [--patterns cl100k_base,o200k_base] [--rounds 7] [--repeats 5]

Instruction counts (for an A/B of two builds; valgrind cannot run AVX-512), per byte of the
scanner alone:

    valgrind --tool=callgrind --toggle-collect='ciyuan::next_pieces*' \\
        python benchmarks/pretokenize_levels.py --patterns cl100k_base --corpora en \\
        --levels avx2 --rounds 1 --repeats 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import sysconfig
import time
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, read_prefix  # noqa: E402
from ciyuan import _core  # noqa: E402

ALL_LEVELS = ["scalar", "sse2", "sse42", "avx2", "avx512"]
MB = 1 << 20


def python_source(limit: int) -> str:
    """The standard library's .py files (not its tests), up to `limit` bytes."""
    out: List[str] = []
    size = 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if "test" in path.parts or "site-packages" in path.parts:
            continue
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        out.append(text)
        size += len(text.encode("utf-8"))
        if size >= limit:
            break
    return "".join(out)


def corpora(names: List[str]) -> Dict[str, str]:
    files = {"en": "corpora/en/gutenberg_100mb.txt", "zh": "corpora/zh/jinyong_16novels.txt",
             "udhr": "corpora/multi/udhr_sample.txt"}
    return {n: python_source(MB) if n == "py" else read_prefix(SHARED_DATA / files[n], MB) for n in names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--patterns", default="gpt2,cl100k_base,o200k_base,llama3,qwen2")
    ap.add_argument("--corpora", default="en,zh,udhr,py")
    ap.add_argument("--levels", default=",".join(ALL_LEVELS))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeats", type=int, default=5, help="scans of the text per timing")
    args = ap.parse_args()
    best = _core.best_simd_level()
    levels = [lv for lv in args.levels.split(",") if ALL_LEVELS.index(lv) <= ALL_LEVELS.index(best)]
    texts = corpora(args.corpora.split(","))
    for name in args.patterns.split(","):
        for label, text in texts.items():
            data = text.encode("utf-8")
            size = len(data) * args.repeats
            speeds: Dict[str, List[float]] = {lv: [] for lv in levels}
            pieces = set()
            for _ in range(args.rounds):
                for lv in levels:
                    _core._set_simd_level(lv)
                    t0 = time.perf_counter()
                    count = _core._count_pieces(name, data, args.repeats)
                    speeds[lv].append(size / (time.perf_counter() - t0) / 1e6)
                    pieces.add(count)
            if len(pieces) != 1:
                sys.exit(f"{name} {label}: the levels disagree on the number of pieces: {sorted(pieces)}")
            row = "  ".join(f"{lv} {statistics.median(speeds[lv]):7.1f}" for lv in levels)
            print(f"{name:12s} {label:5s} MB/s: {row}   ({pieces.pop()} pieces)")


if __name__ == "__main__":
    main()
