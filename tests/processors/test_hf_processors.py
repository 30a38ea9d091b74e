"""Hugging Face's post-processors ByteLevel (trim_offsets), RobertaProcessing and Sequence held
against `tokenizers` on GPT-2's byte-level encodings: every field, overflowing windows included,
with and without truncation; and their JSON forms."""

from __future__ import annotations

import itertools
import json
from typing import Any, Callable, List, Tuple

import pytest

from ciyuan import processors
from ciyuan.errors import ModelError
from ciyuan.processors import ByteLevel, RobertaProcessing, Sequence, TemplateProcessing, Truncation
from tests.conftest import read_prefix, shared
from tests.parity.hf_compare import compare

tokenizers = pytest.importorskip("tokenizers")
P = tokenizers.processors

A = "  Hello  world, how are you?  "
B = " a second  text\twith  spaces "
INPUTS = [A, (A, B), (B, A), " x", ("y ", "  z"), "", ("", A), "plain", ("Ġ", "  ")]

LLAMA3 = dict(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
              special_tokens=[("<|begin_of_text|>", 50256)])

# (name, HF processor, ciyuan processor)
CASES: List[Tuple[str, Callable[[], Any], Callable[[], Any]]] = [
    ("ByteLevel", lambda: P.ByteLevel(), lambda: ByteLevel()),
    ("ByteLevel-no-prefix", lambda: P.ByteLevel(add_prefix_space=False), lambda: ByteLevel(add_prefix_space=False)),
    ("ByteLevel-no-trim", lambda: P.ByteLevel(trim_offsets=False), lambda: ByteLevel(trim_offsets=False)),
    ("Roberta", lambda: P.RobertaProcessing(("</s>", 2), ("<s>", 0)), lambda: RobertaProcessing()),
    ("Roberta-no-prefix", lambda: P.RobertaProcessing(("</s>", 2), ("<s>", 0), add_prefix_space=False),
     lambda: RobertaProcessing(add_prefix_space=False)),
    ("Roberta-no-trim", lambda: P.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False),
     lambda: RobertaProcessing(trim_offsets=False)),
    ("Llama3", lambda: P.Sequence([P.ByteLevel(trim_offsets=False), P.TemplateProcessing(**LLAMA3)]),
     lambda: Sequence([ByteLevel(trim_offsets=False), TemplateProcessing(**LLAMA3)])),
    ("Trim-then-template", lambda: P.Sequence([P.ByteLevel(), P.TemplateProcessing(**LLAMA3)]),
     lambda: Sequence([ByteLevel(), TemplateProcessing(**LLAMA3)])),
    ("Sequence-only-trim", lambda: P.Sequence([P.ByteLevel()]), lambda: Sequence([ByteLevel()])),
]


@pytest.fixture(scope="module")
def gpt2_plain() -> Any:
    hf = tokenizers.Tokenizer.from_file(str(shared("tokenizers", "gpt2", "tokenizer.json")))
    hf.post_processor = None
    return hf


def with_processor(processor: Any) -> Any:
    hf = tokenizers.Tokenizer.from_file(str(shared("tokenizers", "gpt2", "tokenizer.json")))
    hf.post_processor = processor
    return hf


@pytest.mark.parametrize("name, make_hf, make_ours", CASES, ids=[c[0] for c in CASES])
def test_equals_tokenizers(name: str, make_hf: Callable[[], Any], make_ours: Callable[[], Any],
                           gpt2_plain: Any) -> None:
    hf, ours = with_processor(make_hf()), make_ours()
    lines = [x for x in read_prefix(shared("corpora", "en", "taylorswift.txt"), 6000).splitlines() if x][:20]
    compare(hf, gpt2_plain, ours, INPUTS + lines + list(zip(lines, lines[1:])))
    compare(hf, gpt2_plain, ours, INPUTS, add_special_tokens=False)
    for max_length, stride in itertools.product([1, 3, 6, 11], [0, 2]):
        for strategy in ("longest_first", "only_first"):
            compare(hf, gpt2_plain, ours, INPUTS, truncation=Truncation(max_length, stride=stride, strategy=strategy))


@pytest.mark.parametrize("name, make_hf, make_ours", CASES, ids=[c[0] for c in CASES])
def test_json_form(name: str, make_hf: Callable[[], Any], make_ours: Callable[[], Any]) -> None:
    hf_form = json.loads(make_hf().__getstate__())
    ours = make_ours()
    assert ours.to_dict() == hf_form
    assert processors.from_dict(hf_form).to_dict() == hf_form


def test_bert_and_template_json_forms() -> None:
    bert = json.loads(P.BertProcessing(("[SEP]", 102), ("[CLS]", 101)).__getstate__())
    assert processors.from_dict(bert).to_dict() == bert
    template = json.loads(P.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 101), ("[SEP]", 102)]).__getstate__())
    assert processors.from_dict(template).to_dict() == template


def test_bad_descriptions() -> None:
    with pytest.raises(ModelError, match="more than one"):
        Sequence([RobertaProcessing(), TemplateProcessing()])
    with pytest.raises(ModelError, match="ByteLevel after TemplateProcessing"):
        Sequence([TemplateProcessing(), ByteLevel()])
    with pytest.raises(ModelError, match="processors"):
        processors.from_dict({"type": "Sequence"})
    with pytest.raises(ModelError, match="unknown post-processor"):
        processors.from_dict({"type": "Sequence", "processors": [{"type": "Nope"}]})
    with pytest.raises(ModelError):
        processors.from_dict({"type": "RobertaProcessing", "sep": "</s>"})
