"""Tokens scored as words (ciyuan.evaluation.segmentation) against a plain computation: the
SIGHAN convention that a word counts when its exact character span is a gold word's."""

from __future__ import annotations

import pytest

from ciyuan.evaluation import evaluate
from ciyuan.evaluation.segmentation import cut_at_tokens
from ciyuan.segment.scoring import split_words
from tests.conftest import shared


def _spans(words):
    spans, at = set(), 0
    for w in words:
        spans.add((at, at + len(w)))
        at += len(w)
    return spans


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    lines = shared("sighan2005", "pku_test_gold.utf8").read_text(encoding="utf-8").splitlines()[:60]
    path = tmp_path_factory.mktemp("gold") / "gold.utf8"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["bert-zh", "cl100k", "o200k"])
def test_scores_equal_span_matching(name, gold, real_tokenizers, tmp_path):
    tok = real_tokenizers[name]
    corpus = tmp_path / "c.txt"
    corpus.write_text("x\n", encoding="utf-8")
    score = evaluate({name: tok}, [corpus], gold=[gold]).segmentation[0]
    correct = n_gold = n_pred = 0
    for line in gold.read_text(encoding="utf-8").splitlines():
        words = split_words(line)
        if not words:
            continue
        raw = "".join(words)
        # Plain: a token's first character starts a word; whitespace is no word.
        starts = sorted({s for s, e in tok.encode(raw, add_special_tokens=False).offsets if e > s} | {0, len(raw)})
        pred = [raw[a:b] for a, b in zip(starts, starts[1:])]
        assert all(p.strip() == p for p in pred)  # the PKU gold has no spaces inside a line
        correct += len(_spans(words) & _spans(pred))
        n_gold += len(words)
        n_pred += len(pred)
    assert (score.gold_words, score.predicted_words, score.correct) == (n_gold, n_pred, correct)
    assert score.precision == correct / n_pred and score.recall == correct / n_gold
    assert score.f1 == pytest.approx(2 * correct / (n_gold + n_pred))
    assert score.gold == gold.name


def test_one_token_per_character_finds_every_one_character_word(gold, real_tokenizers, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("x\n", encoding="utf-8")
    score = evaluate({"bert-zh": real_tokenizers["bert-zh"]}, [corpus], gold=[gold]).segmentation[0]
    words = [w for line in gold.read_text(encoding="utf-8").splitlines() for w in split_words(line)]
    han = [w for w in words if len(w) == 1 and "\u4e00" <= w <= "\u9fff"]
    # BERT's Chinese vocabulary cuts around every Han character: each one-character gold word is
    # found, and a longer Han word never is.
    assert score.correct >= len(han)
    assert score.correct <= sum(1 for w in words if len(w) == 1 or not any("\u4e00" <= c <= "\u9fff" for c in w))


def test_cut_at_tokens():
    assert cut_at_tokens("ab cd", [(0, 1), (1, 2), (3, 5)]) == "a b cd"
    assert cut_at_tokens("研究", [(0, 1), (0, 1), (1, 2)]) == "研 究"  # byte pieces of one character
    assert cut_at_tokens("", []) == ""
