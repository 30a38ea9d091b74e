"""The figures of ``ciyuan eval`` computed token by token, in plain Python: the oracle of
``tests/evaluation``.

``ciyuan.evaluation`` counts ids in numpy arrays and reads every figure off the counts; this
twin walks the tokens of each line with a ``Counter`` and applies each definition as written:

- bytes per token = UTF-8 bytes of the lines / tokens; characters per token likewise;
- fertility = tokens / words (``words_of(line)`` decides what a word is);
- vocabulary use = distinct ids / vocabulary size;
- Zipf fit: least squares of log(count) on log(rank), ranks 1, 2, ... by falling count;
  exponent = -slope, R² = the squared correlation;
- unknown / byte-fallback rate = share of the tokens whose id is in the given set;
  partial-character rate = share of the tokens whose bytes do not decode as UTF-8 alone
  (the unknown token excepted);
- Rényi efficiency = log(sum p^alpha) / (1 - alpha) / log(vocabulary size), p each id's share;
- token lengths = how many tokens have each length, ``length_of(id)`` (the bytes of the text
  the token stands for).

Cost: one Python step per token. Fine for the tests' small corpora.

Example:
    >>> ids = {"ab": [1], "a b": [0, 2]}
    >>> f = corpus_figures(["ab", "a b"], ids.__getitem__, {0: b"a", 1: b"ab", 2: b" b"}.get, 4,
    ...                    words_of=lambda s: len(s.split()))
    >>> f["tokens"], f["bytes_per_token"], f["fertility"], f["types_used"]
    (3, 1.6666666666666667, 1.0, 3)
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Callable, Collection, Dict, List, Optional, Sequence

__all__ = ["corpus_figures"]


def corpus_figures(
    lines: Sequence[str],
    encode: Callable[[str], List[int]],
    id_bytes: Callable[[int], Optional[bytes]],
    vocab_size: int,
    *,
    words_of: Callable[[str], int],
    length_of: Optional[Callable[[int], int]] = None,
    unknown_ids: Collection[int] = (),
    byte_fallback_ids: Collection[int] = (),
    alpha: float = 2.5,
) -> Dict[str, Any]:
    """Every figure of one tokenizer on ``lines`` (see the module's doc); NaN for 0/0."""
    counts: Counter = Counter()
    lengths: Counter = Counter()
    tokens = n_bytes = n_chars = n_words = unk = fallback = partial = 0
    for line in lines:
        n_bytes += len(line.encode("utf-8"))
        n_chars += len(line)
        n_words += words_of(line)
        for i in encode(line):
            tokens += 1
            counts[i] += 1
            data = id_bytes(i) or b""
            lengths[length_of(i) if length_of is not None else len(data)] += 1
            unk += i in unknown_ids
            fallback += i in byte_fallback_ids
            if i not in unknown_ids:
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    partial += 1

    def div(a: float, b: float) -> float:
        return a / b if b else math.nan

    # Zipf: a straight line through (log rank, log count).
    freqs = sorted(counts.values(), reverse=True)
    xs = [math.log(r + 1) for r in range(len(freqs))]
    ys = [math.log(f) for f in freqs]
    if len(freqs) >= 2:
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
        vx = sum((x - mx) ** 2 for x in xs)
        vy = sum((y - my) ** 2 for y in ys)
        exponent = -cov / vx
        r2 = cov * cov / (vx * vy) if vy else 1.0
    else:
        exponent = r2 = math.nan
    if tokens and vocab_size >= 2:
        power_sum = sum((c / tokens) ** alpha for c in counts.values())
        renyi = math.log(power_sum) / (1 - alpha) / math.log(vocab_size)
    else:
        renyi = math.nan
    return {
        "tokens": tokens, "bytes": n_bytes, "chars": n_chars, "words": n_words,
        "bytes_per_token": div(n_bytes, tokens), "chars_per_token": div(n_chars, tokens),
        "fertility": div(tokens, n_words), "types_used": len(counts), "vocab_use": div(len(counts), vocab_size),
        "zipf_exponent": exponent, "zipf_r2": r2,
        "unk_rate": div(unk, tokens), "byte_fallback_rate": div(fallback, tokens),
        "partial_char_rate": div(partial, tokens), "renyi_efficiency": renyi,
        "token_lengths": dict(sorted(lengths.items())),
    }
