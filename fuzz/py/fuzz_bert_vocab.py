"""Fuzz target "bert_vocab": a BERT ``vocab.txt`` (one token per line) as the input's bytes, loaded
as the whole BERT pipeline (cased when the length is odd), then used (``exercise``).

Run: ``make fuzz TARGET=bert_vocab SECONDS=600``.
"""

from __future__ import annotations

from _harness import Data, ciyuan_errors_only, exercise, instrumented, main, scratch_file

with instrumented():
    from ciyuan import Tokenizer


def test_one(data: bytes) -> None:
    path = scratch_file("vocab.txt", data)
    with ciyuan_errors_only():
        tok = Tokenizer.from_bert_vocab(path, lowercase=len(data) % 2 == 0)
        exercise(tok, Data(data[::-1]))


if __name__ == "__main__":
    main(test_one)
