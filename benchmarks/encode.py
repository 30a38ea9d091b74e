"""Encoding throughput: ciyuan vs tiktoken vs Hugging Face tokenizers, side by side.

The same 10 MB of English (gutenberg_100mb.txt) and 10 MB of Chinese (jinyong_16novels.txt),
cl100k_base and o200k_base built from the files in ../shared/data, 1 and 2 threads. Every
configuration runs in a fresh worker process (for its own peak RSS) and reports the median
of several runs; every library's ids are checked against tiktoken's.

    python benchmarks/encode.py [--repeats 5] [--mb 10]

1 thread: one call on the whole text (ciyuan encode_ids, tiktoken encode_ordinary, HF encode
with RAYON_NUM_THREADS=1 over ~64 KB documents). 2 threads: the text as ~64 KB documents
(ciyuan encode_batch_ids(threads=2), tiktoken encode_ordinary_batch(num_threads=2), HF
encode_batch with 2 Rayon threads).

The single-thread ratio ciyuan / tiktoken is also measured side by side in one process: the
two encode the text in turn, --repeats rounds, and the median of the rounds' ratios is
printed. On a shared machine whose speed drifts from minute to minute this ratio moves much
less than the quotient of two separate workers' medians.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, machine, median_seconds, peak_rss_mb, read_prefix, run_worker  # noqa: E402

CORPORA = {
    "en": SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt",
    "zh": SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt",
}
TIKTOKEN = SHARED_DATA / "tokenizers" / "tiktoken"
ENCODINGS = ("cl100k_base", "o200k_base")
DOC_BYTES = 64 * 1024


def documents(text: str) -> List[str]:
    """The text cut into ~64 KB documents at line ends."""
    docs, cur, size = [], [], 0
    for line in text.splitlines(keepends=True):
        cur.append(line)
        size += len(line)
        if size >= DOC_BYTES:
            docs.append("".join(cur))
            cur, size = [], 0
    if cur:
        docs.append("".join(cur))
    return docs


def digest(ids_lists: List[List[int]]) -> str:
    h = hashlib.sha1()
    for ids in ids_lists:
        h.update(array("I", ids).tobytes())
    return h.hexdigest()[:12]


def tiktoken_encoding(name: str):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS

    return tiktoken.Encoding(name, pat_str=NAMED_PATTERNS[name],
                             mergeable_ranks=load_tiktoken_bpe(str(TIKTOKEN / f"{name}.tiktoken")), special_tokens={})


def hf_tokenizer_json(name: str, path: Path) -> None:
    """Write a Hugging Face tokenizer.json equivalent to the tiktoken encoding: merges recovered
    from the ranks, the pattern as a Split pre-tokenizer, ByteLevel without its regex."""
    from ciyuan.byte_alphabet import bytes_to_printable
    from ciyuan.formats.tiktoken import load_tiktoken_ranks
    from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS
    from ciyuan.reference.bpe import _merge_loop

    ranks = load_tiktoken_ranks(TIKTOKEN / f"{name}.tiktoken")
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda x: x[1]):
        if len(token) == 1:
            continue
        # The two parts BPE joins last when it builds `token` from ranks below its own.
        parts = _merge_loop([bytes([b]) for b in token],
                            lambda a, b, rank=rank: r if (r := ranks.get(a + b)) is not None and r < rank else None)
        assert len(parts) == 2, token
        merges.append(f"{bytes_to_printable(parts[0])} {bytes_to_printable(parts[1])}")
    data = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": NAMED_PATTERNS[name]}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                  "vocab": {bytes_to_printable(t): r for t, r in ranks.items()}, "merges": merges},
    }
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def interleaved_ratio(encoding: str, corpus: str, mb: float, repeats: int) -> float:
    """Median over rounds of tiktoken's time / ciyuan's time, one encode of the text each."""
    import ciyuan

    text = read_prefix(CORPORA[corpus], int(mb * 1_000_000))
    tok = ciyuan.Tokenizer.from_tiktoken(TIKTOKEN / f"{encoding}.tiktoken", encoding)
    enc = tiktoken_encoding(encoding)
    if tok.encode_ids(text) != enc.encode_ordinary(text):
        raise RuntimeError(f"ids differ ({encoding}, {corpus})")
    ratios = []
    for _ in range(repeats):
        t = time.perf_counter()
        enc.encode_ordinary(text)
        theirs = time.perf_counter() - t
        t = time.perf_counter()
        tok.encode_ids(text)
        ratios.append(theirs / (time.perf_counter() - t))
    return statistics.median(ratios)


def worker(lib: str, encoding: str, corpus: str, threads: int, mb: float, repeats: int, hf_json: str) -> None:
    if lib == "interleaved":
        print(json.dumps({"ratio": interleaved_ratio(encoding, corpus, mb, repeats)}))
        return
    text = read_prefix(CORPORA[corpus], int(mb * 1_000_000))
    docs = documents(text)
    nbytes = len(text.encode("utf-8"))
    if lib == "ciyuan":
        import ciyuan

        tok = ciyuan.Tokenizer.from_tiktoken(TIKTOKEN / f"{encoding}.tiktoken", encoding)
        if threads == 1:
            run = lambda: [tok.encode_ids(text)]  # noqa: E731
        else:
            run = lambda: tok.encode_batch_ids(docs, threads=threads)  # noqa: E731
    elif lib == "tiktoken":
        enc = tiktoken_encoding(encoding)
        if threads == 1:
            run = lambda: [enc.encode_ordinary(text)]  # noqa: E731
        else:
            run = lambda: enc.encode_ordinary_batch(docs, num_threads=threads)  # noqa: E731
    else:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(hf_json)
        run = lambda: [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]  # noqa: E731
    seconds, _ = median_seconds(run, repeats)
    rss = peak_rss_mb()
    # The check always encodes the same ~64 KB documents, whatever the timed mode.
    if lib == "ciyuan":
        check = tok.encode_batch_ids(docs)
    elif lib == "tiktoken":
        check = enc.encode_ordinary_batch(docs)
    else:
        check = [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]
    print(json.dumps({"mbps": nbytes / seconds / 1e6, "rss": rss, "digest": digest(check)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--mb", type=float, default=10)
    ap.add_argument("--worker", nargs=7, metavar="ARG", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        lib, encoding, corpus, threads, mb, repeats, hf_json = args.worker
        worker(lib, encoding, corpus, int(threads), float(mb), int(repeats), hf_json)
        return

    for path in list(CORPORA.values()) + [TIKTOKEN]:
        if not path.exists():
            sys.exit(f"missing {path}: the benchmark needs ../shared/data (or CIYUAN_SHARED_DATA)")
    print(f"machine: {machine()}")
    print(f"{args.mb:g} MB per corpus, median of {args.repeats} runs, peak RSS of each worker process\n")
    script = Path(__file__).resolve()
    rows: List[Dict] = []
    side_by_side: Dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for encoding in ENCODINGS:
            hf_json = str(Path(tmp) / f"{encoding}.json")
            hf_tokenizer_json(encoding, Path(hf_json))
            for corpus in CORPORA:
                results = {}
                for lib in ("tiktoken", "ciyuan", "hf"):
                    for threads in (1, 2):
                        env = {"RAYON_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "true"}
                        line = run_worker(script, [lib, encoding, corpus, str(threads), str(args.mb),
                                                   str(args.repeats), hf_json], env)
                        results[(lib, threads)] = json.loads(line)
                pair = json.loads(run_worker(script, ["interleaved", encoding, corpus, "1", str(args.mb),
                                                      str(args.repeats), hf_json], {}))
                side_by_side[(encoding, corpus)] = pair["ratio"]
                print(f"{encoding:12} {corpus}  ciyuan / tiktoken, 1 thread, side by side in one process: "
                      f"{pair['ratio']:.2f}x (median of {args.repeats} rounds)", flush=True)
                base = results[("tiktoken", 1)]
                for (lib, threads), result in results.items():
                    r = {"encoding": encoding, "corpus": corpus, "lib": lib, "threads": threads, **result,
                         "ratio": result["mbps"] / base["mbps"], "same": result["digest"] == base["digest"]}
                    rows.append(r)
                    print(f"{encoding:12} {corpus}  {lib:9} {threads} thread{'s' if threads > 1 else ' '}"
                          f"  {r['mbps']:7.1f} MB/s  {r['ratio']:5.2f}x tiktoken-1t  peak RSS {r['rss']:6.0f} MB"
                          f"  ids {'identical' if r['same'] else 'DIFFERENT'}", flush=True)
    print("\n| encoding | corpus | library | threads | MB/s | × tiktoken (1 thread) | peak RSS (MB) | ids = tiktoken |")
    print("|---|---|---|---|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['encoding']} | {r['corpus']} | {r['lib']} | {r['threads']} | {r['mbps']:.1f} | "
              f"{r['ratio']:.2f} | {r['rss']:.0f} | {'yes' if r['same'] else 'no'} |")
    print("\n| encoding | corpus | ciyuan / tiktoken, 1 thread, side by side |")
    print("|---|---|---:|")
    for (encoding, corpus), ratio in side_by_side.items():
        print(f"| {encoding} | {corpus} | {ratio:.2f}× |")


if __name__ == "__main__":
    main()
