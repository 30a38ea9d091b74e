"""One very long pre-token: CPU time and peak memory of counting its tokens (docs/reliability.md).

A text without whitespace is one piece for the BPE, however long. Each library runs in a fresh
process: the text is built, the peak RSS read, the tokens counted, the peak read again.

    python benchmarks/long_piece.py                      # ciyuan, 100 MB, "a"* and "abc...z"*
    python benchmarks/long_piece.py --mb 1 --peers       # with tiktoken and tokenizers, 1 MB

tiktoken's merge loop is quadratic in the piece, so its sizes stay small.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from _common import SHARED_DATA

_CHILD = """
import resource, sys, time
library, kind, size, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
text = "a" * size if kind == "a" else ("abcdefghijklmnopqrstuvwxyz" * (size // 26 + 1))[:size]
if library == "ciyuan":
    import ciyuan
    tok = ciyuan.Tokenizer.from_tiktoken(ranks, "cl100k_base")
    count = tok.count_tokens
elif library == "tiktoken":
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from ciyuan.pre_tokenizers.patterns import CL100K_PATTERN
    enc = tiktoken.Encoding("cl100k", pat_str=CL100K_PATTERN, mergeable_ranks=load_tiktoken_bpe(ranks),
                            special_tokens={})
    count = lambda t: len(enc.encode_ordinary(t))
else:
    import ciyuan, tempfile, os, tokenizers
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "tokenizer.json")
    ciyuan.Tokenizer.from_tiktoken(ranks, "cl100k_base").save(path, format="huggingface")
    hf = tokenizers.Tokenizer.from_file(path)
    count = lambda t: len(hf.encode(t, add_special_tokens=False).ids)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.process_time()
n = count(text)
print(n, time.process_time() - start, before / 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=100.0, help="size of the piece in MB (10^6 characters)")
    parser.add_argument("--peers", action="store_true", help="also tiktoken and Hugging Face tokenizers")
    args = parser.parse_args()
    ranks = str(SHARED_DATA / "tokenizers" / "tiktoken" / "cl100k_base.tiktoken")
    size = int(args.mb * 1_000_000)
    libraries = ["ciyuan"] + (["tiktoken", "tokenizers"] if args.peers else [])
    print("| library | text | MB | tokens | CPU s | peak RSS before → after (MB) |")
    print("|---|---|---:|---:|---:|---|")
    for kind, label in (("a", '"a" * n'), ("z", '"abc…z" * n/26')):
        for library in libraries:
            done = subprocess.run([sys.executable, "-c", _CHILD, library, kind, str(size), ranks],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                print(f"| {library} | {label} | {args.mb:g} | failed: {done.stderr.strip().splitlines()[-1]} | | |")
                continue
            tokens, cpu, before, after = done.stdout.split()
            print(f"| {library} | {label} | {args.mb:g} | {int(tokens):,} | {float(cpu):.2f} | "
                  f"{float(before):,.0f} → {float(after):,.0f} |", flush=True)


if __name__ == "__main__":
    main()
