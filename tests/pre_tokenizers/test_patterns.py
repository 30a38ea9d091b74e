"""The native pre-tokenizer scanners split exactly like ``regex.findall`` (and like tiktoken).

Oracles:

* the ``regex`` module running the pattern itself, for every pattern;
* tiktoken's Rust regex for gpt2 / cl100k_base / o200k_base. Its Unicode tables are older than
  ``regex``'s (Unicode 16 vs 18 at the time of writing), and those scanners follow tiktoken,
  whose ids we must reproduce. A text holding a code point the two engines classify
  differently ("disputed", e.g. CJK Extension J, or U+0295 which became Lo) is held against
  tiktoken instead of ``regex``. To read tiktoken's pieces exactly we give it a vocabulary made
  of every substring of the text, so that each piece becomes a single token.

Real corpora come from ``../shared/data`` (override with ``CIYUAN_SHARED_DATA``).
"""

from __future__ import annotations

import functools
import os
import random
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan._core import split_pieces
from ciyuan.pre_tokenizers.patterns import EQUIVALENT_PATTERNS, NAMED_PATTERNS

Span = Tuple[int, int]

# One test per native scanner, generated from ciyuan.pre_tokenizers.patterns: each pattern
# string under its first name (the aliases r50k_base / p50k_base share gpt2's scanner).
PATTERNS: Dict[str, str] = {}
for _name, _pattern in NAMED_PATTERNS.items():
    if _pattern not in PATTERNS.values():
        PATTERNS[_name] = _pattern
# Alias -> the name whose scanner it shares.
ALIASES = {n: next(k for k, p in PATTERNS.items() if p == pattern) for n, pattern in NAMED_PATTERNS.items()
           if n not in PATTERNS}
# Other spellings of a pattern that split identically (GPT-2's released pattern): (pattern, name).
EQUIVALENTS = list(EQUIVALENT_PATTERNS.items())
NAMES = list(PATTERNS)
TIKTOKEN_NAMES = ["gpt2", "cl100k_base", "o200k_base"]
# tokenizer.json patterns: on the code points where regex and tiktoken disagree they follow
# tiktoken's tables, which are Hugging Face's (Oniguruma's) too; held against tokenizers there.
HF_NAMES = ["llama3", "qwen2"]
COMPILED = {name: regex.compile(p) for name, p in PATTERNS.items()}

# Characters and strings that exercise the corners of the patterns.
TRICKY = [
    "'", "'s", "'S", "'ſ", "'t", "'T", "'m", "'M", "'d", "'D", "'ll", "'LL", "'lL", "'ve", "'VE", "'re",
    "'Re", "s", "S", "ſ", "t", "d", "m", "l", "L", "ll", "v", "e", "E", "r", "re", "ve", "K", "\u212a",
    " ", "  ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\xa0", "\u2028", "\u2029", "\u3000",
    "\x1c", "\x1f", "0", "7", "123", "\u0663", "½", "²", "Ⅻ", "a", "z", "A", "Z", "é", "É", "ß", "Σ",
    "ς", "ǅ", "ǈ", "ʰ", "ー", "ª", "中", "あ", "\u0301", "\u0903", "\u20dd", "\u200d", "_", "/", "//",
    "!", "?", ".", ",", "-", "“", "😀", "\ufffd", "\U0001d400",
]
tricky_text = st.lists(st.sampled_from(TRICKY), max_size=24).map("".join)
mixed_text = st.text(alphabet=st.one_of(st.characters(codec="utf-8"),
                                        st.sampled_from([t for t in TRICKY if len(t) == 1])))


# ---- oracles -----------------------------------------------------------------------------------


def regex_spans(name: str, text: str, pattern: Optional[regex.Pattern] = None) -> List[Span]:
    """Byte spans of regex's matches."""
    pattern = pattern or COMPILED[name]
    if text.isascii():
        return [m.span() for m in pattern.finditer(text)]
    out = []
    cpos = bpos = 0
    for m in pattern.finditer(text):
        s, e = m.span()
        bpos += len(text[cpos:s].encode("utf-8"))
        start = bpos
        bpos += len(text[s:e].encode("utf-8"))
        cpos = e
        out.append((start, bpos))
    return out


@functools.lru_cache(maxsize=None)
def disputed() -> frozenset:
    """Code points whose classes differ between `regex` and tiktoken's Rust regex."""
    tiktoken = pytest.importorskip("tiktoken")
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    ranks = {bytes([i]): i for i in range(256)}
    out = set()
    for cls in (r"\p{L}", r"\p{N}", r"\s", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"):
        enc = tiktoken.Encoding("probe", pat_str=cls, mergeable_ranks=ranks, special_tokens={})
        theirs = set(enc.decode_bytes(enc.encode_ordinary(everything)).decode("utf-8"))
        out |= theirs ^ set(regex.findall(cls, everything))
    return frozenset(out)


def tiktoken_spans(name: str, text: str) -> List[Span]:
    """tiktoken's pieces (byte spans) of a short text: every substring is a token, so BPE merges
    each piece into exactly one token."""
    tiktoken = pytest.importorskip("tiktoken")
    data = text.encode("utf-8")
    ranks = {bytes([i]): i for i in range(256)}
    subs = {data[i:j] for i in range(len(data)) for j in range(i + 2, len(data) + 1)}
    for sub in sorted(subs, key=len):
        ranks[sub] = len(ranks)
    enc = tiktoken.Encoding("oracle", pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens={})
    out, pos = [], 0
    for tok in enc.encode_ordinary(text):
        n = len(enc.decode_single_token_bytes(tok))
        out.append((pos, pos + n))
        pos += n
    return out


def describe(text: str, got: List[Span], want: List[Span], oracle: str) -> str:
    data = text.encode("utf-8")
    i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))

    def show(spans: List[Span]) -> List[str]:
        return [data[s:e].decode("utf-8", "replace") for s, e in spans[max(0, i - 2) : i + 3]]

    return (
        f"scanner and {oracle} differ at piece {i} (of {len(got)} / {len(want)}):\n"
        f"  scanner: {show(got)!r} {got[i:i + 1]}\n  {oracle}: {show(want)!r} {want[i:i + 1]}"
    )


def hf_spans(name: str, text: str) -> List[Span]:
    """Byte spans of Hugging Face's Split (Oniguruma) with the pattern, on ``text``."""
    hf = pytest.importorskip("tokenizers")
    split = hf.pre_tokenizers.Split(hf.Regex(NAMED_PATTERNS[name]), "isolated")
    at = [0]
    for c in text:
        at.append(at[-1] + len(c.encode("utf-8")))
    return [(at[s], at[e]) for _, (s, e) in split.pre_tokenize_str(text)]


def check(name: str, text: str) -> None:
    got = split_pieces(name, text)
    if name in TIKTOKEN_NAMES and not disputed().isdisjoint(text):
        want, oracle = tiktoken_spans(name, text), "tiktoken"
    elif name in HF_NAMES and not disputed().isdisjoint(text):
        want, oracle = hf_spans(name, text), "tokenizers"
    else:
        want, oracle = regex_spans(name, text), "regex"
    assert got == want, describe(text, got, want, oracle)


def without_disputed(text: str) -> str:
    return "".join(c for c in text if c not in disputed())


# ---- hand-written corners ----------------------------------------------------------------------

CORNERS = [
    # gpt2: case-sensitive contractions; a space joins the next non-space run; \s+(?!\S).
    ("gpt2", "Hello world", ["Hello", " world"]),
    ("gpt2", "I'm he's we'LL", ["I", "'m", " he", "'s", " we", "'", "LL"]),
    ("gpt2", "it'S it'ſ", ["it", "'", "S", " it", "'", "ſ"]),
    ("gpt2", "'''s x", ["'''", "s", " x"]),
    ("gpt2", "a   b", ["a", "  ", " b"]),
    ("gpt2", "a \n b", ["a", " \n", " b"]),
    ("gpt2", "\n\nx", ["\n", "\n", "x"]),
    ("gpt2", "x  ", ["x", "  "]),
    ("gpt2", "  123 4567", [" ", " 123", " 4567"]),
    ("gpt2", " !?x", [" !?", "x"]),
    # cl100k: (?i) contractions (incl. U+017F), one non-letter prefix, digits by three.
    ("cl100k_base", "'S 'ſ 'Ll 'sam", ["'S", " '", "ſ", " '", "Ll", " '", "sam"]),
    ("cl100k_base", "it'S it'ſ WE'LL", ["it", "'S", " it", "'ſ", " WE", "'LL"]),
    ("cl100k_base", "'sam", ["'s", "am"]),
    ("cl100k_base", "\tfoo \u0301bar \u0301", ["\tfoo", " \u0301", "bar", " \u0301"]),  # a mark is not \p{L}
    ("cl100k_base", "\u0301bar", ["\u0301bar"]),
    ("cl100k_base", "1234567", ["123", "456", "7"]),
    ("cl100k_base", "x\n\n  y", ["x", "\n\n", " ", " y"]),
    ("cl100k_base", "!!\n\nx", ["!!\n\n", "x"]),
    ("cl100k_base", "!!abc", ["!!", "abc"]),
    ("cl100k_base", "x  \n ", ["x", "  \n "]),
    ("cl100k_base", "x \n y", ["x", " \n", " y"]),
    ("cl100k_base", "a\t\tb", ["a", "\t", "\tb"]),
    ("cl100k_base", "a\t1", ["a", "\t", "1"]),
    # o200k: backtracking of [Up]*[Lo]+ over Lm/Lo/M, marks, contractions, [\r\n/]*.
    ("o200k_base", "中A", ["中", "A"]),
    ("o200k_base", "ʰAb", ["ʰAb"]),
    ("o200k_base", "ʰA", ["ʰ", "A"]),
    ("o200k_base", "A中BC d", ["A中", "BC", " d"]),
    ("o200k_base", "HelloWORLDFoo", ["Hello", "WORLDFoo"]),
    ("o200k_base", "ǅemo", ["ǅemo"]),
    ("o200k_base", "HELLO'S he'LL it'ſ", ["HELLO'S", " he'LL", " it'ſ"]),
    ("o200k_base", "\u0301's", ["\u0301's"]),
    ("o200k_base", "\u0301\u0301A", ["\u0301\u0301", "A"]),
    ("o200k_base", "!\u0301", ["!\u0301"]),
    ("o200k_base", "!!\u0301", ["!!\u0301"]),
    ("o200k_base", "'s", ["'s"]),
    ("o200k_base", "1234", ["123", "4"]),
    ("o200k_base", "a\n  ", ["a", "\n", "  "]),
    ("o200k_base", "x  \n\n  y", ["x", "  \n\n", " ", " y"]),
    ("o200k_base", "!\n/x", ["!\n/", "x"]),
    # o200k's ASCII word fast path, and where it hands over to the general one.
    ("o200k_base", "ABé ABÉx Aʰ", ["ABé", " ABÉx", " Aʰ"]),
    ("o200k_base", "-Hello \"HELLO'S THE中 abc中d", ["-Hello", ' "', "HELLO'S", " THE中", " abc中d"]),
    ("o200k_base", "ab\u0301c x\rAb A1", ["ab\u0301c", " x", "\r", "Ab", " A", "1"]),
    ("o200k_base", " \tA", [" ", "\tA"]),
    ("o200k_base", "\tA'S", ["\tA'S"]),
    ("o200k_base", "a\t1", ["a", "\t", "1"]),
    # \w+|[^\w\s]+ and \S+ skip whitespace.
    ("wordpunct", "Hello, world! a_b-c", ["Hello", ",", "world", "!", "a_b", "-", "c"]),
    ("wordpunct", "e\u0301t\u00e9 \u00a0 ½²", ["e\u0301t\u00e9", "½²"]),
    ("whitespace", " a b\u3000\u00a0c\x1cd  ", ["a", "b", "c\x1cd"]),
]


@pytest.mark.parametrize(("name", "text", "expected"), CORNERS)
def test_corner_cases(name: str, text: str, expected: List[str]) -> None:
    data = text.encode("utf-8")
    assert [data[s:e].decode("utf-8") for s, e in split_pieces(name, text)] == expected
    assert regex.findall(PATTERNS[name], text) == expected  # the expectation itself is right


def test_disputed_corner() -> None:
    # U+0295 is Ll for tiktoken (Unicode 16) and Lo for regex (Unicode 18): o200k differs.
    if "\u0295" not in disputed():
        pytest.skip("regex and tiktoken now agree on U+0295")
    assert tiktoken_spans("o200k_base", "\u0295Ab") == [(0, 2), (2, 4)]
    assert split_pieces("o200k_base", "\u0295Ab") == [(0, 2), (2, 4)]


def test_empty_and_api() -> None:
    for name in NAMES:
        assert split_pieces(name, "") == []
    for alias, name in ALIASES.items():
        assert split_pieces(alias, "a b's") == split_pieces(name, "a b's")
    with pytest.raises(ValueError, match="unknown pre-tokenizer pattern"):
        split_pieces("gpt3", "x")
    text = "héllo wörld 中文 😀"
    for name in NAMES:
        assert split_pieces(name, text.encode("utf-8")) == split_pieces(name, text)
    with pytest.raises(ValueError, match="offset 3"):
        split_pieces("gpt2", b"abc\xff")
    with pytest.raises(ValueError, match="offset 1"):
        split_pieces("gpt2", b"a\xe4\xb8")  # truncated
    with pytest.raises(ValueError, match="offset 0"):
        split_pieces("gpt2", b"\xed\xa0\x80")  # a surrogate
    with pytest.raises(UnicodeEncodeError):
        split_pieces("gpt2", "a\ud800b")


@settings(max_examples=300, deadline=None)
@given(data=st.one_of(st.binary(), tricky_text.map(lambda t: t.encode("utf-8")), st.lists(st.sampled_from(
    [b"a", b" ", b"\xe4\xb8\xad", b"\xe4\xb8", b"\xc5", b"\xff", b"\x80", b"\xed\xa0\x80", b"\xc0\xaf",
     b"\xf4\x90\x80\x80", b"\xf0\x9f\x98\x80", b"\xf0\x9f"])).map(b"".join)))
def test_bytes_input_is_validated(data: bytes) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        with pytest.raises(ValueError, match=f"invalid UTF-8 at byte offset {e.start}$"):
            split_pieces("o200k_base", data)
    else:
        assert split_pieces("o200k_base", data) == split_pieces("o200k_base", text)


# ---- generated text ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=tricky_text)
def test_tricky_text_matches_regex(name: str, text: str) -> None:
    check(name, text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mixed_text)
def test_unicode_text_matches_regex(name: str, text: str) -> None:
    if name in TIKTOKEN_NAMES:
        text = without_disputed(text)  # those go to tiktoken below (it is slow per text)
    check(name, text)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(tricky_text, mixed_text))
def test_gpt2_forms_agree(text: str) -> None:
    # tiktoken's possessive form of the GPT-2 pattern splits as the original does (and any other
    # equivalent spelling patterns.py lists as its named pattern does).
    for source, name in EQUIVALENTS:
        assert regex_spans(name, text) == regex_spans(name, text, regex.compile(source))


@functools.lru_cache(maxsize=None)
def disputed_sample() -> List[str]:
    rng = random.Random(0)
    chars = sorted(disputed())
    return ["\u0295"] + rng.sample(chars, min(40, len(chars)))


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_matches_tiktoken(name: str, data: st.DataObject) -> None:
    alphabet = TRICKY + disputed_sample()
    text = "".join(data.draw(st.lists(st.sampled_from(alphabet), max_size=12)))
    got = split_pieces(name, text)
    assert got == tiktoken_spans(name, text), describe(text, got, tiktoken_spans(name, text), "tiktoken")


# ---- pathological inputs -------------------------------------------------------------------------------

MB = 1 << 20
PATHOLOGICAL = {
    "spaces": " " * MB,
    "spaces+x": " " * MB + "x",
    "letters": "a" * MB,
    "upper": "A" * MB,
    "apostrophes": "'" * MB,
    "contractions": "'s" * (MB // 2),
    "digits": "1" * MB,
    "crlf": "\r\n" * (MB // 2),
    "crlf+x": "\r\n" * (MB // 2) + "x",
    "space-newline": " \n" * (MB // 2) + "x",
    "newline-spaces": "\n" + " " * MB + "x",
    "lo-lu": "中A" * (MB // 4),
    "lm-lu": "ʰA" * (MB // 3),
    "marks": "\u0301" * (MB // 2),
    "lu-mark": "A\u0301" * (MB // 3),
    "punct-newline": "!\n/" * (MB // 3),
    "cjk": "中" * (MB // 3),
    "mixed": "".join(random.Random(7).choice(TRICKY) for _ in range(MB // 3)),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", list(PATHOLOGICAL))
def test_pathological_megabyte(name: str, kind: str) -> None:
    """A megabyte of an input that makes backtracking regexes quadratic is split (a quadratic
    scanner would not finish). No clock is read: the growth of the work is counted in
    instructions by tests/test_pathological.py::test_linear_work."""
    text = PATHOLOGICAL[kind]
    spans = split_pieces(name, text)
    if spans and name in TIKTOKEN_NAMES:
        assert spans[0][0] == 0 and spans[-1][1] == len(text.encode("utf-8"))
    check(name, text[:20000] + text[-3:])


# ---- real corpora ------------------------------------------------------------------------------


def shared_data() -> Path:
    env = os.environ.get("CIYUAN_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared" / "data"


def read_corpus(rel: str, limit: Optional[int] = None) -> str:
    path = shared_data() / rel
    if not path.is_file():
        pytest.skip(f"{path} is absent (set CIYUAN_SHARED_DATA to the shared data directory)")
    data = path.read_bytes()
    if limit is not None:
        data = data[:limit]
    return data.decode("utf-8", "ignore")  # a cut may split the last character


CORPORA = [
    pytest.param("corpora/en/taylorswift.txt", None, id="taylorswift"),
    pytest.param("corpora/multi/emoji.txt", None, id="emoji"),
    pytest.param("corpora/en/tinyshakespeare.txt", None, id="tinyshakespeare", marks=pytest.mark.slow),
    pytest.param("corpora/zh/jinyong_16novels.txt", 2 * MB, id="jinyong-2MB", marks=pytest.mark.slow),
    pytest.param("corpora/multi/udhr_sample.txt", None, id="udhr_sample", marks=pytest.mark.slow),
    pytest.param("corpora/multi/wagahaiwa.ja.txt", None, id="wagahaiwa", marks=pytest.mark.slow),
]


def check_corpus(name: str, text: str) -> None:
    if name in TIKTOKEN_NAMES and not disputed().isdisjoint(text):
        pytest.fail("the corpus holds code points regex and tiktoken disagree on; compare per line instead")
    got = split_pieces(name, text)
    want = regex_spans(name, text)
    assert got == want, describe(text, got, want, "regex")
    pattern = COMPILED[name]
    for lineno, line in enumerate(text.splitlines(keepends=True), 1):
        got = split_pieces(name, line)
        want = regex_spans(name, line, pattern)
        assert got == want, f"line {lineno}: " + describe(line, got, want, "regex")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("rel", "limit"), CORPORA)
def test_corpus_matches_regex(rel: str, limit: Optional[int], name: str) -> None:
    check_corpus(name, read_corpus(rel, limit))


@functools.lru_cache(maxsize=None)
def tiktoken_encoding(name: str):
    pytest.importorskip("tiktoken")
    import tiktoken.load

    base = shared_data() / "tokenizers"
    if name == "gpt2":
        vocab, encoder = base / "gpt2" / "vocab.bpe", base / "gpt2" / "encoder.json"
        if not (vocab.is_file() and encoder.is_file()):
            pytest.skip(f"{vocab} is absent")
        ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(str(vocab), str(encoder))
    else:
        path = base / "tiktoken" / f"{name}.tiktoken"
        if not path.is_file():
            pytest.skip(f"{path} is absent")
        ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    return tiktoken.Encoding(name, pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens={})


@pytest.mark.slow
@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
@pytest.mark.parametrize(("rel", "limit"), CORPORA)
def test_corpus_ids_match_tiktoken(rel: str, limit: Optional[int], name: str) -> None:
    """Encoding each of our pieces on its own gives tiktoken's ids for the whole text."""
    text = read_corpus(rel, limit)
    enc = tiktoken_encoding(name)
    data = text.encode("utf-8")
    ours = []
    for s, e in split_pieces(name, text):
        ours.extend(enc._encode_single_piece(data[s:e]))
    assert ours == enc.encode_ordinary(text)


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_disputed_code_points_ids_match_tiktoken(name: str) -> None:
    """Every disputed code point, in contexts where its class decides the split."""
    enc = tiktoken_encoding(name)
    contexts = ["a{}b ", "A{}1 ", " {}\n", "{}{}'s ", "中{}A ", "{}A", " {}a", "!{}\n"]
    text = "".join(ctx.format(c, c) for c in sorted(disputed()) for ctx in contexts)
    data = text.encode("utf-8")
    ours = []
    for s, e in split_pieces(name, text):
        ours.extend(enc._encode_single_piece(data[s:e]))
    assert ours == enc.encode_ordinary(text)
