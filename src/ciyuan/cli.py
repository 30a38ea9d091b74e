"""The ``ciyuan`` command line: encode, decode and tokenize files or standard input.

Run ``ciyuan --help`` or ``ciyuan COMMAND --help`` for the options.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import BinaryIO, Iterator, List, Optional, Sequence

# Only what every command needs is imported here; each command imports the rest when it runs,
# so that a short job (`ciyuan segment` on one file, say) does not start by loading all of it.
from ciyuan import _cli_segment, _cli_train
from ciyuan.errors import CiyuanError, DisallowedSpecialTokenError, InvalidInputError

__all__ = ["main"]

BATCH_LINES = 8192

_DESCRIPTION = """\
ciyuan (词元): train, run and explain tokenizers.

  encode / tokenize / decode   use an existing vocabulary (a tiktoken file, GPT-2's
                               encoder.json + vocab.bpe, a BERT vocab.txt, or ciyuan JSON)
                               exactly as its own library does, but faster
  train / zh-bpe               learn a vocabulary: BPE (byte-level, character-level, Chinese),
                               WordPiece, word- or character-level
  segment / seg-eval           Chinese word segmentation with a dictionary, and its score

Line-oriented commands read files, or standard input when none (or -) is named, and write
one output line per input line. `ciyuan COMMAND --help` explains each command."""

_EPILOG = """\
examples:
  ciyuan encode --tokenizer cl100k_base.tiktoken corpus.txt > ids.txt
  ciyuan decode --tokenizer cl100k_base.tiktoken ids.txt
  echo "Hello world" | ciyuan tokenize --tokenizer o200k_base.tiktoken --pattern o200k_base
  ciyuan encode --tokenizer gpt2/encoder.json --allowed-special all --whole doc.txt
  ciyuan encode --tokenizer bert-base-uncased-vocab.txt --pair --max-length 128 --padding max-length pairs.tsv"""


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", "-t", required=True, metavar="PATH",
                   help="a .tiktoken file, GPT-2's encoder.json (vocab.bpe beside it) or a folder "
                        "holding both, a BERT vocab.txt, or a tokenizer saved by ciyuan (.json)")
    p.add_argument("--cased", action="store_true",
                   help="for a BERT vocab.txt: keep case and accents (cased models; default: lowercase "
                        "and strip accents, as bert-base-uncased)")
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
    g = p.add_argument_group("model inputs (pairs, truncation, padding; BERT-style tokenizers)")
    g.add_argument("--pair", action="store_true",
                   help="each input line holds two texts separated by a tab: encode them as a pair "
                        "([CLS] A [SEP] B [SEP] for BERT)")
    g.add_argument("--no-special-tokens", action="store_true",
                   help="do not add the tokenizer's post-processing tokens ([CLS], [SEP], ...)")
    g.add_argument("--max-length", type=int, default=None, metavar="N",
                   help="truncate to N tokens (special tokens included); what is cut off is dropped "
                        "(ids) or listed as overflowing windows (--format json)")
    g.add_argument("--stride", type=int, default=0, metavar="K",
                   help="with --max-length: overflowing windows overlap by K tokens")
    g.add_argument("--truncation-strategy", choices=("longest_first", "only_first", "only_second"),
                   default="longest_first", help="which text of a pair to cut (default longest_first)")
    g.add_argument("--padding", choices=("longest", "max-length"), default=None,
                   help="pad to the longest sequence of each batch of lines, or to --max-length")
    g.add_argument("--pad-to-multiple-of", type=int, default=None, metavar="M",
                   help="with --padding: round the padded length up to a multiple of M")


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
                        "ids, tokens and character offsets (and, for pairs, truncation or padding: "
                        "type ids, masks and overflowing windows)")

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
        from ciyuan._io import atomic_output

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
            from ciyuan._io import decode_utf8

            yield [decode_utf8(f.read(), name, args.errors)]
        else:
            yield from _line_batches(name, f, args.errors)


def _configure_model_inputs(args: argparse.Namespace, tok) -> bool:  # noqa: ANN001
    """Apply --max-length/--padding to the tokenizer; whether the output has model-input fields."""
    if args.padding == "max-length" and args.max_length is None:
        raise InvalidInputError("--padding max-length needs --max-length N")
    if args.pad_to_multiple_of is not None and args.padding is None:
        raise InvalidInputError("--pad-to-multiple-of needs --padding")
    if args.max_length is not None:
        tok.enable_truncation(args.max_length, stride=args.stride, strategy=args.truncation_strategy)
    if args.padding is not None:
        tok.enable_padding(length=args.max_length if args.padding == "max-length" else None,
                           pad_to_multiple_of=args.pad_to_multiple_of)
    return args.pair or args.max_length is not None or args.padding is not None


def _pairs(texts: List[str], where: str) -> List[tuple]:
    pairs = []
    for i, line in enumerate(texts):
        parts = line.split("\t")
        if len(parts) != 2:
            raise InvalidInputError(f"{where}: with --pair each line must hold two texts separated by one tab; "
                                    f"batch line {i + 1} has {len(parts)} field(s): {line[:60]!r}")
        pairs.append((parts[0], parts[1]))
    return pairs


def _encoding_json(enc, full: bool) -> dict:  # noqa: ANN001
    data = {"ids": enc.ids, "tokens": enc.tokens, "offsets": enc.offsets}
    if full:
        data.update(type_ids=enc.type_ids, attention_mask=enc.attention_mask,
                    special_tokens_mask=enc.special_tokens_mask)
        if enc.overflowing:
            data["overflowing"] = [_encoding_json(o, full) for o in enc.overflowing]
    return data


def _run_encode(args: argparse.Namespace, tok) -> None:  # noqa: ANN001
    import json

    special = _special_args(args)
    full = _configure_model_inputs(args, tok)
    options = dict(threads=args.threads, add_special_tokens=not args.no_special_tokens, **special)
    with _open_output(args.output) as out:
        for texts in _texts(args):
            inputs = _pairs(texts, "input") if args.pair else texts
            if args.command == "encode" and args.format == "ids":
                for ids in tok.encode_batch_ids(inputs, **options):
                    out.write((" ".join(map(str, ids)) + "\n").encode())
                continue
            for enc in tok.encode_batch(inputs, **options):
                if args.command == "tokenize":
                    line = " ".join(enc.tokens)
                else:
                    line = json.dumps(_encoding_json(enc, full), ensure_ascii=False)
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
            from ciyuan.tokenizer import Tokenizer

            tok = Tokenizer.load(args.tokenizer, args.pattern, lowercase=not args.cased)
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
