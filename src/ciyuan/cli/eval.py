"""The ``ciyuan eval`` command: measure tokenizers on corpora (over :mod:`ciyuan.evaluation`)."""

from __future__ import annotations

import argparse
import sys
from typing import Dict, List, Optional

from ciyuan.cli.files import open_output
from ciyuan.cli.options import Command, add_errors_argument
from ciyuan.errors import InvalidInputError

__all__ = ["COMMANDS", "add_arguments", "run"]

_EPILOG = """\
examples:
  ciyuan eval bert-base-uncased-vocab.txt gpt2/ cl100k_base.tiktoken o200k_base.tiktoken \\
      --corpus udhr/ --plot plots/
  ciyuan eval cl100k_base.tiktoken --corpus jinyong.txt --zh-dict jieba_dict.txt --format json -o eval.json
  ciyuan eval zh=bert-base-chinese-vocab.txt --corpus pku_test.utf8 --gold pku_test_gold.utf8"""

COMMANDS: Dict[str, Command] = {
    "eval": Command(
        "measure tokenizers on corpora: compression, fertility, vocabulary use, parity, plots",
        "Measure tokenizers as papers do, on text files (one corpus each) and folders of one *.txt per "
        "language (the UDHR collection; an INDEX.tsv names each file's language and script): bytes and "
        "characters per token, tokens per word (fertility), the share of the vocabulary used and a Zipf "
        "fit, the unknown, byte-fallback and partial-character rates, Renyi efficiency; for a folder, each "
        "language's fertility, tokens per character and premium over --reference, and their spread; with "
        "--gold, tokens scored as words (P/R/F). Each non-blank line of a corpus is encoded on its own, "
        "without special tokens. A TOKENIZER is any file ciyuan loads (NAME=PATH names it).",
        _EPILOG),
}


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    """The options of ``eval``."""
    p.add_argument("tokenizers", nargs="+", metavar="TOKENIZER",
                   help="a tokenizer file or folder (tiktoken, GPT-2, BERT vocab.txt, tokenizer.json, .model, "
                        "ciyuan JSON); NAME=PATH to name it in the report")
    p.add_argument("--corpus", "-c", nargs="+", action="extend", required=True, metavar="FILE",
                   help="text files, or folders of one *.txt per language")
    p.add_argument("--format", "-f", choices=("markdown", "csv", "json"), default="markdown",
                   help="output format (default: markdown)")
    p.add_argument("--table", choices=("metrics", "languages", "parity", "curves", "segmentation"),
                   default="metrics", help="the table --format csv writes (default: metrics)")
    p.add_argument("--output", "-o", metavar="FILE", help="write here instead of standard output (atomically)")
    p.add_argument("--plot", metavar="DIR",
                   help="write the plots (PNG) into DIR: compression against vocabulary size, tokens per "
                        "character by script, token lengths")
    p.add_argument("--curve", action=argparse.BooleanOptionalAction, default=None,
                   help="measure compression against vocabulary size from prefixes of each BPE tokenizer's "
                        "merge list (default: with --plot)")
    p.add_argument("--curve-sizes", metavar="N,N,...",
                   help="the vocabulary sizes of the curve (default: 1024, 2048, ... and the full size)")
    p.add_argument("--zh-dict", metavar="FILE",
                   help="count words of Chinese text with this dictionary (forward maximum matching) instead "
                        "of by whitespace alone")
    p.add_argument("--gold", nargs="+", action="extend", default=[], metavar="FILE",
                   help="gold segmentations (words separated by spaces): score each tokenizer's tokens as words")
    p.add_argument("--reference", default="eng", metavar="LANG",
                   help="the language whose token count is the premium's denominator (file key or name; "
                        "default: eng)")
    p.add_argument("--renyi-alpha", type=float, default=2.5, metavar="A",
                   help="order of the Renyi efficiency (default: 2.5)")
    p.add_argument("--threads", type=int, default=None, metavar="N", help="encoder threads (default: all cores)")
    add_errors_argument(p, help="invalid UTF-8 in a corpus: stop with an error naming the file and byte "
                                "(strict, default) or read U+FFFD (replace)")


def _sizes(text: Optional[str]) -> Optional[List[int]]:
    if text is None:
        return None
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise InvalidInputError(f"--curve-sizes: expected comma-separated integers, got {text!r}") from None
    if not sizes or any(s < 1 for s in sizes):
        raise InvalidInputError(f"--curve-sizes: expected positive integers, got {text!r}")
    return sizes


def run(args: argparse.Namespace) -> None:
    """Run ``eval`` (errors are ciyuan errors, reported by the caller)."""
    from ciyuan.evaluation import evaluate, write_plots

    if args.threads is not None and args.threads < 1:
        raise InvalidInputError("--threads must be a positive integer")
    curves = args.curve if args.curve is not None else args.plot is not None
    report = evaluate(args.tokenizers, args.corpus, segmenter=args.zh_dict, gold=args.gold,
                      reference_language=args.reference, renyi_alpha=args.renyi_alpha, curves=curves,
                      curve_sizes=_sizes(args.curve_sizes), threads=args.threads, errors=args.errors,
                      progress=lambda line: print(f"ciyuan eval: {line}", file=sys.stderr))
    if args.format == "json":
        text = report.to_json(indent=1) + "\n"
    elif args.format == "csv":
        text = report.to_csv(args.table)
    else:
        text = report.to_markdown()
    with open_output(args.output) as out:
        out.write(text.encode("utf-8"))
    if args.plot is not None:
        for path in write_plots(report, args.plot):
            print(f"ciyuan eval: wrote {path}", file=sys.stderr)
