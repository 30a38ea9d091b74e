"""A corpus into token files, end to end (issue 16): ciyuan's encode-dataset against the ways
people do it today.

    python benchmarks/dataset.py [--encodings cl100k_base,o200k_base] [--corpora en,zh]
                                 [--libs ciyuan,ciyuan-ray,hf-datasets,gigatoken,tiktoken]
                                 [--threads 2] [--doc-bytes 4096] [--mb 0] [--markdown FILE]

The corpora (../shared/data): the 105 MB English Gutenberg file and the 26 MB Chinese novels,
each turned into JSON Lines first (untimed): documents of about --doc-bytes bytes cut at line
ends, ``{"text": ...}`` per line (--mb N: only the first N MB, for a quick run).

Each row is one library, one encoding, one corpus, run in a fresh process of its own (so its
peak RSS is its own), with --threads cores for everything, timed from the moment the tokenizer
is loaded until its output files are closed (reading, encoding, writing):

- ciyuan: ``encode_dataset(jsonl, out, tok, format="megatron", threads=N)`` (what
  ``ciyuan encode-dataset --format megatron`` runs): Megatron-LM .bin/.idx;
- ciyuan-ray: the same as a Ray Data pipeline (``encode_dataset_ray``: read tasks -> a pool of N
  tokenizer actors -> the shards written by the driver) on a local Ray of N CPUs started before
  the clock starts (on a cluster Ray is already running): the Ray path's overhead on one
  machine, against the ciyuan row;
- hf-datasets: Hugging Face ``datasets``: ``load_dataset("json")``, ``.map(batched=True,
  num_proc=N)`` with a ``tokenizers`` Tokenizer (a tokenizer.json of the same ranks, built as
  benchmarks/encode.py builds it, see ``hf_json``), then the ids written as one flat uint32 file plus int64
  offsets, as nanoGPT's prepare scripts do; a fresh cache folder per run;
- gigatoken: ``Tokenizer.from_tiktoken(...).encode_files(JsonlFileSource(...), parallel=True)``
  (an awkward array of every document's ids) written as the same flat file and offsets;
- tiktoken: a loop over batches of 1,000 documents read with json, ``encode_ordinary_batch(
  num_threads=N)``, ids appended to the flat file, offsets at the end.

Every output is read back afterwards (untimed) and its ids and document lengths checked
against ciyuan's Megatron output (a SHA-1 of both): a difference prints DIFFERENT. Special
tokens' text is encoded as ordinary text everywhere (tiktoken's encode_ordinary).

Reported: GB/hour (input JSONL bytes / wall time), GB/hour per core (over the --threads cores
each run may use), the ratio of ciyuan's to each, and peak RSS: the process's VmHWM (Linux's
high-water mark, see _common.peak_rss_mb); for hf-datasets the largest of its worker processes
too (their ru_maxrss), and for ciyuan-ray the driver's only (Ray's workers are processes of the
cluster).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, SHARED_DATA, machine, peak_rss_mb  # noqa: E402

SCRIPT = Path(__file__).resolve()
WORK = REPO / "build" / "dataset-bench"
TIKTOKEN = SHARED_DATA / "tokenizers" / "tiktoken"
CORPORA = {"en": SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt",
           "zh": SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt"}
LIBS = ("ciyuan", "ciyuan-ray", "hf-datasets", "gigatoken", "tiktoken")


# -- inputs (untimed) ------------------------------------------------------------------------


def jsonl_corpus(name: str, doc_bytes: int, mb: float) -> Path:
    """The corpus as JSON Lines of ~doc_bytes documents (made once, kept in WORK)."""
    limit = int(mb * 1e6) if mb else 0
    path = WORK / f"{name}-{doc_bytes}{f'-{mb:g}mb' if limit else ''}.jsonl"
    if path.exists():
        return path
    WORK.mkdir(parents=True, exist_ok=True)
    data = CORPORA[name].read_bytes()
    if limit:
        data = data[: data.rfind(b"\n", 0, limit) + 1]
    text = data.decode("utf-8")
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        cur: List[str] = []
        size = 0
        for line in text.splitlines(keepends=True):
            cur.append(line)
            size += len(line.encode("utf-8"))
            if size >= doc_bytes:
                f.write(json.dumps({"text": "".join(cur)}, ensure_ascii=False) + "\n")
                cur, size = [], 0
        if cur:
            f.write(json.dumps({"text": "".join(cur)}, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def hf_json(encoding: str) -> Path:
    r"""A Hugging Face tokenizer.json of the same ranks (benchmarks/encode.py's), with the pattern
    spelled as Hugging Face spells it: Oniguruma, under tokenizers 0.2x, reads tiktoken's
    ``\p{N}{1,3}+`` as "one or more runs of 1-3 digits", not as a possessive 1-3 (so "5830"
    stayed one piece and its ids differed); the ids check of every row says whether the
    spelling changes anything."""
    from encode import encoding as encode_encoding  # benchmarks/encode.py, beside this script

    return encode_encoding(encoding).hf1_json


# -- the workers (one fresh process per row) -------------------------------------------------


def write_flat(out: Path, ids: Any, lengths: Any) -> None:
    import numpy as np

    np.asarray(ids, dtype=np.uint32).tofile(out / "ids.bin")
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    np.save(out / "offsets.npy", offsets)


def run_ciyuan(jsonl: Path, out: Path, encoding: str, threads: int, ray: bool) -> Tuple[float, float]:
    from ciyuan import Tokenizer
    from ciyuan.datasets import encode_dataset

    tok = Tokenizer.from_tiktoken(TIKTOKEN / f"{encoding}.tiktoken", encoding)
    run: Any = encode_dataset
    options: Dict[str, Any] = dict(format="megatron", threads=threads, disallowed_special=())
    if ray:
        import ray as ray_module

        from ciyuan.datasets.ray_engine import encode_dataset_ray

        start = time.perf_counter()
        ray_module.init(num_cpus=threads, include_dashboard=False, log_to_driver=False, configure_logging=False)
        init = time.perf_counter() - start
        run = encode_dataset_ray
        options["threads"] = 1  # threads per actor: the actors are the cores
    else:
        init = 0.0
    start = time.perf_counter()
    run(jsonl, out, tok, **options)
    return time.perf_counter() - start, init


def run_hf_datasets(jsonl: Path, out: Path, encoding: str, threads: int) -> Tuple[float, float]:
    import numpy as np
    from tokenizers import Tokenizer

    import datasets

    datasets.disable_progress_bars()
    tok_file = str(hf_json(encoding))
    Tokenizer.from_file(tok_file)  # loaded once here so a broken file fails before the clock
    cache = out / "hf-cache"
    start = time.perf_counter()
    ds = datasets.load_dataset("json", data_files=str(jsonl), split="train", cache_dir=str(cache))

    def encode(batch: Dict[str, List[str]], tok: List[Any] = []) -> Dict[str, Any]:  # noqa: B006 (per process)
        if not tok:
            tok.append(Tokenizer.from_file(tok_file))
        encs = tok[0].encode_batch(batch["text"], add_special_tokens=False)
        return {"ids": [e.ids for e in encs], "len": [len(e.ids) for e in encs]}

    ds = ds.map(encode, batched=True, num_proc=threads, remove_columns=["text"])
    lengths = np.asarray(ds["len"], dtype=np.int64)
    total = int(lengths.sum())
    # nanoGPT's prepare.py: the ids of shards of the dataset copied into one memmap'd file.
    arr = np.memmap(out / "ids.bin", dtype=np.uint32, mode="w+", shape=(total,))
    at = 0
    for shard in range(16):
        part = ds.shard(num_shards=16, index=shard, contiguous=True).with_format("numpy")
        ids = np.concatenate(part["ids"]) if len(part) else np.zeros(0, np.uint32)
        arr[at:at + len(ids)] = ids
        at += len(ids)
    arr.flush()
    del arr
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    np.save(out / "offsets.npy", offsets)
    seconds = time.perf_counter() - start
    shutil.rmtree(cache, ignore_errors=True)
    return seconds, 0.0


def run_gigatoken(jsonl: Path, out: Path, encoding: str, threads: int) -> Tuple[float, float]:
    import awkward as ak
    import gigatoken
    import numpy as np

    tok = gigatoken.Tokenizer.from_tiktoken(str(TIKTOKEN / f"{encoding}.tiktoken"), encoding.split("_")[0], {})
    start = time.perf_counter()
    docs = tok.encode_files(gigatoken.JsonlFileSource([str(jsonl)], field="text"), parallel=threads > 1)
    write_flat(out, np.asarray(ak.flatten(docs, axis=None)), np.asarray(ak.num(docs, axis=1)))
    return time.perf_counter() - start, 0.0


def run_tiktoken(jsonl: Path, out: Path, encoding: str, threads: int) -> Tuple[float, float]:
    import numpy as np
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS  # the same strings as tiktoken's

    enc = tiktoken.Encoding(encoding, pat_str=NAMED_PATTERNS[encoding],
                            mergeable_ranks=load_tiktoken_bpe(str(TIKTOKEN / f"{encoding}.tiktoken")),
                            special_tokens={})
    start = time.perf_counter()
    lengths: List[int] = []
    with open(jsonl, encoding="utf-8") as f, open(out / "ids.bin", "wb") as ids_file:
        batch: List[str] = []

        def flush() -> None:
            encoded = enc.encode_ordinary_batch(batch, num_threads=threads)
            for ids in encoded:
                lengths.append(len(ids))
            flat = [i for ids in encoded for i in ids]
            ids_file.write(np.asarray(flat, dtype=np.uint32).tobytes())
            batch.clear()

        for line in f:
            batch.append(json.loads(line)["text"])
            if len(batch) >= 1000:
                flush()
        if batch:
            flush()
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    np.save(out / "offsets.npy", offsets)
    return time.perf_counter() - start, 0.0


def worker_main(lib: str, jsonl: str, out: str, encoding: str, threads: int) -> None:
    path, folder = Path(jsonl), Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    if lib in ("ciyuan", "ciyuan-ray"):
        seconds, init = run_ciyuan(path, folder, encoding, threads, ray=lib == "ciyuan-ray")
    else:
        seconds, init = {"hf-datasets": run_hf_datasets, "gigatoken": run_gigatoken,
                         "tiktoken": run_tiktoken}[lib](path, folder, encoding, threads)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest child's, in MB
    print(json.dumps({"seconds": seconds, "init": init, "rss": peak_rss_mb(), "children_rss": children}))


# -- the counting pass of training on Ray (its overhead on one machine) ------------------------


def train_overhead(threads: int) -> List[str]:
    """Word counting of the 105 MB English and 26 MB Chinese files for byte-level BPE: locally
    (all cores, natively) and as Ray tasks (32 MB parts) merged on the driver, Ray started
    before the clock; the counts must be identical. Then the whole training (8,000 tokens)."""
    import ray

    from ciyuan import Tokenizer
    from ciyuan.datasets import ray_engine
    from ciyuan.pre_tokenizers import Split
    from ciyuan.trainers import BpeTrainer

    ray.init(num_cpus=threads, include_dashboard=False, log_to_driver=False, configure_logging=False)
    lines = ["| corpus | step | local s | Ray s | Ray / local | same |", "|---|---|---:|---:|---:|---|"]
    print("\n".join(lines), flush=True)
    try:
        for name, path in CORPORA.items():
            trainer = BpeTrainer(8000, byte_level=True, threads=threads)
            start = time.perf_counter()
            local = trainer.count_words(path, Split("gpt2"))
            t_local = time.perf_counter() - start
            start = time.perf_counter()
            distributed = ray_engine.count_words(path, trainer, Split("gpt2"))
            t_ray = time.perf_counter() - start
            same = local.words() == distributed.words()
            lines.append(f"| {name} {path.stat().st_size / 1e6:.0f} MB | count words | {t_local:.2f} | {t_ray:.2f} | "
                         f"{t_ray / t_local:.2f} | {'same' if same else 'DIFFERENT'} |")
            start = time.perf_counter()
            a = Tokenizer.train(path, BpeTrainer(8000, byte_level=True, threads=threads)).to_dict()
            t_local = time.perf_counter() - start
            start = time.perf_counter()
            b = ray_engine.train(path, BpeTrainer(8000, byte_level=True, threads=threads)).to_dict()
            t_ray = time.perf_counter() - start
            lines.append(f"| {name} {path.stat().st_size / 1e6:.0f} MB | train (8,000 tokens) | {t_local:.2f} | "
                         f"{t_ray:.2f} | {t_ray / t_local:.2f} | {'same' if a == b else 'DIFFERENT'} |")
            print(lines[-2] + "\n" + lines[-1], flush=True)
    finally:
        ray.shutdown()
    return lines


# -- checking and reporting ------------------------------------------------------------------


def digest(lib: str, out: Path) -> Tuple[str, int]:
    """SHA-1 of (ids as uint32, document lengths as int64) of a run's output, and its tokens."""
    import numpy as np

    if lib.startswith("ciyuan"):
        ids_parts, lengths_parts = [], []
        manifest = json.loads((out / "manifest.json").read_text())
        sys.path.insert(0, str(REPO / "tests" / "datasets"))
        from megatron_reader import MegatronShard  # the tests' reader, written from the format's description

        for shard in manifest["shards"]:
            reader = MegatronShard(str(out / shard["files"][0])[: -len(".bin")])
            docs = reader.documents()
            lengths_parts.append(np.array([len(d) for d in docs], dtype=np.int64))
            ids_parts.append(np.concatenate([np.asarray(d) for d in docs]) if docs else np.zeros(0))
        ids = np.concatenate(ids_parts).astype(np.uint32)
        lengths = np.concatenate(lengths_parts)
    else:
        ids = np.fromfile(out / "ids.bin", dtype=np.uint32)
        lengths = np.diff(np.load(out / "offsets.npy"))
    h = hashlib.sha1(ids.tobytes())
    h.update(lengths.astype(np.int64).tobytes())
    return h.hexdigest(), len(ids)


def run_row(lib: str, jsonl: Path, encoding: str, threads: int) -> Dict[str, Any]:
    out = Path(tempfile.mkdtemp(prefix=f"{lib}-", dir=WORK))
    try:
        proc = subprocess.run([sys.executable, str(SCRIPT), "--worker", lib, str(jsonl), str(out), encoding,
                               str(threads)], capture_output=True, text=True)
        if proc.returncode != 0:
            return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result["digest"], result["tokens"] = digest(lib, out)
        return result
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encodings", default="cl100k_base,o200k_base")
    p.add_argument("--corpora", default="en,zh")
    p.add_argument("--libs", default=",".join(LIBS))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--doc-bytes", type=int, default=4096)
    p.add_argument("--mb", type=float, default=0, help="only the first MB of each corpus (0: all)")
    p.add_argument("--markdown", default=None, help="append the tables to this Markdown file")
    p.add_argument("--train", action="store_true",
                   help="instead: the counting pass of byte-level BPE training locally and on Ray (its overhead)")
    p.add_argument("--worker", nargs=5, metavar=("LIB", "JSONL", "OUT", "ENCODING", "THREADS"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        lib, jsonl, out, encoding, threads = args.worker
        worker_main(lib, jsonl, out, encoding, int(threads))
        return
    if args.train:
        print(f"Machine: {machine()}; {args.threads} cores; `python benchmarks/dataset.py --train`\n", flush=True)
        lines = train_overhead(args.threads)
        if args.markdown:
            with open(args.markdown, "a", encoding="utf-8") as f:
                f.write("\n" + "\n".join(lines) + "\n")
        return
    libs = [lib for lib in args.libs.split(",") if lib]
    lines = [f"Machine: {machine()}; {args.threads} cores per run; `python benchmarks/dataset.py "
             f"--encodings {args.encodings} --corpora {args.corpora} --threads {args.threads} "
             f"--doc-bytes {args.doc_bytes}{f' --mb {args.mb:g}' if args.mb else ''}`", ""]
    lines += ["| encoding | corpus (JSONL) | library | s | GB/hour | GB/hour per core | ciyuan is x | "
              "peak RSS MB | ids |", "|---|---|---|---:|---:|---:|---:|---:|---|"]
    print("\n".join(lines), flush=True)
    for encoding in args.encodings.split(","):
        if "hf-datasets" in libs:
            hf_json(encoding)  # built once, untimed
        for corpus in args.corpora.split(","):
            jsonl = jsonl_corpus(corpus, args.doc_bytes, args.mb)
            size = jsonl.stat().st_size
            results = {lib: run_row(lib, jsonl, encoding, args.threads) for lib in libs}
            reference = results.get("ciyuan", {}).get("digest")
            ciyuan_s = results.get("ciyuan", {}).get("seconds")
            for lib, r in results.items():
                name = f"{corpus} {size / 1e6:.0f} MB"
                if "error" in r:
                    row = f"| {encoding} | {name} | {lib} | n/a ({r['error'][:120]}) | | | | | |"
                else:
                    gbh = size / 1e9 / r["seconds"] * 3600
                    ratio = f"{r['seconds'] / ciyuan_s:.2f}" if ciyuan_s and lib != "ciyuan" else ""
                    rss = f"{r['rss']:.0f}"
                    if lib == "hf-datasets":
                        rss += f" (+ workers up to {r['children_rss']:.0f})"
                    elif lib == "ciyuan-ray":
                        rss += " (driver; Ray's workers not counted)"
                    same = "same" if reference is None or r["digest"] == reference else "DIFFERENT"
                    extra = f" (+ {r['init']:.1f} s Ray start, untimed)" if r.get("init") else ""
                    row = (f"| {encoding} | {name} | {lib} | {r['seconds']:.2f}{extra} | {gbh:.2f} | "
                           f"{gbh / args.threads:.2f} | {ratio} | {rss} | {same} ({r['tokens']:,} tokens) |")
                lines.append(row)
                print(row, flush=True)
    if args.markdown:
        with open(args.markdown, "a", encoding="utf-8") as f:
            f.write("\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    main()
