"""Merge-list prefixes (ciyuan.evaluation.curve) against tiktoken given the same cut ranks, and
a character-level BPE cut against the reference encoder with the first merges."""

from __future__ import annotations

import pytest

from ciyuan.evaluation.corpus import read_lines
from ciyuan.evaluation.curve import compression_curve, default_sizes, merge_prefix
from ciyuan.reference.bpe import encode_word_by_merges


def _lines(folder):
    return [line for p in sorted(folder.glob("*.txt")) for line in read_lines(p)][::3]


@pytest.mark.parametrize(("name", "encoding"), [("gpt2", "gpt2"), ("cl100k", "cl100k_base")])
def test_prefixes_equal_tiktoken_with_the_ranks_cut(name, encoding, small_udhr, real_tokenizers, tiktoken_encodings):
    tiktoken = pytest.importorskip("tiktoken")
    tok, peer = real_tokenizers[name], tiktoken_encodings[encoding]
    lines = _lines(small_udhr)
    # tiktoken's ranks are the merge order (GPT-2's: the 256 bytes, then one token per merge).
    ranks = peer._mergeable_ranks
    for size in (300, 1024, 5000):
        cut, vocab_size, merges = merge_prefix(tok, size)
        assert (vocab_size, merges) == (size, size - 256)
        cut_peer = tiktoken.Encoding(f"{encoding}_{size}", pat_str=peer._pat_str,
                                     mergeable_ranks={b: r for b, r in ranks.items() if r < size}, special_tokens={})
        for line in lines:
            assert cut.count_tokens(line, disallowed_special=()) == len(cut_peer.encode_ordinary(line)), (size, line)
    points = compression_curve(name, tok, lines, [1024, 5000, 10 ** 6])
    total_bytes = sum(len(line.encode()) for line in lines)
    assert [p.vocab_size for p in points] == [1024, 5000, tok.model.vocab_size]
    full = sum(len(peer.encode_ordinary(line)) for line in lines)
    assert points[-1].tokens == full and points[-1].bytes_per_token == total_bytes / full
    assert points[0].bytes_per_token < points[1].bytes_per_token < points[2].bytes_per_token


def test_character_level_prefix_is_the_reference_with_the_first_merges():
    from ciyuan import Tokenizer
    from ciyuan.pre_tokenizers import WhitespaceSplit
    from ciyuan.trainers import BpeTrainer

    text = ["low lower lowest newer newest wider widest"] * 20 + ["new wide low slow slower"] * 7
    tok = Tokenizer.train(text, BpeTrainer(vocab_size=60, end_of_word_suffix="</w>"),
                          pre_tokenizer=WhitespaceSplit())
    merges = tok.model.merges
    for k in (0, 3, 8, len(merges)):
        base = len(tok.model.get_vocab()) - len(merges)
        cut, vocab_size, kept = merge_prefix(tok, base + k)
        assert (vocab_size, kept) == (base + k, k)
        for line in ["lowest slower", "newer wide", "widest newest slow"]:
            want = [t for w in line.split() for t in encode_word_by_merges(w, merges[:k], "</w>")]
            assert cut.encode(line).tokens == want


def test_not_bpe_gives_no_curve(real_tokenizers):
    assert compression_curve("bert", real_tokenizers["bert"], ["hello"]) == []
    with pytest.raises(TypeError):
        merge_prefix(real_tokenizers["bert"], 1000)


def test_default_sizes():
    assert default_sizes(256, 50257) == [1024, 2048, 4096, 8192, 16384, 32768, 50257]
    assert default_sizes(3000, 5000) == [4096, 5000] and default_sizes(256, 1024) == [1024]
