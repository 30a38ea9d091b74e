"""post_process / pad_batch give exactly Hugging Face ``tokenizers``' encodings: every field,
overflowing windows included, for single sequences and pairs, every truncation strategy,
stride and direction, and every kind of padding."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from ciyuan.processors import BertProcessing, Padding, TemplateProcessing, Truncation
from tests.parity.hf_compare import compare

BERT = BertProcessing(sep=("[SEP]", 102), cls=("[CLS]", 101))
BERT_TEMPLATE = TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                   special_tokens=[("[CLS]", 101), ("[SEP]", 102)])

A = "hello there my friend, how are you doing today? unaffable tokenization"
B = "what is the answer to life, the universe and everything"
SHORT = "hi"
INPUTS = [A, (A, B), (B, A), (SHORT, A), (A, SHORT), (SHORT, SHORT), "", ("", A), (A, "")]


def test_plain_bert(hf_bert: Any, hf_plain: Any) -> None:
    compare(hf_bert, hf_plain, BERT, INPUTS)
    compare(hf_bert, hf_plain, BERT_TEMPLATE, INPUTS, lazy=True)


def test_without_special_tokens(hf_bert: Any, hf_plain: Any) -> None:
    compare(hf_bert, hf_plain, BERT, INPUTS, add_special_tokens=False)
    compare(hf_bert, hf_plain, BERT, INPUTS, add_special_tokens=False, truncation=Truncation(7, stride=2))


@pytest.mark.parametrize("strategy", ["longest_first", "only_first", "only_second"])
@pytest.mark.parametrize("direction", ["right", "left"])
def test_truncation_grid(hf_bert: Any, hf_plain: Any, strategy: str, direction: str) -> None:
    for max_length, stride in itertools.product([0, 1, 2, 3, 4, 5, 7, 10, 16, 40], [0, 1, 2, 3, 5]):
        trunc = Truncation(max_length, stride=stride, strategy=strategy, direction=direction)
        compare(hf_bert, hf_plain, BERT, INPUTS, truncation=trunc)


@pytest.mark.parametrize("direction", ["right", "left"])
def test_padding_grid(hf_bert: Any, hf_plain: Any, direction: str) -> None:
    for length, multiple in itertools.product([None, 0, 3, 12, 30], [None, 0, 1, 4, 8]):
        padding = Padding(length=length, pad_to_multiple_of=multiple, direction=direction)
        for batch in (False, True):
            compare(hf_bert, hf_plain, BERT, INPUTS, padding=padding, batch=batch)
            compare(hf_bert, hf_plain, BERT, INPUTS, padding=padding, batch=batch,
                    truncation=Truncation(9, stride=2, direction=direction))


def test_padding_other_token(hf_bert: Any, hf_plain: Any) -> None:
    padding = Padding(length=20, pad_id=7, pad_type_id=3, pad_token="<pad>", direction="left")
    compare(hf_bert, hf_plain, BERT, INPUTS, padding=padding, truncation=Truncation(8, stride=1), batch=True)


TEMPLATES = [
    ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
    ("[CLS]:1 $A:1 [SEP]:2", "[CLS] $A:1 [SEP] $B:0 [SEP]:1"),
    ("$A", "$A $B"),
    ("$0 [SEP] [SEP]", "$B:1 [SEP] $A [CLS]:2 [SEP]"),
    # A sequence used twice: HF's overflowing combinations nest deeply (tens of thousands of
    # encodings for these short texts), so this one is slow.
    pytest.param("[CLS] $A $A [SEP]", "[CLS] $A [SEP] $B $A:3", marks=pytest.mark.slow),
    ("[MANY] $A", "$A [MANY]:1 $B:1 [MANY]"),
]


@pytest.mark.parametrize("single,pair", TEMPLATES)
def test_templates(hf_custom: Any, hf_plain: Any, single: str, pair: str) -> None:
    from tokenizers.processors import TemplateProcessing as HFTemplate

    specials = [("[CLS]", 101), ("[SEP]", 102)]
    many = {"id": "[MANY]", "ids": [1, 2, 3], "tokens": ["x", "y", "z"]}
    hf_custom.post_processor = HFTemplate(single=single, pair=pair, special_tokens=specials + [many])
    ours = TemplateProcessing(single=single, pair=pair, special_tokens=specials + [many])
    for trunc in [None, Truncation(6, stride=1), Truncation(9, stride=3, direction="left"),
                  Truncation(8, strategy="only_second"), Truncation(4), Truncation(3)]:
        for padding in [None, Padding(length=16, direction="left")]:
            compare(hf_custom, hf_plain, ours, INPUTS, truncation=trunc, padding=padding)


def test_no_processor(hf_custom: Any, hf_plain: Any) -> None:
    hf_custom.post_processor = None
    for trunc in [None, Truncation(5, stride=2), Truncation(0), Truncation(7, strategy="only_first", direction="left")]:
        for padding in [None, Padding(length=24)]:
            compare(hf_custom, hf_plain, None, INPUTS, truncation=trunc, padding=padding)
            compare(hf_custom, hf_plain, None, INPUTS, truncation=trunc, padding=padding, batch=True)
