"""NFC before a scanner (Qwen2's tokenizer.json: NFC, then Split by Qwen2's pattern and
ByteLevel): the native encoder takes every text NFC leaves unchanged, the ids paths take the NFC
form of the others, and a text that NFC changes and that holds a special token's text takes the
Python stages. Every path gives `tokenizers`' ids (and, for Encodings, tokens and offsets): on
the corpora (the multilingual one has lines in decomposed form), on generated text full of
combining marks and Hangul jamo, and around special tokens whose last character composes.
"""

from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path
from typing import Any, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from ciyuan.pre_tokenizers.patterns import QWEN2_PATTERN
from tests.conftest import read_prefix, shared

tokenizers = pytest.importorskip("tokenizers")

SPECIALS = ["<|im_start|>", "<|im_end|>"]


@pytest.fixture(scope="module")
def qwen2_like(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Any, Tokenizer]:
    from tokenizers import Regex, normalizers, pre_tokenizers, processors

    hf = tokenizers.Tokenizer.from_file(str(shared("tokenizers", "gpt2", "tokenizer.json")))
    hf.normalizer = normalizers.NFC()
    hf.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(QWEN2_PATTERN), "isolated"),
                                                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    hf.post_processor = processors.ByteLevel(trim_offsets=False)
    hf.add_special_tokens(SPECIALS)
    path: Path = tmp_path_factory.mktemp("qwen2") / "tokenizer.json"
    hf.save(str(path))
    # Qwen2's special tokens are matched on the input as given (GPT-2's <|endoftext|> is
    # "normalized", which with a normalizer takes the Python stages: not the case under test).
    data = json.loads(path.read_text(encoding="utf-8"))
    for token in data["added_tokens"]:
        token["normalized"] = False
    path.write_text(json.dumps(data), encoding="utf-8")
    ours = Tokenizer.from_file(path)
    assert ours._native_path and ours._nfc_gate
    return tokenizers.Tokenizer.from_file(str(path)), ours


def same(hf: Any, ours: Tokenizer, texts: List[str]) -> None:
    want = hf.encode_batch(texts)
    ids = [w.ids for w in want]
    for got in (ours.encode_batch(texts), [ours.encode(t) for t in texts]):
        for text, w, g in zip(texts, want, got):
            assert (g.ids, g.tokens, g.offsets) == (w.ids, w.tokens, [tuple(o) for o in w.offsets]), text
    assert ours.encode_batch_ids(texts) == ids
    assert [ours.encode_ids(t) for t in texts] == ids
    flat, offsets = ours.encode_batch_ids(texts, as_array=True)
    assert [list(flat[offsets[i]:offsets[i + 1]]) for i in range(len(texts))] == ids
    assert [list(ours.encode_ids(t, as_array=True)) for t in texts] == ids
    assert ours.count_tokens_batch(texts) == [len(i) for i in ids]
    assert [ours.count_tokens(t) for t in texts] == [len(i) for i in ids]


CORNERS = ["cafe\u0301", "café", "e\u0301\u0301", "a\u0308\u0301", "\u1100\u1161\u11a8", "한국어", "Å", "\u212b",
           "q\u0307\u0323", "<|im_start|>e\u0301<|im_end|>", "<|im_end|>\u0338", ">\u0338", "x <|im_start|>\u0301",
           "\u0915\u093c", "\u0958", "", " ", "plain ASCII", "中文 テスト"]


def test_corners(qwen2_like: Tuple[Any, Tokenizer]) -> None:
    same(*qwen2_like, CORNERS)


def test_the_native_encoder_takes_the_texts_nfc_leaves(qwen2_like: Tuple[Any, Tokenizer],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of NFC text never reaches the Python stages; a decomposed text does, alone."""
    _, ours = qwen2_like
    calls: List[str] = []
    original = Tokenizer._encode_python
    monkeypatch.setattr(Tokenizer, "_encode_python", lambda self, text, *a, **k: calls.append(text) or
                        original(self, text, *a, **k))
    lines = read_prefix(shared("corpora", "en", "taylorswift.txt"), 20_000).splitlines()
    ours.encode_batch(lines)
    ours.encode_batch_ids(lines)
    assert calls == []
    ours.encode_batch(lines + ["cafe\u0301"])
    assert calls == ["cafe\u0301"]


MARKS = ["\u0300", "\u0301", "\u0308", "\u0323", "\u0338", "\u093c", "\u1161", "\u11a8", "\u3099"]
PIECES = st.sampled_from(["a", "e", "o", "A", "\u1100", "\u0915", "\u304b", ">", "=", " ", "\n", "1", "中", "Å",
                          "\u212b", "\u2126", "<|im_start|>", "<|im_end|>", "é", "ﬁ"] + MARKS)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(PIECES, max_size=12).map("".join), min_size=1, max_size=4))
def test_generated_text(qwen2_like: Tuple[Any, Tokenizer], texts: List[str]) -> None:
    same(*qwen2_like, texts)


def test_corpus_lines(qwen2_like: Tuple[Any, Tokenizer]) -> None:
    """The multilingual corpus (86 lines that NFC changes) and English and Chinese lines, some
    decomposed on purpose."""
    lines = (read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 1 << 30).splitlines()
             + read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 40_000).splitlines()
             + read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 20_000).splitlines())
    rng = random.Random(3)
    texts = [unicodedata.normalize("NFD", line) if rng.random() < 0.05 else line for line in lines]
    same(*qwen2_like, texts)
