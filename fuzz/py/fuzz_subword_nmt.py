"""Fuzz target "subword_nmt": a subword-nmt codes file (``#version`` line, then ``left right`` per
line) and, after the first NUL byte, a vocabulary file (``word count`` per line); the codes are
applied as ``subword-nmt apply-bpe`` does, with and without the vocabulary and with dropout.

Run: ``make fuzz TARGET=subword_nmt SECONDS=600``.
"""

from __future__ import annotations

import random

from _harness import TEXTS, Data, ciyuan_errors_only, instrumented, main, scratch_file

with instrumented():
    from ciyuan.formats.subword_nmt import load_codes, parse_vocabulary
    from ciyuan.formats.subword_nmt_apply import SubwordNmt


def test_one(data: bytes) -> None:
    codes_bytes, _, vocab_bytes = data.partition(b"\0")
    d = Data(data[::-1])
    codes_path = scratch_file("codes", codes_bytes)
    with ciyuan_errors_only():
        codes = load_codes(codes_path, merges=d.int_in(-1, 40))
        vocab = None
        if vocab_bytes:
            with ciyuan_errors_only():
                vocab = parse_vocabulary(vocab_bytes.decode("utf-8", "replace"), threshold=d.byte() % 3 or None)
        bpe = SubwordNmt(codes, vocab=vocab, glossaries=[d.text(6)] if d.byte() & 1 else None)
        for text in (d.text(64), TEXTS[d.byte() % len(TEXTS)]):
            bpe.process_line(text)
            bpe.segment(text, dropout=(d.byte() % 5) / 4, rng=random.Random(d.byte()))


if __name__ == "__main__":
    main(test_one)
