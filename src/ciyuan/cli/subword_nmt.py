"""``apply-bpe`` and ``learn-bpe``: subword-nmt codes, applied and learned as subword-nmt does.

``ciyuan apply-bpe`` writes what ``subword-nmt apply-bpe`` writes; ``ciyuan learn-bpe`` writes
the codes ``subword-nmt learn-bpe`` writes (ciyuan's native BPE trainer with subword-nmt's
tie rule).

The flags are subword-nmt's (``--codes/-c``, ``--merges/-m``, ``--separator/-s``,
``--vocabulary``, ``--vocabulary-threshold``, ``--glossaries``, ``--dropout``, ``--seed``,
``--input/-i``, ``--output/-o``), so a pipeline switches by changing the program's name. Lines
are read as subword-nmt reads standard input: ``\\n``, ``\\r\\n`` and a lone ``\\r`` end a
line, and each line keeps its own ending.
"""

from __future__ import annotations

import argparse
import random
import re
from typing import Dict, Iterator, List

from ciyuan.cli.files import input_files, open_output
from ciyuan.cli.options import Command, add_errors_argument

__all__ = ["COMMANDS", "add_arguments", "run"]

_EXAMPLES = """examples:
  ciyuan apply-bpe -c codes.txt < train.tok > train.bpe
  ciyuan apply-bpe -c codes.txt --vocabulary vocab.en --vocabulary-threshold 50 < test.tok > test.bpe
  ciyuan apply-bpe -c codes.txt --glossaries "<[a-z]+>" "[0-9]+" -i in.txt -o out.txt
  ciyuan apply-bpe -c codes.txt --dropout 0.1 --seed 7 < train.tok > train.dropout.bpe"""

_LEARN_EXAMPLES = """examples:
  ciyuan learn-bpe -s 10000 < train.tok > codes.txt
  ciyuan learn-bpe -s 32000 --total-symbols -i train.tok -o codes.txt
  subword-nmt get-vocab < train.tok > vocab.txt && ciyuan learn-bpe -s 10000 --dict-input -i vocab.txt -o codes.txt"""

COMMANDS: Dict[str, Command] = {
    "apply-bpe": Command(
        "segment words with subword-nmt BPE codes (the output of subword-nmt apply-bpe)",
        "Cut the words of each line (split at spaces) into the subword units of a subword-nmt codes file, "
        "marking every unit that does not end its word with the separator (\"@@ \"). The output is "
        "identical to `subword-nmt apply-bpe` with the same options: glossaries, the vocabulary filter "
        "(units outside the vocabulary are split back into known ones), --merges, and BPE-dropout "
        "(seeded by --seed as subword-nmt seeds Python's random numbers).",
        _EXAMPLES),
    "learn-bpe": Command(
        "learn subword-nmt BPE codes (the codes of subword-nmt learn-bpe)",
        "Count the words of the input (split at spaces) and learn BPE merges with the end-of-word marker "
        "</w>, writing a codes file (#version: 0.2) identical to `subword-nmt learn-bpe` with the same "
        "options: the most frequent pair first, the greatest pair (as text) among equally frequent ones, "
        "stopping after --symbols merges or when the best pair is seen fewer than --min-frequency times.",
        _LEARN_EXAMPLES),
}


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    if name == "learn-bpe":
        _add_learn_arguments(p)
        return
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


def _add_learn_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="*", metavar="FILE", help="input files (default: --input, or standard input)")
    p.add_argument("--input", "-i", metavar="PATH", help="input file (default: standard input)")
    p.add_argument("--output", "-o", metavar="PATH",
                   help="output file (default: standard output; replaced atomically when done)")
    p.add_argument("--symbols", "-s", type=int, default=10000, metavar="INT",
                   help="create this many new symbols (merges) (default: %(default)s)")
    p.add_argument("--min-frequency", type=int, default=2, metavar="FREQ",
                   help="stop when the most frequent pair is seen fewer times (default: %(default)s)")
    p.add_argument("--dict-input", action="store_true", help="the input is a vocabulary ('word count' per line)")
    p.add_argument("--total-symbols", "-t", action="store_true",
                   help="--symbols counts the characters too (subtract the alphabet from the merges)")
    add_errors_argument(p, help="invalid UTF-8 in the input: stop with an error (strict, default) or read "
                                "the bad bytes as U+FFFD (replace)")


def _learn(args: argparse.Namespace) -> None:
    from ciyuan.formats.subword_nmt import codes_text, parse_vocabulary
    from ciyuan.formats.subword_nmt_learn import learn_codes

    inputs: List[str] = list(args.inputs) + ([args.input] if args.input else [])
    lines: List[str] = []
    for name, f in input_files(inputs):
        lines.extend(_lines(name, iter(f), args.errors))
    if args.dict_input:
        counts: Dict[str, int] = {}
        for word in parse_vocabulary("".join(lines)):
            counts[word] = 0
        for line in lines:
            word, count = line.strip("\r\n ").split(" ")
            counts[word] += int(count)
        codes = learn_codes(counts, args.symbols, args.min_frequency, args.total_symbols)
    else:
        codes = learn_codes(lines, args.symbols, args.min_frequency, args.total_symbols)
    with open_output(args.output) as out:
        out.write(codes_text(codes).encode("utf-8"))


# A lone "\r" ends a line too (followed by anything but "\n").
_LONE_CR = re.compile(r"(?<=\r)(?!\n)")


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
            # Lines end at "\n", "\r\n" or "\r", each kept as it is (Python's standard input).
            yield from (part for part in _LONE_CR.split(line) if part)
        else:
            yield line


def run(args: argparse.Namespace) -> None:
    """Run ``apply-bpe`` or ``learn-bpe`` (errors are ciyuan errors, reported by the caller)."""
    if args.command == "learn-bpe":
        _learn(args)
        return
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
