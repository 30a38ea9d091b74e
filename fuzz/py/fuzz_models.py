"""Fuzz target "models": every model built in Python from a random vocabulary - WordPiece,
WordLevel, byte- and character-level BPE (merge ranks or token ranks, byte fallback, unknown
token, continuing prefix), Unigram and SentencePiece BPE (scores, types, byte fallback) - then
encoded, sampled, n-best'ed and decoded (``exercise``). The native constructors must refuse an
inconsistent vocabulary with a ciyuan error; what they accept must encode any text.

Run: ``make fuzz TARGET=models SECONDS=600``.
"""

from __future__ import annotations

from typing import Any, List, Tuple

from _harness import Data, ciyuan_errors_only, exercise, instrumented, main

with instrumented():
    from ciyuan import Tokenizer
    from ciyuan.models import BPE, SentencePieceBPE, Unigram, WordLevel, WordPiece


def vocab(d: Data, n: int) -> List[str]:
    out = [d.text(6) for _ in range(n)]
    return out + ["[UNK]", "<unk>", "##a", "a", "b", "ab"][: d.byte() % 7]


def model(d: Data) -> Any:
    kind = d.byte() % 6
    words = vocab(d, d.byte() % 24)
    if kind == 0:
        unk = ("[UNK]", None, words[0] if words else "")[d.byte() % 3]
        return WordPiece({w: i for i, w in enumerate(words)}, unk_token=unk,
                         continuing_subword_prefix=("##", "", "▁")[d.byte() % 3],
                         max_input_chars_per_word=d.int_in(0, 120))
    if kind == 1:
        return WordLevel({w: d.int_in(0, 60) for w in words}, unk_token="[UNK]" if d.byte() & 1 else None)
    if kind in (2, 3):
        byte_level = kind == 2
        v = {w: i for i, w in enumerate(dict.fromkeys(words))}
        merges: List[Tuple[str, str]] = []
        keys = list(v)
        for _ in range(d.byte() % 12):
            if keys:
                merges.append((keys[d.int_in(0, len(keys) - 1)], keys[d.int_in(0, len(keys) - 1)]))
        options = {"byte_level": byte_level, "rank_by_token": bool(d.byte() & 1) and byte_level}
        if not byte_level:
            options.update(unk_token="<unk>" if d.byte() & 1 else None, byte_fallback=bool(d.byte() & 1),
                           continuing_subword_prefix="##" if d.byte() & 1 else "")
        return BPE(v, merges, **options)
    pieces = [(w, -float(d.byte()) / 8) for w in words]
    types = [1 + d.byte() % 6 for _ in pieces] if d.byte() & 1 else None
    cls = Unigram if kind == 4 else SentencePieceBPE
    return cls(pieces, unk_id=d.int_in(-1, len(pieces)) if d.byte() & 1 else None, byte_fallback=bool(d.byte() & 1),
               types=types)


def test_one(data: bytes) -> None:
    d = Data(data)
    with ciyuan_errors_only():
        tok = Tokenizer(model=model(d))
        exercise(tok, d)


if __name__ == "__main__":
    main(test_one)
