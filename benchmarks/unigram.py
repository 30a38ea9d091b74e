"""Unigram LM / SentencePiece: ciyuan vs SentencePiece, Hugging Face and the libraries that load a .model.

    python benchmarks/unigram.py [--part train|encode|all] [--en-mb MB] [--zh-mb MB]
                                 [--train-rounds 2] [--encode-rounds 3] [--encode-mb 5]
                                 [--out DIR] [--markdown FILE]

Training (--part train), vocabulary 32,000 (--vocab), on gutenberg_100mb.txt (105 MB of English)
and jinyong_16novels.txt (26 MB of Chinese), or their first --en-mb / --zh-mb MB for quick runs.
The last --holdout-en (5,000) / --holdout-zh (2,000) lines are held out; all three trainers
read the same file of the other lines:
  ciyuan         Tokenizer.train([file], trainer=UnigramTrainer(vocab_size=32000)), its
                 defaults (= SentencePiece's), saved as a .model
  sentencepiece  SentencePieceTrainer.train(input=file, model_type="unigram", vocab_size=32000,
                 num_threads=2), its defaults otherwise
  hf             tokenizers: Tokenizer(models.Unigram()), normalizer NFKC, pre-tokenizer
                 Metaspace, UnigramTrainer(vocab_size=32000, unk_token="<unk>"), Rayon on
                 --threads threads
Same sentences: SentencePiece skips lines longer than max_sentence_length (default 4,192 bytes;
250 lines, 3.2 MB, of the Chinese corpus, none of the English); this script passes
--max-sentence-length (default 131,072, longer than any line of either corpus) to SentencePiece
and to ciyuan's trainer (when it has that option), so that every trainer reads every line
(Hugging Face reads all lines anyway). input_sentence_size stays 0 (all sentences, no
sampling). Each training is a fresh worker process (its own peak RSS); --train-rounds rounds
alternate the order of the libraries; the table gives median wall time (file reading included,
saving the model not) and median peak RSS. Quality: the number of tokens each trained model gives
on the held-out lines (non-empty ones), encoded with its own library; the issue wants ciyuan
within 1% of SentencePiece. (SentencePiece cannot make 32,000 pieces from the first 10 MB of
English, at most 31,023: for that check, train on 12 MB, `--part train --en-mb 12`.)

Encoding (--part encode): MB/s of
  the shared models  ../shared/data/tokenizers/sentencepiece/{llama2,albert}.model on English,
                     Chinese and Japanese (wagahaiwa.ja.txt) text
  the trained models --out/{sentencepiece,ciyuan}-{en,zh}.model (from --part train, now or in
                     an earlier run with the same --out) on text of their language
line by line (a batch of the lines of --encode-mb MB), 1 thread and 2 threads, by
  ciyuan         Tokenizer.from_file(model).encode_batch_ids(lines, threads=N)
  sentencepiece  SentencePieceProcessor(model_file=model).encode(lines, num_threads=N)
  kitoken        Kitoken.from_sentencepiece_file(model).encode_all(lines) (RAYON_NUM_THREADS=N,
                 but it kept one core busy in every run here: CPU / wall stays near 1)
  gigatoken      Tokenizer.from_sentencepiece(model).encode_batch_list(lines) (BPE models with
                 byte fallback only), parallel=False for 1 thread, Rayon on 2 for 2
  tokie, hf      do not read .model files: they load the tokenizer.json that gigatoken's
                 converter makes of a BPE .model (marked "via tokenizer.json")
Each round takes a new slice of the text (so that no library's caches are warm from an earlier
round; a text smaller than the slice is used whole every round) and runs every library in a fresh
worker process, the order alternating between rounds; a worker encodes one warm-up line set,
then times one pass over the slice. Every library's ids are checked against SentencePiece's on
the same slice; a library whose ids differ is printed but left out of the ranking. Peak RSS is
the worker's VmHWM (see _common.peak_rss_mb); "CPU / wall" shows how many cores a pass used.

A library that is not installed or cannot load a model is skipped with a one-line note. The
peers are not test dependencies of ciyuan: benchmarks/requirements-peers.txt lists them.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from array import array
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, append_markdown, machine, peak_rss_mb  # noqa: E402

CORPORA = {
    "en": SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt",
    "zh": SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt",
    "ja": SHARED_DATA / "corpora" / "multi" / "wagahaiwa.ja.txt",
}
SPM_DIR = SHARED_DATA / "tokenizers" / "sentencepiece"
SHARED_MODELS = {"llama2": ("en", "zh", "ja"), "albert": ("en", "zh", "ja")}
TRAIN_LIBS = ("ciyuan", "sentencepiece", "hf")
TRAIN_LABELS = {
    "ciyuan": "ciyuan UnigramTrainer",
    "sentencepiece": "SentencePiece (unigram)",
    "hf": "HF tokenizers UnigramTrainer",
}
ENCODE_LIBS = ("ciyuan", "sentencepiece", "kitoken", "gigatoken", "tokie", "hf")
ENCODE_LABELS = {
    "ciyuan": "ciyuan",
    "sentencepiece": "sentencepiece",
    "kitoken": "kitoken",
    "gigatoken": "gigatoken",
    "tokie": "tokie (via tokenizer.json)",
    "hf": "HF tokenizers (via tokenizer.json)",
}
MODULES = {"ciyuan": "ciyuan", "sentencepiece": "sentencepiece", "hf": "tokenizers", "kitoken": "kitoken",
           "gigatoken": "gigatoken", "tokie": "tokie"}


# ---------------------------------------------------------------------------------------------
# Workers (each runs in a fresh process: `unigram.py --worker ...` prints one JSON line)
# ---------------------------------------------------------------------------------------------

def _nonempty_lines(path: str) -> List[str]:
    with open(path, encoding="utf-8") as f:
        return [line for line in f.read().split("\n") if line]


def _ciyuan_trainer_options(vocab: int, max_len: int, threads: int) -> Dict[str, Any]:
    """Keyword arguments for ciyuan's UnigramTrainer: vocab_size, and the options below when it has them."""
    from ciyuan.trainers import UnigramTrainer  # type: ignore[attr-defined]

    params = inspect.signature(UnigramTrainer).parameters
    options: Dict[str, Any] = {"vocab_size": vocab}
    wanted = {"max_sentence_length": max_len, "show_progress": False, "progress": False, "threads": threads,
              "num_threads": threads}
    options.update({k: v for k, v in wanted.items() if k in params})
    return options


def train_worker(lib: str, corpus: str, train_file: str, holdout_file: str, out_dir: str, vocab: int,
                 max_len: int, threads: int) -> None:
    """Train one library's model; time, peak RSS, held-out token count."""
    out = Path(out_dir)
    info: Dict[str, Any] = {}
    if lib == "ciyuan":
        import ciyuan
        from ciyuan.trainers import UnigramTrainer  # type: ignore[attr-defined]

        options = _ciyuan_trainer_options(vocab, max_len, threads)
        start = time.perf_counter()
        tok = ciyuan.Tokenizer.train([train_file], trainer=UnigramTrainer(**options))
        seconds = time.perf_counter() - start
        rss = peak_rss_mb()
        model = out / f"ciyuan-{corpus}.model"
        try:
            tok.save(str(model))
            if model.read_bytes()[:1] == b"{":  # a build without the .model writer saves JSON under any name
                model.unlink()
                info["save_error"] = "this build wrote JSON, not a SentencePiece .model (no .model writer yet)"
        except Exception as e:  # the .model writer may be missing from this build: time and quality still count
            info["save_error"] = f"{type(e).__name__}: {e}"[:200]
        size = tok.vocab_size
        count: Callable[[List[str]], int] = lambda lines: sum(map(len, tok.encode_batch_ids(lines)))  # noqa: E731
        info["options"] = {k: v for k, v in options.items() if k != "vocab_size"}
    elif lib == "sentencepiece":
        import sentencepiece as spm

        prefix = out / f"sentencepiece-{corpus}"
        start = time.perf_counter()
        spm.SentencePieceTrainer.train(input=train_file, model_prefix=str(prefix), vocab_size=vocab,
                                       model_type="unigram", num_threads=threads, max_sentence_length=max_len,
                                       minloglevel=2)
        seconds = time.perf_counter() - start
        rss = peak_rss_mb()
        model = prefix.with_suffix(".model")
        sp = spm.SentencePieceProcessor(model_file=str(model))
        size = sp.get_piece_size()
        count = lambda lines: sum(map(len, sp.encode(lines)))  # noqa: E731
    elif lib == "hf":
        from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

        hf = Tokenizer(models.Unigram())
        hf.normalizer = normalizers.NFKC()
        hf.pre_tokenizer = pre_tokenizers.Metaspace()
        hf.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=vocab, unk_token="<unk>", special_tokens=["<unk>"],
                                          show_progress=False)
        start = time.perf_counter()
        hf.train([train_file], trainer)
        seconds = time.perf_counter() - start
        rss = peak_rss_mb()
        model = out / f"hf-{corpus}.json"
        hf.save(str(model))
        size = hf.get_vocab_size()
        count = lambda lines: sum(len(e.ids) for e in hf.encode_batch(lines, add_special_tokens=False))  # noqa: E731
    else:
        raise ValueError(lib)
    held = _nonempty_lines(holdout_file)
    try:
        tokens = count(held) if held else 0
    except Exception as e:  # a trained model this build cannot encode: report the time all the same
        info["holdout_error"] = f"{type(e).__name__}: {e}"[:200]
        tokens = 0
    print(json.dumps({"seconds": seconds, "rss_mb": rss, "vocab": size, "model": str(model),
                      "holdout_lines": len(held), "holdout_tokens": tokens, **info}))


def _line_hashes(ids_lists: Any) -> List[int]:
    """One CRC-32 of the ids of each line (to count the lines whose ids differ between libraries)."""
    return [zlib.crc32(array("I", [int(i) for i in ids]).tobytes()) for ids in ids_lists]


def _encoder(lib: str, model: str, threads: int, tmp: str) -> Callable[[List[str]], Any]:
    """A function lines -> ids per line, for `lib` with `model`, on `threads` threads."""
    if lib == "ciyuan":
        import ciyuan

        tok = ciyuan.Tokenizer.from_file(model)
        return lambda lines: tok.encode_batch_ids(lines, threads=threads)
    if lib == "sentencepiece":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=model)
        return lambda lines: sp.encode(lines, out_type=int, num_threads=threads)
    if lib == "kitoken":
        from kitoken import Kitoken

        kt = Kitoken.from_sentencepiece_file(model)
        return lambda lines: kt.encode_all(lines)
    if lib == "gigatoken":
        import gigatoken

        gt = gigatoken.Tokenizer.from_sentencepiece(model)
        return lambda lines: gt.encode_batch_list(lines, parallel=threads > 1)
    # tokie and HF tokenizers read tokenizer.json, not .model: gigatoken's converter makes one.
    from gigatoken._load.sentencepiece import sentencepiece_to_tokenizer_json

    path = Path(tmp) / "tokenizer.json"
    path.write_text(sentencepiece_to_tokenizer_json(Path(model).read_bytes()), encoding="utf-8")
    if lib == "tokie":
        import tokie

        tt = tokie.Tokenizer.from_json(str(path))
        return lambda lines: [e.ids for e in tt.encode_batch(lines, add_special_tokens=False)]
    if lib == "hf":
        from tokenizers import Tokenizer

        hf = Tokenizer.from_file(str(path))
        return lambda lines: [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    raise ValueError(lib)


def encode_worker(lib: str, model: str, text_file: str, threads: int) -> None:
    """One timed pass of `lib` over the lines of text_file (after a warm-up on other text)."""
    with open(text_file, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    nbytes = len(text.encode("utf-8"))
    warm = ["Warm-up line: the quick brown fox jumps over the lazy dog 12345.", "热身：天下武功，唯快不破。",
            "吾輩は猫である。名前はまだ無い。"] * 8
    with tempfile.TemporaryDirectory() as tmp:
        encode = _encoder(lib, model, threads, tmp)
        encode(warm)
        start, cpu = time.perf_counter(), time.process_time()
        ids = encode(lines)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    rss = peak_rss_mb()
    print(json.dumps({"mbps": nbytes / seconds / 1e6, "seconds": seconds, "cores": cpu / seconds, "rss_mb": rss,
                      "lines": _line_hashes(ids), "tokens": sum(len(x) for x in ids), "mb": nbytes / 1e6}))


# ---------------------------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------------------------

def run_worker(args: List[str], env_extra: Dict[str, str]) -> Tuple[Optional[dict], str]:
    """(result, "") of a fresh worker process, or (None, the last line of its error)."""
    env = dict(os.environ, **env_extra)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", *args], capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        lines = [line for line in out.stderr.strip().splitlines() if line.strip()]
        return None, (lines[-1] if lines else f"exit code {out.returncode}")[-300:]
    return json.loads(out.stdout.strip().splitlines()[-1]), ""


def available(lib: str, part: str) -> str:
    """'' if the library imports here (and, for ciyuan, has the Unigram pieces), else why not."""
    import importlib

    try:
        importlib.import_module(MODULES[lib])
    except ImportError as e:
        return f"not installed ({e})"
    if lib == "ciyuan":
        module, name = ("ciyuan.trainers", "UnigramTrainer") if part == "train" else ("ciyuan.models", "Unigram")
        if not hasattr(importlib.import_module(module), name):
            return f"this build has no {module}.{name} yet"
    return ""


def version(lib: str) -> str:
    from importlib import metadata

    dist = {"hf": "tokenizers"}.get(lib, lib)
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def prepare_training(corpus: str, mb: Optional[float], holdout: int, work: Path) -> Tuple[Path, Path, float, int]:
    """Write the training file (all but the last `holdout` lines of the corpus, or of its first
    `mb` MB cut at a line end) and the held-out file; (train, held-out, train MB, held-out lines)."""
    with open(CORPORA[corpus], "rb") as f:
        data = f.read() if mb is None else f.read(int(mb * 1_000_000))
    data = data[: data.rfind(b"\n") + 1]
    holdout = min(holdout, data.count(b"\n") // 10)  # a small prefix keeps at least 90% for training
    cut = len(data)
    for _ in range(holdout):
        cut = data.rfind(b"\n", 0, cut - 1) + 1
    train, held = work / f"train-{corpus}.txt", work / f"holdout-{corpus}.txt"
    train.write_bytes(data[:cut])
    held.write_bytes(data[cut:])
    return train, held, cut / 1e6, holdout


def run_train(args: argparse.Namespace, out: Path, work: Path) -> Tuple[List[str], Dict]:
    libs = [lib for lib in args.train_libs.split(",") if lib]
    results: Dict[Tuple[str, str], dict] = {}
    sizes: Dict[str, float] = {}
    for corpus, mb, holdout in (("en", args.en_mb, args.holdout_en), ("zh", args.zh_mb, args.holdout_zh)):
        if corpus not in args.corpora.split(","):
            continue
        if not CORPORA[corpus].exists():
            print(f"skip training on {corpus}: {CORPORA[corpus]} not found", file=sys.stderr)
            continue
        train, held, sizes[corpus], n_held = prepare_training(corpus, mb, holdout, work)
        print(f"training on {corpus}: {sizes[corpus]:.1f} MB, {n_held} held-out lines", file=sys.stderr)
        runs: Dict[str, List[dict]] = {lib: [] for lib in libs}
        errors: Dict[str, str] = {}
        for lib in libs:
            why = available(lib, "train")
            if why:
                errors[lib] = why
                print(f"  skip {lib}: {why}", file=sys.stderr)
        for r in range(args.train_rounds):
            order = libs if r % 2 == 0 else libs[::-1]
            for lib in order:
                if lib in errors:
                    continue
                env = {"RAYON_NUM_THREADS": str(args.threads), "TOKENIZERS_PARALLELISM": "true"}
                res, err = run_worker(["train", lib, corpus, str(train), str(held), str(out), str(args.vocab),
                                       str(args.max_sentence_length), str(args.threads)], env)
                if res is None:
                    errors[lib] = f"failed: {err}"
                    print(f"  skip {lib}: {errors[lib]}", file=sys.stderr)
                    continue
                runs[lib].append(res)
                for key in ("save_error", "holdout_error"):
                    if key in res:
                        print(f"  note: {lib}: {key.replace('_', ' ')}: {res[key]}", file=sys.stderr)
                per_line = res["holdout_tokens"] / max(1, res["holdout_lines"])
                print(f"  round {r + 1} {lib:13s} {res['seconds']:8.2f} s  peak RSS {res['rss_mb']:6.0f} MB  "
                      f"vocab {res['vocab']}  held-out {res['holdout_tokens']} tokens ({per_line:.3f}/line)",
                      file=sys.stderr, flush=True)
        for lib in libs:
            if runs[lib]:
                rs = runs[lib]
                results[(corpus, lib)] = {
                    "seconds": statistics.median(x["seconds"] for x in rs),
                    "rss_mb": statistics.median(x["rss_mb"] for x in rs),
                    "runs": [round(x["seconds"], 2) for x in rs], "vocab": rs[-1]["vocab"],
                    "holdout_tokens": None if "holdout_error" in rs[-1] else rs[-1]["holdout_tokens"],
                    "holdout_lines": rs[-1]["holdout_lines"],
                    "holdout_same": len({x["holdout_tokens"] for x in rs}) == 1, "options": rs[-1].get("options"),
                }
            else:
                results[(corpus, lib)] = {"error": errors.get(lib, "no runs")}

    lines = [
        f"Unigram training, vocabulary {args.vocab:,}; {machine()}; "
        + ", ".join(f"{lib} {version(lib)}" for lib in libs) + ".",
        f"Median of {args.train_rounds} rounds (fresh process each, order alternating); wall time includes "
        f"reading the file. Threads: {args.threads}. All trainers read every line "
        f"(max_sentence_length {args.max_sentence_length:,}). Ratios: the peer's figure over ciyuan's "
        "(time > 1: ciyuan faster; RSS > 1: ciyuan uses less). Held-out: tokens per non-empty held-out line, "
        "each model encoded with its own library; \"vs SentencePiece\" is the token count over SentencePiece's "
        "(< 1: fewer tokens).",
        "",
        "| corpus | trainer | wall time | peak RSS | vocab | time vs ciyuan | RSS vs ciyuan | held-out tokens/line "
        "| tokens vs SentencePiece |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for corpus in ("en", "zh"):
        if corpus not in sizes:
            continue
        name = f"{CORPORA[corpus].name} ({sizes[corpus]:.1f} MB trained)"
        base, spm_r = results.get((corpus, "ciyuan"), {}), results.get((corpus, "sentencepiece"), {})
        for lib in libs:
            r = results[(corpus, lib)]
            if "error" in r:
                error = r["error"] if len(r["error"]) <= 100 else "..." + r["error"][-97:]
                lines.append(f"| {name} | {TRAIN_LABELS[lib]} | {error} | | | | | | |")
                continue
            ok = "seconds" in base and lib != "ciyuan"
            t = f"{r['seconds'] / base['seconds']:.2f}x" if ok else "-"
            m = f"{r['rss_mb'] / base['rss_mb']:.2f}x" if ok else "-"
            held = r["holdout_tokens"]
            per_line = f"{held / max(1, r['holdout_lines']):.3f}" if held is not None else "-"
            q = (f"{held / spm_r['holdout_tokens']:.4f}"
                 if held is not None and spm_r.get("holdout_tokens") and lib != "sentencepiece" else "-")
            lines.append(f"| {name} | {TRAIN_LABELS[lib]} | {r['seconds']:.2f} s | {r['rss_mb']:.0f} MB | "
                         f"{r['vocab']:,} | {t} | {m} | {per_line} | {q} |")
    notes = [f"ciyuan trainer options passed: {r['options']}" for (c, lib), r in results.items()
             if lib == "ciyuan" and r.get("options") is not None][:1]
    notes += [f"note: {TRAIN_LABELS[lib]} on {c}: held-out counts differ between rounds" for (c, lib), r in
              results.items() if "error" not in r and not r["holdout_same"]]
    return lines + ([""] + notes if notes else []), results


def text_slice(path: Path, offset: int, nbytes: int) -> bytes:
    """About `nbytes` bytes of whole lines from `offset` on (the line under `offset` skipped)."""
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(nbytes + (1 << 16) if offset else nbytes)
    if offset:
        data = data[data.find(b"\n") + 1:]
        data = data[:nbytes]
    return data[: data.rfind(b"\n") + 1]


def run_encode(args: argparse.Namespace, out: Path, work: Path) -> List[str]:
    libs = [lib for lib in args.encode_libs.split(",") if lib]
    wanted = set(args.models.split(",")) if args.models != "all" else None
    models: List[Tuple[str, Path, Tuple[str, ...]]] = []
    for name, texts in SHARED_MODELS.items():
        if (SPM_DIR / f"{name}.model").exists() and (wanted is None or name in wanted):
            models.append((name, SPM_DIR / f"{name}.model", texts))
    for trainer in ("sentencepiece", "ciyuan"):
        for corpus in ("en", "zh"):
            path = out / f"{trainer}-{corpus}.model"
            if wanted is not None and path.stem not in wanted:
                continue
            if path.exists():
                models.append((f"{trainer}-{corpus} (trained here)", path, (corpus,)))
            else:
                print(f"note: no {path.name} in {out} (train first, or pass --out of a training run)",
                      file=sys.stderr)
    texts_needed = sorted({t for _, _, ts in models for t in ts}, key=list(CORPORA).index)
    texts_needed = [t for t in texts_needed if t in args.corpora.split(",") + ["ja"] and CORPORA[t].exists()]
    slice_bytes = int(args.encode_mb * 1_000_000)
    slices: Dict[Tuple[str, int], Path] = {}
    for corpus in texts_needed:
        size = CORPORA[corpus].stat().st_size
        for r in range(args.encode_rounds):
            offset = 0 if size <= slice_bytes else (r * slice_bytes) % (size - slice_bytes)
            p = work / f"slice-{corpus}-{r}.txt"
            p.write_bytes(text_slice(CORPORA[corpus], offset, slice_bytes))
            slices[(corpus, r)] = p
        if size <= slice_bytes * args.encode_rounds:
            print(f"note: {CORPORA[corpus].name} ({size / 1e6:.1f} MB) is smaller than {args.encode_rounds} slices of "
                  f"{args.encode_mb:g} MB: rounds overlap", file=sys.stderr)
    unavailable = {lib: why for lib in libs if (why := available(lib, "encode"))}
    for lib, why in unavailable.items():
        print(f"skip {lib}: {why}", file=sys.stderr)
    rows = []
    for name, path, texts in models:
        failed: Dict[str, str] = dict(unavailable)  # a library that fails on a model is not tried again on it
        for corpus in texts:
            if corpus not in texts_needed:
                continue
            for threads in args.threads_list:
                runs: Dict[str, List[dict]] = {lib: [] for lib in libs}
                ref: Dict[int, List[int]] = {}
                for r in range(args.encode_rounds):
                    order = libs if r % 2 == 0 else libs[::-1]
                    for lib in order:
                        if lib in failed:
                            continue
                        env = {"RAYON_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "true"}
                        res, err = run_worker(["encode", lib, str(path), str(slices[(corpus, r)]), str(threads)], env)
                        if res is None:
                            failed[lib] = err
                            print(f"  skip {lib} on {name}: {err}", file=sys.stderr)
                            continue
                        res["round"] = r
                        runs[lib].append(res)
                        if lib == "sentencepiece":
                            ref[r] = res["lines"]
                for lib in libs:
                    if not runs[lib]:
                        continue
                    rs = runs[lib]
                    checked = [(x["lines"], ref[x["round"]]) for x in rs if x["round"] in ref]
                    differ = sum(sum(a != b for a, b in zip(mine, theirs)) + abs(len(mine) - len(theirs))
                                 for mine, theirs in checked)
                    row = {"model": name, "corpus": corpus, "threads": threads, "lib": lib,
                           "mbps": statistics.median(x["mbps"] for x in rs),
                           "rss_mb": statistics.median(x["rss_mb"] for x in rs),
                           "cores": statistics.median(x["cores"] for x in rs),
                           "runs": [round(x["mbps"], 1) for x in rs],
                           "same": (differ == 0 if checked else None), "differ": differ,
                           "checked": sum(len(theirs) for _, theirs in checked)}
                    rows.append(row)
                    print(f"{name:28s} {corpus} {threads}t {ENCODE_LABELS[lib]:36s} {row['mbps']:8.2f} MB/s  "
                          f"peak RSS {row['rss_mb']:6.0f} MB  CPU/wall {row['cores']:.2f}  ids {_same_word(row)}  "
                          f"runs {row['runs']}",
                          file=sys.stderr, flush=True)
    return encode_tables(args, rows, libs, texts_needed, slices)


def _mbps(row: Optional[dict]) -> str:
    return f"{row['mbps']:.2f}" if row else "-"


def _same_word(row: dict) -> str:
    if row["same"] is None:
        return "?"
    return "yes" if row["same"] else f"NO ({row['differ']:,} of {row['checked']:,} lines differ)"


def encode_tables(args: argparse.Namespace, rows: List[dict], libs: List[str], texts: List[str],
                  slices: Dict[Tuple[str, int], Path]) -> List[str]:
    slice_mb = {c: statistics.median(slices[(c, r)].stat().st_size / 1e6 for r in range(args.encode_rounds))
                for c in texts}
    lines = [
        f"Encoding SentencePiece models; {machine()}; "
        + ", ".join(f"{ENCODE_LABELS[lib].split(' ')[0]} {version(lib)}" for lib in libs) + ".",
        "Line by line, a new slice of the text each round ("
        + ", ".join(f"{c} {slice_mb[c]:.1f} MB" for c in texts)
        + f"), {args.encode_rounds} rounds, every run a fresh process (order alternating); MB/s is the median "
        "of the rounds, peak RSS the worker's. \"ciyuan / this\": ciyuan's MB/s over the library's at the same "
        "thread count. \"CPU / wall\": the process's CPU time over the wall time of the pass (how many cores the "
        "library kept busy). \"ids = sentencepiece\": the library's ids on every line of every slice equal "
        "SentencePiece's.",
        "",
        "| model | text | library | threads | MB/s | ciyuan / this | CPU / wall | peak RSS | ids = sentencepiece |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    by_key: Dict[Tuple[str, str, int], Dict[str, dict]] = {}
    for row in rows:
        by_key.setdefault((row["model"], row["corpus"], row["threads"]), {})[row["lib"]] = row
    for (model, corpus, threads), group in by_key.items():
        ours = group.get("ciyuan")
        for lib, row in group.items():
            ratio = f"{ours['mbps'] / row['mbps']:.2f}x" if ours and lib != "ciyuan" else "-"
            lines.append(f"| {model} | {corpus} | {ENCODE_LABELS[lib]} | {threads} | {row['mbps']:.2f} | {ratio} | "
                         f"{row['cores']:.2f} | {row['rss_mb']:.0f} MB | {_same_word(row)} |")
    lines += [
        "",
        "Summary (libraries whose ids differ from SentencePiece's are left out of \"fastest other\"):",
        "",
        "| model | text | threads | ciyuan MB/s | sentencepiece MB/s | ciyuan / sentencepiece "
        "| fastest other (ids equal) | its MB/s | ciyuan / it |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for (model, corpus, threads), group in by_key.items():
        ours, sp = group.get("ciyuan"), group.get("sentencepiece")
        others = [r for lib, r in group.items() if lib not in ("ciyuan", "sentencepiece") and r["same"]]
        best = max(others, key=lambda r: r["mbps"]) if others else None

        vs_sp = f"{ours['mbps'] / sp['mbps']:.2f}x" if ours and sp else "-"
        vs_best = f"{ours['mbps'] / best['mbps']:.2f}x" if ours and best else "-"
        lines.append(f"| {model} | {corpus} | {threads} | {_mbps(ours)} | {_mbps(sp)} | {vs_sp} | "
                     f"{ENCODE_LABELS[best['lib']] if best else '-'} | {_mbps(best)} | {vs_best} |")
    mismatched = sorted({(r["lib"], r["model"]) for r in rows if r["same"] is False})
    if mismatched:
        lines += ["", "Ids differ from SentencePiece's: " + "; ".join(f"{ENCODE_LABELS[lib]} on {m}"
                                                                     for lib, m in mismatched) + "."]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    ap.add_argument("--part", choices=["train", "encode", "all"], default="all")
    ap.add_argument("--corpora", default="en,zh", help="training corpora and encoding texts besides Japanese "
                                                       "(default en,zh)")
    ap.add_argument("--en-mb", type=float, help="train on the first MB of the English file (default: all 105 MB)")
    ap.add_argument("--zh-mb", type=float, help="train on the first MB of the Chinese file (default: all 26 MB)")
    ap.add_argument("--holdout-en", type=int, default=5000, help="English lines held out (default 5000)")
    ap.add_argument("--holdout-zh", type=int, default=2000, help="Chinese lines held out (default 2000)")
    ap.add_argument("--vocab", type=int, default=32000, help="vocabulary size (default 32000)")
    ap.add_argument("--max-sentence-length", type=int, default=131072,
                    help="bytes; longer lines are skipped by SentencePiece (and ciyuan): default 131072, above every "
                         "line of both corpora (SentencePiece's own default is 4192)")
    ap.add_argument("--threads", type=int, default=2, help="training threads for every trainer (default 2)")
    ap.add_argument("--train-rounds", type=int, default=2, help="training rounds (default 2; SentencePiece takes "
                                                                "~60 s and HF ~110 s on the full English file)")
    ap.add_argument("--train-libs", default=",".join(TRAIN_LIBS), help="default: " + ",".join(TRAIN_LIBS))
    ap.add_argument("--encode-rounds", type=int, default=3, help="encoding rounds, a new slice each (default 3)")
    ap.add_argument("--encode-mb", type=float, default=5, help="MB of text per encoding slice (default 5)")
    ap.add_argument("--encode-threads", default="1,2", help="thread counts to encode with (default 1,2)")
    ap.add_argument("--models", default="all", help="models to encode with: llama2, albert, sentencepiece-en, "
                                                    "sentencepiece-zh, ciyuan-en, ciyuan-zh (default all)")
    ap.add_argument("--encode-libs", default=",".join(ENCODE_LIBS), help="default: " + ",".join(ENCODE_LIBS))
    ap.add_argument("--out", help="folder for the trained models (kept; --part encode reads them from here); "
                                  "default: a temporary folder")
    ap.add_argument("--markdown", metavar="FILE", help="also append the tables to this Markdown file")
    args = ap.parse_args()
    if args.worker:
        kind, *rest = args.worker
        if kind == "train":
            lib, corpus, train_file, holdout_file, out_dir, vocab, max_len, threads = rest
            train_worker(lib, corpus, train_file, holdout_file, out_dir, int(vocab), int(max_len), int(threads))
        else:
            lib, model, text_file, threads = rest
            encode_worker(lib, model, text_file, int(threads))
        return
    args.threads_list = [int(t) for t in args.encode_threads.split(",") if t]

    print(f"machine: {machine()}", file=sys.stderr)
    sections = []
    with tempfile.TemporaryDirectory(prefix="unigram-bench-") as tmp:
        work = Path(tmp)
        out = Path(args.out) if args.out else work / "models"
        out.mkdir(parents=True, exist_ok=True)
        if args.part in ("train", "all"):
            lines, _ = run_train(args, out, work)
            sections.append(("Unigram training (`benchmarks/unigram.py --part train`)", lines))
        if args.part in ("encode", "all"):
            lines = run_encode(args, out, work)
            sections.append(("Encoding SentencePiece models (`benchmarks/unigram.py --part encode`)", lines))
    for title, lines in sections:
        print(f"\n## {title}\n")
        print("\n".join(lines))
    append_markdown(args.markdown, sections)


if __name__ == "__main__":
    main()
