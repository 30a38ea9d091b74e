"""Fuzz target "vocab_merges": the two-file BPE formats. The input is cut at its first NUL byte
into a vocabulary and a merge list, loaded as ``vocab.txt`` + ``merges.txt`` (character- or
byte-level) and as GPT-2's ``encoder.json`` + ``vocab.bpe``, then used (``exercise``).

Run: ``make fuzz TARGET=vocab_merges SECONDS=600``.
"""

from __future__ import annotations

from _harness import Data, ciyuan_errors_only, exercise, instrumented, main, scratch_file

with instrumented():
    from ciyuan import Tokenizer
    from ciyuan.formats.vocab_merges import load_bpe


def test_one(data: bytes) -> None:
    vocab, _, merges = data.partition(b"\0")
    d = Data(data[::-1])
    if vocab.lstrip().startswith(b"{"):
        encoder_json = scratch_file("encoder.json", vocab)
        vocab_bpe = scratch_file("vocab.bpe", merges)
        with ciyuan_errors_only():
            exercise(Tokenizer.from_gpt2(encoder_json, vocab_bpe), d)
    else:
        vocab_txt = scratch_file("vocab.txt", vocab)
        merges_txt = scratch_file("merges.txt", merges)
        with ciyuan_errors_only():
            model = load_bpe(vocab_txt, merges_txt, byte_level=len(data) % 2 == 0)
            exercise(Tokenizer(model=model), d)


if __name__ == "__main__":
    main(test_one)
