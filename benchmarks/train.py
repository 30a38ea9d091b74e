"""BPE training: ciyuan vs Hugging Face tokenizers, YouTokenToMe and SentencePiece, side by side.

Vocabulary 32,000 on the full gutenberg_100mb.txt (105 MB of English) and jinyong_16novels.txt
(26 MB of Chinese). Every configuration runs in a fresh worker process (so each has its own
peak RSS) and reports the median wall time of several runs; the time covers reading the file,
counting words and learning merges. All tools use all cores.

    python benchmarks/train.py [--repeats 3] [--only en|zh] [--markdown docs/benchmarks.md]

Configurations (the same pre-tokenization on both sides wherever the peer allows it):
  char  ciyuan WordPunct (= HF Whitespace, \\w+|[^\\w\\s]+) vs HF BpeTrainer + Whitespace
  byte  ciyuan Split("gpt2"), byte_level vs HF ByteLevel(add_prefix_space=False) + the 256-byte
        initial alphabet (the two give identical merges)
  YouTokenToMe BPE and SentencePiece BPE (model_type=bpe) use their own pre-tokenization
  (whitespace-delimited words / sentencepiece's pieces); they are listed for orientation.
A configuration whose first run takes over 60 s is timed once.
"""

from __future__ import annotations

import argparse
import json
import os
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
CONFIGS = [
    # (corpus, tool, kind)
    ("en", "ciyuan", "char"), ("en", "hf", "char"),
    ("en", "ciyuan", "byte"), ("en", "hf", "byte"),
    ("en", "yttm", "bpe"), ("en", "sentencepiece", "bpe"),
    ("zh", "ciyuan", "byte"), ("zh", "hf", "byte"),
    ("zh", "ciyuan", "char"), ("zh", "hf", "char"),
    ("zh", "yttm", "bpe"), ("zh", "sentencepiece", "bpe"),
]
LABELS = {
    ("ciyuan", "char"): "ciyuan BpeTrainer, WordPunct",
    ("hf", "char"): "HF tokenizers BpeTrainer, Whitespace",
    ("ciyuan", "byte"): "ciyuan BpeTrainer byte_level, Split(gpt2)",
    ("hf", "byte"): "HF tokenizers BpeTrainer, ByteLevel",
    ("yttm", "bpe"): "YouTokenToMe BPE",
    ("sentencepiece", "bpe"): "SentencePiece BPE",
}


def train_once(corpus: str, tool: str, kind: str, out: str) -> None:
    path = str(CORPORA[corpus])
    if tool == "ciyuan":
        from ciyuan import Tokenizer, pre_tokenizers
        from ciyuan.trainers import BpeTrainer

        pre = pre_tokenizers.Split("gpt2") if kind == "byte" else pre_tokenizers.WordPunct()
        Tokenizer.train(path, BpeTrainer(VOCAB, byte_level=kind == "byte"), pre_tokenizer=pre)
    elif tool == "hf":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        tok = Tokenizer(models.BPE())
        if kind == "byte":
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            trainer = trainers.BpeTrainer(vocab_size=VOCAB, show_progress=False,
                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        else:
            tok.pre_tokenizer = pre_tokenizers.Whitespace()
            trainer = trainers.BpeTrainer(vocab_size=VOCAB, show_progress=False)
        tok.train([path], trainer)
    elif tool == "yttm":
        import youtokentome as yttm

        yttm.BPE.train(data=path, vocab_size=VOCAB, model=os.path.join(out, "yttm.model"), n_threads=-1)
    elif tool == "sentencepiece":
        import sentencepiece as spm

        spm.SentencePieceTrainer.train(
            input=path, model_prefix=os.path.join(out, "spm"), vocab_size=VOCAB, model_type="bpe",
            num_threads=os.cpu_count() or 1, minloglevel=2,
            character_coverage=0.9995 if corpus == "zh" else 1.0)
    else:
        raise ValueError(tool)


def worker(corpus: str, tool: str, kind: str) -> None:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        train_once(corpus, tool, kind, out)
        seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "rss_mb": peak_rss_mb()}))


def available(tool: str) -> bool:
    module = {"ciyuan": "ciyuan", "hf": "tokenizers", "yttm": "youtokentome", "sentencepiece": "sentencepiece"}[tool]
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", nargs=3, metavar=("CORPUS", "TOOL", "KIND"), help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", choices=sorted(CORPORA))
    ap.add_argument("--markdown", metavar="FILE", help="append the table to this Markdown file")
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return

    results: Dict[tuple, dict] = {}
    for corpus, tool, kind in CONFIGS:
        if args.only and corpus != args.only:
            continue
        if not CORPORA[corpus].exists():
            print(f"skip {corpus}: {CORPORA[corpus]} not found", file=sys.stderr)
            continue
        if not available(tool):
            print(f"skip {tool}: not installed", file=sys.stderr)
            results[(corpus, tool, kind)] = {"error": "not installed"}
            continue
        runs: List[dict] = []
        try:
            for _ in range(args.repeats):
                runs.append(json.loads(run_worker(Path(__file__), [corpus, tool, kind], {})))
                if runs[0]["seconds"] > 60:
                    break
        except RuntimeError as e:
            print(f"{corpus} {tool} {kind}: failed: {str(e)[-300:]}", file=sys.stderr)
            results[(corpus, tool, kind)] = {"error": "failed"}
            continue
        results[(corpus, tool, kind)] = {
            "seconds": statistics.median(r["seconds"] for r in runs),
            "rss_mb": statistics.median(r["rss_mb"] for r in runs),
            "runs": len(runs),
        }
        r = results[(corpus, tool, kind)]
        print(f"{corpus} {LABELS[(tool, kind)]:45s} {r['seconds']:8.2f} s {r['rss_mb']:8.0f} MB  ({len(runs)} runs)",
              file=sys.stderr)

    lines = [
        f"BPE training, vocabulary {VOCAB:,}; {machine()}.",
        "Wall time (median of runs, file reading included) and peak RSS of a fresh process. "
        "Ratios: the peer's figure over ciyuan's (time: > 1 means ciyuan is faster; RSS: > 1 means ciyuan uses less).",
        "",
        "| corpus | trainer | wall time | peak RSS | time vs ciyuan | RSS vs ciyuan |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for corpus, tool, kind in CONFIGS:
        r = results.get((corpus, tool, kind))
        if r is None:
            continue
        name = f"{CORPORA[corpus].name} ({CORPORA[corpus].stat().st_size / 1e6:.0f} MB)"
        if "error" in r:
            lines.append(f"| {name} | {LABELS[(tool, kind)]} | {r['error']} | | | |")
            continue
        # Compare with ciyuan's same kind; the peers with their own pre-tokenization with ciyuan char.
        base = results.get((corpus, "ciyuan", kind if kind != "bpe" else "char"))
        if tool == "ciyuan" or not base or "error" in base:
            ratio_t = ratio_m = "-"
        else:
            ratio_t = f"{r['seconds'] / base['seconds']:.1f}x"
            ratio_m = f"{r['rss_mb'] / base['rss_mb']:.1f}x"
        lines.append(f"| {name} | {LABELS[(tool, kind)]} | {r['seconds']:.2f} s | {r['rss_mb']:.0f} MB "
                     f"| {ratio_t} | {ratio_m} |")
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "a", encoding="utf-8") as f:
            f.write("\n## BPE training (`benchmarks/train.py`)\n\n" + table + "\n")


if __name__ == "__main__":
    main()
