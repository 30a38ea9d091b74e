"""The ``ciyuan segment`` and ``ciyuan seg-eval`` commands (Chinese word segmentation).

``segment`` starts fast: the dictionary begins loading on a thread of its own before anything
else is imported, and this module imports nothing heavy at the top (keep it so).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Dict, Iterator, Tuple

from ciyuan._text import utf8_error
from ciyuan.cli.files import input_files, open_output
from ciyuan.cli.options import Command, add_errors_argument, add_io_arguments
from ciyuan.errors import InvalidInputError

if TYPE_CHECKING:
    from ciyuan.segment import Dictionary, Segmenter

__all__ = ["COMMANDS", "add_arguments", "run"]
# Files up to this size are segmented in one call, read without a copy (`_blocks` then hands
# the bytes read straight through); larger ones block by block.
CHUNK_BYTES = 64 * 1024 * 1024

_SEGMENT_EPILOG = """\
examples:
  ciyuan segment --dict pku_training_words.utf8 --baseline pku_test.utf8 -o pku_seg.utf8
  ciyuan segment --dict jieba_dict.txt --method dag novel.txt > words.txt
  echo "研究生命起源" | ciyuan segment --dict words.txt --method bimm"""

_EVAL_EPILOG = """\
example:
  ciyuan seg-eval --gold pku_test_gold.utf8 --words pku_training_words.utf8 pku_seg.utf8"""


COMMANDS: Dict[str, Command] = {
    "segment": Command(
        "Chinese word segmentation with a dictionary (words separated by spaces)",
        "Segment Chinese text into dictionary words: one output line per input line, the words "
        "separated by one space (whitespace itself is left out). Inputs are files, or standard "
        "input when none (or -) is named.",
        _SEGMENT_EPILOG),
    "seg-eval": Command(
        "score a segmentation against a gold standard (SIGHAN bakeoff rules)",
        "Score a segmentation (words separated by spaces, one sentence per line) against the gold "
        "standard as the SIGHAN bakeoffs' 'score' script does: recall, precision, F, and with "
        "--words the OOV rate, OOV recall and IV recall.",
        _EVAL_EPILOG),
}


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    """The options of ``segment`` or ``seg-eval``."""
    if name == "seg-eval":
        _add_eval_arguments(p)
        return
    p.add_argument("--dict", "-d", dest="dicts", action="append", required=True, metavar="FILE",
                   help="dictionary: one word per line, or 'word freq [tag]' lines (jieba); repeat to merge")
    p.add_argument("--method", "-m", choices=("fmm", "bmm", "bimm", "dag"), default="fmm",
                   help="forward, backward or bidirectional maximum matching, or jieba's max-probability "
                        "DAG path (needs frequencies) (default: fmm)")
    p.add_argument("--baseline", action="store_true",
                   help="the SIGHAN 2005 baseline's rules: every unmatched character a word of its own "
                        "(by default runs of ASCII letters/digits stay together)")
    p.add_argument("--max-word-len", type=int, default=None, metavar="N",
                   help="longest word to match, in characters (default: the dictionary's longest)")
    p.add_argument("--threads", type=int, default=None, metavar="N", help="threads (default: all cores)")
    p.add_argument("--strict-dict", action="store_true", default=True,
                   help="stop at a malformed dictionary line, naming it (default)")
    p.add_argument("--lenient-dict", dest="strict_dict", action="store_false",
                   help="skip malformed dictionary lines (listed on standard error) instead of stopping")
    add_io_arguments(p, what="file, byte and line")


def _add_eval_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gold", "-g", required=True, metavar="FILE", help="the gold segmentation")
    p.add_argument("--words", "-w", metavar="FILE", help="the training word list (for the OOV figures)")
    p.add_argument("pred", metavar="PRED", help="the segmentation to score")
    p.add_argument("--diffs", action="store_true", help="print each line with errors first ([unmatched] words)")
    p.add_argument("--alignment", choices=("diff", "minimal"), default="diff",
                   help="word alignment: GNU diff's, as the scorer runs it (default), or a minimal diff")
    add_errors_argument(p, help="invalid UTF-8: stop with an error (default) or read U+FFFD")


def _blocks(f: BinaryIO) -> Iterator[bytes]:
    """Blocks of whole lines (the last may lack its newline)."""
    rest = b""
    while True:
        data = f.read(CHUNK_BYTES)
        if not data:
            break
        data = rest + data
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        if cut:
            yield data[:cut]
    if rest:
        yield rest


def _utf8_error(name: str, block: bytes, offset: int, line: int) -> InvalidInputError:
    try:
        block.decode("utf-8")
    except UnicodeDecodeError as e:
        return utf8_error(name, block, e.start, offset=offset, first_line=line)
    return InvalidInputError(f"{name}: invalid UTF-8")


def _load_dictionary(args: argparse.Namespace) -> "Dictionary":
    from ciyuan.segment import Dictionary

    return Dictionary.load(*args.dicts, strict=args.strict_dict)


def _run_segment(args: argparse.Namespace) -> None:
    if args.threads is not None and args.threads < 1:
        raise InvalidInputError("--threads must be a positive integer")
    # The dictionary loads first thing, on a thread of its own (natively, without the GIL, once
    # ciyuan.segment is imported), while this thread imports the rest, opens the output and
    # reads the first input block.
    loading = _Background(lambda: _load_dictionary(args))
    seg = None

    def segmenter() -> "Segmenter":
        nonlocal seg
        if seg is None:
            from ciyuan.segment import Segmenter

            dictionary = loading.result()
            for path, line, reason in dictionary.skipped:
                print(f"ciyuan segment: warning: {path}:{line}: {reason} (line skipped)", file=sys.stderr)
            seg = Segmenter(dictionary, args.method, baseline=args.baseline, max_word_len=args.max_word_len)
        return seg

    with open_output(args.output) as out:
        for name, f in input_files(args.inputs):
            offset, line = 0, 1
            previous = b""
            for block in _blocks(f):
                # Lines before this block, for an error message: counted only when a block
                # follows (a file of one block, the usual case, is never counted).
                offset += len(previous)
                line += previous.count(b"\n")
                if args.errors == "replace":
                    block = block.decode("utf-8", "replace").encode("utf-8")
                try:
                    out.write(segmenter().segment_bytes(block, threads=args.threads))
                except InvalidInputError:
                    raise _utf8_error(name, block, offset, line) from None
                previous = block
        segmenter()  # no input at all: a bad dictionary is still an error


class _Background:
    """fn() on a thread of its own; result() waits for it and returns (or raises) what it did."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        import threading

        self._outcome: Tuple[bool, Any] = (False, None)

        def run() -> None:
            try:
                self._outcome = (True, fn())
            except BaseException as e:  # handed to the caller of result()
                self._outcome = (False, e)

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def result(self) -> Any:
        self._thread.join()
        ok, value = self._outcome
        if not ok:
            raise value
        return value


def _run_eval(args: argparse.Namespace) -> None:
    from ciyuan.segment import evaluate

    score = evaluate(args.gold, args.pred, args.words, diffs=args.diffs, alignment=args.alignment,
                     errors=args.errors)
    if score.unpaired_lines:
        print(f"ciyuan seg-eval: warning: the files differ by {score.unpaired_lines} lines; "
              "lines past the end of the shorter one are ignored", file=sys.stderr)
    out = []
    for d in score.diffs:
        out.append(str(d))
    out.append(score.summary(args.pred))
    sys.stdout.write("\n".join(out) + "\n")


def run(args: argparse.Namespace) -> None:
    """Run ``segment`` or ``seg-eval`` (errors are ciyuan errors, reported by the caller)."""
    if args.command == "segment":
        _run_segment(args)
    else:
        _run_eval(args)
