"""Unigram, WordPiece and WordLevel in Hugging Face's form (tokenizer.json's "model"), trained
by `tokenizers` itself: ids and offsets of ciyuan's model read from that JSON equal
`tokenizers`' on corpus lines and generated text, and to_dict writes HF's form back."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ciyuan
from ciyuan import models
from ciyuan.pre_tokenizers import WhitespaceSplit
from tests.conftest import read_prefix, shared

tokenizers = pytest.importorskip("tokenizers")
T = tokenizers


def training_lines() -> List[str]:
    text = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 60_000)
    return text.splitlines() + read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 6_000).splitlines()


def corpus_lines() -> List[str]:
    out = read_prefix(shared("corpora", "en", "taylorswift.txt"), 20_000).splitlines()[:60]
    out += read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 300_000).splitlines()[::40][:80]
    out += read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 40_000).splitlines()[:40]
    return [x for x in out if x]


def build(kind: str) -> Any:
    if kind.startswith("Unigram"):
        hf = T.Tokenizer(T.models.Unigram())
        trainer: Any = T.trainers.UnigramTrainer(vocab_size=3000, special_tokens=["<unk>"], unk_token="<unk>",
                                                 show_progress=False)
    elif kind == "WordPiece":
        hf = T.Tokenizer(T.models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=12))
        trainer = T.trainers.WordPieceTrainer(vocab_size=800, special_tokens=["[UNK]"], show_progress=False)
    else:
        hf = T.Tokenizer(T.models.WordLevel(unk_token="[UNK]"))
        trainer = T.trainers.WordLevelTrainer(vocab_size=2000, special_tokens=["[UNK]"], show_progress=False)
    hf.pre_tokenizer = T.pre_tokenizers.WhitespaceSplit()
    hf.train_from_iterator(training_lines(), trainer)
    data = json.loads(hf.to_str())
    data["added_tokens"] = []  # the model alone
    if kind == "Unigram-byte-fallback":
        data["model"]["byte_fallback"] = True
        have = {p for p, _ in data["model"]["vocab"]}
        data["model"]["vocab"] += [[f"<0x{b:02X}>", 0.0] for b in range(256) if f"<0x{b:02X}>" not in have]
    if kind == "WordPiece":
        data["model"]["continuing_subword_prefix"] = "@@"
        data["model"]["vocab"] = {k.replace("##", "@@", 1) if k.startswith("##") else k: v
                                  for k, v in data["model"]["vocab"].items()}
    return T.Tokenizer.from_str(json.dumps(data))


@pytest.fixture(scope="module", params=["Unigram", "Unigram-byte-fallback", "WordPiece", "WordLevel"])
def pair(request: Any) -> Tuple[str, Any, Any]:
    hf = build(request.param)
    model = models.from_dict(json.loads(hf.to_str())["model"])
    return request.param, hf, ciyuan.Tokenizer(model, pre_tokenizer=WhitespaceSplit())


def same(kind: str, hf: Any, tok: Any, text: str) -> None:
    theirs = hf.encode(text, add_special_tokens=False)
    ours = tok.encode(text)
    assert ours.ids == theirs.ids, text
    assert ours.offsets == [tuple(o) for o in theirs.offsets], text
    assert ours.tokens == theirs.tokens, text  # HF's Unigram names an unknown token by its text


def test_corpus_lines(pair: Tuple[str, Any, Any]) -> None:
    kind, hf, tok = pair
    for line in corpus_lines():
        same(kind, hf, tok, line)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=40))
def test_generated_text(pair: Tuple[str, Any, Any], text: str) -> None:
    kind, hf, tok = pair
    same(kind, hf, tok, text.encode("utf-8", "replace").decode("utf-8"))


def test_json_form(pair: Tuple[str, Any, Any]) -> None:
    """to_dict writes the JSON HF wrote (ciyuan's extra keys aside), and HF reads ciyuan's."""
    kind, hf, tok = pair
    theirs: Dict[str, Any] = json.loads(hf.to_str())["model"]
    ours = tok.model.to_dict()
    assert {k: v for k, v in ours.items() if k in theirs} == theirs
    data = json.loads(hf.to_str())
    data["model"] = ours
    again = T.Tokenizer.from_str(json.dumps(data))
    for line in corpus_lines()[:20]:
        assert again.encode(line).ids == hf.encode(line).ids


def test_missing_type_and_defaults() -> None:
    assert isinstance(models.from_dict({"vocab": [["<unk>", 0.0], ["a", -1.0]], "unk_id": 0}), models.Unigram)
    assert isinstance(models.from_dict({"vocab": {"[UNK]": 0}, "max_input_chars_per_word": 100}), models.WordPiece)
    level = models.from_dict({"vocab": {"<unk>": 0, "a": 1}})
    assert isinstance(level, models.WordLevel) and level.unk_token == "<unk>"  # HF's default


@pytest.mark.slow
def test_whole_corpora(pair: Tuple[str, Any, Any]) -> None:
    kind, hf, tok = pair
    texts = [read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 1 << 30),
             read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 2 << 20),
             read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 1 << 30)]
    lines = [x for t in texts for x in t.splitlines() if x]
    theirs = hf.encode_batch(lines, add_special_tokens=False)
    ours = tok.encode_batch(lines)
    for line, a, b in zip(lines, theirs, ours):
        assert (b.ids, b.offsets) == (a.ids, [tuple(o) for o in a.offsets]), line


def test_unigram_unknown_tokens_after_a_normalizer() -> None:
    """An unknown token is named by its *normalized* text, as in HF (the Python path)."""
    from ciyuan.normalizers import Lowercase

    hf = build("Unigram")
    hf.normalizer = T.normalizers.Lowercase()
    tok = ciyuan.Tokenizer(models.from_dict(json.loads(hf.to_str())["model"]), normalizer=Lowercase(),
                           pre_tokenizer=WhitespaceSplit())
    for line in corpus_lines() + ["ΣΑΣ Ωμέγα ĲSSEL"]:
        theirs, ours = hf.encode(line), tok.encode(line)
        assert (ours.ids, ours.tokens, ours.offsets) == (theirs.ids, theirs.tokens, [tuple(o) for o in theirs.offsets])
