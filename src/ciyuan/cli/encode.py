"""The ``encode``, ``tokenize`` and ``decode`` commands: use an existing vocabulary on files or
standard input, one output line per input line."""

from __future__ import annotations

import argparse
import itertools
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ciyuan.cli.files import input_files, line_batches, open_output
from ciyuan.cli.options import Command, add_alias, add_io_arguments
from ciyuan.errors import CiyuanError, InvalidInputError

__all__ = ["COMMANDS", "add_arguments", "run"]

_EXAMPLES = """examples:
  ciyuan {command} -t tok.json corpus.txt -o out.txt
  ciyuan {command} -t bpe.json --sample --alpha 0.1 --seed 1 train.txt
      BPE-dropout: each merge skipped with probability 0.1 (the same output for --seed 1)
  ciyuan {command} -t unigram.json --sample --alpha 0.1 --nbest-size -1 train.txt
      Unigram sampling from all segmentations (sentencepiece's enable_sampling)
  ciyuan {command} -t unigram.json --nbest 3 lines.txt
      the 3 best segmentations of each line with their scores"""

COMMANDS: Dict[str, Command] = {
    "encode": Command(
        "text -> token ids (one line of space-separated ids per input line)",
        "Encode text into token ids: one output line of space-separated ids per input line (or per "
        "file with --whole). --sample draws a segmentation instead of the best one (subword "
        "regularization); --nbest K lists the K best.",
        _EXAMPLES.format(command="encode")),
    "tokenize": Command(
        "text -> tokens (space-separated; byte-level tokens in GPT-2's printable form)",
        "Split text into tokens, written space-separated (byte-level tokens in GPT-2's printable "
        "alphabet, where a space is 'Ġ'), one line per input line. --sample draws a segmentation "
        "instead of the best one (subword regularization); --nbest K lists the K best.",
        _EXAMPLES.format(command="tokenize")),
    "decode": Command(
        "token ids -> text (one line of ids per output line)",
        "Decode token ids (whitespace-separated integers, one sequence per line) back to text, one "
        "output line per input line."),
}

def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", "-t", required=True, metavar="PATH",
                   help="a .tiktoken file, GPT-2's encoder.json (vocab.bpe beside it) or a folder "
                        "holding both, a BERT vocab.txt, or a tokenizer saved by ciyuan (.json)")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=True,
                   help="for a BERT vocab.txt: lowercase and strip accents, as bert-base-uncased (default); "
                        "--no-lowercase keeps case and accents (cased models)")
    add_alias(p, "--cased", "lowercase", action="store_false")
    p.add_argument("--pattern", metavar="NAME",
                   help="for .tiktoken files: an encoding's name (gpt2, r50k_base, p50k_base, cl100k_base, "
                        "o200k_base, llama3: its pattern and special tokens) or a regex pattern; by default "
                        "the encoding the file is recognised as (by rank count and sha256)")
    add_io_arguments(p)


def _add_encoding(p: argparse.ArgumentParser) -> None:
    p.add_argument("--whole", action="store_true",
                   help="encode each input file as one text (newlines included) instead of line by line")
    p.add_argument("--allowed-special", default="", metavar="LIST",
                   help="special tokens to encode as such: 'all' or a comma-separated list "
                        "(default: none)")
    p.add_argument("--disallowed-special", default="all", metavar="LIST",
                   help="special tokens whose text in the input is an error: 'all' (default) or a "
                        "comma-separated list; the others are encoded as ordinary text ('' for none)")
    add_alias(p, "--special-as-text", "disallowed_special", action="store_const", const="")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="threads to encode with (default: all cores)")
    g = p.add_argument_group("model inputs (pairs, truncation, padding; BERT-style tokenizers)")
    g.add_argument("--pair", action="store_true",
                   help="each input line holds two texts separated by a tab: encode them as a pair "
                        "([CLS] A [SEP] B [SEP] for BERT)")
    g.add_argument("--add-special-tokens", action=argparse.BooleanOptionalAction, default=True,
                   help="add the tokenizer's post-processing tokens ([CLS], [SEP], ...) (default: yes)")
    add_alias(g, "--no-special-tokens", "add_special_tokens", action="store_false")
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
    r = p.add_argument_group(
        "subword regularization (sampled segmentations, for training a model; BPE and Unigram tokenizers)")
    r.add_argument("--sample", action="store_true",
                   help="sample each word's segmentation instead of taking the best one: BPE-dropout for BPE "
                        "tokenizers, sentencepiece's sampling for Unigram ones (each run differs unless --seed)")
    r.add_argument("--alpha", type=float, default=None, metavar="A",
                   help="with --sample: for BPE, the probability (0 to 1) that each merge is skipped; for Unigram, "
                        "the smoothing (>= 0: 0 samples uniformly, larger favours the best) (default 0.1)")
    r.add_argument("--nbest-size", type=int, default=None, metavar="N",
                   help="with --sample, Unigram only: 1 takes the best segmentation, 0 or -1 samples from all of "
                        "them (default -1), N > 1 from the N best")
    r.add_argument("--seed", type=int, default=None, metavar="S",
                   help="seed of the random draws: the same seed gives the same output for the same input, "
                        "whatever --threads (default: a fresh seed each run); also for a BPE tokenizer saved "
                        "with dropout, which samples without --sample")
    r.add_argument("--nbest", type=int, default=None, metavar="K",
                   help="Unigram tokenizers without a pre-tokenizer (SentencePiece's): write the K best "
                        "segmentations of each line, best first, each with its score (the sum of its pieces' log "
                        "probabilities): 'score<TAB>ids' (or tokens for tokenize) per segmentation and an empty "
                        "line after each input line's; --format json: one object per input line, "
                        '{"nbest": [{"score", "ids", "tokens", "offsets"}, ...]}')


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    """The options of ``encode``, ``tokenize`` or ``decode``."""
    _add_common(p)
    if name == "decode":
        p.add_argument("--skip-special-tokens", action="store_true", help="leave special tokens out of the text")
        return
    _add_encoding(p)
    if name == "encode":
        p.add_argument("--format", choices=("ids", "json"), default="ids",
                       help="ids: space-separated ids (default); json: one JSON object per line with "
                            "ids, tokens and character offsets (and, for pairs, truncation or padding: "
                            "type ids, masks and overflowing windows)")


def run(args: argparse.Namespace) -> None:
    """Run ``encode``, ``tokenize`` or ``decode`` (errors are ciyuan errors, reported by the caller)."""
    from ciyuan.tokenizer import Tokenizer

    tok = Tokenizer.load(args.tokenizer, args.pattern, lowercase=args.lowercase)
    if args.command in ("encode", "tokenize"):
        _run_encode(args, tok)
    else:
        _run_decode(args, tok)


def _special_list(value: str) -> Any:
    """'all', or the set of a comma-separated list ('' is the empty set)."""
    return "all" if value == "all" else {s for s in value.split(",") if s}


def _special_args(args: argparse.Namespace) -> Dict[str, Any]:
    return {"allowed_special": _special_list(args.allowed_special),
            "disallowed_special": _special_list(args.disallowed_special)}


def _texts(args: argparse.Namespace) -> Iterator[List[str]]:
    """Batches of texts to encode: lines, or whole files with --whole."""
    for name, f in input_files(args.inputs):
        if getattr(args, "whole", False):
            from ciyuan._text import decode_utf8

            yield [decode_utf8(f.read(), name, args.errors)]
        else:
            yield from line_batches(name, f, args.errors)


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


def _pairs(texts: List[str], where: str) -> List[Tuple[str, str]]:
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


def _sampling_args(args: argparse.Namespace) -> Dict[str, Any]:
    """The encode calls' sampling keywords from --sample, --alpha, --nbest-size and --seed."""
    if not args.sample:
        for flag, value in (("--alpha", args.alpha), ("--nbest-size", args.nbest_size)):
            if value is not None:
                raise InvalidInputError(f"{flag} applies to sampled segmentations: add --sample")
    if args.nbest is not None:
        clash = [flag for flag, on in (("--sample", args.sample), ("--pair", args.pair),
                                       ("--max-length", args.max_length is not None),
                                       ("--padding", args.padding is not None)) if on]
        if clash:
            raise InvalidInputError(f"--nbest lists a text's best segmentations; it does not go with {clash[0]}")
        if args.nbest < 1:
            raise InvalidInputError(f"--nbest must be a positive number of segmentations, not {args.nbest}")
        return {}
    sampling: Dict[str, Any] = {"seed": args.seed}
    if args.sample:
        sampling.update(sample=True, alpha=0.1 if args.alpha is None else args.alpha,
                        nbest_size=-1 if args.nbest_size is None else args.nbest_size)
    return sampling


def _batch_seeds(seed: Optional[int]) -> Iterator[Optional[int]]:
    """The seed of each batch of lines: derived from --seed and the batch's number (so that two
    batches do not draw alike), or None (fresh seeds) without --seed."""
    for number in itertools.count():
        yield None if seed is None else (seed + number * 0x9E3779B97F4A7C15) % (1 << 64)


def _run_nbest(args: argparse.Namespace, tok, special: Dict[str, Any]) -> None:  # noqa: ANN001
    import json

    with open_output(args.output) as out:
        for texts in _texts(args):
            for text in texts:
                results = tok.nbest(text, args.nbest, **special)
                if args.command == "encode" and args.format == "json":
                    line = json.dumps({"nbest": [{"score": score, "ids": enc.ids, "tokens": enc.tokens,
                                                  "offsets": enc.offsets} for enc, score in results]},
                                      ensure_ascii=False)
                    out.write((line + "\n").encode("utf-8", "surrogatepass"))
                    continue
                for enc, score in results:
                    body = " ".join(enc.tokens) if args.command == "tokenize" else " ".join(map(str, enc.ids))
                    out.write(f"{score:.6g}\t{body}\n".encode("utf-8", "surrogatepass"))
                out.write(b"\n")


def _run_encode(args: argparse.Namespace, tok) -> None:  # noqa: ANN001
    import json

    special = _special_args(args)
    sampling = _sampling_args(args)
    if args.nbest is not None:
        return _run_nbest(args, tok, special)
    full = _configure_model_inputs(args, tok)
    options = dict(threads=args.threads, add_special_tokens=args.add_special_tokens, **special)
    seeds = _batch_seeds(sampling.pop("seed", None))
    with open_output(args.output) as out:
        for texts in _texts(args):
            options.update(sampling, seed=next(seeds))
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
    with open_output(args.output) as out:
        for name, f in input_files(args.inputs):
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
