"""The ``ciyuan zh-bpe`` command: a small Chinese BPE tool with two modes. ``train`` learns units
inside clauses of (space-free) Chinese text, ``apply`` cuts a text into those units, separated by
spaces. Its flags are the documented underscore ones (``--train_text``); the dashed spellings
(``--train-text``) work too. Outputs are written atomically.
"""

from __future__ import annotations

import argparse
import sys
from typing import Dict, List

from ciyuan.cli.options import Command

__all__ = ["COMMANDS", "add_arguments", "run"]

_ZH_EPILOG = """\
examples:
  ciyuan zh-bpe train --train_text smalltrain.txt --save_vocab vocab.txt --vocab_size 1000
  ciyuan zh-bpe apply --test_text smalltest.txt --vocab_filename vocab.txt --answer_filename answer.txt"""


COMMANDS: Dict[str, Command] = {
    "zh-bpe": Command(
        "Chinese BPE: learn units from Chinese text (train) and cut text into them (apply)",
        "A small Chinese BPE tool. Spaces are removed and the text is cut into clauses at sentence "
        "punctuation (， , 。 ...); BPE learns units inside the clauses.",
        _ZH_EPILOG),
}


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    """The two modes of ``zh-bpe`` and their options."""
    modes = p.add_subparsers(dest="mode", metavar="MODE", required=True)
    t = modes.add_parser("train", help="learn the units; writes the vocabulary (and its merges beside it)")
    t.add_argument("--train_text", "--train-text", required=True, metavar="FILE", help="the training text")
    t.add_argument("--save_vocab", "--save-vocab", required=True, metavar="FILE",
                   help="one unit per line; the merges go to FILE.merges")
    t.add_argument("--vocab_size", "--vocab-size", type=int, default=1000, metavar="N",
                   help="default 1000 (characters included)")
    t.add_argument("--min_frequency", "--min-frequency", type=int, default=2, metavar="K", help="default 2")
    a = modes.add_parser("apply", help="cut a text into the learned units, separated by spaces")
    a.add_argument("--test_text", "--test-text", required=True, metavar="FILE", help="the text to cut")
    a.add_argument("--vocab_filename", "--vocab-filename", required=True, metavar="FILE",
                   help="a vocabulary written by train (FILE.merges beside it; without it units are "
                        "taken greedily, longest first)")
    a.add_argument("--answer_filename", "--answer-filename", required=True, metavar="FILE",
                   help="where the cut text goes")


def run(args: argparse.Namespace) -> None:
    """Run ``zh-bpe train`` or ``zh-bpe apply`` (errors are ciyuan errors, reported by the caller)."""
    if args.mode == "train":
        _zh_train(args)
    else:
        _zh_apply(args)


_SPACES = str.maketrans("", "", " \t\u3000\r")


def _zh_text(path: str) -> str:
    """The file's text with spaces removed (the sample corpora put a space between characters)."""
    from ciyuan._io import read_utf8

    return read_utf8(path).translate(_SPACES)


def _zh_train(args: argparse.Namespace) -> None:
    from ciyuan._io import atomic_write_text
    from ciyuan.formats.vocab_merges import merges_lines, vocab_lines
    from ciyuan.pre_tokenizers import ZhSentence
    from ciyuan.trainers import BpeTrainer

    trainer = BpeTrainer(args.vocab_size, min_frequency=args.min_frequency)
    model = trainer.train(_zh_text(args.train_text).split("\n"), ZhSentence())
    vocab = "".join(line + "\n" for line in vocab_lines(model))
    merges = "".join(line + "\n" for line in merges_lines(model))
    atomic_write_text(args.save_vocab, vocab)
    atomic_write_text(args.save_vocab + ".merges", merges)
    print(f"ciyuan zh-bpe: {model.vocab_size} units ({len(model.merges)} merges) -> {args.save_vocab}",
          file=sys.stderr)


def _zh_apply(args: argparse.Namespace) -> None:
    from pathlib import Path

    from ciyuan._io import atomic_write_text
    from ciyuan.formats.vocab_merges import load_merges_txt, load_vocab_txt
    from ciyuan.models import BPE
    from ciyuan.pre_tokenizers import ZhSentence
    from ciyuan.tokenizer import Tokenizer

    vocab = load_vocab_txt(args.vocab_filename)
    merges_path = Path(args.vocab_filename + ".merges")
    if merges_path.exists():
        model = BPE(vocab, load_merges_txt(merges_path))
    else:
        model = BPE(vocab, encode_mode="longest_match")
    tok = Tokenizer(model, pre_tokenizer=None)
    splitter = ZhSentence()
    known = {t for t in vocab if len(t) == 1}
    cache: Dict[str, List[str]] = {}

    def units(piece: str) -> List[str]:
        if piece not in cache:
            out: List[str] = []
            run = ""
            for c in piece + "\0":
                if c in known:
                    run += c
                    continue
                if run:
                    out.extend(tok.encode(run).tokens)
                    run = ""
                if c != "\0":
                    out.append(c)  # a character never seen in training is a unit of its own
            cache[piece] = out
        return cache[piece]

    lines = []
    for line in _zh_text(args.test_text).split("\n"):
        lines.append(" ".join(u for s, e in splitter.split(line) for u in units(line[s:e])))
    if lines and lines[-1] == "":
        lines.pop()
    atomic_write_text(args.answer_filename, "".join(line + "\n" for line in lines))
    print(f"ciyuan zh-bpe: wrote {len(lines)} lines -> {args.answer_filename}", file=sys.stderr)
