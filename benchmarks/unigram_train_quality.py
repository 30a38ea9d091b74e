"""Unigram / SentencePiece-BPE training, ciyuan against sentencepiece: time, peak RSS, held-out tokens.

Each trainer runs in its own process (peak RSS = that process's maximum resident set, read
with getrusage after it ends) on the same lines: the file's first bytes minus the last
``--held`` lines, which are the held-out set. Both models are then loaded by ``sentencepiece``
(ciyuan's as the ``.model`` file it wrote) and the held-out lines encoded; ciyuan's own encoder
must give the same ids as sentencepiece does for ciyuan's model.

Example:
    python benchmarks/unigram_train_quality.py ../shared/data/corpora/en/gutenberg_100mb.txt \\
        --bytes 10000000 --vocab-size 32000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
kind, train, out, vocab, model_type, threads, extra = sys.argv[1:8]
vocab, threads, extra = int(vocab), int(threads), json.loads(extra)
start = time.perf_counter()
if kind == "ciyuan":
    from ciyuan import Tokenizer
    from ciyuan.normalizers import SentencePieceNormalizer
    from ciyuan.trainers import UnigramTrainer
    if extra.pop("charsmap_from", None):  # nmt_nfkc's map as sentencepiece stored it, not built here
        from sentencepiece import sentencepiece_model_pb2 as pb
        proto = pb.ModelProto()
        with open(out.replace("ciyuan.model", "sentencepiece.model"), "rb") as f:
            proto.ParseFromString(f.read())
        normalizer = SentencePieceNormalizer(charsmap=proto.normalizer_spec.precompiled_charsmap)
    else:
        normalizer = SentencePieceNormalizer()  # builds the nmt_nfkc charsmap: timed apart
    built = time.perf_counter()
    tok = Tokenizer.train(train, UnigramTrainer(vocab, model_type=model_type, threads=threads, **extra),
                          normalizer=normalizer)
    tok.save(out)
    print(json.dumps({"seconds": time.perf_counter() - start, "normalizer_build_seconds": built - start,
                      "training_seconds": time.perf_counter() - built}))
    sys.exit(0)
else:
    import sentencepiece as spm
    spm.SentencePieceTrainer.train(input=train, model_prefix=out[:-len(".model")], vocab_size=vocab,
                                   model_type=model_type, num_threads=threads, minloglevel=2,
                                   **extra)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def run(kind: str, train: str, out: str, args: argparse.Namespace, extra: dict) -> dict:
    """One trainer in its own process; its peak RSS from wait4's resource usage."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD, kind, train, out, str(args.vocab_size), args.model_type,
                             str(args.threads), json.dumps(extra)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    stdout, stderr = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        return {"error": stderr.strip().splitlines()[-1]}
    result = json.loads(stdout.strip().splitlines()[-1])
    result["peak_rss_mb"] = usage.ru_maxrss / 1024
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("corpus")
    p.add_argument("--bytes", type=int, default=10_000_000)
    p.add_argument("--held", type=int, default=5000, help="held-out lines (the last ones)")
    p.add_argument("--vocab-size", type=int, default=32000)
    p.add_argument("--model-type", default="unigram", choices=("unigram", "bpe"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--spm-option", action="append", default=[], metavar="K=V",
                   help="an extra sentencepiece trainer option (e.g. hard_vocab_limit=false)")
    p.add_argument("--prebuilt-charsmap", action="store_true",
                   help="ciyuan reads nmt_nfkc's charsmap from sentencepiece's model instead of building it")
    args = p.parse_args()
    with open(args.corpus, "rb") as f:
        text = f.read(args.bytes).decode("utf-8", "ignore")
    lines = text.split("\n")
    train, held = lines[:-args.held], [line for line in lines[-args.held:] if line.strip()]
    tmp = tempfile.mkdtemp(prefix="unigram_bench_")
    train_path = os.path.join(tmp, "train.txt")
    with open(train_path, "w", encoding="utf-8") as f:
        f.write("\n".join(train) + "\n")
    spm_extra = dict(o.split("=", 1) for o in args.spm_option)
    results = {}
    for kind in ("sentencepiece", "ciyuan"):
        results[kind] = run(kind, train_path, os.path.join(tmp, f"{kind}.model"), args,
                            spm_extra if kind == "sentencepiece" else
                            ({"charsmap_from": True} if args.prebuilt_charsmap else {}))
    import sentencepiece as spm

    from ciyuan import Tokenizer

    for kind in results:
        if "error" in results[kind]:
            continue
        sp = spm.SentencePieceProcessor(model_file=os.path.join(tmp, f"{kind}.model"))
        ids = sp.encode(held)
        results[kind]["pieces"] = sp.get_piece_size()
        results[kind]["tokens_per_line"] = sum(map(len, ids)) / len(held)
        if kind == "ciyuan":
            tok = Tokenizer.from_file(os.path.join(tmp, "ciyuan.model"))
            results[kind]["held_out_lines_identical_in_sentencepiece"] = sum(
                e.ids == i for e, i in zip(tok.encode_batch(held), ids)) / len(held)
    a, b = results.get("sentencepiece", {}), results.get("ciyuan", {})
    if "seconds" in a and "seconds" in b:
        results["speedup"] = a["seconds"] / b["seconds"]
        results["speedup_without_normalizer_build"] = a["seconds"] / b["training_seconds"]
        results["tokens_ratio"] = b["tokens_per_line"] / a["tokens_per_line"]
    print(json.dumps({"corpus": args.corpus, "bytes": args.bytes, "held_out_lines": len(held),
                      "vocab_size": args.vocab_size, "model_type": args.model_type, **results}, indent=1))


if __name__ == "__main__":
    start = time.perf_counter()
    main()
