"""A tokenizer's tokens scored as words against a gold segmentation (the existing seg-eval).

Each gold line's words are joined into the raw text (as the bakeoff's test file has it), the
tokenizer encodes it, and the text is cut at every token's start (its character offsets): those
pieces, stripped of whitespace, are the predicted words, scored by
:func:`ciyuan.segment.evaluate` (SIGHAN's rules) with the minimal alignment (a longest common
subsequence of words, as ``diff --minimal``): GNU diff's default heuristic sets aside words
frequent in the other line, and a tokenizer's output is full of frequent one-character words,
so it would undercount (PKU's first 60 lines with BERT's Chinese vocabulary: 1,175 correct
words by GNU diff's alignment, 1,224 by span matching, which the minimal alignment gives).
Tokens that share a character (a byte-level BPE cutting one character into byte pieces) cut
nothing inside it: offsets are whole characters. The score says how near a subword vocabulary
comes to a dictionary's words: BERT's Chinese vocabulary (a token per Han character) finds
exactly the one-character words.

Example:
    >>> cut_at_tokens("研究生命", [(0, 2), (2, 3), (3, 4)])
    '研究 生 命'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, List, Tuple, Union

from ciyuan.evaluation.corpus import read_lines
from ciyuan.evaluation.report import SegmentationScore

if TYPE_CHECKING:
    from ciyuan.tokenizer import Tokenizer

__all__ = ["cut_at_tokens", "score_tokens_as_words"]

PathLike = Union[str, "os.PathLike[str]"]


def cut_at_tokens(text: str, offsets: Iterable[Tuple[int, int]]) -> str:
    """``text`` cut at the start of every token (character offsets), pieces joined by spaces,
    whitespace dropped."""
    cuts = sorted({start for start, end in offsets if end > start} | {0, len(text)})
    pieces = (text[a:b] for a, b in zip(cuts, cuts[1:]))
    return " ".join(w for p in pieces for w in p.split())


def score_tokens_as_words(name: str, tok: "Tokenizer", gold: PathLike, errors: str = "strict",
                          alignment: str = "minimal") -> SegmentationScore:
    """Score ``tok``'s tokens as words against the gold file (see the module's doc)."""
    from ciyuan.segment import evaluate
    from ciyuan.segment.scoring import split_words

    gold_lines = read_lines(gold, errors)
    raw = ["".join(split_words(line)) for line in gold_lines]
    encodings = tok.encode_batch(raw, add_special_tokens=False, allowed_special=(), disallowed_special=())
    predicted: List[str] = [cut_at_tokens(text, e.offsets) for text, e in zip(raw, encodings)]
    score = evaluate(gold_lines, predicted, alignment=alignment)
    return SegmentationScore(tokenizer=name, gold=Path(gold).name, gold_words=score.true_words,
                             predicted_words=score.test_words, correct=score.correct, precision=score.precision,
                             recall=score.recall, f1=score.f)
