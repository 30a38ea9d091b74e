"""The reference WordPiece encoder (ciyuan.reference.wordpiece.encode_word): greedy longest match
first, and the same pieces as Hugging Face's WordPiece model on the BERT vocabulary; fmm_word,
its forward-maximum-matching form."""

from __future__ import annotations

import pytest

from ciyuan import pre_tokenizers
from ciyuan.reference.wordpiece import encode_word, fmm_word
from tests.conftest import shared


def test_encode_word_greedy_longest_match():
    vocab = {"un", "##aff", "##able", "##a", "##ff", "aff", "[UNK]"}
    assert encode_word("unaffable", vocab) == ["un", "##aff", "##able"]
    assert encode_word("unaffx", vocab) == ["[UNK]"]  # one unknown part: the whole word
    assert encode_word("un" * 60, vocab) == ["[UNK]"]  # longer than max_input_chars_per_word
    assert encode_word("unun", vocab | {"##un"}, max_input_chars_per_word=4) == ["un", "##un"]


def test_fmm_word_keeps_unmatched_characters():
    vocab = {"un", "##aff", "##able", "##a", "##ff", "aff"}
    assert fmm_word("unaffable", vocab) == encode_word("unaffable", vocab)
    assert fmm_word("unaffx", vocab) == ["un", "##aff", "##x"]  # one character where nothing matches
    assert fmm_word("xaff", vocab) == ["x", "##aff"]
    assert fmm_word("", vocab) == []


def test_encode_word_matches_hf_wordpiece_bert_vocab():
    tokenizers = pytest.importorskip("tokenizers")
    path = shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")
    vocab = path.read_text(encoding="utf-8").split("\n")
    model = tokenizers.models.WordPiece.from_file(str(path), unk_token="[UNK]")
    text = shared("corpora", "en", "taylorswift.txt").read_text(encoding="utf-8").lower()
    words = sorted({text[s:e] for s, e in pre_tokenizers.WordPunct().split(text)})[:3000]
    vocab_set = set(vocab)
    for word in words:
        assert encode_word(word, vocab_set) == [t.value for t in model.tokenize(word)], word
