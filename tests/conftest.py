"""Shared fixtures: where the real data lives, and peer tokenizers built from its files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("CIYUAN_SHARED_DATA", REPO.parent / "shared" / "data"))
TIKTOKEN_DIR = SHARED_DATA / "tokenizers" / "tiktoken"
GPT2_DIR = SHARED_DATA / "tokenizers" / "gpt2"


def shared(*parts: str) -> Path:
    """A path under ../shared/data; the test is skipped (with the reason) if it is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not found: {path} (set CIYUAN_SHARED_DATA to the shared/data folder)")
    return path


def read_prefix(path: Path, limit: int) -> str:
    """The first `limit` bytes of a UTF-8 file, cut at a line end."""
    data = path.read_bytes()[:limit]
    if len(data) == limit:
        data = data[: data.rfind(b"\n") + 1]
    return data.decode("utf-8")


ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")


@pytest.fixture(scope="session")
def ciyuan_tokenizers() -> Dict[str, object]:
    """ciyuan tokenizers for the three OpenAI encodings, from the files in shared/data."""
    import ciyuan

    return {
        "gpt2": ciyuan.Tokenizer.from_gpt2(shared("tokenizers", "gpt2", "encoder.json"),
                                           shared("tokenizers", "gpt2", "vocab.bpe")),
        "cl100k_base": ciyuan.Tokenizer.from_tiktoken(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"),
                                                      "cl100k_base"),
        "o200k_base": ciyuan.Tokenizer.from_tiktoken(shared("tokenizers", "tiktoken", "o200k_base.tiktoken"),
                                                     "o200k_base"),
    }


@pytest.fixture(scope="session")
def tiktoken_encodings() -> Dict[str, object]:
    """tiktoken's own encodings, built from the same files (tiktoken's named encodings would
    download them)."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks, load_tiktoken_bpe
    from tiktoken_ext import openai_public

    from ciyuan.formats.tiktoken import SPECIAL_TOKENS
    from ciyuan.pre_tokenizers.patterns import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

    gpt2_ranks = data_gym_to_mergeable_bpe_ranks(
        str(shared("tokenizers", "gpt2", "vocab.bpe")), str(shared("tokenizers", "gpt2", "encoder.json"))
    )
    made = {
        "gpt2": tiktoken.Encoding("gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=gpt2_ranks,
                                  special_tokens=SPECIAL_TOKENS["gpt2"]),
        "cl100k_base": tiktoken.Encoding(
            "cl100k_base", pat_str=CL100K_PATTERN,
            mergeable_ranks=load_tiktoken_bpe(str(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"))),
            special_tokens=SPECIAL_TOKENS["cl100k_base"]),
        "o200k_base": tiktoken.Encoding(
            "o200k_base", pat_str=O200K_PATTERN,
            mergeable_ranks=load_tiktoken_bpe(str(shared("tokenizers", "tiktoken", "o200k_base.tiktoken"))),
            special_tokens=SPECIAL_TOKENS["o200k_base"]),
    }
    # Our copies of the patterns and special tokens must be tiktoken's own.
    assert openai_public.r50k_pat_str == GPT2_PATTERN
    return made


# -- Hugging Face BERT tokenizers for the post-processing tests (tests/processors, tests/parity) --

@pytest.fixture(scope="session")
def bert_vocab() -> str:
    return str(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt"))


@pytest.fixture(scope="session")
def hf_plain(bert_vocab: str) -> Any:
    """HF's BERT tokenizer used only for raw encodings (never truncates or pads)."""
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.BertWordPieceTokenizer(bert_vocab, lowercase=True)._tokenizer


@pytest.fixture(scope="session")
def hf_bert(bert_vocab: str) -> Any:
    """HF's BERT tokenizer (BertProcessing); tests set its truncation and padding."""
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.BertWordPieceTokenizer(bert_vocab, lowercase=True)._tokenizer


@pytest.fixture(scope="session")
def hf_custom(hf_bert: Any) -> Any:
    """A copy of HF's BERT tokenizer whose post-processor a test may replace."""
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_str(hf_bert.to_str())
