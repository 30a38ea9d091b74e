"""front_end: which native front end runs, and the SentencePiece front end in the trainers' word
counting (normalized lines cut into whitespace words as sentencepiece's trainer cuts them)."""

from __future__ import annotations

from ciyuan import _core
from ciyuan.front_end import native_front_end, sentencepiece
from ciyuan.models import Unigram
from ciyuan.normalizers import NFKC, SentencePieceNormalizer
from ciyuan.pre_tokenizers import Split

IDENTITY = SentencePieceNormalizer("identity")


def test_sentencepiece_normalizer_alone_is_the_sentencepiece_front_end():
    model = Unigram([("<unk>", 0.0), ("▁a", -1.0)], unk_id=0)
    assert native_front_end(IDENTITY, None, model).kind == _core.FrontEndKind.SENTENCEPIECE
    assert native_front_end(IDENTITY, Split("whitespace"), model) is None
    assert sentencepiece(NFKC()) is None


def counted(front_end, texts):
    counter = _core.WordCounter(front_end)
    counter.add_texts(texts, 2)
    return [(w.decode(), c) for w, c in counter.words()]


def test_word_counting_cuts_at_each_space_symbol():
    fe = sentencepiece(IDENTITY)
    assert counted(fe, ["  a b  a\n", "b"]) == [("▁a", 2), ("▁b", 2)]
    suffix = sentencepiece(SentencePieceNormalizer("identity", treat_whitespace_as_suffix=True))
    assert counted(suffix, ["a b", "b a"]) == [("a▁", 2), ("b▁", 2)]
    keep = SentencePieceNormalizer("identity", remove_extra_whitespaces=False)
    assert counted(sentencepiece(keep), ["a  b"]) == [("▁a", 1), ("▁", 1), ("▁b", 1)]


def test_whole_sentences_without_split_by_whitespace():
    fe = sentencepiece(SentencePieceNormalizer("nmt_nfkc"), split_by_whitespace=False)
    counter = _core.WordCounter(fe)
    counter.add_lines("Ａ b\nA b\n\n".encode(), 1)
    assert [(w.decode(), c) for w, c in counter.words()] == [("▁A▁b", 2)]
