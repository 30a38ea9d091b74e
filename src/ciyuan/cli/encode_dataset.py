"""The ``encode-dataset`` command: a corpus (text, JSON Lines, Parquet) into token shards
(Megatron-LM's .bin/.idx, a flat token file with a numpy index, or Parquet), resumable.

The flags are named after :func:`ciyuan.datasets.encode_dataset`'s keyword arguments."""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from typing import Any, Dict, List, Optional, Union

from ciyuan.cli.options import Command
from ciyuan.errors import InvalidInputError

__all__ = ["COMMANDS", "add_arguments", "run"]

_EXAMPLES = """examples:
  ciyuan encode-dataset -t o200k_base.tiktoken corpus.jsonl.zst -o out/ --eos '<|endoftext|>'
      Megatron-LM shards out/shard_00000.bin + .idx (int32 ids: o200k's ids pass 65535)
  ciyuan encode-dataset -t gpt2/encoder.json 'books/*.txt' -o out/ --doc-per block --format flat
      nanoGPT-style uint16 out/shard_*.bin with out/shard_*.offsets.npy (document offsets)
  ciyuan encode-dataset -t tok.json data/ --input-format parquet --column content --format parquet -o out/
  ciyuan encode-dataset ... (the same command again)
      after a crash or Ctrl-C: continues after the last finished shard; the result is the
      same bytes as an uninterrupted run (out/manifest.json records inputs and shards)"""

COMMANDS: Dict[str, Command] = {
    "encode-dataset": Command(
        "corpus -> token shards (Megatron .bin/.idx, flat tokens + .npy offsets, Parquet); resumable",
        textwrap.fill(
            "Encode every document of a corpus into token shards for training: text files (a document per "
            "line, per blank-line block or per file), JSON Lines (--field; also .gz and .zst) or Parquet "
            "(--column), given as files, folders or glob patterns. Documents are encoded on all cores; the "
            "ids are exactly those of `ciyuan encode` / Tokenizer.encode_ids, with --bos/--eos around each "
            "document, and the output is the same bytes whatever --threads. Shards hold at most "
            "--shard-tokens tokens and whole documents (a longer document is a shard of its own). "
            "Running the same command again resumes a killed run; a bad document stops the run naming "
            "file:line unless --skip-bad. Layouts and details: docs/datasets.md.", width=100),
        _EXAMPLES),
}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)\s*$", re.IGNORECASE)


def _token_count(value: str) -> Optional[int]:
    """--shard-tokens: an integer, with an optional K/M/G/T (thousands, millions ...); 0 or 'none': no limit."""
    if value.strip().lower() in ("0", "none"):
        return None
    m = _SIZE.match(value)
    if not m:
        raise argparse.ArgumentTypeError(f"not a token count: {value!r} (e.g. 100000000, 100M, 2G, none)")
    scale = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}[m.group(2).lower()]
    count = int(float(m.group(1)) * scale)
    if count < 1:
        raise argparse.ArgumentTypeError(f"not a positive token count: {value!r}")
    return count


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    """The options of ``encode-dataset``."""
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="files, folders (every file under them, sorted) or glob patterns (quote them)")
    p.add_argument("--output", "-o", required=True, metavar="DIR",
                   help="the output folder (made if missing): shards and manifest.json")
    p.add_argument("--tokenizer", "-t", required=True, metavar="PATH",
                   help="a .tiktoken file, GPT-2's encoder.json, a BERT vocab.txt, a tokenizer.json or a "
                        "tokenizer saved by ciyuan")
    p.add_argument("--pattern", metavar="NAME",
                   help="for .tiktoken files: the encoding's name or a regex pattern (default: recognised)")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=True,
                   help="for a BERT vocab.txt: lowercase and strip accents (default) or not")
    out = p.add_argument_group("output")
    out.add_argument("--format", choices=("megatron", "flat", "parquet"), default="megatron",
                     help="megatron: .bin + .idx read by megatron-core's IndexedDataset (default); flat: the ids "
                          "back to back in .bin (np.memmap) + .offsets.npy (int64 document offsets); parquet: a "
                          "row per document, column input_ids")
    out.add_argument("--bos", action="append", metavar="TOKEN",
                     help="put this token before every document: a token string ('<s>') or an id (digits); "
                          "repeat for several")
    out.add_argument("--eos", action="append", metavar="TOKEN",
                     help="put this token after every document (e.g. '<|endoftext|>'); repeat for several")
    out.add_argument("--shard-tokens", type=_token_count, default="100M", metavar="N",
                     help="the most tokens per shard, e.g. 100M (default), 2G; 'none' for one shard. Documents "
                          "are never split: a document longer than N is a shard of its own")
    out.add_argument("--dtype", choices=("auto", "uint16", "uint32", "int32"), default="auto",
                     help="the ids' type: auto (default) is uint16 when every id is below 65536, else uint32 "
                          "(int32 for megatron, which has no uint32)")
    out.add_argument("--prefix", default="shard", help="shard file names: PREFIX_00000.* (default shard)")
    out.add_argument("--overwrite", action="store_true",
                     help="replace another run's shards in the output folder (default: resume the same run, "
                          "refuse a different one)")
    inp = p.add_argument_group("input")
    inp.add_argument("--input-format", choices=("auto", "text", "jsonl", "parquet"), default="auto",
                     help="auto (default): by file name (.jsonl/.ndjson/.json, .parquet, else text; .gz and .zst "
                          "are decompressed)")
    inp.add_argument("--doc-per", choices=("line", "block", "file"), default="line",
                     help="text files: a document per non-empty line (default), per block of lines between "
                          "blank lines, or per file")
    inp.add_argument("--field", default="text", help="JSON Lines: the field holding the text (default text)")
    inp.add_argument("--column", default=None, help="Parquet: the column holding the text (default: --field)")
    inp.add_argument("--errors", choices=("strict", "replace"), default="strict",
                     help="invalid UTF-8 in text files: a bad document (strict, default) or read as U+FFFD (replace)")
    inp.add_argument("--skip-bad", action="store_true",
                     help="count and leave out bad documents (invalid UTF-8, a bad JSON line, a missing field, "
                          "special-token text refused) instead of stopping at the first with its file:line")
    enc = p.add_argument_group("encoding")
    enc.add_argument("--threads", type=int, default=None, metavar="N",
                     help="encoding threads (default: all cores); the output does not depend on it")
    enc.add_argument("--add-special-tokens", action=argparse.BooleanOptionalAction, default=True,
                     help="add the tokenizer's post-processing tokens ([CLS], [SEP] ...) as encode_ids does "
                          "(default: yes)")
    enc.add_argument("--allowed-special", default="", metavar="LIST",
                     help="special tokens to encode as such when their text occurs: 'all' or a comma-separated "
                          "list (default: none)")
    enc.add_argument("--disallowed-special", default="all", metavar="LIST",
                     help="special tokens whose text in a document makes it bad: 'all' (default) or a "
                          "comma-separated list; '' encodes such text as ordinary text")
    enc.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="a progress line on standard error: documents, MB, tokens, MB/s, ETA (default: when "
                          "standard error is a terminal)")
    enc.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                     help="run as a Ray Data pipeline: read tasks, a pool of tokenizer actors (pip install "
                          "'ciyuan[ray]'); the "
                          "same bytes. Alone: a local Ray; 'auto': the cluster `ray start` runs here; HOST:6379 or "
                          "ray://HOST:10001 (docs/scale.md). --threads is then each tokenizer actor's threads")


def _tokens(values: Optional[List[str]]) -> Union[None, List[Union[int, str]]]:
    if not values:
        return None
    return [int(v) if v.isdigit() else v for v in values]


def _special(value: str) -> Any:
    return "all" if value == "all" else {s for s in value.split(",") if s}


def run(args: argparse.Namespace) -> None:
    """Run ``encode-dataset`` (errors are ciyuan errors, reported by the caller)."""
    from ciyuan.datasets.encode import encode_dataset
    from ciyuan.tokenizer import Tokenizer

    if args.threads is not None and args.threads < 1:
        raise InvalidInputError(f"--threads must be at least 1, not {args.threads}")
    tok = Tokenizer.load(args.tokenizer, args.pattern, lowercase=args.lowercase)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    run_it: Any = encode_dataset
    if args.ray is not None:
        from functools import partial

        from ciyuan.datasets.ray_engine import encode_dataset_ray

        run_it = partial(encode_dataset_ray, address=None if args.ray == "local" else args.ray)
    result = run_it(
        args.inputs, args.output, tok, format=args.format, bos=_tokens(args.bos), eos=_tokens(args.eos),
        shard_tokens=args.shard_tokens, dtype=args.dtype, threads=args.threads, skip_bad=args.skip_bad,
        input_format=args.input_format, doc_per=args.doc_per, field=args.field, column=args.column,
        errors=args.errors, add_special_tokens=args.add_special_tokens,
        allowed_special=_special(args.allowed_special), disallowed_special=_special(args.disallowed_special),
        prefix=args.prefix, overwrite=args.overwrite, progress=show,
    )
    resumed = f", {result.resumed_shards} of them from an earlier run" if result.resumed_shards else ""
    skipped = f", {result.skipped:,} bad documents skipped" if result.skipped else ""
    print(f"{result.documents:,} documents, {result.tokens:,} tokens ({result.dtype}) in {len(result.shards)} "
          f"{result.format} shard(s) in {result.output}{resumed}{skipped}", file=sys.stderr)
