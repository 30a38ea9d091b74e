"""Llama 2's tokenizer.json (a character-level BPE with byte_fallback and fuse_unk, no unk_token,
over Metaspace pieces; decoded by Replace, ByteFallback, Fuse and Strip), as `transformers`
writes it from llama2.model: ciyuan's model and decoder chain, read from that JSON, give the ids,
offsets and decoded text of `tokenizers`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ciyuan
from ciyuan import decoders, models
from tests.conftest import read_prefix, shared

tokenizers = pytest.importorskip("tokenizers")
SPACE = "\u2581"


@pytest.fixture(scope="module")
def llama2(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Any, Any]:
    """(tokenizers.Tokenizer without pre-tokenizer, ciyuan Tokenizer), both from the JSON."""
    import transformers  # a test dependency (the peer that writes the file)

    folder: Path = tmp_path_factory.mktemp("llama2")
    (folder / "tokenizer.model").write_bytes(shared("tokenizers", "sentencepiece", "llama2.model").read_bytes())
    (folder / "tokenizer_config.json").write_text('{"tokenizer_class": "LlamaTokenizer"}', encoding="utf-8")
    data = json.loads(transformers.AutoTokenizer.from_pretrained(str(folder)).backend_tokenizer.to_str())
    assert data["model"]["byte_fallback"] and data["model"]["unk_token"] is None
    # The Metaspace pre-tokenizer (prepend "▁", spaces -> "▁", no split) is applied by hand on
    # both sides: this test holds the model and the decoders.
    data["pre_tokenizer"] = None
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    specials = {t["content"]: t["id"] for t in data["added_tokens"] if t["special"]}
    ours = ciyuan.Tokenizer(models.from_dict(data["model"]), decoder=decoders.from_dict(data["decoder"]),
                            special_tokens=specials)
    return hf, ours


def metaspace(text: str) -> str:
    return SPACE + text.replace(" ", SPACE)


def lines() -> List[str]:
    out = read_prefix(shared("corpora", "en", "taylorswift.txt"), 20_000).splitlines()[:60]
    out += read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 300_000).splitlines()[::40][:80]
    out += read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 40_000).splitlines()[:40]
    out += read_prefix(shared("corpora", "multi", "emoji.txt"), 4_000).splitlines()[:40]
    return [x for x in out if x]


def check(hf: Any, ours: Any, text: str) -> None:
    if any(s in text for s in ("<s>", "</s>", "<unk>")):
        return  # added tokens are matched before the model: tokenizer.json's part, not the model's
    piece = metaspace(text)
    theirs = hf.encode(piece, add_special_tokens=False)
    mine = ours.encode(piece)
    assert mine.ids == theirs.ids, text
    assert mine.offsets == [tuple(o) for o in theirs.offsets], text
    ids = [1] + theirs.ids + [2]
    for skip in (False, True):
        assert ours.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip), text


def test_corpus_lines(llama2: Tuple[Any, Any]) -> None:
    hf, ours = llama2
    for line in lines():
        check(hf, ours, line)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=50))
def test_generated_text(llama2: Tuple[Any, Any], text: str) -> None:
    hf, ours = llama2
    check(hf, ours, text.encode("utf-8", "replace").decode("utf-8"))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(st.integers(0, 31999), max_size=30))
def test_decode_any_ids(llama2: Tuple[Any, Any], ids: List[int]) -> None:
    hf, ours = llama2
    for skip in (False, True):
        assert ours.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)


@pytest.mark.slow
def test_whole_corpora(llama2: Tuple[Any, Any]) -> None:
    hf, ours = llama2
    texts = [read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 1 << 30),
             read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 2 << 20),
             read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 1 << 30)]
    pieces = [metaspace(x) for t in texts for x in t.splitlines() if x]
    theirs = hf.encode_batch(pieces, add_special_tokens=False)
    mine = ours.encode_batch(pieces)
    for piece, a, b in zip(pieces, theirs, mine):
        assert (b.ids, b.offsets) == (a.ids, [tuple(o) for o in a.offsets]), piece
        assert ours.decode(b.ids) == hf.decode(a.ids), piece
