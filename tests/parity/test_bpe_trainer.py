"""The native trainer against its oracles: the textbook reference trainer, Hugging Face
``tokenizers`` (byte-level and character-level) and subword-nmt's ``learn-bpe``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer, pre_tokenizers
from ciyuan.reference.bpe_train import train_bpe as reference_train
from ciyuan.trainers import BpeTrainer
from tests.conftest import read_prefix, shared


def as_text_pairs(model, merges) -> List[Tuple[str, str]]:
    """Reference merges written as the model writes tokens (printable form for bytes)."""
    return [(model.id_to_token(model.token_to_id(a)), model.id_to_token(model.token_to_id(b))) for a, b in merges]


def check_against_reference(source, pre, merges: int, **options) -> None:
    trainer = BpeTrainer(0, max_merges=merges, **options)
    counter = trainer.count_words(source, pre)
    words = {w.decode("utf-8"): n for w, n in counter.words()}  # in first-seen order
    model = trainer.train_words(counter)
    tokens, ref_merges = reference_train(words, max_merges=merges, **options)
    assert model.merges == as_text_pairs(model, ref_merges)
    assert [model.token_bytes(i) for i in range(model.id_limit)] == [
        t if isinstance(t, bytes) else t.encode() for t in tokens]


# -- the reference trainer -----------------------------------------------------------------------

@pytest.mark.slow
def test_reference_tinyshakespeare_byte_level():
    check_against_reference(shared("corpora", "en", "tinyshakespeare.txt"), pre_tokenizers.Split("gpt2"), 200,
                            byte_level=True)


@pytest.mark.slow
def test_reference_taylorswift_suffix_subword_nmt():
    check_against_reference(shared("corpora", "en", "taylorswift.txt"), pre_tokenizers.WhitespaceSplit(), 200,
                            end_of_word_suffix="</w>", tie_break="subword-nmt")


@pytest.mark.parametrize("tie_break", ["hf", "subword-nmt", "first"])
def test_reference_zh_bpe_sample(tie_break):
    text = shared("zh-bpe-sample", "smalltrain.txt").read_text(encoding="utf-8").replace(" ", "")
    check_against_reference(text.split("\n"), pre_tokenizers.ZhSentence(), 300, tie_break=tie_break)


words_strategy = st.dictionaries(
    st.text(alphabet="abcab中文的", min_size=1, max_size=12), st.integers(1, 20), min_size=1, max_size=30
)


@settings(max_examples=150, deadline=None)
@given(words=words_strategy, tie_break=st.sampled_from(["hf", "subword-nmt", "first"]),
       form=st.sampled_from([{}, {"end_of_word_suffix": "</w>"}, {"end_of_word_symbol": "</w>"}, {"byte_level": True}]),
       merges=st.integers(1, 40), min_frequency=st.integers(0, 3))
def test_reference_generated(words, tie_break, form, merges, min_frequency):
    options = dict(tie_break=tie_break, min_frequency=min_frequency, **form)
    model = BpeTrainer(0, max_merges=merges, **options).train(words)
    tokens, ref_merges = reference_train(words, max_merges=merges, **options)
    assert model.merges == as_text_pairs(model, ref_merges)
    assert model.id_limit == len(tokens)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(alphabet="ab c\n中", max_size=40), min_size=1, max_size=20),
       vocab_size=st.integers(260, 300))
def test_reference_generated_texts_vocab_size(texts, vocab_size):
    pre = pre_tokenizers.Split("gpt2")
    trainer = BpeTrainer(vocab_size, byte_level=True)
    counter = trainer.count_words(texts, pre)
    if len(counter) == 0:
        return
    model = trainer.train_words(counter)
    words = {w.decode(): n for w, n in counter.words()}
    tokens, ref_merges = reference_train(words, vocab_size=vocab_size, byte_level=True)
    assert model.merges == as_text_pairs(model, ref_merges)


# -- Hugging Face tokenizers ---------------------------------------------------------------------

def hf_train(files: List[str], pre_tokenizer, **options):
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    tok.train(files, tokenizers.trainers.BpeTrainer(show_progress=False, **options))
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return tok, model["vocab"], merges


def hf_byte_level_parity(path: Path, vocab_size: int, min_frequency: int, check_encode: bool) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    hp = tokenizers.pre_tokenizers
    hf_tok, hf_vocab, hf_merges = hf_train(
        [str(path)], hp.ByteLevel(add_prefix_space=False), vocab_size=vocab_size, min_frequency=min_frequency,
        initial_alphabet=hp.ByteLevel.alphabet())
    ours = Tokenizer.train(path, BpeTrainer(vocab_size, min_frequency=min_frequency, byte_level=True),
                           pre_tokenizer=pre_tokenizers.Split("gpt2"))
    assert ours.model.merges == hf_merges
    assert ours.get_vocab() == hf_vocab
    if check_encode:
        lines = path.read_text(encoding="utf-8").split("\n")[:3000]
        hf_tok.decoder = tokenizers.decoders.ByteLevel()
        assert ours.encode_batch_ids(lines) == [e.ids for e in hf_tok.encode_batch(lines)]


def test_hf_byte_level_tinyshakespeare():
    hf_byte_level_parity(shared("corpora", "en", "tinyshakespeare.txt"), 32000, 2, check_encode=True)


@pytest.mark.slow
def test_hf_byte_level_gutenberg_10mb(tmp_path):
    part = tmp_path / "gutenberg_10mb.txt"
    part.write_text(read_prefix(shared("corpora", "en", "gutenberg_100mb.txt"), 10_000_000), encoding="utf-8")
    hf_byte_level_parity(part, 32000, 2, check_encode=False)


@pytest.mark.parametrize("options", [
    dict(vocab_size=3000, min_frequency=2, special_tokens=["<unk>", "<pad>"]),
    dict(vocab_size=1500, limit_alphabet=40),
])
def test_hf_char_level_wordpunct(options):
    tokenizers = pytest.importorskip("tokenizers")
    path = shared("corpora", "en", "tinyshakespeare.txt")
    hf_tok, hf_vocab, hf_merges = hf_train([str(path)], tokenizers.pre_tokenizers.Whitespace(), **options)
    ours = Tokenizer.train(path, BpeTrainer(**options), pre_tokenizer=pre_tokenizers.WordPunct())
    assert ours.model.merges == hf_merges
    assert ours.get_vocab() == hf_vocab
    if "limit_alphabet" not in options:  # every character is known: encodings must agree
        lines = path.read_text(encoding="utf-8").split("\n")[:3000]
        assert ours.encode_batch_ids(lines) == [e.ids for e in hf_tok.encode_batch(lines)]


def test_hf_max_token_length_is_one_longer():
    # Hugging Face's max_token_length=N keeps tokens shorter than N; ciyuan's keeps them <= N.
    tokenizers = pytest.importorskip("tokenizers")
    path = shared("corpora", "en", "taylorswift.txt")
    _, hf_vocab, hf_merges = hf_train([str(path)], tokenizers.pre_tokenizers.Whitespace(), vocab_size=2000,
                                      max_token_length=4)
    ours = BpeTrainer(2000, max_token_length=3).train(path, pre_tokenizers.WordPunct())
    assert ours.merges == hf_merges


# -- subword-nmt -----------------------------------------------------------------------------------

@pytest.mark.slow
def test_subword_nmt_learn_bpe_tinyshakespeare():
    learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
    path = shared("corpora", "en", "tinyshakespeare.txt")
    codes = io.StringIO()
    with open(path, encoding="utf-8") as f:
        learn_bpe.learn_bpe(f, codes, 1000, min_frequency=2)
    theirs = [tuple(line.split(" ")) for line in codes.getvalue().split("\n")[1:] if line]
    model = BpeTrainer(0, max_merges=1000, min_frequency=2, end_of_word_suffix="</w>",
                       tie_break="subword-nmt").train(path, pre_tokenizers.WhitespaceSplit())
    assert model.merges == theirs
