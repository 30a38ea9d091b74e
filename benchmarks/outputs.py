"""Outputs that skip Python ints: `count_tokens` and `encode_ids(as_array=True)` against
`len(encode_ids(...))`, and the batch forms (`count_tokens_batch`, `encode_batch_ids(as_array=True)`
giving flat ids + offsets) against `encode_batch_ids` lists, side by side in one process,
alternating rounds, medians; tiktoken and the peers' counting or array calls beside them.

    python benchmarks/outputs.py                              # cl100k, English and Chinese
    python benchmarks/outputs.py --encodings o200k_base --mb 2 --rounds 9 --threads 1 2

Every call of a round gets a slice of the corpus of its own (--mb MB, cut at a line end), so no
call finds its text in a cache a previous call filled; the order of the calls rotates each
round. The results are checked (counts and arrays equal to the list's). Printed: MB/s of input
text (median of rounds); the ratio of `len(encode_ids(...))`'s time to the call's, taken per
round, median of rounds (> 1: faster than building the list); and the peak RSS of a fresh
process that loads the one library it needs and the text, then makes the call once (VmHWM).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, machine  # noqa: E402
from decode import vm_hwm_mb, worker_peak  # noqa: E402

CORPORA = {
    "English": SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt",
    "Chinese": SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt",
}
TIKTOKEN_FILES = SHARED_DATA / "tokenizers" / "tiktoken"

Call = Callable[[str], Any]  # one text -> a result
BatchCall = Callable[[List[str]], Any]
LIST_SINGLE = "len(encode_ids(text))"
LIST_BATCH = "[len(x) for x in encode_batch_ids(docs)]"


def slices(path: Path, mb: float, count: int) -> List[str]:
    """`count` consecutive slices of about `mb` MB of the file, each cut at a line end."""
    size = int(mb * 1e6)
    with open(path, "rb") as f:
        data = f.read(size * count + 1_000_000)
    out, at = [], 0
    for _ in range(count):
        end = data.rfind(b"\n", at, at + size) + 1 or at + size
        out.append(data[at:end].decode("utf-8", "replace"))
        at = end
    return out


def time_rows(calls: Dict[str, Any], texts: List[Any], rounds: int) -> Dict[str, List[float]]:
    """Seconds per call per round; call k of round r (in the rotated order) gets texts[r * K + k]."""
    names = list(calls)
    times: Dict[str, List[float]] = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for k, name in enumerate(order):
            text = texts[(r * len(names) + k) % len(texts)]
            start = time.perf_counter()
            calls[name](text)
            times[name].append(time.perf_counter() - start)
    return times


def working(calls: Dict[str, Any], probe: Any) -> Dict[str, Any]:
    """The calls that run on `probe` (a peer that fails there is named and left out)."""
    out = {}
    for name, call in calls.items():
        try:
            call(probe)
        except BaseException as e:  # noqa: BLE001 - pyo3 panics are BaseExceptions
            if isinstance(e, KeyboardInterrupt):
                raise
            print(f"  ({name} left out: it fails on this text: {type(e).__name__}: {str(e)[:100]})")
            continue
        out[name] = call
    return out


def report(title: str, calls: Dict[str, Any], times: Dict[str, List[float]], mb: float, baseline: str,
           peak: Callable[[str], float]) -> None:
    print(f"\n{title}")
    print(f"  {'call':<44}{'MB/s':>8}{'vs list':>9}{'peak RSS':>10}")
    for name in calls:
        mbps = mb / statistics.median(times[name])
        ratio = statistics.median(b / t for b, t in zip(times[baseline], times[name]))
        print(f"  {name:<44}{mbps:>8.1f}{ratio:>8.2f}x{peak(name):>7.0f} MB")


def single_calls(tok: Any, peers: Dict[str, Any]) -> Dict[str, Call]:
    """The one-text calls: ciyuan's list, count and array forms, then the peers'."""
    calls: Dict[str, Call] = {
        "len(encode_ids(text))": lambda t: len(tok.encode_ids(t, disallowed_special=())),
        "count_tokens(text)": lambda t: tok.count_tokens(t, disallowed_special=()),
        "encode_ids(text, as_array=True)": lambda t: tok.encode_ids(t, disallowed_special=(), as_array=True),
    }
    enc, tk = peers.get("tiktoken"), peers.get("tokie")
    if enc is not None:
        calls["tiktoken len(encode(text))"] = lambda t: len(enc.encode(t, disallowed_special=()))
        calls["tiktoken encode_to_numpy(text)"] = lambda t: enc.encode_to_numpy(t, disallowed_special=())
    if tk is not None:
        calls["tokie count_tokens(text)"] = lambda t: tk.count_tokens(t)
    return calls


def batch_calls(tok: Any, peers: Dict[str, Any], threads: int) -> Dict[str, BatchCall]:
    """The batch calls on `threads` threads: lists, counts, flat arrays; then the peers'."""
    calls: Dict[str, BatchCall] = {
        LIST_BATCH: lambda d: [len(x) for x in tok.encode_batch_ids(d, threads=threads, disallowed_special=())],
        "count_tokens_batch(docs)": lambda d: tok.count_tokens_batch(d, threads=threads, disallowed_special=()),
        "encode_batch_ids(docs, as_array=True)":
            lambda d: tok.encode_batch_ids(d, threads=threads, disallowed_special=(), as_array=True),
        "encode_batch_ids(docs) (lists)": lambda d: tok.encode_batch_ids(d, threads=threads, disallowed_special=()),
    }
    enc, tk = peers.get("tiktoken"), peers.get("tokie")
    if enc is not None:
        calls["tiktoken encode_batch(docs) (lists)"] = \
            lambda d: enc.encode_batch(d, num_threads=threads, disallowed_special=())
    if tk is not None and threads > 1:
        calls["tokie count_tokens_batch(docs) (own pool)"] = lambda d: tk.count_tokens_batch(d)
    return calls


def load_peers(encoding: str, ranks: Path, workdir: Path, only: Optional[str] = None) -> Dict[str, Any]:
    """tiktoken and tokie for `encoding` (the ones installed; tokie from the tokenizer.json the
    caller wrote in `workdir`); `only`: that one alone."""
    peers: Dict[str, Any] = {}
    if only in (None, "tiktoken"):
        try:
            import tiktoken
            from tiktoken.load import load_tiktoken_bpe

            from ciyuan.formats.tiktoken import SPECIAL_TOKENS
            from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS
            peers["tiktoken"] = tiktoken.Encoding(encoding, pat_str=NAMED_PATTERNS[encoding],
                                                  mergeable_ranks=load_tiktoken_bpe(str(ranks)),
                                                  special_tokens=SPECIAL_TOKENS[encoding])
        except ImportError:
            pass
    if only in (None, "tokie"):
        try:
            import tokie
            peers["tokie"] = tokie.Tokenizer.from_json(str(workdir / encoding / "tokenizer.json"))
        except ImportError:
            pass
    return peers


def documents(text: str, kb: int) -> List[str]:
    size = kb * 1000
    return [text[i:i + size] for i in range(0, len(text), size)]


def worker(spec: Dict[str, Any]) -> None:
    """One call in this fresh process (only the library it needs loaded); prints the peak RSS."""
    import ciyuan

    encoding, name = spec["encoding"], spec["call"]
    ranks = TIKTOKEN_FILES / f"{encoding}.tiktoken"
    library = name.split(" ")[0] if name.startswith(("tiktoken", "tokie")) else "ciyuan"
    tok = ciyuan.Tokenizer.from_tiktoken(ranks, encoding) if library == "ciyuan" else None
    peers = {} if library == "ciyuan" else load_peers(encoding, ranks, Path(spec["workdir"]), only=library)
    text = Path(spec["text"]).read_text(encoding="utf-8")
    if spec["threads"]:
        batch_calls(tok, peers, spec["threads"])[name](documents(text, spec["doc_kb"]))
    else:
        single_calls(tok, peers)[name](text)
    print(vm_hwm_mb())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encodings", nargs="+", default=["cl100k_base"])
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=list(CORPORA))
    parser.add_argument("--mb", type=float, default=1.0, help="MB of text per call (default 1)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="threads of the batch rows")
    parser.add_argument("--doc-kb", type=int, default=64,
                        help="document size of the batch rows (thousands of characters)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-RSS workers")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return

    import numpy as np

    import ciyuan

    print(f"machine: {machine()}")
    print(f"{args.mb} MB of text per call, rounds: {args.rounds}")
    workdir = Path(tempfile.mkdtemp(prefix="ciyuan-outputs-"))
    script = Path(__file__).resolve()
    for encoding in args.encodings:
        ranks = TIKTOKEN_FILES / f"{encoding}.tiktoken"
        tok = ciyuan.Tokenizer.from_tiktoken(ranks, encoding)
        (workdir / encoding).mkdir(parents=True, exist_ok=True)
        tok.save(str(workdir / encoding / "tokenizer.json"))  # tokie reads Hugging Face's tokenizer.json only
        peers = load_peers(encoding, ranks, workdir)
        for corpus in args.corpora:
            calls = single_calls(tok, peers)
            texts = slices(CORPORA[corpus], args.mb, len(calls) * 2 + 1)
            probe = texts[-1]
            probe_file = workdir / f"{encoding}-{corpus}.txt"
            probe_file.write_text(probe, encoding="utf-8")

            def peak(threads: int, encoding: str = encoding, probe_file: Path = probe_file) -> Callable[[str], float]:
                def measure(name: str) -> float:
                    if args.no_memory:
                        return float("nan")
                    spec = {"encoding": encoding, "text": str(probe_file), "call": name, "threads": threads,
                            "doc_kb": args.doc_kb, "workdir": str(workdir)}
                    return worker_peak(script, [json.dumps(spec)])
                return measure

            calls = working(calls, probe)
            want = tok.encode_ids(probe, disallowed_special=())
            assert tok.count_tokens(probe, disallowed_special=()) == len(want)
            assert np.array_equal(tok.encode_ids(probe, disallowed_special=(), as_array=True), want)
            times = time_rows(calls, texts[:-1], args.rounds)
            report(f"{encoding} / {corpus}: one text of {args.mb} MB, one thread", calls, times, args.mb,
                   LIST_SINGLE, peak(0))
            doc_texts = [documents(t, args.doc_kb) for t in texts]
            probe_docs = doc_texts[-1]
            lists = tok.encode_batch_ids(probe_docs, disallowed_special=())
            flat, offsets = tok.encode_batch_ids(probe_docs, disallowed_special=(), as_array=True)
            assert tok.count_tokens_batch(probe_docs, disallowed_special=()) == [len(x) for x in lists]
            assert flat.tolist() == [i for x in lists for i in x] and offsets.tolist()[-1] == len(flat)
            for threads in args.threads:
                bcalls = working(batch_calls(tok, peers, threads), probe_docs)
                times = time_rows(bcalls, doc_texts[:-1], args.rounds)
                report(f"{encoding} / {corpus}: {args.mb} MB as {len(probe_docs)} documents of "
                       f"{args.doc_kb}k characters, {threads} thread(s)", bcalls, times, args.mb, LIST_BATCH,
                       peak(threads))
    print("\nvs list: the list call's time over this call's, per round, median (> 1: faster than building the "
          "ids as Python ints). peak RSS: a fresh process that loads the one library the call needs and the "
          "text, then makes the call once.")


if __name__ == "__main__":
    main()
