"""Byte-level offset trimming on the native batch path: a tokenizer.json whose post-processor
trims offsets (RoBERTa's ``RobertaProcessing``, ``ByteLevel(trim_offsets=True)``, a Sequence of
ByteLevel and a template) makes a batch's Encodings in one native call, each token's spaces
counted once per id, and gives `tokenizers`' ids, tokens, offsets and masks: on text full of
whitespace of every kind, with RoBERTa's lstrip ``<mask>`` and an rstrip token (whose token is
the text they matched, spaces counted there), with a Unigram model's unknown token (the text it
covers), on generated text and on corpus lines.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from ciyuan.processors import ByteLevel, RobertaProcessing, Sequence
from tests.conftest import read_prefix, shared

tokenizers = pytest.importorskip("tokenizers")
P = tokenizers.processors

LLAMA3 = dict(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
              special_tokens=[("<|begin_of_text|>", 50256)])

# name -> the post-processor of the file
PROCESSORS: Dict[str, Callable[[], Any]] = {
    "roberta": lambda: P.RobertaProcessing(("</s>", 2), ("<s>", 0)),
    "roberta-no-prefix": lambda: P.RobertaProcessing(("</s>", 2), ("<s>", 0), add_prefix_space=False),
    "byte-level": lambda: P.ByteLevel(),
    "trim-then-template": lambda: P.Sequence([P.ByteLevel(add_prefix_space=False), P.TemplateProcessing(**LLAMA3)]),
    "trimmed-twice": lambda: P.Sequence([P.ByteLevel(), P.RobertaProcessing(("</s>", 2), ("<s>", 0))]),
}
ADDED = [tokenizers.AddedToken("<mask>", lstrip=True, special=True, normalized=False),
         tokenizers.AddedToken("[R]", rstrip=True, normalized=False)]
FIELDS = ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask")


@pytest.fixture(scope="module", params=sorted(PROCESSORS))
def pair(request: Any, tmp_path_factory: pytest.TempPathFactory) -> Tuple[str, Any, Tokenizer]:
    hf = tokenizers.Tokenizer.from_file(str(shared("tokenizers", "gpt2", "tokenizer.json")))
    hf.post_processor = PROCESSORS[request.param]()
    hf.add_tokens(ADDED)
    path: Path = tmp_path_factory.mktemp(request.param) / "tokenizer.json"
    hf.save(str(path))
    return request.param, tokenizers.Tokenizer.from_file(str(path)), Tokenizer.from_file(path)


def same(hf: Any, ours: Tokenizer, texts: List[str]) -> None:
    for add in (True, False):
        want = hf.encode_batch(texts, add_special_tokens=add)
        got = ours.encode_batch(texts, add_special_tokens=add)
        for text, w, g in zip(texts, want, got):
            for field in FIELDS:
                theirs = getattr(w, field)
                assert getattr(g, field) == ([tuple(o) for o in theirs] if field == "offsets" else theirs), \
                    (field, text, add)
            if g._native is not None:  # the Python twin of the native getter
                assert g._native_field("offsets") == g.offsets, text
        assert ours.encode_batch_ids(texts, add_special_tokens=add) == [w.ids for w in want]
    # One text alone (the per-text Python path) agrees with the batch.
    for text, w in zip(texts[:50], hf.encode_batch(texts[:50])):
        assert ours.encode(text).offsets == [tuple(o) for o in w.offsets], text


CORNERS = ["  Hello  world, how are you?  ", " a second  text\twith  spaces ", " x", "y ", "", " ", "   ", "plain",
           "Ġ", "ĠĠ x", "\t\ttab", "new\n\nlines\n", "\u3000ideographic\u3000space", "nbsp\u00a0here", "\u2003em",
           "a <mask>b", "<mask>", "  <mask>  ", " <mask> <mask>", "x [R]  y", "[R]", "é  ü  中文  ", "😀  😀"]


def test_corners(pair: Tuple[str, Any, Tokenizer]) -> None:
    name, hf, ours = pair
    same(hf, ours, CORNERS)


def test_batches_do_not_run_the_processor_per_text(pair: Tuple[str, Any, Tokenizer],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch is one native call: the processor's per-text process is never run (except for a
    Sequence that trims twice, which one trim does not describe)."""
    name, _, ours = pair
    calls: List[int] = []
    for cls in (RobertaProcessing, ByteLevel, Sequence):
        original = cls.process
        monkeypatch.setattr(cls, "process", lambda self, *a, _o=original, **k: calls.append(1) or _o(self, *a, **k))
    ours.encode_batch(CORNERS)
    ours.encode_batch_ids(CORNERS)
    assert (len(calls) > 0) == (name == "trimmed-twice")


PIECES = st.sampled_from([" ", "  ", "\t", "\n", "\u3000", "\u00a0", "\u2003", "\u0085", "\x1c", "a", "word", "é",
                          "中", "!", "Ġ", "<mask>", "[R]", "9", "😀"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(PIECES, max_size=12).map("".join), min_size=1, max_size=4))
def test_generated_text(pair: Tuple[str, Any, Tokenizer], texts: List[str]) -> None:
    _, hf, ours = pair
    same(hf, ours, texts)


def test_corpus_lines(pair: Tuple[str, Any, Tokenizer]) -> None:
    """Real lines (English, Chinese, multilingual), every third with a <mask> put in somewhere."""
    _, hf, ours = pair
    lines = (read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 60_000).splitlines()
             + read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 30_000).splitlines()
             + read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 60_000).splitlines())
    rng = random.Random(5)
    texts = []
    for i, line in enumerate(lines):
        if i % 3 == 0:
            at = rng.randrange(len(line) + 1)
            line = line[:at] + " <mask>" + line[at:]
        texts.append(line)
    same(hf, ours, texts)


@pytest.fixture(scope="module")
def unigram(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Any, Tokenizer]:
    """A Unigram model without a pre-tokenizer (the native path): its unknown token is the text
    it covers, spaces and all, and the trimming counts them there."""
    from tokenizers import models, trainers

    hf = tokenizers.Tokenizer(models.Unigram())
    lines = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 30_000).splitlines()
    hf.train_from_iterator(lines, trainers.UnigramTrainer(vocab_size=300, special_tokens=["<unk>"], unk_token="<unk>",
                                                          show_progress=False))
    hf.post_processor = P.ByteLevel()
    path = tmp_path_factory.mktemp("unigram") / "tokenizer.json"
    hf.save(str(path))
    ours = Tokenizer.from_file(path)
    assert ours._native_path and ours.model.text_unk_id is not None
    return tokenizers.Tokenizer.from_file(str(path)), ours


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(PIECES, max_size=12).map("".join), min_size=1, max_size=4))
def test_unknown_token_named_by_its_text(unigram: Tuple[Any, Tokenizer], texts: List[str]) -> None:
    same(*unigram, texts + ["\t\t中 文\u3000\t", " \t中\t ", "中 ", " 中", "x \u3000 中 y"])


def test_with_padding_and_truncation(tmp_path: Path) -> None:
    """Padded and truncated batches of a RoBERTa file: the padding composes the native Encodings
    (their trimmed offsets read through the wrap), truncation takes the per-text path."""
    hf = tokenizers.Tokenizer.from_file(str(shared("tokenizers", "gpt2", "tokenizer.json")))
    hf.post_processor = PROCESSORS["roberta"]()
    hf.add_tokens(ADDED)
    texts = CORNERS + read_prefix(shared("corpora", "en", "taylorswift.txt"), 3_000).splitlines()
    for setting in ("padding", "truncation"):
        if setting == "padding":
            hf.enable_padding(pad_id=1, pad_token="<pad>", pad_to_multiple_of=8)
        else:
            hf.enable_truncation(6, stride=2)
        hf.save(str(tmp_path / "tokenizer.json"))
        ours = Tokenizer.from_file(tmp_path / "tokenizer.json")
        for text, w, g in zip(texts, hf.encode_batch(texts), ours.encode_batch(texts)):
            assert (g.ids, g.tokens, g.offsets, g.attention_mask) == \
                (w.ids, w.tokens, [tuple(o) for o in w.offsets], w.attention_mask), (setting, text)
