"""BertProcessing: its description against HF's, and special tokens holding template syntax."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ciyuan import processors
from ciyuan.encoding import Encoding
from ciyuan.errors import ModelError
from ciyuan.processors import BertProcessing


def test_bert_processing_matches_hf_description(hf_bert: Any) -> None:
    description = json.loads(hf_bert.to_str())["post_processor"]
    ours = processors.from_dict(description)
    assert isinstance(ours, BertProcessing)
    assert ours.to_dict() == description
    assert (ours.num_special_tokens_to_add(False), ours.num_special_tokens_to_add(True)) == (2, 3)
    assert repr(ours) == "BertProcessing(sep=('[SEP]', 102), cls=('[CLS]', 101))"
    with pytest.raises(ModelError):
        BertProcessing(sep=("[SEP]", -1))
    with pytest.raises(ModelError):
        BertProcessing(sep="[SEP]")  # type: ignore[arg-type]


def test_bert_tokens_with_colons_and_spaces() -> None:
    p = BertProcessing(sep=("<s e:p>", 2), cls=("<c:ls>", 1))
    enc = p.process(Encoding(None, ids=[5], offsets=[(0, 1)], tokens=["a"]),
                    Encoding(None, ids=[6], offsets=[(0, 1)], tokens=["b"]))
    assert enc.tokens == ["<c:ls>", "a", "<s e:p>", "b", "<s e:p>"]
    assert enc.type_ids == [0, 0, 0, 1, 1]
