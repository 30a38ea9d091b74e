"""The DAG method: jieba's max-probability path, held against jieba.cut(HMM=False) itself."""

from __future__ import annotations

import warnings

import pytest

from ciyuan.reference import segment as ref
from ciyuan.segment import Dictionary, Segmenter, dag
from tests.conftest import read_prefix, shared


def test_hand_example_and_tie_to_longer_word():
    d = Dictionary([("研究", 10), ("研究生", 2), ("生命", 10), ("起源", 10)])
    assert dag("研究生命起源", d) == ["研究", "生命", "起源"]
    # Equal probability: "AB" + "C" vs "A" + "BC" with equal freqs -> the longer first word wins
    # (jieba's max over (score, end) prefers the larger end).
    d = Dictionary([("中国", 5), ("人", 5), ("中", 5), ("国人", 5)])
    assert dag("中国人", d) == ["中国", "人"]
    # Frequency 0 words are no edges; characters without a word fall back to themselves.
    d = Dictionary([("中国", 0), ("人民", 3)])
    assert dag("中国人民", d) == ["中", "国", "人民"]


def test_blocks_like_jieba():
    d = Dictionary([("中国", 5), ("Ｔ恤", 5), ("a", 3), ("3.14", 1)])
    # Runs of CJK and [a-zA-Z0-9+#&._%-] are blocks; anything else is a word of its own
    # (so the full-width "Ｔ恤" never matches, as in jieba), "\r\n" stays together, and single
    # letters/digits join.
    assert dag("中国Ｔ恤 abc\r\n3.14！", d) == ["中国", "Ｔ", "恤", " ", "abc", "\r\n", "3.14", "！"]
    assert dag("中国Ｔ恤", d, baseline=True) == ["中国", "Ｔ恤"]


def jieba_tokenizer(path, cache_dir):
    with warnings.catch_warnings():  # jieba imports pkg_resources, which warns on new setuptools
        warnings.simplefilter("ignore")
        jieba = pytest.importorskip("jieba")
        jieba.setLogLevel(60)
        tok = jieba.Tokenizer(dictionary=str(path))
        tok.tmp_dir = str(cache_dir)  # its prefix-dict cache goes here, not to /tmp
        tok.initialize()
    return tok


@pytest.mark.slow
def test_parity_with_jieba_cut_without_hmm(tmp_path):
    path = shared("dicts", "jieba_dict_small.txt")
    tok = jieba_tokenizer(path, tmp_path)
    seg = Segmenter(Dictionary.load(path), "dag")
    corpus = read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 300_000).split("\n")
    sighan = read_prefix(shared("sighan2005", "pku_test.utf8"), 100_000).split("\n")
    mixed = ["iPhone 15 Pro发布了，售价$999（约合7000元）。", "C++和C#是编程语言\r\n第二行", "  空格　全角 ",
             "3.14159是圆周率，95%的人不知道", "电子邮件：abc_def@example.com 网址 https://ciyuan.dev/a-b?x=1",
             "ＡＢＣ１２３全角", "𠀀𠀁生僻字", "\t", ""]
    lines = corpus + sighan + mixed
    mismatches = [(line, seg.lcut(line)) for line in lines if seg.lcut(line) != list(tok.cut(line, HMM=False))]
    assert not mismatches[:3], f"{len(mismatches)} of {len(lines)} lines differ from jieba"


@pytest.mark.slow
def test_reference_dag_matches_core_on_real_text():
    path = shared("dicts", "jieba_dict_small.txt")
    d = Dictionary.load(path)
    freq = dict(d.items())
    seg = Segmenter(d, "dag")
    for line in read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 20_000).split("\n"):
        assert seg.lcut(line) == ref.segment(line, freq, "dag")


def test_package_names_are_the_functions_whatever_was_imported_first():
    # `dag` is a function of ciyuan.segment and a module in it; importing the module first (as
    # Dictionary.suggest_freq does) must not shadow the function. The scoring names load on
    # first use, whichever way they are reached.
    import subprocess
    import sys

    code = ("import ciyuan.segment.dag, ciyuan.segment.scoring\n"
            "from ciyuan.segment import dag, evaluate, SegScore\n"
            "import ciyuan.segment as s\n"
            "assert callable(dag) and callable(evaluate) and s.evaluate is evaluate, (dag, evaluate)\n"
            "assert SegScore is ciyuan.segment.scoring.SegScore\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    # `ciyuan segment` does not load the scoring module (nor dataclasses).
    code = ("import sys, ciyuan.segment\n"
            "assert 'ciyuan.segment.scoring' not in sys.modules and 'dataclasses' not in sys.modules\n"
            "from ciyuan.segment import *\n"
            "assert callable(evaluate)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
