"""The ``ciyuan train`` command: learn a tokenizer (BPE, WordPiece, word- or character-level)
from files and write ciyuan JSON (plus, on request, ``vocab.txt`` and, for BPE, ``merges.txt``).
Every output is written only after all of them are ready, and atomically, so a failed run leaves
no partial file.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List, Tuple

from ciyuan.cli.options import Command, add_alias, add_errors_argument
from ciyuan.errors import InvalidInputError

# The command imports what it needs when it runs (see ciyuan.cli).

__all__ = ["COMMANDS", "add_arguments", "run"]

_PRE_TOKENIZERS = ("bytelevel", "gpt2", "cl100k_base", "o200k_base", "wordpunct", "whitespace", "zh-sentence", "bert",
                   "none")
_MODELS = ("bpe", "wordpiece", "wordlevel", "charlevel", "unigram", "sentencepiece-bpe")

_TRAIN_EPILOG = """\
examples:
  ciyuan train --model bpe --byte-level --vocab-size 32000 --min-frequency 2 --output tok.json corpus.txt
  ciyuan train --model bpe --pre-tokenizer whitespace --end-of-word-suffix '</w>' --tie-break subword-nmt \\
      --vocab-size 0 --max-merges 10000 --min-frequency 2 --output tok.json --merges codes.txt corpus.txt
  ciyuan train --model wordpiece --vocab-size 30000 --lowercase --output bert.json --vocab vocab.txt corpus.txt
  ciyuan train --model wordlevel --vocab-size 20000 --min-frequency 2 --output words.json corpus.txt
  ciyuan train --model charlevel --vocab-size 6000 --output chars.json novels.txt
  ciyuan train --model bpe --byte-level --vocab-size 32000 --memory-limit 64MB --output tok.json big/*.txt
  ciyuan train --model unigram --vocab-size 8000 --field content --output spm.model 'shards/*.jsonl.zst'"""

COMMANDS: Dict[str, Command] = {
    "train": Command(
        "learn a tokenizer (BPE, WordPiece, word- or character-level) from text files",
        "Learn a vocabulary (and for BPE its merges) from text files (UTF-8; each line is "
        "pre-tokenized on its own) and save the tokenizer as ciyuan JSON.",
        _TRAIN_EPILOG),
}


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    """The options of ``train``."""
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="training corpora: text files (each line pre-tokenized on its own), JSON Lines "
                        "(.jsonl, also .gz/.zst: --field) and Parquet (--column) files, folders, glob patterns")
    s = p.add_argument_group("sources (as ciyuan encode-dataset reads them)")
    s.add_argument("--field", default="text", metavar="NAME",
                   help="JSON Lines: the field holding the text (default text)")
    s.add_argument("--column", default=None, metavar="NAME",
                   help="Parquet: the column holding the text (default: --field)")
    s.add_argument("--input-format", choices=("auto", "text", "jsonl", "parquet"), default="auto",
                   help="how to read the inputs (default auto: from each file's name)")
    s.add_argument("--doc-per", choices=("line", "block", "file"), default=None,
                   help="text files as documents: one per line (its newline left out), per blank-line block or "
                        "per file (default: text files are read line by line, newlines included, as before)")
    p.add_argument("--model", choices=_MODELS, default="bpe",
                   help="bpe (default); wordpiece (BERT: '##' continuation pieces, [CLS]/[SEP] added "
                        "when encoding); wordlevel (whole words); charlevel (single characters)")
    p.add_argument("--criterion", choices=("likelihood", "frequency"), default="likelihood",
                   help="wordpiece: merge the pair with the best count(ab)/(count(a)*count(b)) "
                        "(likelihood, WordPiece as published) or the most frequent pair (frequency, "
                        "Hugging Face's WordPieceTrainer)")
    p.add_argument("--continuing-subword-prefix", default="##", metavar="S",
                   help="wordpiece: the prefix of pieces that continue a word (default ##)")
    add_alias(p, "--prefix", "continuing_subword_prefix")
    p.add_argument("--unk-token", default="[UNK]", metavar="T",
                   help="wordpiece/wordlevel/charlevel: the unknown token (default [UNK]; must be a special token)")
    p.add_argument("--byte-level", action="store_true",
                   help="byte-level BPE (GPT-2 style: the 256 bytes are the initial alphabet)")
    p.add_argument("--pre-tokenizer", choices=_PRE_TOKENIZERS, default=None,
                   help="how text is split into words: bytelevel (GPT-2's pattern; the default with "
                        "--byte-level, and implies it), wordpunct (\\w+|[^\\w\\s]+, the default for bpe and "
                        "wordlevel), bert (BERT's clean-up and splitting, the default for wordpiece), "
                        "whitespace (\\S+), zh-sentence (clauses of Chinese text), cl100k_base, o200k_base, "
                        "none (each line is a word; the default for charlevel)")
    p.add_argument("--vocab-size", type=int, default=None, metavar="N",
                   help="vocabulary size to reach, special tokens included (0: no limit)")
    p.add_argument("--max-merges", type=int, default=None, metavar="M", help="learn at most M merges")
    p.add_argument("--min-frequency", type=int, default=0, metavar="K",
                   help="stop when the most frequent pair occurs fewer than K times (default 0)")
    p.add_argument("--end-of-word-suffix", default="", metavar="S",
                   help="attach S (e.g. '</w>') to each word's last character (l o w</w>)")
    p.add_argument("--end-of-word-symbol", default="", metavar="S",
                   help="or end each word with S as a symbol of its own (l o w </w>, the classic tutorials)")
    p.add_argument("--tie-break", choices=("hf", "subword-nmt", "first"), default="hf",
                   help="which of equally frequent pairs merges first: hf (smallest ids, default), "
                        "subword-nmt (greatest text), first (seen first)")
    p.add_argument("--special-tokens", default=None, metavar="LIST",
                   help="comma-separated special tokens (first ids); default: none for bpe, "
                        "[PAD],[UNK],[CLS],[SEP],[MASK] for wordpiece, [UNK] for wordlevel and charlevel")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=False,
                   help="lowercase the text (default: no)")
    p.add_argument("--limit-alphabet", type=int, default=None, metavar="N", help="keep the N most frequent characters")
    p.add_argument("--max-token-length", type=int, default=None, metavar="N",
                   help="longest token, in characters or bytes")
    u = p.add_argument_group("unigram and sentencepiece-bpe (SentencePiece's trainer flags)")
    u.add_argument("--character-coverage", type=float, default=0.9995, metavar="C",
                   help="share of the characters the alphabet covers (default 0.9995)")
    u.add_argument("--byte-fallback", action="store_true", help="add the 256 byte pieces <0x00>..<0xFF>")
    u.add_argument("--split-digits", action="store_true", help="every digit is a piece of its own")
    u.add_argument("--split-by-unicode-script", action=argparse.BooleanOptionalAction, default=True,
                   help="no piece mixes Unicode scripts (default: yes)")
    u.add_argument("--split-by-number", action=argparse.BooleanOptionalAction, default=True,
                   help="digits do not join letters (default: yes)")
    u.add_argument("--treat-whitespace-as-suffix", action="store_true", help="'▁' ends words instead of starting them")
    u.add_argument("--max-piece-length", type=int, default=16, metavar="N", help="longest piece in characters")
    u.add_argument("--seed-size", type=int, default=1_000_000, metavar="N", help="seed pieces (unigram)")
    u.add_argument("--shrinking-factor", type=float, default=0.75, metavar="F",
                   help="share of pieces each pruning round keeps (unigram)")
    u.add_argument("--num-sub-iterations", type=int, default=2, metavar="N", help="EM steps per round (unigram)")
    u.add_argument("--user-defined-symbols", default="", metavar="LIST", help="comma-separated pieces kept whole")
    u.add_argument("--input-sentence-size", type=int, default=0, metavar="N",
                   help="train on N lines sampled with --seed (default: all)")
    u.add_argument("--seed", type=int, default=0, metavar="S", help="the sampling seed")
    p.add_argument("--output", "-o", required=True, metavar="FILE",
                   help="the tokenizer, as ciyuan JSON (a name ending in .model: SentencePiece's format)")
    p.add_argument("--merges", metavar="FILE",
                   help="bpe: also write merges.txt ('left right' per line, in merge order)")
    p.add_argument("--vocab", metavar="FILE", help="also write vocab.txt (one token per line; ids are line numbers)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="threads for word counting (default: all cores)")
    p.add_argument("--memory-limit", default=None, metavar="SIZE",
                   help="word counting holds at most SIZE (e.g. 64MB, 2GiB; K/M/G are powers of 1024) and "
                        "spills sorted runs to disk beyond it; the model is the same as without a limit")
    p.add_argument("--spill-dir", default=None, metavar="DIR",
                   help="where --memory-limit's runs go (default: the system's temporary directory)")
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="count the words as Ray tasks (pip install 'ciyuan[ray]'), merged exactly: the same "
                        "tokenizer; alone: a local Ray, 'auto': the cluster `ray start` runs here, HOST:6379 or "
                        "ray://HOST:10001: a remote one (docs/scale.md)")
    add_errors_argument(p, help="invalid UTF-8: stop with an error naming file and byte (strict) or read it as U+FFFD")
    p.add_argument("--show-progress", action=argparse.BooleanOptionalAction, default=True,
                   help="draw a progress bar on standard error (default: yes)")
    add_alias(p, "--no-progress", "show_progress", action="store_false")


def run(args: argparse.Namespace) -> None:
    """Run ``train`` (errors are ciyuan errors, reported by the caller)."""
    _train(args)


def _source(args: argparse.Namespace) -> Any:
    """What the trainer reads: the text files themselves when every input is one (read natively,
    line by line), else the documents of :func:`ciyuan.datasets.sources.iter_documents`."""
    from ciyuan.datasets.sources import expand_sources, file_kind, iter_documents

    files = expand_sources(args.inputs)
    if args.doc_per is None and all(file_kind(f, args.input_format) == "text" for f in files):
        for f in files:
            if f.suffix in (".gz", ".zst"):
                raise InvalidInputError(f"{f}: compressed text is read as documents: give --doc-per line")
        return files
    return iter_documents(files, input_format=args.input_format, doc_per=args.doc_per or "line", field=args.field,
                          column=args.column, errors=args.errors)


def _pre_tokenizer(name: str):  # noqa: ANN202
    """(normalizer, pre-tokenizer) for a --pre-tokenizer name."""
    from ciyuan import pre_tokenizers

    if name == "none":
        return None, None
    if name == "bert":
        return "bert", pre_tokenizers.BertPreTokenizer()  # the normalizer depends on --lowercase
    if name == "zh-sentence":
        return None, pre_tokenizers.ZhSentence()
    if name == "wordpunct":
        return None, pre_tokenizers.WordPunct()
    if name == "whitespace":
        return None, pre_tokenizers.WhitespaceSplit()
    return None, pre_tokenizers.Split("gpt2" if name == "bytelevel" else name)


def _trainer(args: argparse.Namespace, byte_level: bool):  # noqa: ANN202
    from ciyuan.trainers import BpeTrainer, CharLevelTrainer, WordLevelTrainer, WordPieceTrainer
    from ciyuan.trainers.spill import parse_memory_limit

    try:
        parse_memory_limit(args.memory_limit)
    except InvalidInputError as e:  # the same message, in the command line's words
        raise InvalidInputError(str(e).replace("memory_limit", "--memory-limit")) from None
    common = dict(min_frequency=args.min_frequency, lowercase=args.lowercase, show_progress=args.show_progress,
                  threads=args.threads, memory_limit=args.memory_limit, spill_dir=args.spill_dir)
    if args.special_tokens is not None:
        common["special_tokens"] = [s for s in args.special_tokens.split(",") if s]
    if args.model != "bpe":
        for flag, value in (("--byte-level", args.byte_level), ("--end-of-word-suffix", args.end_of_word_suffix),
                            ("--end-of-word-symbol", args.end_of_word_symbol), ("--merges", args.merges),
                            ("--tie-break", args.tie_break != "hf")):
            if value:
                raise InvalidInputError(f"{flag} applies to --model bpe, not {args.model}")
    if args.model in ("unigram", "sentencepiece-bpe"):
        from ciyuan.trainers import UnigramTrainer

        if args.vocab_size is None:
            raise InvalidInputError("give --vocab-size N")
        return UnigramTrainer(
            args.vocab_size, model_type="unigram" if args.model == "unigram" else "bpe",
            character_coverage=args.character_coverage, byte_fallback=args.byte_fallback,
            split_digits=args.split_digits, split_by_unicode_script=args.split_by_unicode_script,
            split_by_number=args.split_by_number,
            treat_whitespace_as_suffix=args.treat_whitespace_as_suffix, max_piece_length=args.max_piece_length,
            seed_size=args.seed_size, shrinking_factor=args.shrinking_factor,
            num_sub_iterations=args.num_sub_iterations,
            user_defined_symbols=[s for s in args.user_defined_symbols.split(",") if s],
            input_sentence_size=args.input_sentence_size, seed=args.seed, show_progress=args.show_progress,
            threads=args.threads, memory_limit=args.memory_limit, spill_dir=args.spill_dir)
    if args.model in ("wordlevel", "charlevel"):
        if args.vocab_size is None:
            raise InvalidInputError("give --vocab-size N")
        cls = WordLevelTrainer if args.model == "wordlevel" else CharLevelTrainer
        return cls(args.vocab_size, unk_token=args.unk_token, **common)
    if args.vocab_size is None and args.max_merges is None:
        raise InvalidInputError("give --vocab-size N (or --vocab-size 0 with --max-merges M)")
    size = 0 if args.vocab_size is None else args.vocab_size  # only --max-merges: no size limit
    if args.model == "wordpiece":
        return WordPieceTrainer(size, max_merges=args.max_merges, limit_alphabet=args.limit_alphabet,
                                max_token_length=args.max_token_length,
                                continuing_subword_prefix=args.continuing_subword_prefix,
                                criterion=args.criterion, unk_token=args.unk_token, **common)
    return BpeTrainer(size, max_merges=args.max_merges, byte_level=byte_level, limit_alphabet=args.limit_alphabet,
                      max_token_length=args.max_token_length, end_of_word_suffix=args.end_of_word_suffix,
                      end_of_word_symbol=args.end_of_word_symbol, tie_break=args.tie_break, **common)


def _train(args: argparse.Namespace) -> None:
    from ciyuan._io import atomic_write_text
    from ciyuan.formats.vocab_merges import merges_lines, vocab_lines
    from ciyuan.models import BPE
    from ciyuan.normalizers import BertNormalizer
    from ciyuan.tokenizer import Tokenizer

    byte_level = args.byte_level or args.pre_tokenizer == "bytelevel"
    trainer = _trainer(args, byte_level)
    paths = _source(args)
    train = Tokenizer.train
    if args.ray is not None:  # the counting pass on Ray; the rest as here
        from functools import partial

        from ciyuan.datasets import ray_engine

        train = partial(ray_engine.train, address=None if args.ray == "local" else args.ray)
    if args.pre_tokenizer is None:  # the trainer's own stages (ciyuan.training.default_pipeline)
        tok = train(paths, trainer, errors=args.errors)
    else:
        normalizer, pre_tokenizer = _pre_tokenizer(args.pre_tokenizer)
        if normalizer == "bert":
            normalizer = BertNormalizer(lowercase=args.lowercase)
        tok = train(paths, trainer, pre_tokenizer=pre_tokenizer, normalizer=normalizer, errors=args.errors)
    # Render every output before writing any, so that a failure leaves no partial set.
    import json

    if args.output.endswith(".model"):  # SentencePiece's protobuf format, written by the tokenizer
        tok.save(args.output)
        print(f"ciyuan train: {tok.vocab_size} pieces; wrote {args.output}", file=sys.stderr)
        return
    outputs: List[Tuple[str, str]] = [(args.output, json.dumps(tok.to_dict(), ensure_ascii=False))]
    if args.merges:
        assert isinstance(tok.model, BPE), "--merges is for --model bpe (checked by _trainer)"
        outputs.append((args.merges, "".join(line + "\n" for line in merges_lines(tok.model))))
    if args.vocab:
        outputs.append((args.vocab, "".join(line + "\n" for line in vocab_lines(tok.model))))
    for path, text in outputs:
        atomic_write_text(path, text)
    report = trainer.report
    done = f"{tok.vocab_size} tokens"
    if report is not None:
        done = f"{report.words} distinct words, {len(report.merge_counts)} merges, {done} ({report.stop_reason})"
    print(f"ciyuan train: {done}; wrote {', '.join(p for p, _ in outputs)}", file=sys.stderr)
