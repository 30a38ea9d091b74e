"""BERT (or RoBERTa-style) full encodings: ciyuan's ``Tokenizer.encode_batch`` against Hugging
Face tokenizers 1.0 (and 0.23), side by side, on the same slices of text.

Every library loads the same ``tokenizer.json`` (bert-base-uncased by default, written by
``tokenizers`` 0.23's ``BertWordPieceTokenizer``; ``--tokenizer gpt2-mask``: GPT-2's file with
RoBERTa's ``<mask>``, an added token that takes the space before it, put in every 7th document;
``roberta``: that and RoBERTa's post-processor; ``qwen2``: GPT-2's vocabulary in a Qwen2-style
file, NFC before Qwen2's pattern) and runs as a worker process of its own (its own
peak RSS): Hugging Face 1.0 in its virtual environment (``--hf1-python``, default
``build/tokenizers1-venv`` of the main checkout), the others in this interpreter. The parent cuts
``--rounds`` + 1 slices of ``--mb`` MB from the corpus (slice 0 warms up), writes them to a
temporary file, and then asks every worker in turn to encode slice r, starting with a different
worker each round; each reports its wall seconds, its CPU seconds and its ids' digest. Figures are
the medians of the rounds; the ratio to Hugging Face 1.0 is taken per round, then the median.

What each library is asked for (``encode_batch`` of the slice's documents, special tokens added,
then the fields below read from every Encoding; reading is part of the time, so a lazy
Encoding pays for what it defers):

- ``hf1``: Hugging Face 1.0. Its Encoding holds ``ids``, ``type_ids`` and ``attention_mask``
  only (1.0 dropped offsets, tokens and the special-tokens mask): all three are read.
- ``ciyuan``: the same three fields.
- ``ciyuan+off``: those plus ``offsets`` and ``special_tokens_mask`` (what Hugging Face 0.23
  gives and 1.0 does not); offsets are checked against 0.23's.
- ``ciyuan+tok``: ``ciyuan+off`` plus ``tokens`` (token strings) (``--tokens``).
- ``hf023``: Hugging Face 0.23 (in this interpreter), the fields of ``ciyuan+off`` (``--hf023``).
- ``ids``: ciyuan's ``encode_batch_ids`` (lists of ids with [CLS] and [SEP], no Encoding).

Documents (``--docs``): ``lines``, every line of the slice (gutenberg lines average 48
characters, jinyong lines are whole paragraphs of ~150 characters); ``paragraphs``, the text cut at
blank lines (gutenberg paragraphs average ~260 characters; jinyong has no blank lines, so there
it is the same as ``lines``).

    python benchmarks/bert_native.py [--mb 2] [--rounds 5] [--corpus en zh] [--docs lines paragraphs]
                                     [--threads 1 2] [--hf023] [--tokens] [--vocab uncased|chinese]
                                     [--tokenizer bert|gpt2-mask|roberta|qwen2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, SHARED_DATA, machine, peak_rss_mb  # noqa: E402

CORPORA = {
    "en": SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt",
    "zh": SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt",
}
VOCABS = {
    "uncased": SHARED_DATA / "tokenizers" / "bert" / "bert-base-uncased-vocab.txt",
    "chinese": SHARED_DATA / "tokenizers" / "bert" / "bert-base-chinese-vocab.txt",
}
HF1_PYTHON = REPO.parent / "main" / "build" / "tokenizers1-venv" / "bin" / "python"
# Fields read from every Encoding, per library.
FIELDS = {
    "hf1": ("ids", "type_ids", "attention_mask"),
    "ciyuan": ("ids", "type_ids", "attention_mask"),
    "ciyuan+off": ("ids", "type_ids", "attention_mask", "offsets", "special_tokens_mask"),
    "ciyuan+tok": ("ids", "type_ids", "attention_mask", "offsets", "special_tokens_mask", "tokens"),
    "hf023": ("ids", "type_ids", "attention_mask", "offsets", "special_tokens_mask"),
    "ids": (),
}


# -- the parent: slices, workers, rounds ------------------------------------------------------------


def slices(path: Path, mb: float, count: int, docs: str) -> List[List[str]]:
    """`count` consecutive slices of about `mb` MB of `path` (cut at line ends), as documents."""
    size = int(mb * 1_000_000)
    out: List[List[str]] = []
    with open(path, "rb") as f:
        rest = b""
        for _ in range(count):
            data = rest + f.read(size - len(rest))
            cut = data.rfind(b"\n") + 1
            data, rest = data[:cut], data[cut:]
            text = data.decode("utf-8")
            if docs == "lines":
                out.append(text.split("\n")[:-1])
            else:
                out.append([p for p in text.split("\n\n") if p.strip()])
    return out


class Worker:
    """One library in a process of its own, answering one line per round."""

    def __init__(self, lib: str, python: str, tokenizer_json: Path, slices_path: Path, threads: int) -> None:
        self.lib = lib
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true")
        self.proc = subprocess.Popen(
            [python, str(Path(__file__).resolve()), "--worker", lib, str(tokenizer_json), str(slices_path),
             str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.ready = self._read()

    def _read(self) -> List[str]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.lib} ended (see its error above)")
        return line.split()

    def round(self, index: int) -> List[str]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{index}\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def hf_tokenizer_json(vocab: Path, out: Path) -> None:
    """bert's tokenizer.json, written by Hugging Face 0.23 itself (lowercasing as the vocab's model)."""
    from tokenizers import BertWordPieceTokenizer

    BertWordPieceTokenizer(str(vocab), lowercase=True).save(str(out))


def roberta_tokenizer_json(out: Path, post_processor: bool) -> None:
    """GPT-2's tokenizer.json made RoBERTa-like by Hugging Face 0.23: ``<s>``, ``</s>`` and an
    lstrip ``<mask>`` (which kept ciyuan's encoder off its native path before it learnt the
    added tokens' flags), with RoBERTa's post-processor if asked."""
    from tokenizers import AddedToken, Tokenizer, processors

    tok = Tokenizer.from_file(str(SHARED_DATA / "tokenizers" / "gpt2" / "tokenizer.json"))
    tok.add_special_tokens(["<s>", "</s>", AddedToken("<mask>", lstrip=True, special=True)])
    if post_processor:
        sep, cls = ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>"))
        tok.post_processor = processors.RobertaProcessing(sep, cls)
    tok.save(str(out))


def qwen2_tokenizer_json(out: Path) -> None:
    """A Qwen2-style tokenizer.json made by Hugging Face 0.23: NFC, then a Split by Qwen2's pattern
    and ByteLevel, over GPT-2's vocabulary (Qwen2's own is not in ../shared/data), with Qwen2's
    chat special tokens matched on the input as given (normalized false, as in Qwen2's file)."""
    from tokenizers import AddedToken, Regex, Tokenizer, normalizers, pre_tokenizers, processors

    from ciyuan.pre_tokenizers.patterns import QWEN2_PATTERN

    tok = Tokenizer.from_file(str(SHARED_DATA / "tokenizers" / "gpt2" / "tokenizer.json"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(QWEN2_PATTERN), "isolated"),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<|im_start|>", "<|im_end|>")])
    tok.save(str(out))
    data = json.loads(out.read_text(encoding="utf-8"))
    for token in data["added_tokens"]:  # GPT-2's <|endoftext|> too
        token["normalized"] = False
    out.write_text(json.dumps(data), encoding="utf-8")


def with_masks(docs: List[str]) -> List[str]:
    """Every 7th document with `` <mask>`` put in after its first word (as masked-LM inputs)."""
    out = []
    for i, doc in enumerate(docs):
        if i % 7 == 0:
            cut = doc.find(" ") + 1 or len(doc)
            doc = doc[:cut] + " <mask>" + doc[cut:]
        out.append(doc)
    return out


def run_config(libs: Sequence[str], tokenizer_json: Path, slices_path: Path, sizes: List[float], threads: int,
               rounds: int, hf1_python: str) -> Dict[str, dict]:
    pythons = {lib: (hf1_python if lib == "hf1" else sys.executable) for lib in libs}
    workers = [Worker(lib, pythons[lib], tokenizer_json, slices_path, threads) for lib in libs]
    try:
        for w in workers:
            w.round(0)  # warm-up: slice 0
        per: Dict[str, dict] = {lib: {"mbps": [], "cores": [], "cpu": [], "ids": set(), "offsets": set(),
                                      "rss": 0.0} for lib in libs}
        for r in range(1, rounds + 1):
            order = workers[r % len(workers):] + workers[: r % len(workers)]
            for w in order:
                seconds, cpu, ids_digest, off_digest, rss = w.round(r)
                rec = per[w.lib]
                rec["mbps"].append(sizes[r] / float(seconds))
                rec["cores"].append(float(cpu) / float(seconds))
                rec["cpu"].append(float(cpu))
                rec["ids"].add((r, ids_digest))
                if off_digest != "-":
                    rec["offsets"].add((r, off_digest))
                rec["rss"] = max(rec["rss"], float(rss))
    finally:
        for w in workers:
            w.close()
    return per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=2.0, help="MB of text per round (default 2)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--corpus", nargs="+", default=["en", "zh"], choices=sorted(CORPORA))
    parser.add_argument("--docs", nargs="+", default=["lines", "paragraphs"], choices=["lines", "paragraphs"])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--vocab", default="uncased", choices=sorted(VOCABS))
    parser.add_argument("--tokenizer", default="bert", choices=["bert", "gpt2-mask", "roberta", "qwen2"],
                        help="bert-base-VOCAB's WordPiece; GPT-2's byte-level BPE with RoBERTa's <mask> "
                             "(lstrip), without or with RoBERTa's post-processor; or GPT-2's vocabulary in a "
                             "Qwen2-style file (NFC, Qwen2's pattern)")
    parser.add_argument("--hf023", action="store_true", help="also time Hugging Face 0.23 (checks offsets)")
    parser.add_argument("--tokens", action="store_true", help="also time ciyuan reading the token strings")
    parser.add_argument("--hf1-python", default=str(HF1_PYTHON))
    parser.add_argument("--worker", nargs=4, metavar=("LIB", "JSON", "SLICES", "THREADS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        lib, json_path, slices_path, threads = args.worker
        worker(lib, Path(json_path), Path(slices_path), int(threads))
        return
    libs = ["hf1", "ciyuan", "ciyuan+off"] + (["ciyuan+tok"] if args.tokens else []) + \
        (["hf023"] if args.hf023 else []) + ["ids"]
    print(f"# {machine()}")
    name = f"bert-base-{args.vocab}" if args.tokenizer == "bert" else \
        "GPT-2's vocabulary in a Qwen2-style file (NFC, Qwen2's pattern, ByteLevel)" if args.tokenizer == "qwen2" else \
        "GPT-2 + RoBERTa's <mask> (lstrip, in every 7th document)" + \
        (" + RobertaProcessing" if args.tokenizer == "roberta" else "")
    print(f"# {name}, {args.mb} MB per round, {args.rounds} rounds (+1 warm-up), a new slice "
          f"each round; MB/s medians; x = per-round ratio to hf1, median; cores = CPU s / wall s; RSS = peak MB; "
          f"per core = hf1 CPU s / CPU s, per round, median")
    head = "corpus docs       thr " + " ".join(f"{lib:>11}" for lib in libs)
    print(head + "  " + " ".join(f"{lib + '/hf1':>15}" for lib in libs if lib != "hf1") + "  ids  offsets")
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer_json = Path(tmp) / "tokenizer.json"
        if args.tokenizer == "bert":
            hf_tokenizer_json(VOCABS[args.vocab], tokenizer_json)
        elif args.tokenizer == "qwen2":
            qwen2_tokenizer_json(tokenizer_json)
        else:
            roberta_tokenizer_json(tokenizer_json, post_processor=args.tokenizer == "roberta")
        for corpus in args.corpus:
            for docs in args.docs:
                if corpus == "zh" and docs == "paragraphs":
                    continue  # jinyong's lines are its paragraphs: the same as "lines"
                parts = slices(CORPORA[corpus], args.mb, args.rounds + 1, docs)
                if args.tokenizer in ("gpt2-mask", "roberta"):
                    parts = [with_masks(part) for part in parts]
                sizes = [sum(len(d.encode("utf-8")) for d in part) / 1e6 for part in parts]
                slices_path = Path(tmp) / "slices.json"
                slices_path.write_text(json.dumps(parts), encoding="utf-8")
                for threads in args.threads:
                    per = run_config(libs, tokenizer_json, slices_path, sizes, threads, args.rounds, args.hf1_python)
                    report(corpus, docs, threads, libs, per)


def report(corpus: str, docs: str, threads: int, libs: List[str], per: Dict[str, dict]) -> None:
    med = {lib: statistics.median(per[lib]["mbps"]) for lib in libs}
    cells = " ".join(f"{med[lib]:>11.1f}" for lib in libs)
    ratios = []
    for lib in libs:
        if lib == "hf1":
            continue
        r = statistics.median(a / b for a, b in zip(per[lib]["mbps"], per["hf1"]["mbps"]))
        ratios.append(f"{r:>14.2f}x")
    ids_same = len({frozenset(per[lib]["ids"]) for lib in libs}) == 1
    with_offsets = [lib for lib in libs if per[lib]["offsets"]]
    off_digests = {frozenset(per[lib]["offsets"]) for lib in with_offsets}
    off_same = "n/a" if len(with_offsets) < 2 else str(len(off_digests) == 1)
    print(f"{corpus:6} {docs:10} {threads:>3} {cells}  {' '.join(ratios)}  {ids_same!s:4} {off_same}")
    print(f"{'':21} cores " + " ".join(f"{statistics.median(per[lib]['cores']):>11.2f}" for lib in libs))
    print(f"{'':21} RSS   " + " ".join(f"{per[lib]['rss']:>11.0f}" for lib in libs))
    # Per core: the same slice's CPU seconds, Hugging Face 1.0's over each library's (per round,
    # then the median) - the measure that holds when a library's "one thread" call keeps more
    # than one core busy, and the steadiest one on a loaded machine.
    per_core = " ".join(f"{statistics.median(h / c for h, c in zip(per['hf1']['cpu'], per[lib]['cpu'])):>14.2f}x"
                        for lib in libs if lib != "hf1")
    print(f"{'':21} per core {'':{12 * len(libs) - 9}} {per_core}")
    sys.stdout.flush()


# -- a worker: one library, one line per round --------------------------------------------------------


def worker(lib: str, tokenizer_json: Path, slices_path: Path, threads: int) -> None:
    parts = json.loads(slices_path.read_text(encoding="utf-8"))
    fields = FIELDS[lib]
    if lib == "hf1" or lib == "hf023":
        from tokenizers import Tokenizer as HfTokenizer

        hf = HfTokenizer.from_file(str(tokenizer_json))
        encode = hf.encode_batch
    else:
        from ciyuan import Tokenizer

        tok = Tokenizer.from_file(tokenizer_json)
        if lib == "ids":
            def encode(docs: List[str]) -> list:
                return tok.encode_batch_ids(docs, threads=threads)
        else:
            def encode(docs: List[str]) -> list:
                return tok.encode_batch(docs, threads=threads)
    print("ready", flush=True)
    for line in sys.stdin:
        docs = parts[int(line)]
        cpu0 = _cpu()
        start = time.perf_counter()
        encodings = encode(docs)
        for e in encodings:  # what a caller of the Encodings reads
            for name in fields:
                getattr(e, name)
        seconds = time.perf_counter() - start
        cpu = _cpu() - cpu0
        ids = encodings if lib == "ids" else [e.ids for e in encodings]
        offsets = [e.offsets for e in encodings] if "offsets" in fields else None
        print(f"{seconds:.6f} {cpu:.6f} {_digest(ids)} {_offsets_digest(offsets)} {peak_rss_mb():.1f}", flush=True)
        del encodings, ids, offsets


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _digest(lists: List[List[int]]) -> str:
    h = hashlib.sha1()
    for x in lists:
        h.update(array("I", [len(x)]).tobytes() + array("I", x).tobytes())
    return h.hexdigest()[:12]


def _offsets_digest(offsets: "List[List[tuple]] | None") -> str:
    if offsets is None:
        return "-"
    return _digest([[v for pair in x for v in pair] for x in offsets])


if __name__ == "__main__":
    main()
