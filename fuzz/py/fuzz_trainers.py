"""Fuzz target "trainers": every trainer (byte- and character-level BPE, WordPiece, WordLevel,
CharLevel, Unigram, SentencePiece BPE) on a tiny corpus from the input with options the input
picks (vocabulary size, minimum frequency, special tokens, alphabet limits, thread count), then
the trained tokenizer on its own corpus. Byte-level BPE must give back every line it encodes.

Run: ``make fuzz TARGET=trainers SECONDS=600``.
"""

from __future__ import annotations

from typing import Any, List

from _harness import Data, ciyuan_errors_only, exercise, instrumented, main

with instrumented():
    from ciyuan import Tokenizer
    from ciyuan.trainers import (
        BpeTrainer,
        CharLevelTrainer,
        SentencePieceBPETrainer,
        UnigramTrainer,
        WordLevelTrainer,
        WordPieceTrainer,
    )


def trainer(d: Data) -> Any:
    vocab_size = d.int_in(0, 400)
    threads = 1 + d.byte() % 2
    specials = [d.text(5) for _ in range(d.byte() % 3)]
    kind = d.byte() % 7
    if kind == 0:
        return BpeTrainer(vocab_size, byte_level=True, min_frequency=d.byte() % 3, special_tokens=specials,
                          max_token_length=d.byte() % 6 or None, threads=threads)
    if kind == 1:
        return BpeTrainer(vocab_size, end_of_word_suffix="</w>" if d.byte() & 1 else "", min_frequency=d.byte() % 3,
                          limit_alphabet=d.byte() % 20 or None, special_tokens=specials, threads=threads,
                          unk_token="<unk>" if d.byte() & 1 else None)
    if kind == 2:
        return WordPieceTrainer(vocab_size, min_frequency=d.byte() % 3, limit_alphabet=d.byte() % 20 or None,
                                threads=threads)
    if kind == 3:
        return WordLevelTrainer(vocab_size, min_frequency=d.byte() % 3, special_tokens=specials)
    if kind == 4:
        return CharLevelTrainer(vocab_size, special_tokens=specials)
    if kind == 5:
        return UnigramTrainer(vocab_size, max_piece_length=1 + d.byte() % 8, threads=threads)
    return SentencePieceBPETrainer(vocab_size, threads=threads)


def test_one(data: bytes) -> None:
    d = Data(data)
    t = None
    with ciyuan_errors_only():
        t = trainer(d)
    if t is None:
        return
    corpus: List[str] = d.rest().decode("utf-8", "replace").split("\n")
    with ciyuan_errors_only():
        tok = Tokenizer.train(corpus, t)
        if isinstance(t, BpeTrainer) and t.byte_level:
            for line in corpus:
                assert tok.decode(tok.encode(line, add_special_tokens=False).ids) == line, line
        exercise(tok, Data(data[::-1]))


if __name__ == "__main__":
    main(test_one)
