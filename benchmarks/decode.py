"""Decoding ids back to bytes and text: ciyuan side by side with tiktoken and the other encoders
that decode, in one process, alternating rounds, medians.

    python benchmarks/decode.py                      # cl100k, English and Chinese, ~1M ids
    python benchmarks/decode.py --encodings cl100k_base o200k_base --ids 1000000 --rounds 9

For each (encoding x corpus): about --ids ids (the corpus's first tokens, encoded once by ciyuan
and checked against tiktoken's own encode), then every library decodes that same list of Python
ints (`decode_bytes` where it has one, and `decode` to str), each round in a rotated order. The
output of every library is checked against tiktoken's once. ciyuan is timed also on a numpy
uint32 array of the ids (its `as_array` output, read without a Python int per id), and so is
gigatoken, which also takes numpy arrays. A batch row decodes the ids cut into documents of
about 64 KB of text on --threads threads (`decode_bytes_batch` / `decode_batch`).

Printed per library: MB/s of decoded bytes (median of rounds); the ratio of ciyuan's best input
form to it, taken per round, median of rounds; and the peak RSS of a fresh process that loads
that library alone (and the ids) and makes the call once (Linux's VmHWM).

Peers (pip install into the benchmark's environment; missing ones are skipped): tiktoken,
gigatoken, tokie (through the tokenizer.json ciyuan writes), fastokens, riptoken, splintr-rs,
kitoken, rs-bpe and bpe-openai (these two bring their own copies of cl100k/o200k: checked equal).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, machine, peak_rss_mb, read_prefix  # noqa: E402

CORPORA = {
    "English": SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt",
    "Chinese": SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt",
}
TIKTOKEN_FILES = SHARED_DATA / "tokenizers" / "tiktoken"

Fn = Callable[[], Any]
DOC_IDS = 16_000  # ids per document of the batch rows: ~64 KB of English text


# -- memory --------------------------------------------------------------------------------------

def worker_peak(script: Path, args: List[str]) -> float:
    """The peak RSS (MB) a fresh `script --worker args` prints: one library, one call."""
    out = subprocess.run([sys.executable, str(script), "--worker", *args], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"  (peak RSS worker {args} failed: {out.stderr.strip().splitlines()[-1:]})")
        return float("nan")
    return float(out.stdout.strip().splitlines()[-1])


# -- the libraries -------------------------------------------------------------------------------

def peers(encoding: str, ranks_path: Path, workdir: Path, only: Optional[str] = None) -> Dict[str, Any]:
    """Each installed peer's encoder for `encoding`, built from the same ranks file (tokie from
    the tokenizer.json the caller wrote in `workdir`); `only`: that one alone."""
    from ciyuan.formats.tiktoken import SPECIAL_TOKENS
    from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS

    pattern = NAMED_PATTERNS[encoding]
    specials = SPECIAL_TOKENS[encoding]
    out: Dict[str, Any] = {}

    def attempt(name: str, make: Callable[[], Any]) -> None:
        if only is not None and name != only:
            return
        try:
            out[name] = make()
        except ImportError:
            pass
        except Exception as e:  # noqa: BLE001 - a peer that cannot load this encoding is reported
            print(f"  ({name} skipped: {type(e).__name__}: {str(e)[:120]})")

    def tiktoken_enc() -> Any:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
        return tiktoken.Encoding(encoding, pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(str(ranks_path)),
                                 special_tokens=specials)

    def gigatoken_tok() -> Any:
        import gigatoken
        return gigatoken.Tokenizer.from_tiktoken(str(ranks_path), special_tokens=specials)

    def tokie_tok() -> Any:
        import tokie
        return tokie.Tokenizer.from_json(str(workdir / encoding / "tokenizer.json"))

    def fastokens_tok() -> Any:
        import fastokens
        return fastokens.Tokenizer.from_tiktoken(str(ranks_path), pattern=pattern, special_tokens=specials)

    def riptoken_core() -> Any:
        import riptoken
        from tiktoken.load import load_tiktoken_bpe
        return riptoken.CoreBPE(load_tiktoken_bpe(str(ranks_path)), specials, pattern)

    def splintr_tok() -> Any:
        import splintr
        splintr_pattern = {"cl100k_base": "CL100K_BASE_PATTERN", "o200k_base": "O200K_BASE_PATTERN"}[encoding]
        return splintr.Tokenizer(str(ranks_path), getattr(splintr, splintr_pattern), specials)

    def kitoken_tok() -> Any:
        from kitoken import Kitoken
        return Kitoken.from_tiktoken_file(str(ranks_path))

    def rs_bpe_tok() -> Any:
        from rs_bpe import openai
        return getattr(openai, encoding)()

    def bpe_openai_enc() -> Any:
        import bpe_openai
        return bpe_openai.build_encoding_from_name(encoding)

    attempt("tiktoken", tiktoken_enc)
    attempt("gigatoken", gigatoken_tok)
    attempt("tokie", tokie_tok)
    attempt("fastokens", fastokens_tok)
    attempt("riptoken", riptoken_core)
    attempt("splintr", splintr_tok)
    attempt("kitoken", kitoken_tok)
    attempt("rs-bpe", rs_bpe_tok)
    attempt("bpe-openai", bpe_openai_enc)
    return out


def single_calls(tok: Any, libs: Dict[str, Any], ids: List[int], arr: Any, to_str: bool) -> Dict[str, Fn]:
    """name -> a call that decodes the ids once (to bytes, or to str with `to_str`)."""
    calls: Dict[str, Fn] = {}
    if to_str:
        calls["ciyuan (list)"] = lambda: tok.decode(ids)
        calls["ciyuan (numpy)"] = lambda: tok.decode(arr)
    else:
        calls["ciyuan (list)"] = lambda: tok.decode_bytes(ids)
        calls["ciyuan (numpy)"] = lambda: tok.decode_bytes(arr)
    for name, lib in libs.items():
        if name in ("tiktoken", "riptoken", "splintr", "bpe-openai"):
            calls[name] = (lambda lib=lib: lib.decode(ids)) if to_str else (lambda lib=lib: lib.decode_bytes(ids))
        elif name == "gigatoken":  # Tokenizer.decode gives bytes
            if to_str:
                calls[name] = lambda lib=lib: lib.decode(ids).decode("utf-8", "replace")
                calls["gigatoken (numpy)"] = lambda lib=lib: lib.decode(arr).decode("utf-8", "replace")
            else:
                calls[name] = lambda lib=lib: lib.decode(ids)
                calls["gigatoken (numpy)"] = lambda lib=lib: lib.decode(arr)
        elif name == "tokie":
            calls[name] = (lambda lib=lib: lib.decode(ids)) if to_str else (lambda lib=lib: lib.decode_bytes(ids))
        elif name == "kitoken":  # decode gives bytes
            calls[name] = ((lambda lib=lib: lib.decode(ids).decode("utf-8", "replace")) if to_str
                           else (lambda lib=lib: lib.decode(ids)))
        elif name in ("fastokens", "rs-bpe") and to_str:  # str only
            calls[name] = lambda lib=lib: lib.decode(ids)
    return calls


def batch_calls(tok: Any, libs: Dict[str, Any], docs: List[List[int]], arrays: List[Any],
                threads: int) -> Dict[str, Fn]:
    """name -> a call that decodes every document to str on `threads` threads."""
    calls: Dict[str, Fn] = {
        "ciyuan (lists)": lambda: tok.decode_batch(docs, threads=threads),
        "ciyuan (numpy)": lambda: tok.decode_batch(arrays, threads=threads),
    }
    for name, lib in libs.items():
        if name in ("tiktoken", "bpe-openai"):
            calls[name] = lambda lib=lib: lib.decode_batch(docs, num_threads=threads)
        elif name == "gigatoken":
            compat = lib.as_tiktoken()
            calls[name] = lambda compat=compat: compat.decode_batch(docs, num_threads=threads)
        elif name in ("tokie", "fastokens", "splintr"):
            calls[name] = lambda lib=lib: lib.decode_batch(docs)  # their own thread pools
        elif name == "rs-bpe":
            from rs_bpe.bpe import openai as rs_openai  # the native module (rs_bpe.openai is a wrapper)
            ParallelOptions = rs_openai.ParallelOptions
            options = ParallelOptions(1, 1, threads)  # min_batch_size, chunk_size, max_threads
            calls[name] = lambda lib=lib, options=options: lib.decode_batch_parallel(docs, options)
    return calls


# -- timing --------------------------------------------------------------------------------------

def as_text(x: Any) -> Any:
    if isinstance(x, list):
        return [as_text(i) for i in x]
    return x.decode("utf-8", "replace") if isinstance(x, (bytes, bytearray)) else x


def run_rows(calls: Dict[str, Fn], reference: Any, rounds: int, nbytes: int, ours: Tuple[str, ...],
             peak: Callable[[str], float]) -> List[Tuple[str, float, Optional[float], Optional[float], float, bool]]:
    """(name, MB/s, ciyuan's best / it, ciyuan's best / tiktoken for ciyuan rows, peak RSS MB,
    output matches) per library: alternating rounds, medians; peak(name) measures the RSS."""
    matches = {}
    for name, fn in list(calls.items()):
        try:
            matches[name] = as_text(fn()) == reference
        except BaseException as e:  # noqa: BLE001 - pyo3 panics are BaseExceptions
            if isinstance(e, KeyboardInterrupt):
                raise
            print(f"  ({name} left out: it fails on these ids: {type(e).__name__}: {str(e)[:100]})")
            del calls[name]
    times: Dict[str, List[float]] = {name: [] for name in calls}
    names = list(calls)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            start = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - start)
    best = [min(times[n][r] for n in ours if n in times) for r in range(rounds)]
    rows = []
    for name in names:
        mbps = nbytes / statistics.median(times[name]) / 1e6
        ratio = None if name in ours else statistics.median(t / b for t, b in zip(times[name], best))
        vs_tiktoken = (statistics.median(t / c for t, c in zip(times["tiktoken"], times[name]))
                       if name in ours and "tiktoken" in times else None)
        rows.append((name, mbps, ratio, vs_tiktoken, peak(name), matches[name]))
    return rows


def print_rows(title: str, rows: List[Tuple[str, float, Optional[float], Optional[float], float, bool]]) -> None:
    print(f"\n{title}")
    print(f"  {'library':<20}{'MB/s':>9}{'ciyuan x':>10}{'vs tiktoken':>13}{'peak RSS':>10}  output")
    for name, mbps, ratio, vs_tiktoken, peak, ok in rows:
        r = f"{ratio:.2f}x" if ratio is not None else ""
        v = f"{vs_tiktoken:.2f}x" if vs_tiktoken is not None else ""
        print(f"  {name:<20}{mbps:>9.0f}{r:>10}{v:>13}{peak:>7.0f} MB  {'same' if ok else 'DIFFERS'}")
    others = [(n, m) for n, m, r, _, _, _ in rows if r is not None]
    if others:
        fastest = max(others, key=lambda x: x[1])
        ratio = [r for n, _, r, _, _, _ in rows if n == fastest[0]][0]
        print(f"  fastest other: {fastest[0]} ({fastest[1]:.0f} MB/s); ciyuan's best is {ratio:.2f}x it")


def document_cuts(tok: Any, ids: List[int]) -> List[int]:
    """Where the batch rows' documents start (and the end): every DOC_IDS ids, moved on to the
    next token that starts a character, so that each document is valid UTF-8 (a library that
    decodes strictly would refuse a cut character)."""
    cuts = [0]
    while cuts[-1] < len(ids):
        end = min(cuts[-1] + DOC_IDS, len(ids))
        while end < len(ids) and 0x80 <= (tok.decode_bytes([ids[end]]) or b"a")[0] < 0xC0:
            end += 1
        cuts.append(end)
    return cuts


def worker(spec: Dict[str, Any]) -> None:
    """One call of one library in this fresh process; prints the process's peak RSS (MB)."""
    import numpy as np

    import ciyuan

    arr = np.load(spec["ids"])
    ids: List[int] = arr.tolist()
    encoding, name, mode = spec["encoding"], spec["call"], spec["mode"]
    ranks = TIKTOKEN_FILES / f"{encoding}.tiktoken"
    library = name.split(" (")[0]
    tok = ciyuan.Tokenizer.from_tiktoken(ranks, encoding) if library == "ciyuan" else None
    libs = {} if library == "ciyuan" else peers(encoding, ranks, Path(spec["workdir"]), only=library)
    if mode == "batch":
        cuts = np.load(spec["cuts"]).tolist()
        docs = [ids[a:b] for a, b in zip(cuts, cuts[1:])]
        calls = batch_calls(tok, libs, docs, [np.array(d, dtype=np.uint32) for d in docs], spec["threads"])
    else:
        calls = single_calls(tok, libs, ids, arr, mode == "str")
    calls[name]()
    print(peak_rss_mb())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encodings", nargs="+", default=["cl100k_base"])
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=list(CORPORA))
    parser.add_argument("--ids", type=int, default=1_000_000, help="ids decoded per call (default 1M)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2, help="threads of the batch rows (default 2)")
    parser.add_argument("--no-batch", action="store_true")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-RSS workers")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return

    import numpy as np

    import ciyuan

    print(f"machine: {machine()}")
    print(f"ids per call: {args.ids}, rounds: {args.rounds}, batch threads: {args.threads}")
    workdir = Path(tempfile.mkdtemp(prefix="ciyuan-decode-"))
    script = Path(__file__).resolve()
    for encoding in args.encodings:
        ranks = TIKTOKEN_FILES / f"{encoding}.tiktoken"
        tok = ciyuan.Tokenizer.from_tiktoken(ranks, encoding)
        (workdir / encoding).mkdir(parents=True, exist_ok=True)
        tok.save(str(workdir / encoding / "tokenizer.json"))  # tokie reads Hugging Face's tokenizer.json only
        libs = peers(encoding, ranks, workdir)
        if "tiktoken" not in libs:
            raise SystemExit("tiktoken is needed: it is the reference of every output")
        for corpus in args.corpora:
            # Enough text for --ids ids (English ~4.3 bytes a token, Chinese ~2.3), then cut.
            text = read_prefix(CORPORA[corpus], args.ids * 6)
            ids = tok.encode_ids(text, disallowed_special=())[:args.ids]
            assert ids == libs["tiktoken"].encode(text, disallowed_special=())[:args.ids], "ids differ"
            arr = np.array(ids, dtype=np.uint32)
            ids_file = workdir / f"{encoding}-{corpus}.npy"
            np.save(ids_file, arr)
            cuts = document_cuts(tok, ids)
            cuts_file = workdir / f"{encoding}-{corpus}-cuts.npy"
            np.save(cuts_file, np.array(cuts, dtype=np.int64))
            reference_bytes = libs["tiktoken"].decode_bytes(ids)
            reference = reference_bytes.decode("utf-8", "replace")
            nbytes = len(reference_bytes)
            head = f"{encoding} / {corpus}: {len(ids):,} ids, {nbytes / 1e6:.1f} MB"

            def peak(mode: str, encoding: str = encoding, ids_file: Path = ids_file,
                     cuts_file: Path = cuts_file) -> Callable[[str], float]:
                def measure(name: str) -> float:
                    if args.no_memory:
                        return float("nan")
                    spec = {"encoding": encoding, "ids": str(ids_file), "cuts": str(cuts_file), "call": name,
                            "mode": mode,
                            "threads": args.threads, "workdir": str(workdir)}
                    return worker_peak(script, [json.dumps(spec)])
                return measure

            for to_str in (False, True):
                calls = single_calls(tok, libs, ids, arr, to_str)
                rows = run_rows(calls, reference, args.rounds, nbytes, ("ciyuan (list)", "ciyuan (numpy)"),
                                peak("str" if to_str else "bytes"))
                print_rows(f"{head}, one call, {'decode -> str' if to_str else 'decode_bytes -> bytes'}", rows)
            if not args.no_batch:
                docs = [ids[a:b] for a, b in zip(cuts, cuts[1:])]
                arrays = [np.array(d, dtype=np.uint32) for d in docs]
                reference_docs = [libs["tiktoken"].decode(d) for d in docs]
                calls = batch_calls(tok, libs, docs, arrays, args.threads)
                rows = run_rows(calls, reference_docs, args.rounds, nbytes, ("ciyuan (lists)", "ciyuan (numpy)"),
                                peak("batch"))
                print_rows(f"{head}, batch of {len(docs)} documents -> str, {args.threads} threads", rows)
    print("\nciyuan x: ciyuan's faster input form (list or numpy) over the library, per round, median "
          "(> 1: ciyuan faster). vs tiktoken: tiktoken's time over ciyuan's. peak RSS: a fresh process "
          "that loads the library alone and the ids (a list and a uint32 array), then makes the call once.")


if __name__ == "__main__":
    main()
