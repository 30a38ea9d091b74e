"""BPE-dropout in the native BPE model, held against the pure-Python reference
(ciyuan.reference.bpe, whose merge loop takes ``dropout`` and a ``random.Random``).

Distributions are compared with fixed seeds, so every test gives the same answer on every run;
the bounds (several standard deviations) are ones a correct sampler meets and a sampler with
other probabilities does not.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ciyuan
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import Split, WhitespaceSplit
from ciyuan.reference import bpe as ref
from tests.conftest import read_prefix, shared

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# A small character-level model where words have many segmentations.
MERGES = [("l", "o"), ("lo", "w"), ("e", "r"), ("low", "e"), ("lowe", "r"), ("n", "e"), ("ne", "w"),
          ("e", "s"), ("es", "t"), ("w", "e"), ("new", "est"), ("low", "est"), ("r", "e")]


def small_vocab() -> Dict[str, int]:
    vocab: Dict[str, int] = {}
    for c in "lowersnt":
        vocab[c] = len(vocab)
    for a, b in MERGES:
        vocab.setdefault(a + b, len(vocab))
    return vocab


@pytest.fixture(scope="module")
def small():
    return ciyuan.Tokenizer(BPE(small_vocab(), MERGES), pre_tokenizer=WhitespaceSplit())


@pytest.fixture(scope="module")
def english_lines() -> List[str]:
    return read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 60_000).splitlines()


class Script:
    """A stand-in for random.Random that answers the reference's draws from a script (True:
    skip), keeping every later candidate, and records the draws made."""

    def __init__(self, prefix: List[bool]) -> None:
        self.prefix = prefix
        self.draws: List[bool] = []

    def random(self) -> float:
        skip = self.prefix[len(self.draws)] if len(self.draws) < len(self.prefix) else False
        self.draws.append(skip)
        return 0.0 if skip else 1.0


def exact_distribution(word: str, p: float) -> Dict[Tuple[str, ...], float]:
    """Every run of the reference's dropout loop on ``word`` (MERGES), with its probability:
    a depth-first walk over the sequences of draws."""
    dist: Dict[Tuple[str, ...], float] = Counter()
    stack: List[List[bool]] = [[]]
    while stack:
        prefix = stack.pop()
        script = Script(prefix)
        out = tuple(ref.encode_word_by_merges(word, MERGES, dropout=p, rng=script))  # type: ignore[arg-type]
        dist[out] += math.prod(p if skip else 1 - p for skip in script.draws)
        stack.extend(script.draws[:k] + [True] for k in range(len(prefix), len(script.draws)))
    return {out: prob for out, prob in dist.items() if prob > 0}


def assert_close(counts: Counter, n: int, expected: Dict[Tuple[str, ...], float]) -> None:
    """Each outcome's frequency within 5 standard deviations (+ 1/n) of its probability."""
    assert set(counts) <= set(expected)
    for outcome, prob in expected.items():
        bound = 5 * math.sqrt(prob * (1 - prob) / n) + 1 / n
        assert abs(counts[outcome] / n - prob) <= bound, (outcome, counts[outcome] / n, prob)


# -- the reference against itself ---------------------------------------------------------------


def test_reference_dropout_is_a_distribution_with_plain_bpe_at_zero():
    for word in ("lower", "newest", "lowest", "rerere"):
        plain = tuple(ref.encode_word_by_merges(word, MERGES))
        assert exact_distribution(word, 0.0) == {plain: 1.0}
        for p in (0.1, 0.5, 0.9):
            dist = exact_distribution(word, p)
            assert math.isclose(sum(dist.values()), 1.0)
            assert all("".join(out) == word for out in dist)
        assert exact_distribution(word, 1.0) == {tuple(word): 1.0}


def test_reference_sampler_follows_its_exact_distribution():
    rng = random.Random(13)
    n = 20_000
    for word, p in (("lower", 0.3), ("newest", 0.5)):
        counts = Counter(tuple(ref.encode_word_by_merges(word, MERGES, dropout=p, rng=rng)) for _ in range(n))
        assert_close(counts, n, exact_distribution(word, p))


# -- the native model ---------------------------------------------------------------------------


@pytest.mark.parametrize(("word", "p"), [("lower", 0.3), ("newest", 0.5), ("lowest", 0.1), ("rerere", 0.7)])
def test_native_distribution_matches_the_reference(small, word, p):
    n = 20_000
    # One batch: text i draws from the generator of (seed, i), so these are n independent draws.
    counts = Counter(tuple(e.tokens) for e in small.encode_batch([word] * n, sample=True, alpha=p, seed=2024))
    assert_close(counts, n, exact_distribution(word, p))


def test_a_wrong_probability_is_detected(small):
    # The bound is tight enough to tell p = 0.3 from p = 0.35.
    n = 20_000
    counts = Counter(tuple(e.tokens) for e in small.encode_batch(["lower"] * n, sample=True, alpha=0.35, seed=1))
    with pytest.raises(AssertionError):
        assert_close(counts, n, exact_distribution("lower", 0.3))


def test_native_and_reference_samplers_agree_on_real_merges(gpt2, gpt2_files):
    # Byte-level GPT-2 merges, words whose exact distribution is too large to enumerate: the
    # frequencies of the common segmentations agree between the two samplers.
    vocab, merges, _ = gpt2_files
    ranks = {pair: i for i, pair in reversed(list(enumerate(merges)))}
    by_id = {i: t for t, i in vocab.items()}
    n = 6000
    for word, p in (("Ġunbelievable", 0.2), ("Ġtokenization", 0.5)):
        text = word.replace("Ġ", " ")
        native = Counter(tuple(ids) for ids in gpt2.encode_batch_ids([text] * n, sample=True, alpha=p, seed=5))
        rng = random.Random(5)
        reference = Counter(tuple(ref.encode_piece_by_merges(text.encode(), vocab, ranks, p, rng)) for _ in range(n))
        for outcome in set(native) | set(reference):
            a, b = native[outcome] / n, reference[outcome] / n
            bound = 5 * math.sqrt(max(a, b, 1 / n) * 2 / n) + 2 / n
            assert abs(a - b) <= bound, ([by_id[i] for i in outcome], a, b)


def test_p0_is_plain_encoding(gpt2, english_lines):
    text = "\n".join(english_lines[:400]) + " 词元 😀 <|endoftext|>"
    assert gpt2.encode_ids(text, sample=True, alpha=0.0, seed=1, disallowed_special=()) == \
        gpt2.encode_ids(text, disallowed_special=())
    zero = ciyuan.Tokenizer(BPE(gpt2.model.get_vocab(), gpt2.model.merges, byte_level=True, dropout=0.0),
                            pre_tokenizer=Split("gpt2"))
    assert zero.encode_batch_ids(english_lines[:300]) == gpt2.encode_batch_ids(english_lines[:300])


def test_p1_leaves_the_initial_symbols(gpt2):
    text = "Hello world, 词元 😀!"
    ids = gpt2.encode_ids(text, sample=True, alpha=1.0, seed=3)
    assert [gpt2.model.token_bytes(i) for i in ids] == [bytes([b]) for b in text.encode()]
    # Character level, with an end-of-word suffix or a separate end-of-word symbol.
    vocab = {"l": 0, "o": 1, "w</w>": 2, "lo": 3, "low</w>": 4, "w": 5}
    suffix = ciyuan.Tokenizer(BPE(vocab, [("l", "o"), ("lo", "w</w>")], end_of_word_suffix="</w>"))
    assert suffix.encode("low").tokens == ["low</w>"]
    assert suffix.encode("low", sample=True, alpha=1.0, seed=0).tokens == ["l", "o", "w</w>"]
    vocab = {"l": 0, "o": 1, "w": 2, "</w>": 3, "lo": 4, "low": 5, "low</w>": 6}
    symbol = ciyuan.Tokenizer(BPE(vocab, [("l", "o"), ("lo", "w"), ("low", "</w>")], end_of_word_symbol="</w>"))
    assert symbol.encode("low").tokens == ["low</w>"]
    assert symbol.encode("low", sample=True, alpha=1.0, seed=0).tokens == ["l", "o", "w", "</w>"]


def test_token_ranks_skip_the_whole_piece_shortcut_while_sampling(ciyuan_tokenizers):
    # tiktoken's rule takes a piece that is a token whole; Hugging Face's dropout does not.
    cl100k = ciyuan_tokenizers["cl100k_base"]
    assert cl100k.encode(" tokenization").tokens == ["Ġtoken", "ization"]
    assert cl100k.encode(" hello").tokens == ["Ġhello"]
    assert cl100k.encode(" hello", sample=True, alpha=1.0).tokens == ["Ġ", "h", "e", "l", "l", "o"]
    assert cl100k.encode(" hello", sample=True, alpha=0.0).tokens == ["Ġhello"]


def test_unknown_symbols_while_sampling():
    tok = ciyuan.Tokenizer(BPE({"<unk>": 0, "a": 1, "b": 2, "ab": 3}, [("a", "b")], unk_token="<unk>", fuse_unk=True))
    assert tok.encode("abxxab").tokens == ["ab", "<unk>", "ab"]
    for seed in range(20):
        enc = tok.encode("abxxab", sample=True, alpha=0.5, seed=seed)
        assert enc.tokens[1:-1] in (["<unk>", "ab"], ["<unk>", "a", "b"]) or "<unk>" in enc.tokens
        assert enc.tokens.count("<unk>") == 1
    strict = ciyuan.Tokenizer(BPE({"a": 1, "b": 2, "ab": 3}, [("a", "b")]))
    with pytest.raises(ciyuan.InvalidInputError, match="has no token"):
        strict.encode("abx", sample=True, alpha=0.5, seed=0)


def test_seeded_draws_are_deterministic(gpt2, english_lines):
    lines = english_lines[:200]
    a = gpt2.encode_batch_ids(lines, sample=True, alpha=0.2, seed=77)
    assert gpt2.encode_batch_ids(lines, sample=True, alpha=0.2, seed=77) == a
    assert gpt2.encode_batch_ids(lines, sample=True, alpha=0.2, seed=78) != a
    assert gpt2.encode_batch_ids(lines, sample=True, alpha=0.2) != gpt2.encode_batch_ids(lines, sample=True, alpha=0.2)
    # A single text is text 0 of a batch; encode and encode_ids draw alike.
    assert gpt2.encode(lines[5], sample=True, alpha=0.2, seed=77).ids == \
        gpt2.encode_ids(lines[5], sample=True, alpha=0.2, seed=77) == \
        gpt2.encode_batch_ids([lines[5], "x"], sample=True, alpha=0.2, seed=77)[0]
    # Seeds are taken modulo 2**64.
    assert gpt2.encode_ids(lines[5], sample=True, alpha=0.2, seed=-1) == \
        gpt2.encode_ids(lines[5], sample=True, alpha=0.2, seed=(1 << 64) - 1)


def test_batches_do_not_depend_on_the_thread_count(gpt2, english_lines):
    lines = english_lines[:2000]
    one = gpt2.encode_batch_ids(lines, sample=True, alpha=0.3, seed=9, threads=1)
    assert gpt2.encode_batch_ids(lines, sample=True, alpha=0.3, seed=9, threads=2) == one
    assert gpt2.encode_batch_ids(lines, sample=True, alpha=0.3, seed=9, threads=7) == one
    assert [e.ids for e in gpt2.encode_batch(lines, sample=True, alpha=0.3, seed=9, threads=3)] == one


def test_python_stages_sample_alike(gpt2):
    # A pre-tokenizer that runs in Python (the regex module) feeds the same pieces in the same
    # order, so the same seed gives the same tokens.
    from ciyuan.pre_tokenizers.patterns import GPT2_PATTERN

    slow = ciyuan.Tokenizer(gpt2.model, pre_tokenizer=Split(GPT2_PATTERN + "|(?!)"), special_tokens=gpt2.special_tokens)
    assert slow.pre_tokenizer.native_pattern is None
    text = "Sampling the segmentation of every word, 词元 included. <|endoftext|> twice"
    for seed in range(5):
        a = gpt2.encode(text, sample=True, alpha=0.4, seed=seed, allowed_special="all")
        b = slow.encode(text, sample=True, alpha=0.4, seed=seed, allowed_special="all")
        assert a.ids == b.ids and a.offsets == b.offsets
    assert slow.encode_batch_ids([text] * 3, sample=True, alpha=0.4, seed=1, disallowed_special=()) == \
        gpt2.encode_batch_ids([text] * 3, sample=True, alpha=0.4, seed=1, disallowed_special=())


@SETTINGS
@given(text=st.text(max_size=120), p=st.floats(0.0, 1.0), seed=st.integers(0, (1 << 64) - 1))
def test_samples_decode_to_the_input_with_true_offsets(gpt2, text, p, seed):
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    enc = gpt2.encode(text, sample=True, alpha=p, seed=seed, disallowed_special=())
    assert gpt2.decode(enc.ids) == text
    assert enc.ids == gpt2.encode_ids(text, sample=True, alpha=p, seed=seed, disallowed_special=())
    # Byte spans tile the text, and each token's bytes are the text's bytes at its span.
    data = text.encode()
    spans = enc._native.byte_spans
    assert [e for _, e in spans[:-1]] == [s for s, _ in spans[1:]] and (not spans or spans[-1][1] == len(data))
    assert all(gpt2.model.token_bytes(i) == data[s:e] for i, (s, e) in zip(enc.ids, spans))


@pytest.mark.parametrize("length", [47, 49, 200, 2000])
def test_long_pieces(gpt2, gpt2_files, length):
    # Long pieces (no spaces): the same loop; every symbol is a byte at p = 1, plain BPE at p = 0,
    # and the samples decode to the text.
    vocab, merges, _ = gpt2_files
    rng = random.Random(length)
    for alphabet in ("abcdefghij", "aab", "中文字"):
        text = "".join(rng.choice(alphabet) for _ in range(length))
        assert gpt2.encode_ids(text, sample=True, alpha=0.0, seed=1) == ref.encode(text, ref_pattern(), vocab, merges)
        assert len(gpt2.encode_ids(text, sample=True, alpha=1.0, seed=1)) == len(text.encode())
        for seed in range(3):
            assert gpt2.decode(gpt2.encode_ids(text, sample=True, alpha=0.3, seed=seed)) == text


def ref_pattern() -> str:
    from ciyuan.pre_tokenizers.patterns import GPT2_PATTERN

    return GPT2_PATTERN


def test_model_dropout_samples_every_encode(english_lines):
    model = BPE(small_vocab(), MERGES, dropout=0.5)
    tok = ciyuan.Tokenizer(model, pre_tokenizer=WhitespaceSplit())
    plain = ciyuan.Tokenizer(BPE(small_vocab(), MERGES), pre_tokenizer=WhitespaceSplit())
    text = "lower newest lowest " * 20
    draws = {tuple(tok.encode_ids(text)) for _ in range(5)}
    assert len(draws) > 1  # a fresh seed each call
    assert tok.encode_ids(text, seed=4) == tok.encode_ids(text, seed=4) == \
        plain.encode_ids(text, sample=True, alpha=0.5, seed=4)
    # sample=True uses alpha in place of the model's dropout.
    assert tok.encode_ids(text, sample=True, alpha=0.0) == plain.encode_ids(text)
    assert tok.encode_batch_ids([text], seed=4)[0] == tok.encode(text, seed=4).ids
    assert "dropout=0.5" in repr(model)


def test_dropout_is_saved_and_checked(tmp_path):
    model = BPE(small_vocab(), MERGES, dropout=0.25)
    assert model.to_dict()["dropout"] == 0.25
    assert BPE.from_dict(model.to_dict()).dropout == 0.25
    assert BPE(small_vocab(), MERGES).to_dict()["dropout"] is None
    tok = ciyuan.Tokenizer(model, pre_tokenizer=WhitespaceSplit())
    tok.save(tmp_path / "t.json")
    back = ciyuan.Tokenizer.from_file(tmp_path / "t.json")
    assert back.model.dropout == 0.25
    assert back.encode_ids("lower newest", seed=8) == tok.encode_ids("lower newest", seed=8)
    for bad in (-0.1, 1.5, float("nan"), "0.1", True):
        with pytest.raises(ciyuan.ModelError, match="dropout must be a number between 0 and 1"):
            BPE(small_vocab(), MERGES, dropout=bad)
    with pytest.raises(ciyuan.ModelError, match="longest_match"):
        BPE(small_vocab(), MERGES, dropout=0.1, encode_mode="longest_match")
    longest = ciyuan.Tokenizer(BPE(small_vocab(), MERGES, encode_mode="longest_match"))
    with pytest.raises(ciyuan.ModelError, match="longest match"):
        longest.encode("lower", sample=True)
