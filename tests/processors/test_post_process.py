"""Truncation and Padding settings: validation, descriptions and HF's errors as ciyuan errors."""

from __future__ import annotations

import pytest

from ciyuan.encoding import Encoding
from ciyuan.errors import InvalidInputError
from ciyuan.processors import BertProcessing, Padding, Truncation, post_process


def raw(n: int) -> Encoding:
    return Encoding(None, ids=list(range(n)), offsets=[(i, i + 1) for i in range(n)], tokens=["x"] * n)


def test_truncation_settings() -> None:
    t = Truncation(10, stride=2, strategy="only_first", direction="left")
    assert Truncation.from_dict(t.to_dict()) == t
    for bad in (dict(max_length=-1), dict(max_length=1.5), dict(max_length=4, stride=-1),
                dict(max_length=4, strategy="longest"), dict(max_length=4, direction="up"),
                dict(max_length=True)):
        with pytest.raises(InvalidInputError):
            Truncation(**bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        Truncation.from_dict({"type": "Padding"})


def test_truncation_check_like_hf() -> None:
    Truncation(10, stride=8).check(2)  # HF accepts stride == max_length - added...
    with pytest.raises(InvalidInputError, match="stride"):
        Truncation(10, stride=9).check(2)
    Truncation(1, stride=9).check(2)  # ...and does not check a max_length below the added count


def test_padding_settings() -> None:
    p = Padding(length=16, pad_to_multiple_of=8, direction="left", pad_id=3, pad_type_id=1, pad_token="<pad>")
    assert p.strategy == "fixed" and Padding.from_dict(p.to_dict()) == p
    assert Padding().strategy == "longest"
    assert Padding(pad_to_multiple_of=8).target([3, 9]) == 16
    assert Padding(length=7, pad_to_multiple_of=0).target([30]) == 7
    for bad in (dict(strategy="fixed"), dict(strategy="longest", length=3), dict(strategy="max"),
                dict(direction="up"), dict(length=-1), dict(pad_to_multiple_of=-2), dict(pad_token=3),
                dict(pad_id=-1)):
        with pytest.raises(InvalidInputError):
            Padding(**bad)  # type: ignore[arg-type]
    assert "pad_token='<pad>'" in repr(p)


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


def test_hf_json_forms(hf_custom) -> None:  # type: ignore[no-untyped-def]
    import json

    for trunc, padding in [(Truncation(10, stride=2, strategy="only_second", direction="left"),
                            Padding(length=12, pad_to_multiple_of=4, direction="left", pad_id=3, pad_type_id=1,
                                    pad_token="<p>")),
                           (Truncation(512), Padding())]:
        hf_custom.enable_truncation(trunc.max_length, stride=trunc.stride, strategy=trunc.strategy,
                                    direction=trunc.direction)
        hf_custom.enable_padding(direction=padding.direction, pad_id=padding.pad_id, pad_type_id=padding.pad_type_id,
                                 pad_token=padding.pad_token, length=padding.length,
                                 pad_to_multiple_of=padding.pad_to_multiple_of)
        described = json.loads(hf_custom.to_str())
        assert trunc.to_hf_dict() == described["truncation"]
        assert padding.to_hf_dict() == described["padding"]
        assert Truncation.from_hf_dict(described["truncation"]) == trunc
        assert Padding.from_hf_dict(described["padding"]) == padding
    hf_custom.no_truncation()
    hf_custom.no_padding()
    with pytest.raises(InvalidInputError):
        Padding.from_hf_dict({"strategy": {"Max": 3}})
    with pytest.raises(InvalidInputError):
        Truncation.from_hf_dict({"strategy": "Middle"})
