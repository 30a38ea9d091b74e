"""Training under a memory limit: ``ciyuan train --memory-limit`` against the unlimited run.

Byte-level BPE, vocabulary 32,000, on the full gutenberg_100mb.txt (105 MB of English) and
jinyong_16novels.txt (26 MB of Chinese), through the command line. Each run is a fresh worker
process that reports its own peak RSS (VmHWM) and the peak above its start once ciyuan is loaded,
with the time split into counting and learning (from the trainer's report); the merges of every
limited run are compared byte for byte with the unlimited run's.

    python benchmarks/train_memory.py [--repeats 3] [--limits none 64MB 4MB] [--only en|zh]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, machine, peak_rss_mb, run_worker  # noqa: E402

CORPORA = {
    "en": SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt",
    "zh": SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt",
}
VOCAB = 32000


def worker(corpus: str, limit: str) -> None:
    from ciyuan import pre_tokenizers
    from ciyuan.formats.vocab_merges import merges_lines
    from ciyuan.trainers import BpeTrainer

    start_mb = peak_rss_mb()
    trainer = BpeTrainer(VOCAB, byte_level=True, threads=2, memory_limit=None if limit == "none" else limit)
    t0 = time.perf_counter()
    counts = trainer.count_words(corpus, pre_tokenizers.Split("gpt2"))
    t1 = time.perf_counter()
    count_mb = peak_rss_mb()
    runs, table = counts.runs, counts.peak_memory
    model = trainer.train_words(counts, consume=True)
    t2 = time.perf_counter()
    merges = "\n".join(merges_lines(model)).encode("utf-8")
    print(json.dumps({"count_s": t1 - t0, "learn_s": t2 - t1, "start_mb": start_mb, "count_mb": count_mb,
                      "peak_mb": peak_rss_mb(), "runs": runs, "table_mb": table / 1e6,
                      "merges": hashlib.sha256(merges).hexdigest()}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--limits", nargs="+", default=["none", "64MB", "4MB"])
    p.add_argument("--only", choices=sorted(CORPORA))
    p.add_argument("--worker", nargs=2, metavar=("CORPUS", "LIMIT"))
    args = p.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    print(f"{machine()}; byte-level BPE, vocabulary {VOCAB:,}, 2 threads; median of {args.repeats} runs\n")
    print("| corpus | --memory-limit | runs spilled | count | learn | peak RSS | counting's peak above start "
          "| merges |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name, corpus in CORPORA.items():
        if args.only and name != args.only:
            continue
        reference = None
        for limit in args.limits:
            with tempfile.TemporaryDirectory():
                results: List[Dict] = [json.loads(run_worker(Path(__file__), [str(corpus), limit], {}))
                                       for _ in range(args.repeats)]
            med = {k: statistics.median(r[k] for r in results)
                   for k in ("count_s", "learn_s", "peak_mb", "count_mb", "start_mb")}
            digests = {r["merges"] for r in results}
            assert len(digests) == 1, f"{name} {limit}: runs disagree"
            digest = digests.pop()
            reference = reference or digest
            same = "identical" if digest == reference else "DIFFERENT"
            print(f"| {corpus.name} | {limit} | {results[0]['runs']} | {med['count_s']:.2f} s | {med['learn_s']:.2f} s "
                  f"| {med['peak_mb']:.0f} MB | {med['count_mb'] - med['start_mb']:.0f} MB | {same} |", flush=True)


if __name__ == "__main__":
    main()
