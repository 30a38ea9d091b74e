"""Hugging Face's own form of a Llama 2 tokenizer.json (the form transformers converts
SentencePiece models to: a BPE with byte_fallback behind ``Prepend("▁")`` + ``Replace(" ",
"▁")``, no pre-tokenizer, ``<s> $A``) runs on the native SentencePiece front end with Hugging
Face's offsets (the prefix aligned to the first character, each byte-fallback token the whole
character's span) and gives `tokenizers`' ids, tokens, offsets and decoded text: on the corpora,
on generated text (whitespace, byte fallback, special tokens inside) and through every path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from ciyuan.front_end import native_front_end
from tests.conftest import read_prefix, shared

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def llama2(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Any, Tokenizer]:
    converter = pytest.importorskip("transformers.convert_slow_tokenizer")
    from tokenizers import AddedToken, decoders, models, normalizers, processors

    model = shared("tokenizers", "sentencepiece", "llama2.model")
    parts = converter.SentencePieceExtractor(str(model)).extract(models.BPE)
    hf = tokenizers.Tokenizer(models.BPE(parts["vocab"], parts["merges"], unk_token="<unk>", fuse_unk=True,
                                         byte_fallback=True))
    hf.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    hf.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                    decoders.Strip(" ", 1, 0)])
    hf.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in ("<unk>", "<s>", "</s>")])
    hf.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B:1",
                                                      special_tokens=[("<s>", 1)])
    path: Path = tmp_path_factory.mktemp("llama2") / "tokenizer.json"
    hf.save(str(path))
    ours = Tokenizer.from_file(path)
    assert ours._native_path
    # The trainers count whole texts under this normalizer: not the SentencePiece front end.
    assert native_front_end(ours.normalizer, None, None) is None
    return tokenizers.Tokenizer.from_file(str(path)), ours


def same(hf: Any, ours: Tokenizer, texts: List[str]) -> None:
    for add in (True, False):
        want = hf.encode_batch(texts, add_special_tokens=add)
        for got in (ours.encode_batch(texts, add_special_tokens=add),
                    [ours.encode(t, add_special_tokens=add, allowed_special="all") for t in texts]):
            for text, w, g in zip(texts, want, got):
                assert (g.ids, g.tokens, g.offsets) == (w.ids, w.tokens, [tuple(o) for o in w.offsets]), (text, add)
        assert ours.encode_batch_ids(texts, add_special_tokens=add) == [w.ids for w in want]
        ids = [w.ids for w in want]
        for skip in (False, True):
            assert ours.decode_batch(ids, skip_special_tokens=skip) == hf.decode_batch(ids, skip_special_tokens=skip)


CORNERS = ["", " ", "  ", "Hello world", "  two  spaces ", "\ttab\n\nnew lines\n", "<s>hello", "a<s> b", "</s>",
           "a </s>  b", "<s> <s>", "<s>", "中文", "鉴于", "😀 👍🏽", "\u0378 unassigned", "\x00\x01", "é e\u0301",
           "1990–2000: x"]


def test_corners(llama2: Tuple[Any, Tokenizer]) -> None:
    same(*llama2, CORNERS)


PIECES = st.sampled_from([" ", "  ", "\t", "\n", "a", "the", "Hello", "1", "2023", "中", "鉴", "😀", "\u0378",
                          "<s>", "</s>", "▁", "é", "\x00", "ÿ"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(PIECES, max_size=12).map("".join), min_size=1, max_size=4))
def test_generated_text(llama2: Tuple[Any, Tokenizer], texts: List[str]) -> None:
    same(*llama2, texts)


def test_corpus_lines(llama2: Tuple[Any, Tokenizer]) -> None:
    lines = (read_prefix(shared("corpora", "en", "taylorswift.txt"), 60_000).splitlines()
             + read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 60_000).splitlines()
             + read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 200_000).splitlines()
             + shared("corpora", "multi", "emoji.txt").read_text(encoding="utf-8").splitlines())
    same(*llama2, lines)
