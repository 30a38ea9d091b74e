"""The ``ciyuan zh-bpe`` command: document 002's Chinese BPE tool (``ciyuan.textbook.zh_bpe``).

Two modes, named as the first argument (``ciyuan zh-bpe train ...``) or with ``--mode`` as the
tool's README writes it (``ciyuan zh-bpe --mode train ...``). Its flags are the documented
underscore ones (``--train_text``); the dashed spellings (``--train-text``) work too. Outputs
are written atomically.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List, Optional

from ciyuan.cli.options import Command, add_errors_argument

__all__ = ["COMMANDS", "add_arguments", "run"]

_MODES = ("train", "apply")

_ZH_DESCRIPTION = """\
A Chinese BPE tool in two modes (founding document 002; docs/seeds.md).

train  Cuts each line of --train_text at ASCII ',' into clauses (ASCII spaces and '。'
       removed; '，' is not a separator), marks each clause's last character with </w>, then
       merges the most frequent pair of symbols (equal counts: the greater pair, in code point
       order) at most --vocab_size times: --vocab_size counts merge steps. Training stops
       early when the best pair occurs fewer than --min_frequency times; it then prints
       已达到下限 ("reached the lower bound"). The merges, "a b" one per line in order, are the
       vocabulary file (--save_vocab).
apply  Reads the units of --vocab_filename: each line without its spaces and </w>, kept if it
       has one or two characters, all Chinese (U+4E00..U+9FA5), none of them 的. Each line of
       --test_text loses its spaces, tabs and U+3000, then the units are applied in file
       order, each taking (left to right, no overlaps) characters that no earlier unit took.
       Each line's units, joined by single spaces, go to --answer_filename: one line per line.

The mode is the first argument or --mode. Every flag also has a dashed spelling
(--train-text for --train_text)."""

_ZH_EPILOG = """\
examples:
  ciyuan zh-bpe train --train_text smalltrain.txt --save_vocab 1000.txt
  ciyuan zh-bpe apply --test_text smalltest.txt --vocab_filename 1000.txt --answer_filename answer.txt
  ciyuan zh-bpe --mode train --train_text train.txt --save_vocab 10000.txt --vocab_size 10000
  ciyuan zh-bpe --mode apply --test_text test.txt --vocab_filename 10000.txt > answer.txt"""

COMMANDS: Dict[str, Command] = {
    "zh-bpe": Command(
        "Chinese BPE tool (document 002): train merges on clauses, apply them as units",
        _ZH_DESCRIPTION,
        _ZH_EPILOG),
}

# Each mode's flags (their dests); the first two of each mode are required.
_TRAIN_FLAGS = ("train_text", "save_vocab", "vocab_size", "min_frequency")
_APPLY_FLAGS = ("test_text", "vocab_filename", "answer_filename")
_DEFAULTS = {"vocab_size": 1000, "min_frequency": 2}  # set after the mode is known


def _flag(dest: str) -> str:
    return "--" + dest


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    """The modes and options of ``zh-bpe``."""
    p.add_argument("mode_arg", nargs="?", choices=_MODES, metavar="MODE", help="train or apply")
    p.add_argument("--mode", choices=_MODES, help="the mode, as the tool's README gives it (instead of MODE)")

    def both(group: argparse._ActionsContainer, dest: str, **how: Any) -> None:
        group.add_argument(_flag(dest), _flag(dest).replace("_", "-"), dest=dest, **how)

    t = p.add_argument_group("train")
    both(t, "train_text", metavar="FILE", help="the training text (UTF-8; required)")
    both(t, "save_vocab", metavar="FILE", help="where the vocabulary (the merges) goes (required)")
    both(t, "vocab_size", type=int, metavar="N",
         help="the most merge steps (default 1000; the vocabulary file has at most N lines)")
    both(t, "min_frequency", type=int, metavar="K",
         help="stop when the most frequent pair occurs fewer than K times (default 2)")
    a = p.add_argument_group("apply")
    both(a, "test_text", metavar="FILE", help="the text to cut into units (UTF-8; required)")
    both(a, "vocab_filename", metavar="FILE", help="a vocabulary written by train (required)")
    both(a, "answer_filename", metavar="FILE", help="where the answer goes (default: standard output)")
    add_errors_argument(p, help="invalid UTF-8 in an input file: stop with an error naming the file and byte "
                                "(strict, default) or read the bad bytes as U+FFFD (replace)")


def _mode(args: argparse.Namespace) -> str:
    """The mode, from MODE or --mode; the error names what is wrong."""
    from ciyuan.errors import InvalidInputError

    if args.mode_arg and args.mode and args.mode_arg != args.mode:
        raise InvalidInputError(f"two modes given: {args.mode_arg} and --mode {args.mode}")
    mode: Optional[str] = args.mode_arg or args.mode
    if mode is None:
        raise InvalidInputError("give a mode: `ciyuan zh-bpe train ...` or `ciyuan zh-bpe apply ...` "
                                "(or --mode train / --mode apply)")
    own, other = (_TRAIN_FLAGS, _APPLY_FLAGS) if mode == "train" else (_APPLY_FLAGS, _TRAIN_FLAGS)
    stray = [_flag(d) for d in other if getattr(args, d) is not None]
    if stray:
        raise InvalidInputError(f"{', '.join(stray)}: not an option of {mode}")
    missing: List[str] = [_flag(d) + " FILE" for d in own[:2] if getattr(args, d) is None]
    if missing:
        raise InvalidInputError(f"{mode} needs {' and '.join(missing)}")
    for dest, default in _DEFAULTS.items():
        if getattr(args, dest) is None:
            setattr(args, dest, default)
    return mode


def run(args: argparse.Namespace) -> None:
    """Run ``zh-bpe train`` or ``zh-bpe apply`` (errors are ciyuan errors, reported by the caller)."""
    if _mode(args) == "train":
        _zh_train(args)
    else:
        _zh_apply(args)


def _zh_train(args: argparse.Namespace) -> None:
    from ciyuan.textbook.zh_bpe import LOWER_BOUND_MESSAGE, zh_bpe_train

    result = zh_bpe_train(args.train_text, args.save_vocab, args.vocab_size, args.min_frequency,
                          errors=args.errors)
    if result.stop == "min_frequency":
        print(LOWER_BOUND_MESSAGE)  # what the tool prints
    why = {
        "vocab_size": f"--vocab_size {args.vocab_size} merge steps done",
        "min_frequency": f"the most frequent pair occurs fewer than --min_frequency {args.min_frequency} times "
                         "(reached the lower bound)",
        "no_pair": "no pair left to merge",
    }[result.stop]
    n = len(result.merges)
    print(f"ciyuan zh-bpe train: {n:,} merge{'s' if n != 1 else ''} from {result.clauses:,} distinct clauses "
          f"({result.total:,} in all) -> {args.save_vocab}; stopped: {why}", file=sys.stderr)


def _zh_apply(args: argparse.Namespace) -> None:
    from ciyuan.textbook.zh_bpe import zh_bpe_apply

    to_stdout = args.answer_filename in (None, "-")
    answer = zh_bpe_apply(args.test_text, args.vocab_filename, None if to_stdout else args.answer_filename,
                          errors=args.errors)
    if to_stdout:
        sys.stdout.buffer.write(answer.text.encode("utf-8"))
        sys.stdout.buffer.flush()
    where = "standard output" if to_stdout else args.answer_filename
    print(f"ciyuan zh-bpe apply: {len(answer.units):,} units from {args.vocab_filename}; "
          f"{answer.lines:,} lines -> {where}", file=sys.stderr)
