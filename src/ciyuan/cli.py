"""The ``ciyuan`` command line: encode, decode and tokenize files or standard input.

Run ``ciyuan --help`` or ``ciyuan COMMAND --help`` for the options.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import BinaryIO, Iterator, List, Optional, Sequence

from ciyuan import _cli_segment, _cli_train
from ciyuan._io import atomic_output, decode_utf8
from ciyuan.errors import CiyuanError, DisallowedSpecialTokenError, InvalidInputError

__all__ = ["main"]

BATCH_LINES = 8192

_DESCRIPTION = """\
ciyuan (词元): train, run and explain tokenizers.

  encode / tokenize / decode   use an existing vocabulary (a tiktoken file, GPT-2's
                               encoder.json + vocab.bpe, or ciyuan JSON) exactly as its own
                               library does, but faster
  train / zh-bpe               learn a BPE vocabulary (byte-level, character-level, Chinese)
  segment / seg-eval           Chinese word segmentation with a dictionary, and its score

Line-oriented commands read files, or standard input when none (or -) is named, and write
one output line per input line. `ciyuan COMMAND --help` explains each command."""

_EPILOG = """\
examples:
  ciyuan encode --tokenizer cl100k_base.tiktoken corpus.txt > ids.txt
  ciyuan decode --tokenizer cl100k_base.tiktoken ids.txt
  echo "Hello world" | ciyuan tokenize --tokenizer o200k_base.tiktoken --pattern o200k_base
  ciyuan encode --tokenizer gpt2/encoder.json --allowed-special all --whole doc.txt"""


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", "-t", required=True, metavar="PATH",
                   help="a .tiktoken file, GPT-2's encoder.json (vocab.bpe beside it) or a folder "
                        "holding both, or a tokenizer saved by ciyuan (.json)")
    p.add_argument("--pattern", metavar="NAME",
                   help="pre-tokenizer for .tiktoken files: gpt2, r50k_base, p50k_base, cl100k_base "
                        "(default), o200k_base, or a regex pattern")
    p.add_argument("inputs", nargs="*", metavar="FILE", help="input files (default: standard input)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write here instead of standard output (replaced atomically when done)")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict",
                   help="invalid UTF-8 in the input: stop with an error naming file and byte "
                        "(strict, default) or read the bad bytes as U+FFFD (replace)")


def _add_encoding(p: argparse.ArgumentParser) -> None:
    p.add_argument("--whole", action="store_true",
                   help="encode each input file as one text (newlines included) instead of line by line")
    p.add_argument("--allowed-special", default="", metavar="LIST",
                   help="special tokens to encode as such: 'all' or a comma-separated list "
                        "(default: none; special-token text in the input is then an error)")
    p.add_argument("--special-as-text", action="store_true",
                   help="encode special-token text that is not allowed as ordinary text instead of failing")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="threads to encode with (default: all cores)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ciyuan", description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from ciyuan import __version__

    parser.add_argument("--version", action="version", version=f"ciyuan {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("encode", help="text -> token ids (one line of space-separated ids per input line)",
                       description="Encode text into token ids: one output line of space-separated ids "
                                   "per input line (or per file with --whole).")
    _add_common(p)
    _add_encoding(p)
    p.add_argument("--format", choices=("ids", "json"), default="ids",
                   help="ids: space-separated ids (default); json: one JSON object per line with "
                        "ids, tokens and character offsets")

    p = sub.add_parser("tokenize", help="text -> tokens (space-separated; byte-level tokens in GPT-2's printable form)",
                       description="Split text into tokens, written space-separated (byte-level tokens in "
                                   "GPT-2's printable alphabet, where a space is 'Ġ'), one line per input line.")
    _add_common(p)
    _add_encoding(p)

    p = sub.add_parser("decode", help="token ids -> text (one line of ids per output line)",
                       description="Decode token ids (whitespace-separated integers, one sequence per "
                                   "line) back to text, one output line per input line.")
    _add_common(p)
    p.add_argument("--skip-special-tokens", action="store_true", help="leave special tokens out of the text")
    # The other commands live with their own modules.
    _cli_train.add_commands(sub)
    _cli_segment.add_commands(sub)
    return parser


def _special_args(args: argparse.Namespace) -> dict:
    allowed: object = ()
    if args.allowed_special == "all":
        allowed = "all"
    elif args.allowed_special:
        allowed = {s for s in args.allowed_special.split(",") if s}
    return {"allowed_special": allowed, "disallowed_special": () if args.special_as_text else "all"}


@contextlib.contextmanager
def _open_output(path: Optional[str]) -> Iterator[BinaryIO]:
    if path is None or path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
    else:
        with atomic_output(path) as f:
            yield f


def _input_files(inputs: Sequence[str]) -> Iterator[tuple]:
    for name in inputs or ["-"]:
        if name == "-":
            yield "<stdin>", sys.stdin.buffer
        else:
            try:
                f = open(name, "rb")
            except OSError as e:
                raise InvalidInputError(f"cannot read {name}: {e.strerror}") from None
            with f:
                yield name, f


def _line_batches(name: str, f: BinaryIO, errors: str) -> Iterator[List[str]]:
    """Lines (without their newline) in batches; invalid UTF-8 names the file, byte and line."""
    batch: List[str] = []
    offset = 0
    for number, raw in enumerate(f, 1):
        try:
            line = raw.decode("utf-8", errors)
        except UnicodeDecodeError as e:
            raise InvalidInputError(
                f"{name}: invalid UTF-8 at byte {offset + e.start} (line {number}): "
                f"{raw[e.start:e.start + 4]!r}; fix the input or pass --errors replace"
            ) from None
        offset += len(raw)
        batch.append(line[:-1] if line.endswith("\n") else line)
        if len(batch) >= BATCH_LINES:
            yield batch
            batch = []
    if batch:
        yield batch


def _texts(args: argparse.Namespace) -> Iterator[List[str]]:
    """Batches of texts to encode: lines, or whole files with --whole."""
    for name, f in _input_files(args.inputs):
        if getattr(args, "whole", False):
            yield [decode_utf8(f.read(), name, args.errors)]
        else:
            yield from _line_batches(name, f, args.errors)


def _run_encode(args: argparse.Namespace, tok) -> None:  # noqa: ANN001
    special = _special_args(args)
    with _open_output(args.output) as out:
        for texts in _texts(args):
            if args.command == "encode" and args.format == "ids":
                for ids in tok.encode_batch_ids(texts, threads=args.threads, **special):
                    out.write((" ".join(map(str, ids)) + "\n").encode())
                continue
            for enc in tok.encode_batch(texts, threads=args.threads, **special):
                if args.command == "tokenize":
                    line = " ".join(enc.tokens)
                else:
                    line = json.dumps({"ids": enc.ids, "tokens": enc.tokens, "offsets": enc.offsets},
                                      ensure_ascii=False)
                out.write((line + "\n").encode("utf-8", "surrogatepass"))


def _run_decode(args: argparse.Namespace, tok) -> None:  # noqa: ANN001
    with _open_output(args.output) as out:
        for name, f in _input_files(args.inputs):
            for number, raw in enumerate(f, 1):
                try:
                    ids = [int(x) for x in raw.split()]
                except ValueError:
                    raise InvalidInputError(
                        f"{name}:{number}: expected whitespace-separated integer ids, got {raw[:60]!r}"
                    ) from None
                try:
                    text = tok.decode(ids, skip_special_tokens=args.skip_special_tokens)
                except CiyuanError as e:
                    raise InvalidInputError(f"{name}:{number}: {e}") from None
                out.write((text + "\n").encode("utf-8", "surrogatepass"))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``ciyuan`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command in _cli_train.COMMANDS:
            _cli_train.run(args)
        elif args.command in _cli_segment.COMMANDS:
            _cli_segment.run(args)
        else:
            from ciyuan.formats import load_tokenizer

            tok = load_tokenizer(args.tokenizer, args.pattern)
            if args.command in ("encode", "tokenize"):
                _run_encode(args, tok)
            else:
                _run_decode(args, tok)
    except DisallowedSpecialTokenError as e:
        print(f"ciyuan {args.command}: error: {e} (on the command line: --allowed-special TOKEN "
              "or --special-as-text)", file=sys.stderr)
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


if __name__ == "__main__":
    sys.exit(main())
