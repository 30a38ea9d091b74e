"""Chinese word segmentation throughput: ciyuan (FMM, BMM, BiMM, DAG) vs jieba, side by side.

The corpus is jinyong_16novels.txt (26 MB of Chinese), the dictionary jieba_dict_small.txt
(110k words with frequencies) for every library. Each configuration runs in a fresh worker
process (for its own peak RSS) and reports the median of several runs; a timed call includes
freeing the list it returns (for ciyuan and jieba alike).

    python benchmarks/segment.py [--repeats 3] [--mb 0 (= whole corpus)] [--jieba-mb 2]

- ciyuan, 1 thread: ``Segmenter(d, method).lcut(text)`` on the whole text (one call), and FMM
  per line (``[seg.lcut(line) for line in lines]``, a Python loop);
- ciyuan, 2 threads: ``lcut_batch(lines, threads=2)``;
- ciyuan CLI: ``ciyuan segment --dict D --method M corpus -o out``, wall time end to end (Python
  start-up and dictionary loading included);
- jieba: ``jieba.lcut(text, HMM=False)`` (the same DAG method: its output is checked to equal
  ciyuan's) and ``jieba.lcut(text)`` (default, HMM on), on the first --jieba-mb MB (jieba is
  slow; MB/s does not depend on the size);
- dictionary loading: ciyuan ``Dictionary.load`` (parse + the forward trie; BMM and BiMM build
  the backward one on first use) for the 110k-word file and for jieba's own 349k-word
  dict.txt, and jieba's ``initialize()`` without its cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, machine, median_seconds, peak_rss_mb, read_prefix, run_worker  # noqa: E402

CORPUS = SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt"
DICT = SHARED_DATA / "dicts" / "jieba_dict_small.txt"


def load_text(mb: float) -> str:
    if mb <= 0:
        return CORPUS.read_text(encoding="utf-8")
    return read_prefix(CORPUS, int(mb * 1_000_000))


def digest(words: List[str]) -> str:
    return hashlib.sha1("\x00".join(words).encode("utf-8")).hexdigest()[:12]


def jieba_tokenizer(tmp: str):
    import logging
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import jieba
    jieba.setLogLevel(logging.WARNING)
    tok = jieba.Tokenizer(dictionary=str(DICT))
    tok.tmp_dir = tmp  # a fresh cache directory: initialize() builds the prefix dict
    return tok


def worker(config: str, mb: float, repeats: int) -> None:
    result: Dict[str, object] = {}
    if config.startswith("ciyuan-cli-"):
        method = config.rsplit("-", 1)[1]
        text_path = CORPUS
        if mb > 0:
            with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as tmp:
                tmp.write(load_text(mb))
            text_path = Path(tmp.name)
        nbytes = text_path.stat().st_size
        out = tempfile.mktemp(suffix=".txt")
        cmd = [sys.executable, "-m", "ciyuan", "segment", "--dict", str(DICT), "--method", method,
               str(text_path), "-o", out]
        seconds, _ = median_seconds(lambda: subprocess.run(cmd, check=True), repeats)
        os.unlink(out)
        result = {"mbps": nbytes / seconds / 1e6,
                  "rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
        print(json.dumps(result))
        return

    text = load_text(mb)
    lines = text.split("\n")
    nbytes = len(text.encode("utf-8"))
    if config.startswith("ciyuan"):
        from ciyuan.segment import Dictionary, Segmenter

        start = time.perf_counter()
        d = Dictionary.load(DICT)
        result["load"] = time.perf_counter() - start
        method = config.split("-")[1]
        seg = Segmenter(d, method)
        if config.endswith("-lines"):
            run = lambda: [seg.lcut(line) for line in lines]  # noqa: E731
        elif config.endswith("-2t"):
            run = lambda: seg.lcut_batch(lines, threads=2)  # noqa: E731
        else:
            run = lambda: seg.lcut(text)  # noqa: E731
        check = seg.lcut(text)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            tok = jieba_tokenizer(tmp)
            start = time.perf_counter()
            tok.initialize()
            result["load"] = time.perf_counter() - start
        hmm = config == "jieba-default"
        run = lambda: tok.lcut(text, HMM=hmm)  # noqa: E731
        check = tok.lcut(text, HMM=hmm)
    seconds, _ = median_seconds(run, repeats)
    # Process CPU time too: on a shared machine it moves less with the load than wall time
    # (for 2 threads it adds both threads' time, so it is not a speed there).
    cpu = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        cpu.append(time.process_time() - start)
    result.update({"mbps": nbytes / seconds / 1e6, "cpu_mbps": nbytes / sorted(cpu)[len(cpu) // 2] / 1e6,
                   "rss": peak_rss_mb(), "digest": digest(check), "mb": nbytes / 1e6})
    print(json.dumps(result))


def load_times() -> Dict[str, float]:
    """ciyuan's load time for jieba's full 349k-word dictionary (median of 3)."""
    import warnings

    from ciyuan.segment import Dictionary

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import jieba
    full = Path(jieba.__file__).parent / "dict.txt"
    times, both = [], []
    for _ in range(3):
        d = Dictionary.load(full)  # parse + forward trie (FMM, DAG)
        times.append(d.load_seconds)
        start = time.perf_counter()
        d.build(backward=True)  # + the backward trie (BMM, BiMM build it on first use)
        both.append(d.load_seconds + time.perf_counter() - start)
    return {"ciyuan_349k": sorted(times)[1], "ciyuan_349k_both": sorted(both)[1], "words": len(d)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--mb", type=float, default=0, help="MB of the corpus for ciyuan (0: all of it)")
    ap.add_argument("--jieba-mb", type=float, default=2, help="MB of the corpus for jieba")
    ap.add_argument("--worker", nargs=3, metavar="ARG", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        config, mb, repeats = args.worker
        worker(config, float(mb), int(repeats))
        return
    for path in (CORPUS, DICT):
        if not path.exists():
            sys.exit(f"missing {path}: the benchmark needs ../shared/data (or CIYUAN_SHARED_DATA)")
    print(f"machine: {machine()}")
    print(f"load average: {os.getloadavg()[0]:.2f} (the machine is shared; medians of {args.repeats} runs)\n")
    script = Path(__file__).resolve()
    configs = [("jieba-nohmm", args.jieba_mb), ("jieba-default", args.jieba_mb)]
    configs += [(f"ciyuan-{m}", args.mb) for m in ("fmm", "bmm", "bimm", "dag")]
    configs += [("ciyuan-fmm-lines", args.mb), ("ciyuan-fmm-2t", args.mb), ("ciyuan-dag-2t", args.mb)]
    configs += [(f"ciyuan-cli-{m}", args.mb) for m in ("fmm", "dag")]
    results: Dict[str, Dict] = {}
    for config, mb in configs:
        results[config] = json.loads(run_worker(script, [config, str(mb), str(args.repeats)], {}))
        r = results[config]
        cpu = f"  ({r['cpu_mbps']:.2f} MB/s of CPU time)" if "cpu_mbps" in r else ""
        print(f"{config:18} {r['mbps']:8.2f} MB/s{cpu}  peak RSS {r['rss']:6.0f} MB"
              + (f"  load {r['load']:.3f} s" if "load" in r else ""), flush=True)
    # ciyuan's DAG equals jieba's cut(HMM=False) on the same text.
    same = json.loads(run_worker(script, ["ciyuan-dag", str(args.jieba_mb), "1"], {}))["digest"] == \
        results["jieba-nohmm"]["digest"]
    loads = load_times()
    base = results["jieba-nohmm"]["mbps"]
    names = {
        "jieba-nohmm": "jieba `lcut(HMM=False)`", "jieba-default": "jieba `lcut()` (HMM)",
        "ciyuan-fmm": "ciyuan FMM `lcut(text)`", "ciyuan-bmm": "ciyuan BMM `lcut(text)`",
        "ciyuan-bimm": "ciyuan BiMM `lcut(text)`", "ciyuan-dag": "ciyuan DAG `lcut(text)`",
        "ciyuan-fmm-lines": "ciyuan FMM, `lcut` per line", "ciyuan-fmm-2t": "ciyuan FMM `lcut_batch`, 2 threads",
        "ciyuan-dag-2t": "ciyuan DAG `lcut_batch`, 2 threads",
        "ciyuan-cli-fmm": "`ciyuan segment` FMM (CLI, end to end)",
        "ciyuan-cli-dag": "`ciyuan segment --method dag` (CLI, end to end)",
    }
    print("\n| configuration | MB/s (wall) | MB/s (CPU time) | × jieba (HMM=False) | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|")
    for config, _ in configs:
        r = results[config]
        cpu = f"{r['cpu_mbps']:.2f}" if "cpu_mbps" in r and not config.endswith("-2t") else "-"
        print(f"| {names[config]} | {r['mbps']:.2f} | {cpu} | {r['mbps'] / base:.1f}× | {r['rss']:.0f} |")
    print(f"\nciyuan DAG output identical to jieba cut(HMM=False) on {args.jieba_mb:g} MB: {'yes' if same else 'NO'}")
    print(f"dictionary loading: ciyuan {results['ciyuan-fmm']['load']:.3f} s (110k words, parse + forward trie), "
          f"{loads['ciyuan_349k']:.3f} s ({loads['words']:,} words, jieba's dict.txt; "
          f"{loads['ciyuan_349k_both']:.3f} s with the backward trie); "
          f"jieba initialize() {results['jieba-nohmm']['load']:.3f} s (110k words, no cache)")


if __name__ == "__main__":
    main()
