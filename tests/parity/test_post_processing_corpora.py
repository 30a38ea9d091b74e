"""Real text: every line of the corpora (and consecutive lines as pairs) through truncation,
the BERT template and padding, compared with Hugging Face ``tokenizers`` field by field."""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import pytest

from ciyuan.processors import BertProcessing, Padding, Truncation
from tests.conftest import read_prefix, shared
from tests.parity.hf_compare import compare

BERT = BertProcessing()

# Short max_length with a stride makes many overflowing windows per long line, and a pair
# combines them all (nested, as HF does): thorough but slow, so only in the slow tests.
FAST_CONFIGS = [
    (Truncation(128, stride=16), Padding(pad_to_multiple_of=8)),
    (Truncation(64, stride=4, strategy="only_second", direction="left"), Padding(length=64, direction="left")),
    (Truncation(40, strategy="only_first"), None),
    (None, Padding()),
]
CONFIGS = FAST_CONFIGS + [
    (Truncation(32, stride=8), Padding(pad_to_multiple_of=8)),
    (Truncation(48, stride=4, strategy="only_second", direction="left"), Padding(length=40, direction="left")),
    (Truncation(24, strategy="only_first"), None),
    (None, Padding()),
]


def lines(*parts: str, limit: int = 0) -> List[str]:
    path = shared(*parts)
    text = read_prefix(path, limit) if limit else path.read_text(encoding="utf-8")
    return text.split("\n")


def run(hf_bert: Any, hf_plain: Any, texts: Sequence[str], configs: Sequence[Any] = CONFIGS,
        batch_size: int = 64) -> None:
    pairs: List[Tuple[str, str]] = list(zip(texts[::2], texts[1::2]))
    for truncation, padding in configs:
        for start in range(0, len(texts), batch_size):
            compare(hf_bert, hf_plain, BERT, texts[start:start + batch_size], truncation=truncation,
                    padding=padding, batch=True)
        for start in range(0, len(pairs), batch_size):
            compare(hf_bert, hf_plain, BERT, pairs[start:start + batch_size], truncation=truncation,
                    padding=padding, batch=True)


def test_taylorswift(hf_bert: Any, hf_plain: Any) -> None:
    run(hf_bert, hf_plain, lines("corpora", "en", "taylorswift.txt"), FAST_CONFIGS)


@pytest.mark.slow
@pytest.mark.parametrize("parts,limit,configs", [
    # Prefixes: every line of these corpora goes through the whole pipeline (default settings)
    # in tests/parity/test_bert_tokenizer.py; here each line meets eight truncation settings.
    (("corpora", "en", "tinyshakespeare.txt"), 300_000, CONFIGS),
    (("corpora", "multi", "udhr_sample.txt"), 100_000, CONFIGS),
    # Chinese paragraphs are hundreds of tokens: with max_length 32 a pair makes thousands of
    # combined windows, so the short configurations get a smaller prefix.
    (("corpora", "zh", "jinyong_16novels.txt"), 1 << 19, FAST_CONFIGS),
    (("corpora", "zh", "jinyong_16novels.txt"), 1 << 16, CONFIGS[len(FAST_CONFIGS):]),
])
def test_corpus(hf_bert: Any, hf_plain: Any, parts: Tuple[str, ...], limit: int, configs: Any) -> None:
    run(hf_bert, hf_plain, lines(*parts, limit=limit), configs)
