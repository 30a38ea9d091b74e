"""The native BERT encoder alone (BertNormalizer + BertPreTokenizer + WordPiece in C++,
``_core.WordPieceEncoder``) against Hugging Face's ``BertWordPieceTokenizer``, side by side.

10 MB of English (gutenberg_100mb.txt, bert-base-uncased) and 10 MB of Chinese
(jinyong_16novels.txt, bert-base-chinese), encode_batch over the lines, 1 and 2 threads. Each
configuration runs in a fresh worker process and reports the median of several runs; ciyuan's
ids are checked against Hugging Face's. Hugging Face returns Encoding objects (ids, offsets,
masks held natively); ciyuan's encode_batch returns EncodingData (ids and offsets held
natively), encode_batch_ids lists of ids.

This measures the component; the full ``Tokenizer`` path is measured by the encode benchmark.

    python benchmarks/bert_native.py [--repeats 5] [--mb 10]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, machine, median_seconds, read_prefix, run_worker  # noqa: E402

CORPORA = {
    "en": (SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt", "bert-base-uncased-vocab.txt"),
    "zh": (SHARED_DATA / "corpora" / "zh" / "jinyong_16novels.txt", "bert-base-chinese-vocab.txt"),
}
LIBS = ("hf", "ciyuan", "ciyuan_ids")


def worker(lib: str, lang: str, threads: int, mb: int, repeats: int) -> str:
    corpus, vocab_name = CORPORA[lang]
    vocab = SHARED_DATA / "tokenizers" / "bert" / vocab_name
    lines = read_prefix(corpus, mb * 1_000_000).split("\n")
    size = sum(len(line.encode("utf-8")) + 1 for line in lines) / 1e6
    if lib == "hf":
        from tokenizers import BertWordPieceTokenizer

        tok = BertWordPieceTokenizer(str(vocab), lowercase=True)
        run = lambda: tok.encode_batch(lines)  # noqa: E731
        ids = [e.ids[1:-1] for e in run()]  # without the [CLS] ... [SEP] it adds
    else:
        from ciyuan.models import WordPiece
        from ciyuan.normalizers import BertNormalizer

        model = WordPiece.from_file(vocab)
        specials = [(t, model.token_to_id(t)) for t in ("[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]")]
        enc = model.make_encoder("", specials, BertNormalizer().native_bert_options())
        policy = b"\x01" * len(specials)  # special-token text is a special token, as in Hugging Face
        if lib == "ciyuan":
            run = lambda: enc.encode_batch(lines, policy, threads)  # noqa: E731
            ids = [d.ids for d in run()]
        else:
            run = lambda: enc.encode_batch_ids(lines, policy, threads)  # noqa: E731
            ids = run()
    h = hashlib.sha1()
    for x in ids:
        h.update(array("I", x).tobytes())
    seconds, _ = median_seconds(run, repeats)
    return f"{size / seconds:.1f} {h.hexdigest()[:12]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--mb", type=int, default=10)
    parser.add_argument("--worker", nargs=3, metavar=("LIB", "LANG", "THREADS"))
    args = parser.parse_args()
    if args.worker:
        lib, lang, threads = args.worker
        print(worker(lib, lang, int(threads), args.mb, args.repeats))
        return
    print(f"# {machine()}; {args.mb} MB per corpus, median of {args.repeats}, MB/s (higher is better)")
    print(f"{'corpus':8} {'threads':>7} " + " ".join(f"{lib:>12}" for lib in LIBS) + "   ciyuan/hf   ids equal")
    for lang in CORPORA:
        for threads in (1, 2):
            env = {"RAYON_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "true"}
            results = {lib: run_worker(Path(__file__), [lib, lang, str(threads), "--mb", str(args.mb),
                                                        "--repeats", str(args.repeats)], env).split()
                       for lib in LIBS}
            speed = {lib: float(r[0]) for lib, r in results.items()}
            same = len({r[1] for r in results.values()}) == 1
            print(f"{lang:8} {threads:>7} " + " ".join(f"{speed[lib]:>12.1f}" for lib in LIBS)
                  + f"   {speed['ciyuan'] / speed['hf']:>8.1f}x   {same}")


if __name__ == "__main__":
    main()
