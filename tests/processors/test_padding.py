"""Padding settings: validation and descriptions; both settings in HF's JSON forms."""

from __future__ import annotations

import pytest

from ciyuan.errors import InvalidInputError
from ciyuan.processors import Padding, Truncation


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
