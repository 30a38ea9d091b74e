"""Encoding: defaults, laziness, settable fields, and that post-processing never changes its
inputs."""

from __future__ import annotations

from typing import List, Tuple

import pytest

from ciyuan.encoding import Encoding
from ciyuan.errors import InvalidInputError
from ciyuan.processors import BertProcessing, Padding, Truncation, pad, pad_batch, post_process


def flat(n: int = 3, calls: List[str] = None) -> Encoding:  # type: ignore[assignment]
    ids = list(range(10, 10 + n))
    offsets = [(i, i + 1) for i in range(n)]
    tokens = [f"t{i}" for i in range(n)]

    def make_offsets() -> List[Tuple[int, int]]:
        if calls is not None:
            calls.append("offsets")
        return offsets

    return Encoding(None, make_ids=lambda: ids, make_offsets=make_offsets, tokens=tokens)


def test_defaults_of_a_flat_encoding() -> None:
    enc = flat()
    assert enc.type_ids == [0, 0, 0]
    assert enc.attention_mask == [1, 1, 1]
    assert enc.special_tokens_mask == [0, 0, 0]
    assert enc.overflowing == []
    assert enc.sequence_ids == [0, 0, 0]
    assert enc.n_sequences == 1
    assert len(enc) == 3


def test_tokens_from_the_tokenizer() -> None:
    class Tok:
        def id_to_token(self, i: int) -> str:
            return f"<{i}>"

    enc = Encoding(Tok(), ids=[1, 2], offsets=[(0, 1), (1, 2)])  # type: ignore[arg-type]
    assert enc.tokens == ["<1>", "<2>"]
    with pytest.raises(ValueError, match="no tokenizer"):
        _ = Encoding(None, ids=[1], offsets=[(0, 1)]).tokens


def test_post_process_is_lazy_and_leaves_inputs_alone() -> None:
    calls: List[str] = []
    raw = flat(calls=calls)
    enc = post_process(raw, processor=BertProcessing())
    assert enc.ids == [101, 10, 11, 12, 102]
    assert enc.type_ids == [0] * 5 and enc.attention_mask == [1] * 5
    assert calls == []  # offsets not made until read
    assert enc.offsets == [(0, 0), (0, 1), (1, 2), (2, 3), (0, 0)]
    assert calls == ["offsets"]
    padded = pad(enc, Padding(length=7))
    assert padded is enc and enc.ids[-2:] == [0, 0]
    assert raw.ids == [10, 11, 12] and len(raw) == 3 and raw.attention_mask == [1, 1, 1]
    # a flat encoding is never padded in place: a padded copy comes back
    copy = pad(raw, Padding(length=5, direction="left"))
    assert copy is not raw and copy.ids == [0, 0, 10, 11, 12] and raw.ids == [10, 11, 12]
    assert copy.sequence_ids == [0, 0, 0, 0, 0]  # no ranges recorded: HF says sequence 0 everywhere


def test_setting_fields() -> None:
    enc = post_process(flat(), flat(2), processor=BertProcessing())
    enc.tokens = ["a", "b", "c", "d", "e", "f", "g", "h"]
    assert enc.tokens[0] == "a" and enc.ids[0] == 101 and enc.sequence_ids == [None, 0, 0, 0, None, 1, 1, None]
    enc.type_ids = [5] * 8
    enc = pad_batch([enc], Padding(length=10, pad_token="P"))[0]
    assert enc.tokens == ["a", "b", "c", "d", "e", "f", "g", "h", "P", "P"]
    assert enc.type_ids == [5] * 8 + [0, 0]
    with pytest.raises(ValueError, match="one per token"):
        enc.attention_mask = [1]
    enc.overflowing = [flat()]
    assert len(enc.overflowing) == 1


def test_pad_nothing_and_errors() -> None:
    assert pad_batch([], Padding()) == []
    with pytest.raises(InvalidInputError):
        post_process("text", processor=BertProcessing())  # type: ignore[arg-type]


def test_repr() -> None:
    enc = post_process(flat(10), processor=BertProcessing(), truncation=Truncation(6))
    assert repr(enc) == "Encoding(n=6, ids=[101, 10, 11, 12, 13, 102], overflowing=2)"
