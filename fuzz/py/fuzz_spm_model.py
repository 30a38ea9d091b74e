"""Fuzz target "spm_model": a SentencePiece ``.model`` file (a protobuf ModelProto) as the input's
bytes, loaded, then used (``exercise``). Seeds are small models ciyuan wrote (Unigram and BPE,
byte fallback, user-defined pieces); libFuzzer's mutations then reach the varints, lengths and
field tags of the protobuf as well as the pieces and the normalizer's charsmap.

Run: ``make fuzz TARGET=spm_model SECONDS=600``.
"""

from __future__ import annotations

from _harness import Data, ciyuan_errors_only, exercise, instrumented, main, scratch_file

with instrumented():
    from ciyuan import Tokenizer


def test_one(data: bytes) -> None:
    path = scratch_file("fuzz.model", data)
    with ciyuan_errors_only():
        exercise(Tokenizer.from_file(path), Data(data[::-1]))


if __name__ == "__main__":
    main(test_one)
