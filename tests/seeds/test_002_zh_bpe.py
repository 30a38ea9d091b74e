"""Document 002 (../shared/seeds/002_*.txt): the Chinese BPE command-line tool, `ciyuan zh-bpe`.

One test per section of the document that states a behaviour (its README runs, its train
module's three steps, its apply module's two), then ``ciyuan.textbook.zh_bpe`` held against the
plain-Python twin (``ciyuan.reference.zh_bpe``) on generated inputs and on the tool's own sample
(``../shared/data/zh-bpe-sample``) and a slice of the Chinese corpus.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan.cli import main
from ciyuan.errors import InvalidInputError
from ciyuan.reference import zh_bpe as ref
from ciyuan.textbook import ZhBpeSegmenter, learn_zh_merges, zh_bpe_apply, zh_bpe_train
from ciyuan.textbook.zh_bpe import get_vocabulary_from_txt, is_all_chinese, read_zh_units, zh_clauses, zh_units
from tests.conftest import read_prefix, shared

SAMPLE = ("zh-bpe-sample",)


def merges_text(merges) -> str:
    return "".join(f"{a} {b}\n" for a, b in merges)


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# -- the README: 样例代码运行 (the sample run) ----------------------------------------------------------


def test_readme_sample_train_prints_the_lower_bound_and_writes_the_merges(tmp_path, capsys):
    """`main.py --mode "train" --train_text data/smalltrain.txt --save_vocab data/1000.txt`:
    default flags (1000 steps, min_frequency 2). The described algorithm stops after 423 merges,
    printing 已达到下限; the file is the merges in order."""
    train = shared(*SAMPLE, "smalltrain.txt")
    vocab = tmp_path / "1000.txt"
    assert main(["zh-bpe", "--mode", "train", "--train_text", str(train), "--save_vocab", str(vocab)]) == 0
    out, err = capsys.readouterr()
    assert out == "已达到下限\n"
    assert "423 merges" in err and "reached the lower bound" in err
    merges, stop = ref.train_merges(ref.clause_counts(read(train)))
    assert (len(merges), stop) == (423, "min_frequency")
    assert read(vocab) == merges_text(merges)
    assert read(vocab).split("\n")[:4] == ["我 们", "中 国", "人 民", "朝 鲜"]


def test_readme_sample_apply_writes_the_answer(tmp_path, capsys):
    """`main.py --mode "apply" --test_text data/smalltest.txt --vocab_filename data/1000.txt
    --answer_filename answer.txt`: the answer is the reference's, line for line."""
    train, test = shared(*SAMPLE, "smalltrain.txt"), shared(*SAMPLE, "smalltest.txt")
    vocab, answer = tmp_path / "1000.txt", tmp_path / "answer.txt"
    assert main(["zh-bpe", "--mode", "train", "--train_text", str(train), "--save_vocab", str(vocab)]) == 0
    assert main(["zh-bpe", "--mode", "apply", "--test_text", str(test), "--vocab_filename", str(vocab),
                 "--answer_filename", str(answer)]) == 0
    capsys.readouterr()
    units = ref.units_from_lines(read(vocab).split("\n"))
    assert len(units) == 212
    expected = ref.apply_text(read(test), units)
    assert read(answer) == expected
    first = expected.split("\n")[0]
    assert first.startswith("记者 1 月 1 5 日 从 上 海 铁 路 局 淮 南 西 站 获 悉 , ")
    assert "最高 峰 日" in first and "方向 的 高 铁" in first
    assert len(expected.split("\n")) - 1 == len(read(test).split("\n"))  # 394 lines: the last had no newline


def test_sample_trained_to_exhaustion(tmp_path, capsys):
    """--min_frequency 1 --vocab_size 10000 on the sample: every pair is merged, 2922 merges,
    then the best count is 0 (below 1: the lower bound again)."""
    train = shared(*SAMPLE, "smalltrain.txt")
    vocab = tmp_path / "v.txt"
    assert main(["zh-bpe", "train", "--train-text", str(train), "--save-vocab", str(vocab),
                 "--min-frequency", "1", "--vocab-size", "10000"]) == 0
    assert capsys.readouterr().out == "已达到下限\n"
    merges, stop = ref.train_merges(ref.clause_counts(read(train)), 10000, 1)
    assert (len(merges), stop) == (2922, "min_frequency")
    assert read(vocab) == merges_text(merges)


@pytest.mark.slow
def test_real_run_flags_on_the_chinese_corpus(tmp_path, capsys):
    """实际训练参数 (the real run): --vocab_size 10000 on a slice of jinyong_16novels.txt (its
    '，' written ',' as the tool's data has them), train then apply, against the reference."""
    text = read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 100_000).replace("，", ",")
    (tmp_path / "train.txt").write_text(text, encoding="utf-8")
    vocab, answer = tmp_path / "10000.txt", tmp_path / "answer.txt"
    assert main(["zh-bpe", "train", "--train_text", str(tmp_path / "train.txt"), "--save_vocab", str(vocab),
                 "--vocab_size", "10000"]) == 0
    merges, stop = ref.train_merges_incremental(ref.clause_counts(text), 10000, 2)
    assert (len(merges), stop) == (2582, "min_frequency")
    assert read(vocab) == merges_text(merges)
    assert main(["zh-bpe", "apply", "--test_text", str(tmp_path / "train.txt"), "--vocab_filename", str(vocab),
                 "--answer_filename", str(answer)]) == 0
    capsys.readouterr()
    assert read(answer) == ref.apply_text(text, ref.units_from_lines(read(vocab).split("\n")))


@pytest.mark.slow
def test_whole_chinese_corpus_apply_keeps_every_character(tmp_path):
    """10,000 steps on the whole corpus; applying them loses and adds no character, and every
    unit of two characters is a kept unit."""
    corpus = shared("corpora", "zh", "jinyong_16novels.txt")
    text = corpus.read_text(encoding="utf-8").replace("，", ",")
    (tmp_path / "train.txt").write_text(text, encoding="utf-8")
    result = zh_bpe_train(tmp_path / "train.txt", tmp_path / "v.txt", 10000)
    assert (len(result.merges), result.stop) == (10000, "vocab_size")
    answer = zh_bpe_apply(tmp_path / "train.txt", tmp_path / "v.txt", None)
    kept = set(answer.units)
    lines = answer.text.split("\n")[:-1]
    assert len(lines) == len(text.split("\n")) - (text.endswith("\n"))
    for got, line in zip(lines, text.split("\n")):
        units = got.split(" ") if got else []
        assert "".join(units) == line.replace(" ", "").replace("\t", "").replace("\u3000", "")
        assert all(len(u) == 1 or u in kept for u in units)


# -- the train module ----------------------------------------------------------------------------------


def test_reading_the_data_counts_clauses(tmp_path):
    """1. 读入数据: a Counter of clauses - each line cut at ',', spaces and '。' removed, empty
    pieces dropped; '\\r\\n' and '\\r' end lines as in text mode; '，' is no separator."""
    f = tmp_path / "train.txt"
    f.write_bytes("中 国 人 ,中国。\r\n,,人民，中国\r中国 。\n".encode())
    assert list(get_vocabulary_from_txt(f).items()) == [("中国人", 1), ("中国", 2), ("人民，中国", 1)]
    assert zh_clauses("") == {}


def test_preprocessing_marks_each_clause_end():
    """2. 数据预处理: a clause's symbols are its characters, the last carrying </w>; a one-
    character clause is a single symbol and has no pair."""
    assert learn_zh_merges({"中国": 2, "人": 9}, vocab_size=5).merges == [("中", "国</w>")]
    assert learn_zh_merges({"人": 9, "民": 3}, vocab_size=5) == (
        [], "min_frequency", 2, 12)  # the document's loop would fail here: no pair was ever found


def test_merge_loop_takes_the_greatest_count_then_the_greatest_pair():
    """3. 更新词表, step 1: the most frequent pair, max((count, pair)) - equal counts go to the
    greater pair in code point order (人 U+4EBA > 中 U+4E2D)."""
    result = learn_zh_merges({"中国人": 1, "中国": 2, "人民": 1}, vocab_size=10, min_frequency=1)
    assert result.merges == [("中", "国</w>"), ("国", "人</w>"), ("人", "民</w>"), ("中", "国人</w>")]
    assert result.stop == "min_frequency"


def test_merge_loop_stops_below_min_frequency_or_after_vocab_size_steps():
    """3. steps 2 and 9: stop when the best count is below the lower bound, or after
    vocab_size merge steps (it counts steps, not tokens)."""
    clauses = {"中国人": 1, "中国": 2, "人民": 1}
    assert learn_zh_merges(clauses, vocab_size=10, min_frequency=2) == ([("中", "国</w>")], "min_frequency", 3, 4)
    assert learn_zh_merges(clauses, vocab_size=2, min_frequency=1).merges == [("中", "国</w>"), ("国", "人</w>")]
    assert learn_zh_merges(clauses, vocab_size=2, min_frequency=1).stop == "vocab_size"
    assert learn_zh_merges(clauses, vocab_size=0).merges == []
    assert learn_zh_merges(clauses, vocab_size=10, min_frequency=0).stop == "no_pair"
    with pytest.raises(InvalidInputError, match="vocab_size"):
        learn_zh_merges(clauses, vocab_size=-1)


def test_merge_loop_counts_stay_exact():
    """3. steps 4-7 (x|a|b|y): after merging 中 国 in 中 国 中 国 人</w>, the pair 国 中 has
    lost one occurrence, not two. (The document's update takes 国 中 away twice here and would
    then merge 中 人</w> instead of 国 中.)"""
    clauses = {"中国中国人": 3, "国中人": 2}
    expected = [("中", "国"), ("中国", "人</w>"), ("中国", "中国人</w>"), ("国", "中"), ("国中", "人</w>")]
    assert ref.train_merges(clauses, 10) == (expected, "min_frequency")
    assert learn_zh_merges(clauses, 10).merges == expected


# -- the apply module ----------------------------------------------------------------------------------


def test_reading_the_vocabulary(tmp_path):
    """1. 读取此前得到的词表: spaces and </w> removed from every line (the first too), the last
    line whole even without a newline, blank lines skipped; kept: one or two characters, all
    Chinese (U+4E00..U+9FA5), no 的."""
    f = tmp_path / "vocab.txt"
    f.write_text("中 国</w>\n的 人\n中国 人\nA 国\n〇 一\n\n龥 一\n国</w>\n人 民", encoding="utf-8")
    assert read_zh_units(f) == ["中国", "龥一", "国", "人民"]
    assert zh_units(["中 国</w>", "中国 人</w>"]) == ["中国"]
    assert [is_all_chinese(s) for s in ("", "一龥", "\u4dff", "\u9fa6", "中a")] == [True, True, False, False, False]


def test_units_merge_in_training_order_never_twice():
    """2. 循环合并词表: units are applied in the vocabulary's order (not by frequency in the test
    text); a character already in a unit is not merged again - neither of its two characters
    (the document marks only the first, so 乙丙 could still take 乙 from 甲乙)."""
    assert ZhBpeSegmenter(["中国", "国人"]).segment("中国人") == ["中国", "人"]
    assert ZhBpeSegmenter(["国人", "中国"]).segment("中国人") == ["中", "国人"]
    assert ZhBpeSegmenter(["甲乙", "乙丙"]).segment("甲乙丙") == ["甲乙", "丙"]
    assert ZhBpeSegmenter(["甲甲"]).segment("甲甲甲") == ["甲甲", "甲"]
    # A one-character unit takes its character: later units cannot use it.
    assert ZhBpeSegmenter(["甲", "甲乙", "乙丙"]).segment("甲乙丙甲") == ["甲", "乙丙", "甲"]
    assert ZhBpeSegmenter(["甲乙", "甲"]).segment("甲乙甲") == ["甲乙", "甲"]
    with pytest.raises(InvalidInputError):
        ZhBpeSegmenter(["中国人"])
    # A lone surrogate (no UTF-8 form) reads as U+FFFD.
    assert ZhBpeSegmenter(["中国"]).segment("中国\ud800人") == ["中国", "\ufffd", "人"]
    assert ZhBpeSegmenter(["中国"]).segment_text("中国\udfff") == "中国 \ufffd\n"


def test_answer_lines(tmp_path):
    """The answer: one line per test line, units joined by single spaces; spaces, tabs and U+3000
    of the test text removed; other characters stay, one unit each."""
    seg = ZhBpeSegmenter(["中国", "人民"])
    assert seg.segment_text("中 国\t人\u3000民 , A1。\r\n\n中国") == "中国 人民 , A 1 。\n\n中国\n"
    assert seg.segment_text("") == ""
    (tmp_path / "v.txt").write_text("中 国\n", encoding="utf-8")
    (tmp_path / "t.txt").write_text("中国人\n", encoding="utf-8")
    result = zh_bpe_apply(tmp_path / "t.txt", tmp_path / "v.txt", tmp_path / "a.txt")
    assert (result.text, result.units, result.lines) == ("中国 人\n", ["中国"], 1)
    assert read(tmp_path / "a.txt") == "中国 人\n"


# -- ciyuan.textbook.zh_bpe against the reference -----------------------------------------------------

PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Few symbols, so that counts tie and merges chain; '<', '/', 'w', '>' spell the end-of-word mark.
clause_dicts = st.dictionaries(st.text(st.sampled_from("中国人民ab</w>"), min_size=1, max_size=9),
                               st.integers(1, 5), max_size=8)
texts = st.text(st.sampled_from("中国人民的大 ,。，\n\r\t\u3000a〇"), max_size=60)
unit_lists = st.lists(st.text(st.sampled_from("中国人民大"), min_size=1, max_size=2), max_size=12)


@PROPERTY
@given(clause_dicts, st.integers(0, 40), st.integers(0, 3))
def test_merges_equal_the_reference(clauses, vocab_size, min_frequency):
    expected = ref.train_merges(clauses, vocab_size, min_frequency)
    assert ref.train_merges_incremental(clauses, vocab_size, min_frequency) == expected
    got = learn_zh_merges(clauses, vocab_size, min_frequency)
    assert (got.merges, got.stop) == expected


@PROPERTY
@given(texts, st.integers(0, 40), st.integers(0, 3))
def test_train_file_equals_the_reference(tmp_path_factory, text, vocab_size, min_frequency):
    path = tmp_path_factory.mktemp("t") / "train.txt"
    path.write_bytes(text.encode("utf-8"))
    assert zh_clauses(text) == ref.clause_counts(text)
    assert list(zh_clauses(text)) == list(ref.clause_counts(text))
    result = zh_bpe_train(path, path.with_name("v.txt"), vocab_size, min_frequency)
    merges, stop = ref.train_merges(ref.clause_counts(text), vocab_size, min_frequency)
    assert (read(path.with_name("v.txt")), result.stop) == (merges_text(merges), stop)


@PROPERTY
@given(texts, unit_lists)
def test_apply_equals_the_reference(text, units):
    assert ZhBpeSegmenter(units).segment_text(text) == ref.apply_text(text, units)


@PROPERTY
@given(st.lists(st.text(st.sampled_from("中国的人 </w>a〇龥\u9fa6"), max_size=8), max_size=10))
def test_units_equal_the_reference(lines):
    assert zh_units(lines) == ref.units_from_lines(lines)


def test_sample_apply_equals_the_reference_with_every_prefix_of_the_units():
    """The sample's test text with the units of the sample's training, cut after each number of
    units: native BPE by rank and the sequential scan agree at every stage."""
    train, test = read(shared(*SAMPLE, "smalltrain.txt")), read(shared(*SAMPLE, "smalltest.txt"))
    merges, _ = ref.train_merges(ref.clause_counts(train), 10000, 1)
    units = ref.units_from_lines(f"{a} {b}" for a, b in merges)
    for n in sorted({0, 1, 2, 5, 20, 100, len(units) // 2, len(units)}):
        assert ZhBpeSegmenter(units[:n]).segment_text(test) == ref.apply_text(test, units[:n])
