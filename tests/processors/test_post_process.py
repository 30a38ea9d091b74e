"""Truncation and Padding settings: validation, descriptions and HF's errors as ciyuan errors."""

from __future__ import annotations

import pytest

from ciyuan.encoding import Encoding
from ciyuan.errors import InvalidInputError
from ciyuan.processors import BertProcessing, Truncation, post_process


def raw(n: int) -> Encoding:
    return Encoding(None, ids=list(range(n)), offsets=[(i, i + 1) for i in range(n)], tokens=["x"] * n)


def test_errors_hf_raises() -> None:
    bert = BertProcessing()
    with pytest.raises(InvalidInputError, match="only_second"):
        post_process(raw(10), processor=bert, truncation=Truncation(5, strategy="only_second"))
    # short enough: nothing to truncate, no error (as HF)
    assert len(post_process(raw(2), processor=bert, truncation=Truncation(5, strategy="only_second"))) == 4
    with pytest.raises(InvalidInputError, match="too short"):
        post_process(raw(2), raw(10), processor=bert, truncation=Truncation(6, strategy="only_first"))
    with pytest.raises(InvalidInputError, match="stride"):
        post_process(raw(10), processor=bert, truncation=Truncation(5, stride=3))


def test_max_length_below_special_tokens() -> None:
    bert = BertProcessing()
    # HF: max_length - added wraps around (unsigned), so nothing is truncated
    assert len(post_process(raw(10), processor=bert, truncation=Truncation(1))) == 12
    # max_length == added: everything overflows
    enc = post_process(raw(3), processor=bert, truncation=Truncation(2))
    assert enc.ids == [101, 102] and enc.overflowing[0].ids == [101, 0, 1, 2, 102]
