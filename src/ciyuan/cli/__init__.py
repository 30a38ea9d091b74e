"""The ``ciyuan`` command line: one module per command group.

- :mod:`ciyuan.cli.encode` - ``encode``, ``tokenize``, ``decode``
- :mod:`ciyuan.cli.train` - ``train``
- :mod:`ciyuan.cli.zh_bpe` - ``zh-bpe``
- :mod:`ciyuan.cli.segment` - ``segment``, ``seg-eval``
- :mod:`ciyuan.cli.convert` - ``convert``
- :mod:`ciyuan.cli.subword_nmt` - ``apply-bpe``, ``learn-bpe`` (subword-nmt codes)
- :mod:`ciyuan.cli.encode_dataset` - ``encode-dataset`` (a corpus into token shards)
- :mod:`ciyuan.cli.eval` - ``eval`` (compression, fertility, parity and plots of tokenizers)
- :mod:`ciyuan.cli.serve` - ``serve`` (the tokenizer playground page)
- :mod:`ciyuan.cli.files` - inputs, output and line batches, shared by them

Flags are named after the keyword arguments they set (``--lowercase`` for ``lowercase=``,
``--continuing-subword-prefix`` ...); earlier spellings are still accepted. Run ``ciyuan --help``
or ``ciyuan COMMAND --help`` for the options.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

# Only what every command needs is imported here; each command imports the rest when it runs,
# so that a short job (`ciyuan segment` on one file, say) does not start by loading all of it.
from ciyuan.cli import convert, encode, encode_dataset, segment, serve, subword_nmt, train, zh_bpe
from ciyuan.cli import eval as eval_
from ciyuan.cli.options import add_command
from ciyuan.errors import CiyuanError, DisallowedSpecialTokenError

__all__ = ["main"]

_GROUPS = (encode, train, zh_bpe, segment, convert, subword_nmt, encode_dataset, eval_, serve)

_DESCRIPTION = """\
ciyuan (词元): train, run and explain tokenizers.

  encode / tokenize / decode   use an existing vocabulary (a tiktoken file, GPT-2's
                               encoder.json + vocab.bpe, a BERT vocab.txt, or ciyuan JSON)
                               exactly as its own library does, but faster
  train / zh-bpe               learn a vocabulary: BPE (byte-level, character-level, Chinese),
                               WordPiece, word- or character-level
  segment / seg-eval           Chinese word segmentation with a dictionary, and its score
  convert                      write a tokenizer in another format (tokenizer.json, .tiktoken,
                               GPT-2's files, .model, subword-nmt codes, vocab.txt)
  apply-bpe / learn-bpe        subword-nmt codes, applied and learned as subword-nmt does
  encode-dataset               a corpus (text, JSON Lines, Parquet) into token shards for
                               training (Megatron .bin/.idx, flat tokens, Parquet); resumable
  eval                         measure tokenizers on corpora: compression, fertility,
                               vocabulary use, parity across languages, plots
  serve                        a local web page: tokens coloured, tokenizers side by side,
                               Chinese segmentation, small tokenizers trained on the page

Line-oriented commands read files, or standard input when none (or -) is named, and write
one output line per input line. `ciyuan COMMAND --help` explains each command."""

_EPILOG = """\
examples:
  ciyuan encode --tokenizer cl100k_base.tiktoken corpus.txt > ids.txt
  ciyuan decode --tokenizer cl100k_base.tiktoken ids.txt
  echo "Hello world" | ciyuan tokenize --tokenizer o200k_base.tiktoken --pattern o200k_base
  ciyuan encode --tokenizer gpt2/encoder.json --allowed-special all --whole doc.txt
  ciyuan encode --tokenizer bert-base-uncased-vocab.txt --pair --max-length 128 --padding max-length pairs.tsv
  ciyuan encode-dataset --tokenizer o200k_base.tiktoken corpus.jsonl.zst -o shards/ --eos '<|endoftext|>'"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ciyuan", description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from ciyuan import __version__

    parser.add_argument("--version", action="version", version=f"ciyuan {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in _GROUPS:
        for name, command in group.COMMANDS.items():
            group.add_arguments(name, add_command(sub, name, command))
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``ciyuan`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        next(g for g in _GROUPS if args.command in g.COMMANDS).run(args)
    except DisallowedSpecialTokenError as e:
        print(f"ciyuan {args.command}: error: {e} (on the command line: --allowed-special TOKEN "
              "or --disallowed-special '')", file=sys.stderr)
        return 1
    except CiyuanError as e:
        print(f"ciyuan {args.command}: error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
    return 0
