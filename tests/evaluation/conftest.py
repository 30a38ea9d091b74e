"""Small corpora and tokenizers for tests/evaluation: a few lines of six UDHR languages (a
multilingual folder with its INDEX.tsv) and the real vocabularies of shared/data."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest

from tests.conftest import shared

LANGUAGES = ("eng", "cmn_hans", "rus", "arb", "hin", "jpn")


@pytest.fixture(scope="session")
def small_udhr(tmp_path_factory) -> Path:
    """A folder of the first lines of six UDHR languages, with the INDEX.tsv rows of those."""
    src = shared("corpora", "multi", "udhr")
    out = tmp_path_factory.mktemp("udhr")
    index = (src / "INDEX.tsv").read_text(encoding="utf-8").splitlines()
    keep = [index[0]] + [row for row in index[1:] if row.split("\t")[0] in LANGUAGES]
    (out / "INDEX.tsv").write_text("\n".join(keep) + "\n", encoding="utf-8")
    for key in LANGUAGES:
        lines = (src / f"{key}.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:12]
        (out / f"{key}.txt").write_text("".join(lines), encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def real_tokenizers() -> Dict[str, object]:
    """BERT (uncased and Chinese), GPT-2, cl100k, o200k and Llama 2 (byte fallback)."""
    from ciyuan import Tokenizer

    tok = shared("tokenizers")
    return {
        "bert": Tokenizer.load(tok / "bert" / "bert-base-uncased-vocab.txt"),
        "bert-zh": Tokenizer.load(tok / "bert" / "bert-base-chinese-vocab.txt"),
        "gpt2": Tokenizer.load(tok / "gpt2" / "encoder.json"),
        "cl100k": Tokenizer.load(tok / "tiktoken" / "cl100k_base.tiktoken"),
        "o200k": Tokenizer.load(tok / "tiktoken" / "o200k_base.tiktoken"),
        "llama2": Tokenizer.load(tok / "sentencepiece" / "llama2.model"),
    }
