"""WordPieceTrainer(criterion="frequency") against Hugging Face tokenizers' WordPieceTrainer.

Hugging Face's WordPieceTrainer is its BPE trainer with the "##" continuing-subword prefix.
It gives the specials and the plain characters ids in a fixed order (code point order), but
numbers the prefixed characters ("##e") as it meets them while iterating over a hash map of
the words - a different order in every process. Its merge loop breaks count ties by the
smaller (left id, right id), so those ids decide which of equally frequent pairs merges
first, and near the vocabulary limit even which tokens make it in: two Hugging Face runs on the
same corpus give different vocabularies (checked on tinyshakespeare: at 2,000 tokens 6-16
tokens differ between runs, at 8,000 about 30-60).

So the tests assert what is deterministic:
1. ciyuan, given the "##c" numbering of one Hugging Face run (``_continuing_order``), gives
   exactly that run's vocabulary, token for token and id for id: everything else about the two
   trainers is the same.
2. With its own numbering (code point order, the default), ciyuan agrees with every Hugging
   Face run on what Hugging Face fixes: the ids of the special tokens and of the plain
   alphabet, the set of prefixed characters and the vocabulary size.
"""

from __future__ import annotations

import json
from typing import List

import pytest

from ciyuan import pre_tokenizers
from ciyuan.trainers import WordPieceTrainer
from tests.conftest import shared

BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def hf_wordpiece_vocab(path, **options) -> List[str]:
    """Hugging Face's WordPieceTrainer vocabulary (Whitespace pre-tokenizer): tokens in id order."""
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.train([str(path)], tokenizers.trainers.WordPieceTrainer(show_progress=False, **options))
    model = json.loads(tok.to_str())["model"]
    assert model["continuing_subword_prefix"] == "##"
    vocab = model["vocab"]
    tokens = sorted(vocab, key=vocab.get)
    assert [vocab[t] for t in tokens] == list(range(len(tokens)))
    return tokens


def prefixed_alphabet(tokens: List[str]) -> List[str]:
    return [t for t in tokens if t.startswith("##") and len(t) == 3]


@pytest.mark.parametrize("options", [
    dict(vocab_size=2000, special_tokens=BERT_SPECIALS),
    dict(vocab_size=8000, special_tokens=BERT_SPECIALS),
    dict(vocab_size=3000, min_frequency=3, limit_alphabet=50, special_tokens=["[UNK]"]),
])
def test_same_vocabulary_as_hf_given_its_numbering(options):
    path = shared("corpora", "en", "tinyshakespeare.txt")
    hf = hf_wordpiece_vocab(path, **options)
    trainer = WordPieceTrainer(criterion="frequency", unk_token="[UNK]", **options)
    counter = trainer.count_words(path, pre_tokenizers.WordPunct())  # WordPunct = HF Whitespace
    ours = trainer.words_to_vocab(counter, _continuing_order=prefixed_alphabet(hf))
    assert ours == hf


def test_deterministic_part_agrees_with_hf():
    path = shared("corpora", "en", "tinyshakespeare.txt")
    hf = hf_wordpiece_vocab(path, vocab_size=2000, special_tokens=BERT_SPECIALS)
    trainer = WordPieceTrainer(2000, criterion="frequency")
    ours = trainer.train_vocab(path, pre_tokenizers.WordPunct())
    plain = hf.index(prefixed_alphabet(hf)[0])  # the specials and the plain alphabet
    assert ours[:plain] == hf[:plain]
    assert set(prefixed_alphabet(ours)) == set(prefixed_alphabet(hf))
    # ciyuan numbers the prefixed characters in code point order, right after the alphabet.
    assert ours[plain:plain + len(prefixed_alphabet(hf))] == sorted(prefixed_alphabet(hf))
    assert len(ours) == len(hf) == 2000
    # ...and is deterministic, whatever the thread count.
    again = WordPieceTrainer(2000, criterion="frequency", threads=1).train_vocab(path, pre_tokenizers.WordPunct())
    assert again == ours


def test_frequency_merges_join_without_the_second_prefix():
    trainer = WordPieceTrainer(0, criterion="frequency", special_tokens=[], unk_token=None)
    tokens = trainer.train_vocab({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5})
    # Frequency BPE: "##u ##g" (20) first, then "h ##ug" (15), "p ##u"/"##u ##n" (17)...
    assert trainer.merges[0] == ("##u", "##g")
    assert "##ug" in tokens and "hug" in tokens
    # Only the prefixed characters that occur after a word's start, as Hugging Face has them.
    assert "##h" not in tokens and "##p" not in tokens


@pytest.mark.slow
def test_same_vocabulary_as_hf_gutenberg_10mb(tmp_path):
    from tests.conftest import read_prefix

    part = tmp_path / "gutenberg_10mb.txt"
    part.write_text(read_prefix(shared("corpora", "en", "gutenberg_100mb.txt"), 10_000_000), encoding="utf-8")
    options = dict(vocab_size=30000, min_frequency=2, special_tokens=BERT_SPECIALS)
    hf = hf_wordpiece_vocab(part, **options)
    trainer = WordPieceTrainer(criterion="frequency", **options)
    ours = trainer.words_to_vocab(trainer.count_words(part, pre_tokenizers.WordPunct()),
                                  _continuing_order=prefixed_alphabet(hf))
    assert ours == hf
