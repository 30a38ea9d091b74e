"""Truncation settings: validation, descriptions, and the stride check as HF makes it."""

from __future__ import annotations

import pytest

from ciyuan.errors import InvalidInputError
from ciyuan.processors import Truncation


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
