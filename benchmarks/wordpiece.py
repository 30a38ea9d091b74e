"""WordPiece: ciyuan vs Hugging Face tokenizers, side by side.

    python benchmarks/wordpiece.py [--part train|encode|all] [--repeats 3] [--markdown docs/benchmarks.md]

Training (--part train): vocabulary 30,000 on the full gutenberg_100mb.txt (105 MB of English),
BERT's five special tokens, the same pre-tokenization on both sides: ciyuan WordPunct = HF
Whitespace (\\w+|[^\\w\\s]+), and the whole BERT pipeline (BertNormalizer, lowercase, +
BertPreTokenizer: ciyuan Tokenizer.train with WordPieceTrainer vs HF
BertWordPieceTokenizer.train). Each configuration runs in a fresh worker process (so each has
its own peak RSS); the figure is the median wall time of --repeats runs, covering reading the
file, counting words and learning the vocabulary, all cores.
  ciyuan WordPieceTrainer, criterion="likelihood" (the WordPiece score count(ab)/(count(a)count(b)))
  ciyuan WordPieceTrainer, criterion="frequency"  (what Hugging Face's WordPieceTrainer computes)
  HF tokenizers WordPieceTrainer

Encoding (--part encode): the whole BERT pipeline (BertNormalizer, BertPreTokenizer,
WordPiece, [CLS] ... [SEP]) on 10 MB of English (gutenberg_100mb.txt, bert-base-uncased) and
10 MB of Chinese (jinyong_16novels.txt, bert-base-chinese), line by line, 1 and 2 threads:
  ciyuan Tokenizer.from_bert_vocab(...)            vs HF BertWordPieceTokenizer(...)
  "ids":  encode_batch_ids(lines)                  vs [e.ids for e in encode_batch(lines)]
  "full": ids and offsets of encode_batch(lines)   vs the same of HF's encode_batch(lines)
HF runs its batch on RAYON_NUM_THREADS threads; ciyuan on threads=N. Every configuration runs
in a fresh worker process and reports the median of --repeats runs after a warm-up, with the
process's peak RSS; ciyuan's ids are checked against Hugging Face's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, append_markdown, machine, median_seconds, peak_rss_mb, read_prefix, run_worker  # noqa: E402

TRAIN_CORPUS = SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt"
VOCAB = 30000
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TRAIN_CONFIGS = ["ciyuan-likelihood", "ciyuan-frequency", "hf", "ciyuan-bert-likelihood", "ciyuan-bert-frequency",
                 "hf-bert"]
LABELS = {
    "ciyuan-likelihood": 'ciyuan WordPieceTrainer, criterion="likelihood"',
    "ciyuan-frequency": 'ciyuan WordPieceTrainer, criterion="frequency"',
    "hf": "HF tokenizers WordPieceTrainer",
    "ciyuan-bert-likelihood": 'ciyuan Tokenizer.train, BERT pipeline, "likelihood"',
    "ciyuan-bert-frequency": 'ciyuan Tokenizer.train, BERT pipeline, "frequency"',
    "hf-bert": "HF BertWordPieceTokenizer.train",
}


def train_once(config: str) -> int:
    path = str(TRAIN_CORPUS)
    if config.startswith("ciyuan-bert"):
        import ciyuan
        from ciyuan.trainers import WordPieceTrainer

        trainer = WordPieceTrainer(VOCAB, special_tokens=SPECIALS, criterion=config.split("-")[2], lowercase=True)
        return ciyuan.Tokenizer.train(path, trainer).vocab_size
    if config == "hf-bert":
        from tokenizers import BertWordPieceTokenizer

        tok = BertWordPieceTokenizer(lowercase=True)
        tok.train([path], vocab_size=VOCAB, special_tokens=SPECIALS, show_progress=False)
        return tok.get_vocab_size()
    if config.startswith("ciyuan"):
        from ciyuan import pre_tokenizers
        from ciyuan.trainers import WordPieceTrainer

        trainer = WordPieceTrainer(VOCAB, special_tokens=SPECIALS, criterion=config.split("-")[1])
        return len(trainer.train_vocab(path, pre_tokenizers.WordPunct()))
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train([path], trainers.WordPieceTrainer(vocab_size=VOCAB, special_tokens=SPECIALS, show_progress=False))
    return tok.get_vocab_size()


def train_worker(config: str) -> None:
    start = time.perf_counter()
    size = train_once(config)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "rss_mb": peak_rss_mb(), "vocab": size}))


def run_train(repeats: int) -> List[str]:
    if not TRAIN_CORPUS.exists():
        print(f"skip training: {TRAIN_CORPUS} not found", file=sys.stderr)
        return []
    results: Dict[str, dict] = {}
    for config in TRAIN_CONFIGS:
        if config.startswith("hf"):
            try:
                import tokenizers  # noqa: F401
            except ImportError:
                results[config] = {"error": "not installed"}
                continue
        runs = []
        try:
            for _ in range(repeats):
                runs.append(json.loads(run_worker(Path(__file__), ["train", config], {})))
        except RuntimeError as e:
            print(f"{config}: failed: {str(e)[-300:]}", file=sys.stderr)
            results[config] = {"error": "failed"}
            continue
        r = results[config] = {
            "seconds": statistics.median(x["seconds"] for x in runs),
            "rss_mb": statistics.median(x["rss_mb"] for x in runs),
            "runs": [round(x["seconds"], 2) for x in runs],
            "vocab": runs[0]["vocab"],
        }
        print(f"{LABELS[config]:50s} {r['seconds']:7.2f} s {r['rss_mb']:7.0f} MB  runs {r['runs']}", file=sys.stderr)

    lines = [
        f"WordPiece training, vocabulary {VOCAB:,}, on {TRAIN_CORPUS.name} "
        f"({TRAIN_CORPUS.stat().st_size / 1e6:.0f} MB); {machine()}.",
        "Wall time (median of runs, file reading and word counting included) and peak RSS of a fresh "
        "process. Ratios: Hugging Face's figure over ciyuan's (time: > 1 means ciyuan is faster; "
        "RSS: > 1 means ciyuan uses less).",
        "",
        "| trainer | wall time | peak RSS | HF time / this | HF RSS / this |",
        "|---|---:|---:|---:|---:|",
    ]
    for config in TRAIN_CONFIGS:
        r = results.get(config)
        if r is None:
            continue
        if "error" in r:
            lines.append(f"| {LABELS[config]} | {r['error']} | | | |")
            continue
        hf = results.get("hf-bert" if "bert" in config else "hf")
        if config.startswith("hf") or not hf or "error" in hf:
            ratio_t = ratio_m = "-"
        else:
            ratio_t = f"{hf['seconds'] / r['seconds']:.1f}x"
            ratio_m = f"{hf['rss_mb'] / r['rss_mb']:.1f}x"
        lines.append(f"| {LABELS[config]} | {r['seconds']:.2f} s | {r['rss_mb']:.0f} MB | {ratio_t} | {ratio_m} |")
    return lines


ENCODE_CORPORA = {
    "en": (SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt", "bert-base-uncased-vocab.txt"),
    "zh": (SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt", "bert-base-chinese-vocab.txt"),
}
BERT_DIR = SHARED_DATA / "tokenizers" / "bert"


def encode_worker(config: str, mb: float, repeats: int) -> None:
    lib, corpus, threads, mode = config.split(":")
    path, vocab = ENCODE_CORPORA[corpus]
    text = read_prefix(path, int(mb * 1_000_000))
    lines = text.split("\n")
    nbytes = len(text.encode("utf-8"))
    if lib == "ciyuan":
        import ciyuan

        tok = ciyuan.Tokenizer.from_bert_vocab(BERT_DIR / vocab)
        n = int(threads)
        if mode == "ids":
            run = lambda: tok.encode_batch_ids(lines, threads=n)  # noqa: E731
        else:
            run = lambda: [(e.ids, e.offsets) for e in tok.encode_batch(lines, threads=n)]  # noqa: E731
        check = lambda: tok.encode_batch_ids(lines)  # noqa: E731
    else:
        from tokenizers import BertWordPieceTokenizer

        hf = BertWordPieceTokenizer(str(BERT_DIR / vocab), lowercase=True)
        if mode == "ids":
            run = lambda: [e.ids for e in hf.encode_batch(lines)]  # noqa: E731
        else:
            run = lambda: [(e.ids, e.offsets) for e in hf.encode_batch(lines)]  # noqa: E731
        check = lambda: [e.ids for e in hf.encode_batch(lines)]  # noqa: E731
    seconds, runs = median_seconds(run, repeats)
    rss = peak_rss_mb()
    import hashlib
    from array import array

    h = hashlib.sha1()
    for ids in check():
        h.update(array("I", ids).tobytes())
    print(json.dumps({"mbps": nbytes / seconds / 1e6, "rss_mb": rss, "digest": h.hexdigest()[:12],
                      "runs": [round(nbytes / t / 1e6, 1) for t in runs]}))


def run_encode(repeats: int, mb: float) -> List[str]:
    for path, vocab in ENCODE_CORPORA.values():
        if not path.exists() or not (BERT_DIR / vocab).exists():
            print(f"skip encoding: {path} or {BERT_DIR / vocab} not found", file=sys.stderr)
            return []
    rows = []
    for corpus in ENCODE_CORPORA:
        for mode in ("ids", "full"):
            results = {}
            for lib in ("hf", "ciyuan"):
                for threads in (1, 2):
                    config = f"{lib}:{corpus}:{threads}:{mode}"
                    env = {"RAYON_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "true"}
                    r = json.loads(run_worker(Path(__file__), ["encode", config, str(mb), str(repeats)], env))
                    results[(lib, threads)] = r
                    print(f"{config:22s} {r['mbps']:7.1f} MB/s  peak RSS {r['rss_mb']:5.0f} MB  runs {r['runs']}",
                          file=sys.stderr)
            for threads in (1, 2):
                ours, theirs = results[("ciyuan", threads)], results[("hf", threads)]
                rows.append((corpus, mode, threads, ours, theirs, ours["digest"] == theirs["digest"]))
    lines = [
        f"BERT encoding, {mb:g} MB per corpus, line by line, [CLS]/[SEP] added; {machine()}. "
        "MB/s is the median of the runs; peak RSS is the worker process's.",
        "",
        "| corpus | output | threads | ciyuan MB/s | HF MB/s | ciyuan / HF | ciyuan peak RSS | HF peak RSS "
        "| ids identical |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for corpus, mode, threads, ours, theirs, same in rows:
        lines.append(f"| {corpus} | {mode} | {threads} | {ours['mbps']:.1f} | {theirs['mbps']:.1f} | "
                     f"{ours['mbps'] / theirs['mbps']:.1f}x | {ours['rss_mb']:.0f} MB | {theirs['rss_mb']:.0f} MB | "
                     f"{'yes' if same else 'NO'} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    ap.add_argument("--part", choices=["train", "encode", "all"], default="all")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--mb", type=float, default=10, help="MB of each corpus to encode (default 10)")
    ap.add_argument("--markdown", metavar="FILE", help="append the tables to this Markdown file")
    args = ap.parse_args()
    if args.worker:
        part, config, *rest = args.worker
        if part == "train":
            train_worker(config)
        else:
            encode_worker(config, float(rest[0]), int(rest[1]))
        return

    sections = []
    if args.part in ("train", "all"):
        lines = run_train(args.repeats)
        if lines:
            sections.append(("WordPiece training (`benchmarks/wordpiece.py --part train`)", lines))
    if args.part in ("encode", "all"):
        lines = run_encode(args.repeats, args.mb)
        if lines:
            sections.append(("BERT encoding (`benchmarks/wordpiece.py --part encode`)", lines))
    for _title, lines in sections:
        print("\n".join(lines))
    append_markdown(args.markdown, sections)


if __name__ == "__main__":
    main()
