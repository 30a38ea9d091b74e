"""Loading a tokenizer.json: ciyuan vs Hugging Face tokenizers, side by side.

    python benchmarks/load_tokenizer_json.py [--repeats 5] [--file PATH] [--markdown docs/benchmarks.md]

The file: by default o200k_base (200,000 tokens) written as tokenizer.json by ciyuan
(``convert``: its ranks as the merges that rebuild them, a Split with o200k's pattern and
ByteLevel), and GPT-2's tokenizer.json from shared/data; or any ``--file``. Each loader runs in
a fresh worker process: the figure is the median wall time of ``--repeats`` loads after one
warm-up load, with the worker's peak RSS.
  ciyuan Tokenizer.from_file(path)
  HF tokenizers.Tokenizer.from_file(path)
Both tokenizers are checked to encode a sample of text alike before timing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, append_markdown, machine, median_seconds, peak_rss_mb, run_worker  # noqa: E402

SAMPLE = "Hello world! 你好，世界。 1948 tokens, 12345 and émigrés.\n  spaces"


def worker(kind: str, path: str, repeats: int) -> None:
    if kind == "ciyuan":
        from ciyuan import Tokenizer

        def load() -> object:
            return Tokenizer.from_file(path)
    else:
        import tokenizers

        def load() -> object:
            return tokenizers.Tokenizer.from_file(path)
    median, times = median_seconds(load, repeats)
    tok = load()
    ids = tok.encode(SAMPLE).ids  # type: ignore[attr-defined]
    print(json.dumps({"median": median, "times": times, "rss": peak_rss_mb(), "ids": ids}))


def o200k_file(folder: Path) -> Path:
    from ciyuan import Tokenizer
    from ciyuan.convert import convert

    out = folder / "o200k" / "tokenizer.json"
    tok = Tokenizer.from_tiktoken(SHARED_DATA / "tokenizers" / "tiktoken" / "o200k_base.tiktoken", "o200k_base")
    convert(tok, out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--file", action="append", help="a tokenizer.json (default: o200k and GPT-2)")
    parser.add_argument("--markdown", help="append the table to this markdown file")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], int(args.worker[2]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        files = [Path(f) for f in args.file] if args.file else [o200k_file(Path(tmp)),
                                                                 SHARED_DATA / "tokenizers" / "gpt2" / "tokenizer.json"]
        lines: List[str] = [f"Machine: {machine()}. Median of {args.repeats} loads after a warm-up, each loader in "
                            "a fresh process; peak RSS of that process.", "",
                            "| file | size | loader | median load | peak RSS |", "|---|---|---|---|---|"]
        for path in files:
            name = path.parent.name + "/" + path.name
            size = f"{path.stat().st_size / 1e6:.1f} MB"
            results = {}
            for kind in ("hf", "ciyuan"):
                results[kind] = json.loads(run_worker(Path(__file__), [kind, str(path), str(args.repeats)], {}))
            if results["hf"]["ids"] != results["ciyuan"]["ids"]:
                raise SystemExit(f"{name}: ciyuan and tokenizers encode the sample differently")
            for kind, label in (("hf", "tokenizers.Tokenizer.from_file"), ("ciyuan", "ciyuan Tokenizer.from_file")):
                r = results[kind]
                lines.append(f"| {name} | {size} | {label} | {r['median'] * 1000:.0f} ms | {r['rss']:.0f} MB |")
            ratio = results["hf"]["median"] / results["ciyuan"]["median"]
            lines.append(f"| | | ciyuan vs tokenizers | {ratio:.2f}x as fast | |")
    print("\n".join(lines))
    append_markdown(args.markdown, [("Loading tokenizer.json", lines)])


if __name__ == "__main__":
    main()
