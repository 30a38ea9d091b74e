"""Fuzz target "tiktoken": a ``.tiktoken`` file (``base64(token) rank`` per line) as the input's
bytes, loaded with each of the three OpenAI patterns, then used (``exercise``).

Run: ``make fuzz TARGET=tiktoken SECONDS=600``; seeds in tests/fuzz_corpus/tiktoken.
"""

from __future__ import annotations

from _harness import Data, ciyuan_errors_only, exercise, instrumented, main, scratch_file

with instrumented():
    from ciyuan import Tokenizer

PATTERNS = ("gpt2", "cl100k_base", "o200k_base", None)


def test_one(data: bytes) -> None:
    path = scratch_file("fuzz.tiktoken", data)
    pattern = PATTERNS[len(data) % len(PATTERNS)]  # not a byte of the file: every byte is the file's
    with ciyuan_errors_only():
        tok = Tokenizer.from_tiktoken(path, pattern)
        exercise(tok, Data(data[::-1]))


if __name__ == "__main__":
    main(test_one)
