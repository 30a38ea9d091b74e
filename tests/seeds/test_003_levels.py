"""Document 003 (../shared/seeds/003_*.txt): the word-, character- and subword-level splits of its
example sentences as printed, the WordPiece "##" split and score - held against
ciyuan.reference on generated and real data."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan.errors import InvalidInputError
from ciyuan.reference import levels as ref_levels
from ciyuan.reference import segment as ref_segment
from ciyuan.segment import Dictionary, Segmenter
from ciyuan.textbook import (
    char_level,
    format_split,
    print_char_level,
    print_word_level,
    train_wordpiece_pmi,
    word_level,
    wordpiece_score,
    wordpiece_split,
)
from tests.conftest import read_prefix, shared
from tests.seeds.wordpiece_helpers import replay

ZH = "我喜欢看电影和读书。"
EN = "I enjoy watching movies and reading books."
SMALL_DICTIONARY = {"喜欢", "电影", "读书"}


@pytest.fixture(scope="module")
def jieba_dictionary():
    return Dictionary.load(shared("dicts", "jieba_dict_small.txt"))


# -- the printed outputs ----------------------------------------------------------------------------


def test_word_level_chinese_example(capsys, jieba_dictionary):
    print_word_level(ZH, jieba_dictionary)
    print_word_level(ZH, SMALL_DICTIONARY)
    for method in ("fmm", "bmm", "bimm"):
        print_word_level(ZH, jieba_dictionary, method=method)
    assert capsys.readouterr().out == "我 | 喜欢 | 看 | 电影 | 和 | 读书。\n" * 5


def test_word_level_english_example(capsys, jieba_dictionary):
    print_word_level(EN)
    print_word_level(EN, jieba_dictionary)  # no Chinese: the dictionary is not used
    assert capsys.readouterr().out == "I | enjoy | watching | movies | and | reading | books.\n" * 2


def test_char_level_chinese_example(capsys):
    print_char_level(ZH)
    assert capsys.readouterr().out == "我 | 喜 | 欢 | 看 | 电 | 影 | 和 | 读 | 书 | 。\n"


def test_char_level_english_example(capsys):
    print_char_level(EN)
    assert capsys.readouterr().out == (
        "I |   | e | n | j | o | y |   | w | a | t | c | h | i | n | g |   | m | o | v | i | e | s |   | a | n | d |"
        "   | r | e | a | d | i | n | g |   | b | o | o | k | s | .\n")


def test_word_level_document_block(jieba_dictionary):
    """The document's word-level block, line for line."""
    block = "\n".join([
        f"中文句子：{ZH}",
        f"分词结果：{format_split(word_level(ZH, jieba_dictionary))}",
        f"英文句子：{EN}",
        f"分词结果：{format_split(word_level(EN))}",
    ])
    assert block == ("中文句子：我喜欢看电影和读书。\n分词结果：我 | 喜欢 | 看 | 电影 | 和 | 读书。\n"
                     "英文句子：I enjoy watching movies and reading books.\n"
                     "分词结果：I | enjoy | watching | movies | and | reading | books.")


def test_wordpiece_split_example(capsys):
    print(" ".join(wordpiece_split("word")))
    assert capsys.readouterr().out == "w ##o ##r ##d\n"
    assert wordpiece_split("") == []
    assert wordpiece_split("词元", prefix="@@") == ["词", "@@元"]
    with pytest.raises(InvalidInputError, match="whitespace"):
        wordpiece_split("a b")


def test_wordpiece_score_as_written():
    assert wordpiece_score(5, 20, 5) == 5 / (20 * 5) == 0.05
    assert wordpiece_score(0, 1, 1) == 0.0
    for bad in ((1, 0, 1), (1, 1, 0), (-1, 1, 1), (1.5, 1, 1)):
        with pytest.raises(InvalidInputError):
            wordpiece_score(*bad)


# -- word level: the punctuation rule, no dictionary, and other dictionary forms ----------------------


def test_word_level_punctuation_stays_with_its_word():
    words = {"你好", "世界", "电影"}
    assert word_level("“你好，世界！”", words) == ["“你好，", "世界！”"]
    assert word_level("看电影。 Hello, world!", words) == ["看", "电影。", "Hello,", "world!"]
    assert word_level("。", words) == ["。"]  # nothing else in the chunk
    # ASCII letters and digits stay in runs (the segmenter's default); '%' is punctuation.
    assert word_level("用iPhone看电影50%", words) == ["用", "iPhone", "看", "电影", "50%"]


def test_word_level_without_a_dictionary():
    assert word_level(EN) == EN.split()
    assert word_level("  spaced   out\n") == ["spaced", "out"]
    with pytest.raises(InvalidInputError, match="needs a dictionary"):
        word_level(ZH)


def test_word_level_dictionary_forms(jieba_dictionary, tmp_path):
    expected = ["我", "喜欢", "看", "电影", "和", "读书。"]
    path = tmp_path / "words.txt"
    path.write_text("\n".join(sorted(SMALL_DICTIONARY)) + "\n", encoding="utf-8")
    for d in (path, str(path), sorted(SMALL_DICTIONARY), Dictionary(SMALL_DICTIONARY),
              Segmenter(jieba_dictionary, "dag")):
        assert word_level(ZH, d) == expected
    with pytest.raises(InvalidInputError):
        word_level(ZH, 42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="sentence"):
        word_level(None)  # type: ignore[arg-type]


def test_char_level_is_every_character():
    assert char_level("a 𠀀\n") == ["a", " ", "𠀀", "\n"]
    assert format_split(char_level("")) == ""


# Han (BMP, extension B, a compatibility ideograph), ASCII, digits, punctuation (ASCII and CJK),
# symbols that are not punctuation, whitespace.
ALPHABET = "我喜欢看电影和读书𠀀豈ab1.,%。，“”！○￥ \t\u3000"
WORDS = st.sets(st.text(alphabet="我喜欢看电影和读书𠀀豈ab1.，", min_size=1, max_size=4), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40), WORDS, st.sampled_from(["dag", "fmm", "bmm", "bimm"]))
def test_word_level_against_the_reference(text, words, method):
    freq = dict.fromkeys(words, 1)

    def cut(chunk):  # what ciyuan.segment.Segmenter(Dictionary(words), method).lcut gives
        return ref_segment.segment(chunk, freq, method)

    got = word_level(text, words, method=method)
    assert got == ref_levels.word_level(text, cut)
    assert "".join(got) == "".join(text.split())


def test_word_level_real_chinese(jieba_dictionary):
    lines = shared("sighan2005", "pku_test.utf8").read_text("utf-8").splitlines()[:60]
    freq = dict(jieba_dictionary.items())
    for line in lines:
        expected = ref_levels.word_level(line, lambda chunk: ref_segment.segment(chunk, freq, "dag"))
        assert word_level(line, jieba_dictionary) == expected, line


def test_word_level_real_english():
    text = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 50_000)
    assert word_level(text) == text.split()


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["pku", "msr"])
def test_word_level_whole_sighan_test_files(corpus):
    words = shared("sighan2005", f"{corpus}_training_words.utf8").read_text("utf-8").split()
    lines = shared("sighan2005", f"{corpus}_test.utf8").read_text("utf-8").splitlines()
    d = Dictionary(words)
    freq = dict.fromkeys(words, 1)
    longest = d.max_word_len
    seg = Segmenter(d, "fmm")
    for line in lines:
        expected = ref_levels.word_level(line, lambda chunk: ref_segment.segment(chunk, freq, "fmm", max_len=longest))
        assert word_level(line, seg) == expected, line


# -- the WordPiece score picks what the native trainer merges -----------------------------------------

HF_CORPUS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}


def test_wordpiece_score_on_a_worked_corpus():
    """Steps 1-4 of the document on a small corpus: split with "##", score every pair, merge the
    best; the native trainer merges the same pair at every step."""
    units = {w: wordpiece_split(w) for w in HF_CORPUS}
    assert units["hugs"] == ["h", "##u", "##g", "##s"]
    vocab, merges = train_wordpiece_pmi(HF_CORPUS, num_merges=9)
    steps = list(replay(HF_CORPUS, merges))
    first = steps[0]
    scores = {p: wordpiece_score(n, first.symbols[p[0]], first.symbols[p[1]]) for p, n in first.pairs.items()}
    # ##g ##s: 5 / (20 × 5); the highest score though not the most frequent pair (##u ##g: 20).
    assert scores[("##g", "##s")] == 0.05 == max(scores.values())
    assert max(first.pairs, key=first.pairs.get) == ("##u", "##g")
    for step in steps[:-1]:
        scores = {p: wordpiece_score(n, step.symbols[p[0]], step.symbols[p[1]]) for p, n in step.pairs.items()}
        exact = {p: Fraction(n, step.symbols[p[0]] * step.symbols[p[1]]) for p, n in step.pairs.items()}
        assert scores[step.chosen] == max(scores.values())
        assert exact[step.chosen] == max(exact.values())
    assert merges == [("##g", "##s"), ("p", "##u"), ("h", "##u"), ("b", "##u"), ("hu", "##gs"), ("hu", "##g"),
                      ("bu", "##n"), ("pu", "##n"), ("pu", "##g")]
