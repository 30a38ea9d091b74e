"""The ``apply-bpe`` command: subword-nmt codes applied exactly as ``subword-nmt apply-bpe``.

The flags are subword-nmt's (``--codes/-c``, ``--merges/-m``, ``--separator/-s``,
``--vocabulary``, ``--vocabulary-threshold``, ``--glossaries``, ``--dropout``, ``--seed``,
``--input/-i``, ``--output/-o``), so a pipeline switches by changing the program's name. Lines
are read as subword-nmt reads standard input (``\\r\\n`` and a lone ``\\r`` end a line, as
``\\n`` does) and written with ``\\n``.
"""

from __future__ import annotations

import argparse
import random
from typing import Dict, Iterator, List

from ciyuan.cli.files import input_files, open_output
from ciyuan.cli.options import Command, add_errors_argument

__all__ = ["COMMANDS", "add_arguments", "run"]

_EXAMPLES = """examples:
  ciyuan apply-bpe -c codes.txt < train.tok > train.bpe
  ciyuan apply-bpe -c codes.txt --vocabulary vocab.en --vocabulary-threshold 50 < test.tok > test.bpe
  ciyuan apply-bpe -c codes.txt --glossaries "<[a-z]+>" "[0-9]+" -i in.txt -o out.txt
  ciyuan apply-bpe -c codes.txt --dropout 0.1 --seed 7 < train.tok > train.dropout.bpe"""

COMMANDS: Dict[str, Command] = {
    "apply-bpe": Command(
        "segment words with subword-nmt BPE codes (the output of subword-nmt apply-bpe)",
        "Cut the words of each line (split at spaces) into the subword units of a subword-nmt codes file, "
        "marking every unit that does not end its word with the separator (\"@@ \"). The output is "
        "identical to `subword-nmt apply-bpe` with the same options: glossaries, the vocabulary filter "
        "(units outside the vocabulary are split back into known ones), --merges, and BPE-dropout "
        "(seeded by --seed as subword-nmt seeds Python's random numbers).",
        _EXAMPLES),
}


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="*", metavar="FILE", help="input files (default: --input, or standard input)")
    p.add_argument("--input", "-i", metavar="PATH", help="input file (default: standard input)")
    p.add_argument("--codes", "-c", metavar="PATH", required=True, help="codes file (from subword-nmt learn-bpe)")
    p.add_argument("--merges", "-m", type=int, default=-1, metavar="INT",
                   help="use only the first INT merges (default: -1, all)")
    p.add_argument("--output", "-o", metavar="PATH",
                   help="output file (default: standard output; replaced atomically when done)")
    p.add_argument("--separator", "-s", default="@@", metavar="STR",
                   help="marks the units that do not end their word (default: %(default)s)")
    p.add_argument("--vocabulary", metavar="PATH",
                   help="vocabulary file (subword-nmt get-vocab): units outside it are split back by their merges")
    p.add_argument("--vocabulary-threshold", type=int, default=None, metavar="INT",
                   help="with --vocabulary: words counted fewer than INT times are outside it")
    p.add_argument("--dropout", type=float, default=0.0, metavar="P",
                   help="BPE-dropout: skip each merge with probability P (training data only)")
    p.add_argument("--glossaries", nargs="+", default=None, metavar="STR",
                   help="words or regexes that are never split or merged with their neighbours")
    p.add_argument("--seed", type=int, default=None, metavar="S", help="seed of the random numbers of --dropout")
    add_errors_argument(p, help="invalid UTF-8 in the input: stop with an error (strict, default) or read "
                                "the bad bytes as U+FFFD (replace)")


def _lines(name: str, raw_lines: Iterator[bytes], errors: str) -> Iterator[str]:
    from ciyuan._text import utf8_error

    offset = 0
    for number, raw in enumerate(raw_lines, 1):
        try:
            line = raw.decode("utf-8", errors)
        except UnicodeDecodeError as e:
            raise utf8_error(name, raw, e.start, offset=offset, first_line=number) from None
        offset += len(raw)
        if "\r" in line:
            # Universal newlines, as Python's text standard input: \r\n and \r end lines too.
            yield from line.replace("\r\n", "\n").replace("\r", "\n").splitlines(keepends=True)
        else:
            yield line


def run(args: argparse.Namespace) -> None:
    """Run ``apply-bpe`` (errors are ciyuan errors, reported by the caller)."""
    from ciyuan.formats.subword_nmt_apply import SubwordNmt

    bpe = SubwordNmt(args.codes, args.merges, args.separator, args.vocabulary, args.glossaries,
                     vocabulary_threshold=args.vocabulary_threshold)
    rng = random.Random(args.seed) if args.seed is not None else random.Random()
    inputs: List[str] = list(args.inputs) + ([args.input] if args.input else [])
    with open_output(args.output) as out:
        for name, f in input_files(inputs):
            batch: List[str] = []
            for line in bpe.process_lines(_lines(name, iter(f), args.errors), args.dropout, rng):
                batch.append(line)
                if len(batch) >= 4096:
                    out.write("".join(batch).encode("utf-8"))
                    batch = []
            out.write("".join(batch).encode("utf-8"))
