"""The native BPE held against the reference on random vocabularies.

Real vocabularies are well behaved; random ones are not: tokens that hold part of a character,
tokens across characters, ranks in any order. They exercise the character-first shortcut of
the native encoder, which must never change a result.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

import ciyuan
from ciyuan.models import BPE
from ciyuan.reference import bpe as ref

ALPHABET = "ab中文字词元😀é ,"


def random_vocab(seed: int, merges_wanted: int):
    """Bytes, then merges of random adjacent pairs of random text as encoded so far."""
    rng = random.Random(seed)
    ranks = {bytes([b]): b for b in range(256)}
    merges = []
    for _ in range(merges_wanted * 4):
        if len(merges) >= merges_wanted:
            break
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 8))).encode()
        parts = ref.encode_piece_by_merges(text, ranks, {m: i for i, m in enumerate(merges)})
        if len(parts) < 2:
            continue
        i = rng.randrange(len(parts) - 1)
        by_id = {v: k for k, v in ranks.items()}
        a, b = by_id[parts[i]], by_id[parts[i + 1]]
        if a + b in ranks:
            continue
        ranks[a + b] = len(ranks)
        merges.append((a, b))
    return ranks, merges


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(5, 120),
       texts=st.lists(st.text(ALPHABET, max_size=24), max_size=20))
def test_random_vocabularies(seed, size, texts):
    ranks, merges = random_vocab(seed, size)
    by_merges = ciyuan.Tokenizer(BPE(ranks, merges, byte_level=True))
    by_rank = ciyuan.Tokenizer(BPE(ranks, byte_level=True, rank_by_token=True))
    merge_ranks = {m: i for i, m in reversed(list(enumerate(merges)))}
    for text in texts:
        data = text.encode()
        assert by_merges.encode_ids(text) == ref.encode_piece_by_merges(data, ranks, merge_ranks)
        assert by_rank.encode_ids(text) == ref.encode_piece_by_token_rank(data, ranks)
