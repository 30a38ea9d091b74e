"""The ``convert`` command: write a tokenizer in another library's file format."""

from __future__ import annotations

import argparse
import sys
from typing import Dict

from ciyuan.cli.options import Command, add_alias

__all__ = ["COMMANDS", "add_arguments", "run"]

_EXAMPLES = """examples:
  ciyuan convert gpt2/encoder.json gpt2.tiktoken
      GPT-2's files as a tiktoken file (prints: load it with pattern='gpt2')
  ciyuan convert cl100k_base.tiktoken out/tokenizer.json
      a tiktoken vocabulary as Hugging Face's tokenizer.json
  ciyuan convert models/llama-2 llama2.json
      a model folder (tokenizer.json, tokenizer.model, vocab.json + merges.txt or vocab.txt) as ciyuan JSON
  ciyuan convert my-bpe.json codes.txt --to subword-nmt
  ciyuan convert bpe.json bpe.tiktoken --lossy
      write even though the format drops part of the tokenizer (the lost parts are printed)"""

COMMANDS: Dict[str, Command] = {
    "convert": Command(
        "write a tokenizer in another format (tokenizer.json, .tiktoken, GPT-2, .model, codes, vocab.txt)",
        "Read a tokenizer (any file or model folder ciyuan reads) and write it in another format: "
        "ciyuan JSON, Hugging Face's tokenizer.json, a .tiktoken file, GPT-2's encoder.json + "
        "vocab.bpe, a SentencePiece .model, subword-nmt codes or a BERT vocab.txt. The format is told "
        "by OUT's name unless --to gives it. A format that cannot hold the whole tokenizer is refused, "
        "naming what would be lost, unless --lossy; what the format does not store but its reader "
        "must be told (a .tiktoken file's pattern and special tokens) is printed.",
        _EXAMPLES),
}


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("source", metavar="IN", help="the tokenizer: a file or a model folder")
    p.add_argument("out", metavar="OUT", help="the file to write (for --to gpt2, a folder or its encoder.json)")
    # The names are ciyuan.convert.TARGETS, checked there: importing it here would load the
    # whole package before any command runs.
    p.add_argument("--to", metavar="FORMAT", default=None,
                   help="ciyuan, huggingface, tiktoken, gpt2, sentencepiece, subword-nmt or bert (default: told "
                        "by OUT's name: x.json, tokenizer.json, x.tiktoken, encoder.json, x.model, x.codes, vocab.txt)")
    p.add_argument("--pattern", metavar="NAME",
                   help="for a .tiktoken IN: its pre-tokenizer (a known encoding is recognised without it)")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=True,
                   help="for a BERT vocab.txt IN: lowercase (default) or keep case (--no-lowercase)")
    add_alias(p, "--cased", "lowercase", action="store_false")
    p.add_argument("--lossy", action="store_true",
                   help="write even when the format cannot hold the whole tokenizer (what is lost is printed)")


def run(args: argparse.Namespace) -> None:
    """Run ``convert`` (errors are ciyuan errors, reported by the caller)."""
    from ciyuan.convert import convert
    from ciyuan.tokenizer import Tokenizer

    tok = Tokenizer.load(args.source, args.pattern, lowercase=args.lowercase)
    for note in convert(tok, args.out, args.to, lossy=args.lossy):
        print(f"ciyuan convert: {note}", file=sys.stderr)
