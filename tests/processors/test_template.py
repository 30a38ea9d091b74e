"""TemplateProcessing / BertProcessing: template syntax, errors and descriptions, against HF."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ciyuan import processors
from ciyuan.encoding import Encoding
from ciyuan.errors import CiyuanError, ModelError
from ciyuan.processors import TemplateProcessing

SPECIALS = [("[CLS]", 101), ("[SEP]", 102)]

GOOD = [
    ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
    ("$", "$a $b"),
    ("$0", "$A:0 $B:1"),
    ("$1 [SEP]:7", "$B:2 $A:3"),
    ("$+1", "$A:+2 $B"),
    (["[CLS]", "$A", "[SEP]"], ["$A", "[SEP]", "$B:1"]),
]
BAD = [
    ("$A:x", "$A $B"),
    ("$C", "$A $B"),
    ("$A:1:2", "$A $B"),
    ("$A:4294967296", "$A $B"),
    ("$A  [SEP]", "$A $B"),  # an empty piece: not a known special token
    ("[X]", "$A $B"),
    ("$A", "$A"),
    ("$A", "$A $A:1"),
    ("", "$A $B"),
]


@pytest.mark.parametrize("single,pair", GOOD)
def test_same_description_as_hf(single: Any, pair: Any) -> None:
    from tokenizers.processors import TemplateProcessing as HFTemplate

    theirs = HFTemplate(single=single, pair=pair, special_tokens=SPECIALS)
    ours = TemplateProcessing(single=single, pair=pair, special_tokens=SPECIALS)
    assert ours.to_dict() == json.loads(theirs.__getstate__())
    for is_pair in (False, True):
        assert ours.num_special_tokens_to_add(is_pair) == theirs.num_special_tokens_to_add(is_pair)
    again = processors.from_dict(json.loads(json.dumps(ours.to_dict())))
    assert again.to_dict() == ours.to_dict()


@pytest.mark.parametrize("single,pair", BAD)
def test_bad_templates_refused_like_hf(single: Any, pair: Any) -> None:
    from tokenizers.processors import TemplateProcessing as HFTemplate

    with pytest.raises(ValueError):
        HFTemplate(single=single, pair=pair, special_tokens=SPECIALS)
    with pytest.raises(ModelError):
        TemplateProcessing(single=single, pair=pair, special_tokens=SPECIALS)


def test_single_with_b_is_refused() -> None:
    # HF accepts it and fails (panics) on the first encode; ciyuan refuses it up front.
    with pytest.raises(ModelError, match=r"\$B"):
        TemplateProcessing(single="[CLS] $B", pair="$A $B", special_tokens=SPECIALS)


def test_bad_special_tokens() -> None:
    for specials in ([("[CLS]", -1)], [("[CLS]", "x")], [("[CLS]",)], [{"id": "[M]", "ids": [1], "tokens": []}],
                     [{"ids": [1], "tokens": ["a"]}], "nonsense"):
        with pytest.raises(ModelError):
            TemplateProcessing(single="$A", pair="$A $B", special_tokens=specials)  # type: ignore[arg-type]
    # (id, token) is read too, as in HF
    template = TemplateProcessing("[CLS] $A", "$A $B", special_tokens=[(101, "[CLS]")])
    assert template.num_special_tokens_to_add(False) == 1


def test_multi_id_special_token() -> None:
    many = {"id": "[MANY]", "ids": [1, 2, 3], "tokens": ["x", "y", "z"]}
    t = TemplateProcessing(single="[MANY] $A [MANY]:1", pair="$A $B", special_tokens=[many])
    assert t.num_special_tokens_to_add(False) == 6
    enc = t.process(Encoding(None, ids=[9], offsets=[(0, 1)], tokens=["q"]))
    assert enc.ids == [1, 2, 3, 9, 1, 2, 3]
    assert enc.tokens == ["x", "y", "z", "q", "x", "y", "z"]
    assert enc.type_ids == [0, 0, 0, 0, 1, 1, 1]
    assert enc.sequence_ids == [None, None, None, 0, None, None, None]


def test_from_dict_errors() -> None:
    with pytest.raises(ModelError, match="unknown post-processor"):
        processors.from_dict({"type": "NoSuchProcessing"})
    with pytest.raises(ModelError):
        TemplateProcessing.from_dict({"type": "TemplateProcessing", "single": 3, "pair": "$A $B"})
    with pytest.raises(CiyuanError):
        TemplateProcessing.from_dict({"type": "TemplateProcessing", "single": [{"Sequence": {"id": "C"}}]})
    # string templates in a description are read too
    t = TemplateProcessing.from_dict({"type": "TemplateProcessing", "single": "$A", "pair": "$A $B:1"})
    assert t.to_dict()["pair"][1] == {"Sequence": {"id": "B", "type_id": 1}}


def test_repr() -> None:
    t = TemplateProcessing("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=SPECIALS)
    assert repr(t) == ("TemplateProcessing(single='[CLS]:0 $A:0 [SEP]:0', pair='[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1', "
                       "special_tokens=[('[CLS]', [101]), ('[SEP]', [102])])")
