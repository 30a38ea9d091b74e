"""The founding documents' systems (``ciyuan.textbook``, ``ciyuan zh-bpe``) against their
plain-Python algorithms (``ciyuan.reference``), side by side.

One function per document; ``--only`` runs one of them, the default runs all.

    python benchmarks/textbook.py [--rounds 3] [--only 000|002] [--en-vocab 600 2000] [--zh-kb 300]
                                  [--markdown FILE]

Every timed run is a fresh worker process (its own peak RSS); rounds alternate the two sides
(ciyuan first, then Python first, ...) so that the drift of a shared machine falls on both
alike. Printed: the median time of each side, the median of the per-round ratios (Python's time
over ciyuan's: > 1 means ciyuan is faster), and the median peak RSS. The two sides' outputs are
checked to be identical, byte for byte.

Document 000 (``BPETokenizer``): ``fit`` on the lines of the first 1 MB of tinyshakespeare.txt
(with each --en-vocab) and ``tokenize`` of the same text, against ``ciyuan.reference.textbook_bpe``
(the document's algorithm: every pair recounted at each step), words counted the same way on
both sides (Python's ``re``).

Document 002 (the Chinese BPE tool): ``ciyuan zh-bpe train --vocab_size 10000`` (the document's
real run, which took it about an hour) and ``ciyuan zh-bpe apply`` (an hour and a half) on
jinyong_16novels.txt, prepared as the tool's data is written: its full-width commas '，' become
ASCII ',' (the tool cuts clauses at ',' only); nothing else changes. ciyuan's figure is the
command run in-process (``ciyuan.cli.main``; the interpreter's start-up and imports are not
timed; reading and writing the files are). Python's: ``ciyuan.reference.zh_bpe`` -
``train_merges_incremental`` (pair counts and the clauses of each pair updated after each merge,
the best pair found by looking at every pair, as the document's loop does) and ``apply_text``
(each unit in turn over each line, jumping with ``str.find``) - on the first --zh-kb KB, where its
training finishes in a couple of minutes; on the whole corpus ciyuan trains alone (Python would
take hours) and both apply. Apply uses the units ciyuan trained on the same text (Python's
training is checked to give the same file on the slice).
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
from typing import Callable, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, machine, peak_rss_mb, read_prefix, run_worker  # noqa: E402

ZH_CORPUS = SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt"
ZH_STEPS = 10000  # --vocab_size of the document's real run


def digest(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()[:12]


# -- document 000: BPETokenizer ---------------------------------------------------------------------------

EN_CORPUS = SHARED_DATA / "corpora" / "en" / "tinyshakespeare.txt"
EN_BYTES = 1_000_000


def worker_000(args: List[str]) -> dict:
    """One timed run: ``SIDE VOCAB_SIZE TEXT OUT``: fit on TEXT's lines (vocab.txt to OUT), then
    tokenize the whole TEXT; the tokens' digest goes with the vocabulary's."""
    side, vocab_size, text, out = args
    lines = Path(text).read_text(encoding="utf-8").split("\n")
    if side == "ciyuan":
        from ciyuan.textbook import BPETokenizer

        start = time.perf_counter()
        bpe = BPETokenizer(int(vocab_size))
        bpe.fit(lines, max_steps=10000, out_fn=out)
        fit_seconds = time.perf_counter() - start
        start = time.perf_counter()
        tokens = bpe.tokenize("\n".join(lines))
    else:
        from collections import Counter

        from ciyuan.reference import textbook_bpe as ref
        from ciyuan.textbook import wordpunct_tokenize  # the document's basic tokenizer (Python's re)

        start = time.perf_counter()
        counts: Counter = Counter()
        for line in lines:
            counts.update(wordpunct_tokenize(line.lower()))
        vocab, _ = ref.fit(counts.items(), int(vocab_size), 10000)
        Path(out).write_text("\n".join(vocab), encoding="utf-8")
        fit_seconds = time.perf_counter() - start
        start = time.perf_counter()
        tokens = ref.tokenize(wordpunct_tokenize("\n".join(lines).lower()), vocab)
    tokenize_seconds = time.perf_counter() - start
    token_digest = hashlib.sha1("\x00".join(tokens).encode("utf-8")).hexdigest()[:12]
    return {"fit": fit_seconds, "tokenize": tokenize_seconds, "rss_mb": peak_rss_mb(),
            "digest": digest(Path(out)) + "/" + token_digest, "tokens": len(tokens),
            "vocab": Path(out).read_text(encoding="utf-8").count("\n") + 1}


def bench_000(args: argparse.Namespace) -> List[str]:
    """BPETokenizer.fit + tokenize vs the plain-Python algorithm on 1 MB of English."""
    if not EN_CORPUS.exists():
        print(f"skip 000: {EN_CORPUS} not found", file=sys.stderr)
        return []
    rows = []
    with tempfile.TemporaryDirectory(prefix="ciyuan-bench-000-") as d:
        text = Path(d) / "en.txt"
        text.write_text(read_prefix(EN_CORPUS, EN_BYTES), encoding="utf-8")
        for vocab_size in args.en_vocab:
            runs: Dict[str, List[dict]] = {"ciyuan": [], "python": []}
            for r in range(args.rounds):
                for side in ("ciyuan", "python") if r % 2 == 0 else ("python", "ciyuan"):
                    out = Path(d) / f"vocab.{side}.txt"
                    result = json.loads(run_worker(Path(__file__), ["000", side, str(vocab_size), str(text), str(out)],
                                                   {}))
                    runs[side].append(result)
                    print(f"000 vocab_size {vocab_size}, {side}: fit {result['fit']:.3f} s, tokenize "
                          f"{result['tokenize']:.3f} s, {result['rss_mb']:.0f} MB", file=sys.stderr, flush=True)
            c, p = runs["ciyuan"], runs["python"]
            if len({x["digest"] for x in c + p}) != 1:
                raise RuntimeError(f"000 vocab_size {vocab_size}: ciyuan's and Python's vocab.txt or tokens differ")
            for step in ("fit", "tokenize"):
                ratio = statistics.median(b[step] / a[step] for a, b in zip(c, p))
                what = f"{c[0]['vocab']:,} lines of vocab.txt" if step == "fit" else f"{c[0]['tokens']:,} tokens"
                rows.append(f"| vocab_size {vocab_size} | {step} ({what}) "
                            f"| {statistics.median(x[step] for x in c):.3f} s "
                            f"| {statistics.median(x['rss_mb'] for x in c):.0f} MB "
                            f"| {statistics.median(x[step] for x in p):.2f} s "
                            f"| {statistics.median(x['rss_mb'] for x in p):.0f} MB | {ratio:,.0f}x |")
    return [
        f"Document 000, `BPETokenizer`: `fit` (max_steps 10000) and `tokenize` on the first {EN_BYTES / 1e6:.0f} MB "
        f"of tinyshakespeare.txt vs the plain-Python algorithm (ciyuan.reference.textbook_bpe: a full recount "
        f"per step); {machine()}. Median of {args.rounds} rounds (fresh processes, alternating); vocab.txt and "
        f"tokens identical. Peak RSS is the process's (fit and tokenize).",
        "",
        "| run | step | ciyuan | ciyuan peak RSS | plain Python | Python peak RSS | Python / ciyuan |",
        "|---|---|---:|---:|---:|---:|---:|",
        *rows,
    ]


# -- document 002: the Chinese BPE tool ----------------------------------------------------------------


def worker_002(args: List[str]) -> dict:
    """One timed step: ``SIDE STEP TEXT VOCAB OUT`` (side ciyuan|python, step train|apply).
    train learns from TEXT into VOCAB; apply cuts TEXT with VOCAB's units into OUT."""
    side, step, text, vocab, out = args
    if side == "ciyuan":
        import ciyuan.textbook.zh_bpe  # noqa: F401 (imported before the clock starts)
        from ciyuan.cli import main

        if step == "train":
            argv = ["train", "--train_text", text, "--save_vocab", vocab, "--vocab_size", str(ZH_STEPS)]
        else:
            argv = ["apply", "--test_text", text, "--vocab_filename", vocab, "--answer_filename", out]
        start = time.perf_counter()
        if main(["zh-bpe", *argv]) != 0:
            raise RuntimeError(f"ciyuan zh-bpe {step} failed")
        seconds = time.perf_counter() - start
    else:
        from ciyuan.reference import zh_bpe as ref

        start = time.perf_counter()
        data = Path(text).read_text(encoding="utf-8")
        if step == "train":
            merges, _ = ref.train_merges_incremental(ref.clause_counts(data), ZH_STEPS, 2)
            Path(vocab).write_text("".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8")
        else:
            units = ref.units_from_lines(Path(vocab).read_text(encoding="utf-8").split("\n"))
            Path(out).write_text(ref.apply_text(data, units), encoding="utf-8")
        seconds = time.perf_counter() - start
    result = Path(vocab if step == "train" else out)
    lines = result.read_text(encoding="utf-8").count("\n")
    return {"seconds": seconds, "rss_mb": peak_rss_mb(), "digest": digest(result), "lines": lines}


def bench_002(args: argparse.Namespace) -> List[str]:
    """ciyuan zh-bpe train + apply vs the plain-Python tool: a slice side by side, the whole
    corpus with ciyuan alone. Returns the Markdown table."""
    if not ZH_CORPUS.exists():
        print(f"skip 002: {ZH_CORPUS} not found", file=sys.stderr)
        return []
    with tempfile.TemporaryDirectory(prefix="ciyuan-bench-002-") as d:
        return _bench_002(args, Path(d))


def _bench_002(args: argparse.Namespace, tmp: Path) -> List[str]:
    whole = tmp / "whole.txt"
    whole.write_text(ZH_CORPUS.read_text(encoding="utf-8").replace("，", ","), encoding="utf-8")
    part = tmp / "slice.txt"
    part.write_text(read_prefix(whole, args.zh_kb * 1000), encoding="utf-8")
    both, alone = ("ciyuan", "python"), ("ciyuan",)
    # (text, name, the sides of train, of apply): Python's training takes minutes on the slice
    # and would take hours on the whole corpus; its apply takes about a minute and a half there.
    corpora = [(part, f"jinyong_16novels.txt, first {args.zh_kb} KB", both, both),
               (whole, f"jinyong_16novels.txt, whole ({whole.stat().st_size / 1e6:.0f} MB)", alone,
                alone if args.zh_no_whole_python else both)]
    rows = []
    for text, name, *step_sides in corpora:
        runs: Dict[tuple, List[dict]] = {}
        for r in range(args.rounds):
            for step, sides in zip(("train", "apply"), step_sides):
                for side in sides if r % 2 == 0 else sides[::-1]:
                    # Apply always reads ciyuan's vocabulary (the two are checked to be identical).
                    vocab = tmp / f"{text.stem}.{side if step == 'train' else 'ciyuan'}.vocab.txt"
                    out = tmp / f"{text.stem}.{side}.answer.txt"
                    result = json.loads(run_worker(Path(__file__), ["002", side, step, str(text), str(vocab),
                                                                    str(out)], {}))
                    runs.setdefault((step, side), []).append(result)
                    print(f"002 {name}, {step}, {side}: {result['seconds']:.3f} s, {result['rss_mb']:.0f} MB, "
                          f"{result['lines']} lines", file=sys.stderr, flush=True)
        for step in ("train", "apply"):
            c = runs[(step, "ciyuan")]
            what = f"{c[0]['lines']:,} merges" if step == "train" else f"{c[0]['lines']:,} lines"
            row = (f"| {name} | zh-bpe {step} ({what}) | {statistics.median(x['seconds'] for x in c):.3f} s "
                   f"| {statistics.median(x['rss_mb'] for x in c):.0f} MB")
            p = runs.get((step, "python"))
            if p is None:
                rows.append(row + " | - | - | - |")
                continue
            same = {x["digest"] for x in c} == {x["digest"] for x in p} and len({x["digest"] for x in c}) == 1
            if not same:
                raise RuntimeError(f"002 {step}: ciyuan's and Python's outputs differ")
            ratio = statistics.median(b["seconds"] / a["seconds"] for a, b in zip(c, p))
            digits = 0 if ratio >= 10 else 1
            rows.append(row + f" | {statistics.median(x['seconds'] for x in p):.2f} s "
                        f"| {statistics.median(x['rss_mb'] for x in p):.0f} MB | {ratio:,.{digits}f}x |")
    return [
        f"Document 002, the Chinese BPE tool: `ciyuan zh-bpe` vs the plain-Python tool "
        f"(ciyuan.reference.zh_bpe), --vocab_size {ZH_STEPS}, min_frequency 2; '，' written ','; "
        f"{machine()}. Median of {args.rounds} rounds (fresh processes, alternating); outputs identical.",
        "",
        "| text | step | ciyuan | ciyuan peak RSS | plain Python | Python peak RSS | Python / ciyuan |",
        "|---|---|---:|---:|---:|---:|---:|",
        *rows,
    ]


# -- the documents --------------------------------------------------------------------------------------

DOCUMENTS: Dict[str, Callable[[argparse.Namespace], List[str]]] = {"000": bench_000, "002": bench_002}
WORKERS: Dict[str, Callable[[List[str]], dict]] = {"000": worker_000, "002": worker_002}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--only", choices=sorted(DOCUMENTS), help="one document (default: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--en-vocab", type=int, nargs="+", default=[600, 2000], metavar="N",
                    help="document 000: the vocab_size values to fit (default 600 2000)")
    ap.add_argument("--zh-kb", type=int, default=300, help="document 002: the slice both sides run on (KB)")
    ap.add_argument("--zh-no-whole-python", action="store_true",
                    help="document 002: skip Python's apply on the whole corpus (about 90 s a round)")
    ap.add_argument("--markdown", metavar="FILE", help="append the tables to this Markdown file")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(WORKERS[args.worker[0]](args.worker[1:])))
        return
    tables = []
    for doc, bench in DOCUMENTS.items():
        if args.only and doc != args.only:
            continue
        table = bench(args)
        if table:
            print("\n".join(table) + "\n", flush=True)
            tables.append("\n".join(table))
    if args.markdown and tables:
        with open(args.markdown, "a", encoding="utf-8") as f:
            f.write("\n## The founding documents (`benchmarks/textbook.py`)\n\n" + "\n\n".join(tables) + "\n")


if __name__ == "__main__":
    main()
