"""SIGHAN scoring: a hand-checked example pins every count; GNU diff decides the alignment."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from ciyuan.segment import Dictionary, Segmenter, evaluate
from ciyuan.segment.scoring import align, split_words
from tests.conftest import shared

GOLD = ["共同  创造  美好  的  新  世纪", "", "女士  们  ，\u3000先生\t们  "]
PRED = ["共同 创造 美好的 新世纪", "多余", "女士们 ， 先生 们"]
WORDS = {"共同", "创造", "美好", "的", "女士", "们", "，"}


def test_hand_checked_counts():
    s = evaluate(GOLD, PRED, WORDS)
    # Line 1: 共同 创造 match; 美好 的 新 世纪 against 美好的 新世纪: 2 substitutions, 2 deletions.
    # Line 2: no gold words, skipped (its predicted word does not count).
    # Line 3: ， 先生 们 match; 女士 们 against 女士们: 1 substitution, 1 deletion.
    assert (s.true_words, s.test_words, s.correct) == (11, 8, 5)
    assert (s.substitutions, s.deletions, s.insertions) == (3, 3, 0)
    assert (s.lines, s.skipped_lines, s.unpaired_lines) == (2, 1, 0)
    # OOV: 新, 世纪 (missed), 先生 (found). IV: 8 words, 美好 的 女士 们(first) missed.
    assert (s.oov, s.oov_missed, s.iv, s.iv_missed) == (3, 2, 8, 4)
    assert s.recall == 5 / 11 and s.precision == 5 / 8
    assert s.oov_rate == 3 / 11 and s.oov_recall == pytest.approx(1 / 3) and s.iv_recall == 0.5
    summary = s.summary("pred.txt")
    assert "=== TOTAL TRUE WORDS RECALL:\t0.455" in summary
    assert "=== TOTAL TEST WORDS PRECISION:\t0.625" in summary
    assert "=== F MEASURE:\t0.526" in summary
    assert "=== OOV Rate:\t0.273" in summary and "=== OOV Recall Rate:\t0.333" in summary
    assert "=== IV Recall Rate:\t0.500" in summary
    assert summary.splitlines()[-1] == "###\tpred.txt\t0\t3\t3\t6\t11\t8\t0.455\t0.625\t0.526\t0.273\t0.333\t0.500"


def test_diffs_unpaired_lines_and_no_word_list():
    s = evaluate(GOLD + ["多 的"], PRED, diffs=True)
    assert s.unpaired_lines == 1 and not s.has_word_list and s.oov_recall is None
    assert [d.line for d in s.diffs] == [1, 3]
    assert str(s.diffs[1]) == "--- line 3: 2 missed, 1 extra\ngold: [女士] [们] ， 先生 们\npred: [女士们] ， 先生 们"
    assert "OOV" not in s.summary()
    assert evaluate([], []).f == 0.0


def test_split_words_is_the_scorers():
    assert split_words(" a\u3000b\tc\u00a0d ") == ["a", "b", "c\u00a0d"]  # Perl's \s is ASCII only


def lcs_length(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def test_minimal_alignment_is_a_longest_common_subsequence():
    rng = random.Random(5)
    for _ in range(300):
        a = [rng.choice("abcde") for _ in range(rng.randrange(0, 30))]
        b = [rng.choice("abcde") for _ in range(rng.randrange(0, 30))]
        pairs = align(a, b, "minimal")
        assert len(pairs) == lcs_length(a, b)
        assert all(a[i] == b[j] for i, j in pairs)
        assert [i for i, _ in pairs] == sorted({i for i, _ in pairs})
        assert [j for _, j in pairs] == sorted({j for _, j in pairs})


def test_diff_alignment_sets_aside_confusing_words():
    # "的" occurs 6 times in the prediction, more than GNU diff's threshold of 5, and sits in
    # the middle of a run of words the prediction lacks: diff drops it from the search and so
    # finds one match fewer than the longest common subsequence.
    gold = ["x1", "x2", "x3", "的", "x4", "x5", "x6", "y"]
    pred = ["的"] * 6 + ["y"]
    assert len(align(gold, pred, "minimal")) == 2
    assert len(align(gold, pred, "diff")) == 1


@pytest.mark.skipif(shutil.which("diff") is None, reason="GNU diff not installed")
def test_diff_alignment_matches_gnu_diff(tmp_path):
    version = subprocess.run(["diff", "--version"], capture_output=True, text=True).stdout
    if "GNU diffutils" not in version:
        pytest.skip("not GNU diff")
    rng = random.Random(7)
    for case in range(150):
        vocab = ["的", "了", "是"] + [f"w{k}" for k in range(rng.randrange(2, 12))]
        a = [rng.choice(vocab) for _ in range(rng.randrange(1, 60))]
        b = [rng.choice(vocab) for _ in range(rng.randrange(1, 60))]
        fa, fb = tmp_path / "a", tmp_path / "b"
        fa.write_text("\n".join(a) + "\n")
        fb.write_text("\n".join(b) + "\n")
        out = subprocess.run(["diff", str(fa), str(fb)], capture_output=True, text=True).stdout
        unmatched = sum(line.startswith("< ") for line in out.splitlines())
        assert len(align(a, b, "diff")) == len(a) - unmatched, (case, a, b)


@pytest.mark.slow
@pytest.mark.parametrize("corpus, expected", [
    ("pku", {"fmm": (0.907, 0.843, 0.874, 0.069, 0.958), "bmm": (0.909, 0.845, 0.876, 0.069, 0.960),
             "bimm": (0.909, 0.845, 0.876, 0.069, 0.961)}),
    ("msr", {"fmm": (0.957, 0.917, 0.937, 0.025, 0.982), "bmm": (0.955, 0.915, 0.935, 0.025, 0.980),
             "bimm": (0.956, 0.917, 0.936, 0.025, 0.982)}),
])
def test_sighan2005_baselines(corpus, expected):
    words = shared("sighan2005", f"{corpus}_training_words.utf8")
    gold = shared("sighan2005", f"{corpus}_test_gold.utf8")
    raw = shared("sighan2005", f"{corpus}_test.utf8").read_bytes()
    d = Dictionary.load(words)
    for method, (r, p, f, oov_r, iv_r) in expected.items():
        out = Segmenter(d, method, baseline=True).segment_bytes(raw).decode("utf-8").split("\n")[:-1]
        s = evaluate(gold, out, words)
        got = tuple(round(x, 3) for x in (s.recall, s.precision, s.f, s.oov_recall, s.iv_recall))
        assert got == (r, p, f, oov_r, iv_r), method
        assert round(s.oov_rate, 3) == (0.058 if corpus == "pku" else 0.026)
    # The bakeoff's published PKU baseline: 104,372 gold words, 112,281 words output by its
    # maximum matching segmenter (mwseg.pl).
    if corpus == "pku":
        out = Segmenter(d, "fmm", baseline=True).segment_bytes(raw).decode("utf-8").split("\n")[:-1]
        s = evaluate(gold, out, words)
        assert (s.true_words, s.test_words, s.correct) == (104372, 112281, 94632)
