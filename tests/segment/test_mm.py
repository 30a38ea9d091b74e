"""Maximum matching (FMM, BMM, BiMM) and the handling of text outside the dictionary, held
against the textbook versions in ciyuan.reference.segment."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan.reference import segment as ref
from ciyuan.segment import Dictionary, Segmenter, bimm, bmm, fmm

WORDS = ["研究", "研究生", "生命", "命", "起源", "结婚", "的", "和", "尚未", "和尚", "结合", "成分", "子", "分子"]


@pytest.fixture(scope="module")
def d():
    return Dictionary(WORDS)


def test_textbook_examples(d):
    assert fmm("研究生命起源", d) == ["研究生", "命", "起源"]
    assert bmm("研究生命起源", d) == ["研究", "生命", "起源"]
    # BiMM: equal counts (3), BMM has fewer single characters.
    assert bimm("研究生命起源", d) == ["研究", "生命", "起源"]
    assert fmm("结婚的和尚未结婚的", d) == ["结婚", "的", "和尚", "未", "结婚", "的"]
    assert bmm("结婚的和尚未结婚的", d) == ["结婚", "的", "和", "尚未", "结婚", "的"]
    # 6 words and 3 single characters each: BMM's.
    assert bimm("结婚的和尚未结婚的", d) == ["结婚", "的", "和", "尚未", "结婚", "的"]
    assert fmm("结合成分子", d) == ["结合", "成分", "子"]
    assert bmm("结合成分子", d) == ["结合", "成", "分子"]
    # Same count (3) and same single characters (1): BMM's on a full tie.
    assert bimm("结合成分子", d) == ["结合", "成", "分子"]


def test_bimm_takes_fewer_words():
    d = Dictionary(["研究生命", "起源", "生命起源"])
    assert fmm("研究生命起源", d) == ["研究生命", "起源"]
    assert bmm("研究生命起源", d) == ["研", "究", "生命起源"]
    assert bimm("研究生命起源", d) == ["研究生命", "起源"]


def test_max_word_len(d):
    assert fmm("研究生命", d, max_word_len=2) == ["研究", "生命"]
    assert bmm("未结婚", d, max_word_len=2) == ["未", "结婚"]
    assert fmm("研究生命", d, max_word_len=1) == ["研", "究", "生", "命"]
    with pytest.raises(ValueError):
        Segmenter(d, "fmm", max_word_len=0)
    with pytest.raises(ValueError):
        Segmenter(d, "viterbi")


def test_unmatched_text_default_and_baseline(d):
    text = "研究iPhone 15 Pro的 x1，！生命\t起源"
    assert fmm(text, d) == ["研究", "iPhone", " ", "15", " ", "Pro", "的", " ", "x1", "，", "！", "生命", "\t", "起源"]
    assert fmm(text, d, baseline=True) == [
        "研究", *"iPhone", "1", "5", *"Pro", "的", "x", "1", "，", "！", "生命", "起源"]
    # The baseline deletes a line's whitespace before matching (mwseg.pl's s/\s*//g): words
    # span it; line breaks still separate lines.
    d2 = Dictionary(["生命起源", "ColinI"])
    for method in ("fmm", "bmm", "bimm", "dag"):
        seg = Segmenter(d2, method, baseline=True)
        assert seg.lcut("生命 起源") == seg.lcut("生命\u3000起\t源") == ["生命起源"]
        assert seg.lcut("生命\n起源") == ["生", "命", "起", "源"]
        assert seg.lcut("Colin I need you") == ["ColinI", *"needyou"]
        assert seg.tokenize(" 生命 起源 x") == [("生命起源", 1, 6), ("x", 7, 8)]
        assert seg.spans("a\u2003b 生命 起源") == [(0, 1), (2, 3), (4, 9)]
        assert seg.lcut_batch(["生命 起源", "生命\n起源"], threads=2) == [["生命起源"], ["生", "命", "起", "源"]]
        assert seg.segment_bytes("生命 起源\r\nColin I\u3000need\n".encode()) == \
            "生命起源\nColinI n e e d\n".encode()


@pytest.mark.parametrize("method", ["fmm", "bmm", "bimm", "dag"])
@pytest.mark.parametrize("baseline", [False, True])
def test_edge_inputs(d, method, baseline):
    seg = Segmenter(d, method, baseline=baseline)
    assert seg.lcut("") == [] and seg.tokenize("") == []
    assert seg.lcut("，。！？——") == ["，", "。", "！", "？", "—", "—"]
    latin = seg.lcut("Hello, world 42!")
    if baseline:
        assert latin == [*"Hello", ",", *"world", "4", "2", "!"]
    else:
        assert latin == ["Hello", ",", " ", "world", " ", "42", "!"]
    assert seg.lcut(" \n\u3000") == ([] if baseline else [" ", "\n", "\u3000"])
    # Characters outside the BMP, and lone surrogates (read as U+FFFD, one for one).
    assert seg.lcut("𠀀研究") == ["𠀀", "研究"]
    assert [w for w, _, _ in seg.tokenize("a\ud800研究")] == (["a", "\ufffd", "研究"])
    with pytest.raises(TypeError):
        seg.lcut(b"bytes")  # type: ignore[arg-type]


def test_offsets_and_batches(d):
    seg = Segmenter(d, "bimm")
    text = "研究 生命𠀀起源abc"
    toks = seg.tokenize(text)
    assert toks == [("研究", 0, 2), (" ", 2, 3), ("生命", 3, 5), ("𠀀", 5, 6), ("起源", 6, 8), ("abc", 8, 11)]
    assert all(text[s:e] == w for w, s, e in toks)
    assert seg.spans(text) == [(s, e) for _, s, e in toks]
    assert list(seg.cut(text)) == seg.lcut(text) == seg(text)
    texts = [text, "", "研究生命起源" * 50, "x"] * 20
    expected = [seg.lcut(t) for t in texts]
    assert seg.lcut_batch(texts) == expected
    assert seg.lcut_batch(texts, threads=1) == expected
    with pytest.raises(ValueError):
        seg.lcut_batch(texts, threads=0)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fmm", "bmm", "bimm", "dag"])
def test_ten_megabyte_line(d, method):
    text = "研究生命起源，结婚的和尚未结婚的。abc 12 " * 250_000  # ~10 MB of UTF-8, one line
    seg = Segmenter(d, method)
    words = seg.lcut(text)
    assert "".join(words) == text
    assert words[:6] == seg.lcut("研究生命起源，结婚的和尚未结婚的。abc 12 ")[:6]
    out = seg.segment_bytes(text.encode())
    assert out.count(b"\n") == 1 and out.endswith(b"\n")
    # lcut works through the text in ~1 MB chunks cut at spaces; segment_bytes takes the line
    # whole: the words must be the same.
    assert out.decode()[:-1].split(" ") == [w for w in words if not w.isspace()]
    toks = seg.tokenize(text)
    assert [w for w, _, _ in toks] == words and all(text[s:e] == w for w, s, e in toks[-1000:])


# -- the core against the reference twin (generated dictionaries and texts) -----------------

# With whitespace of three UTF-8 bytes (U+3000, U+2028), which the core's decoding loop must
# stop at even when a dictionary word contains it, and characters of two and four bytes.
ALPHABET = "研究生命起源和尚未结婚的ab1 ，\u3000\u2028é𠀀"
words_st = st.lists(st.text(alphabet="研究生命起源和尚未结婚的ab1é𠀀", min_size=1, max_size=4), max_size=25)
text_st = st.text(alphabet=ALPHABET, max_size=40)


@settings(max_examples=300, deadline=None)
@given(words=words_st, text=text_st, method=st.sampled_from(["fmm", "bmm", "bimm"]), baseline=st.booleans(),
       max_len=st.one_of(st.none(), st.integers(1, 5)))
def test_matches_reference(words, text, method, baseline, max_len):
    freq = dict.fromkeys(words, 1)
    got = Segmenter(Dictionary(freq), method, baseline=baseline, max_word_len=max_len).lcut(text)
    assert got == ref.segment(text, freq, method, baseline, max_len)


def test_reference_textbook_functions_agree_with_core(d):
    words, n = set(WORDS), max(map(len, WORDS))
    for text in ("研究生命起源", "结婚的和尚未结婚的", "结合成分子", "和尚和尚未"):
        assert ref.fmm(text, words, n) == fmm(text, d, baseline=True)
        assert ref.bmm(text, words, n) == bmm(text, d, baseline=True)
        assert ref.bimm(text, words, n) == bimm(text, d, baseline=True)


@settings(max_examples=200, deadline=None)
@given(words=st.dictionaries(st.text(alphabet="研究生命起源和尚未结婚的ab1", min_size=1, max_size=4),
                             st.integers(0, 5), max_size=25),
       text=text_st, baseline=st.booleans(), max_len=st.one_of(st.none(), st.integers(1, 5)))
def test_dag_matches_reference(words, text, baseline, max_len):
    got = Segmenter(Dictionary(words.items()), "dag", baseline=baseline, max_word_len=max_len).lcut(text)
    assert got == ref.segment(text, words, "dag", baseline, max_len)


def test_whitespace_is_pythons_isspace(tmp_path):
    seg = Segmenter(Dictionary(["中"]), "fmm", baseline=True)
    spaces = [chr(c) for c in range(0x3100) if chr(c).isspace()]
    assert len(spaces) == 29
    for c in spaces:
        assert seg.lcut(f"中{c}中") == ["中", "中"], hex(ord(c))
    for c in "\u200b\u180e\u2060\ufeff\u00ad\u3001":  # look like spaces, are not
        assert seg.lcut(f"中{c}中") == ["中", c, "中"], hex(ord(c))
    # A word with whitespace in it (only a file can add one: fields are split at ASCII spaces
    # and tabs) never matches: whitespace separates words first.
    path = tmp_path / "words.txt"
    path.write_text("".join(f"中{c}中\n{c}\n" for c in spaces if c not in " \t\n\r\x0b\x0c"), encoding="utf-8")
    for method in ("fmm", "bmm", "bimm", "dag"):
        seg = Segmenter(Dictionary.load(path), method)
        for c in spaces:
            assert seg.lcut(f"中{c}中") == ["中", c, "中"], (method, hex(ord(c)))
        assert seg.segment_bytes(f"中{c}中".encode()) == b"\xe4\xb8\xad \xe4\xb8\xad\n"


# Pieces of valid and invalid UTF-8 around the validator's three-byte fast path: the overlong E0
# and surrogate ED leads, truncated sequences, stray continuation bytes.
UTF8_PIECES = [b"\xe4\xb8\xad", b"\xe9\xbf\xbf", b"\xed\xa0\x80", b"\xed\x9f\xbf", b"\xe0\x80\x80", b"\xe0\xa0\x80",
               b"\xef\xbf\xbf", b"\xee\x80\x80", b"\xe1\x80", b"\xe4\xb8", b"\xe4\xc0\x80", b"a", b"\n", b" ",
               b"\xf0\x9f\x98\x80", b"\xc3\xa9", b"\x80", b"\xff"]


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.binary(max_size=40), st.lists(st.sampled_from(UTF8_PIECES), max_size=16).map(b"".join)))
def test_segment_bytes_reports_the_first_invalid_byte(data):
    from ciyuan.errors import InvalidInputError

    seg = Segmenter(Dictionary(["中"]), "fmm")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        with pytest.raises(InvalidInputError, match=rf"invalid UTF-8 at byte {e.start}$"):
            seg.segment_bytes(data)
    else:
        lines = text.split("\n")[: len(text.split("\n")) - (text.endswith("\n"))] if text else []
        want = "".join(" ".join(w for w in seg.lcut(line) if not w.isspace()) + "\n" for line in lines)
        assert seg.segment_bytes(data).decode("utf-8") == want
