"""Every SIMD level of the pre-tokenizer scanners splits exactly like the scalar level and like
``regex.findall`` (and encodes to tiktoken's ids).

The scanners pick a level at first use (``ciyuan._core.simd_level()``); the environment variable
``CIYUAN_SIMD`` caps it (checked in a subprocess below) and ``ciyuan._core._set_simd_level``
switches it inside this process, which is how each level available on the machine running the
tests is held against the others. Levels the CPU lacks are skipped, never faked.

The block scanners (sse2 and up) classify 64-byte windows; their corners are pieces that cross
the window's halves, runs that reach its last byte, texts that end inside it, and non-ASCII
characters next to ASCII runs. The generated texts below are long enough (up to a few hundred
characters) and start at random offsets so that every piece boundary meets every window
position.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan import _core
from ciyuan._core import split_pieces
from tests.conftest import SHARED_DATA, read_prefix, shared
from tests.pre_tokenizers.test_patterns import COMPILED, NAMES, TRICKY, disputed, regex_spans

Span = Tuple[int, int]
ALL_LEVELS = ["scalar", "sse2", "sse42", "avx2", "avx512"]
BEST = _core.best_simd_level()
LEVELS = ALL_LEVELS[: ALL_LEVELS.index(BEST) + 1]  # the levels this CPU runs
MB = 1 << 20


@pytest.fixture(autouse=True)
def restore_level() -> Iterator[None]:
    before = _core.simd_level()
    yield
    _core._set_simd_level(before)


def at_each_level(name: str, text) -> Dict[str, List[Span]]:
    out = {}
    for level in LEVELS:
        assert _core._set_simd_level(level) == level
        out[level] = split_pieces(name, text)
    return out


def first_difference(got: List[Span], want: List[Span]) -> int:
    return next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))


def assert_levels_agree(name: str, text, want: List[Span], oracle: str) -> None:
    data = text.encode("utf-8") if isinstance(text, str) else text
    for level, got in at_each_level(name, text).items():
        if got != want:
            i = first_difference(got, want)
            lo, hi = max(0, i - 2), i + 3
            pytest.fail(f"{name} at level {level} differs from {oracle} at piece {i}: "
                        f"{[data[s:e] for s, e in got[lo:hi]]!r} vs {[data[s:e] for s, e in want[lo:hi]]!r}")


# ---- the level itself -----------------------------------------------------------------------


def test_levels_and_names() -> None:
    assert BEST in ALL_LEVELS and _core.simd_level() in ALL_LEVELS
    for level in ALL_LEVELS:
        got = _core._set_simd_level(level)
        # Asking for more than the CPU has gives the best it has.
        assert got == (level if level in LEVELS else BEST)
        assert _core.simd_level() == got
    with pytest.raises(ValueError, match="unknown SIMD level 'avx9'"):
        _core._set_simd_level("avx9")


def level_in_subprocess(value: str) -> str:
    env = dict(os.environ, CIYUAN_SIMD=value)
    code = "from ciyuan import _core; print(_core.simd_level())"
    return subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_environment_variable_caps_the_level() -> None:
    for level in ALL_LEVELS:
        assert level_in_subprocess(level) == (level if level in LEVELS else BEST)
    assert level_in_subprocess("no-such-level") == BEST  # unknown names are ignored


def test_environment_variable_forced_split_is_identical() -> None:
    text = "It's 2024:\r\n  x = [1, 2, 3]  # café 中文 \u00a0\u3000 don't   \n\n"
    code = ("import json, sys; from ciyuan._core import split_pieces; "
            "print(json.dumps([split_pieces(n, sys.argv[1]) for n in sys.argv[2:]]))")
    results = set()
    for level in LEVELS:
        env = dict(os.environ, CIYUAN_SIMD=level)
        out = subprocess.run([sys.executable, "-c", code, text, *NAMES], env=env, check=True,
                             capture_output=True, text=True).stdout
        results.add(out)
    assert len(results) == 1
    assert results.pop().strip() == str([[list(s) for s in split_pieces(n, text)] for n in NAMES]).replace("'", '"')


# ---- generated text -------------------------------------------------------------------------

# ASCII-heavy pieces around every decision of the block scanners, plus the non-ASCII characters
# that can continue an ASCII run (letters, digits, spaces, marks, case-folding to s/k).
ASCII_BITS = [
    "a", "Z", "the", "The", "THE", "HeLLo", "x" * 40, "A" * 35, "Ab" * 20, "_", "__init__",
    " ", "  ", " " * 33, "\t", "\n", "\r", "\r\n", "\n\n", " \n", "\n ", "\x0b", "\x0c", " \r\n ",
    "0", "12", "123", "1234", "9" * 40, "'", "'s", "'S", "'t", "'re", "'VE", "'ll", "'Ll", "'d",
    "'m", "'x", "''", "!", ".", ",", "/", "//", "-", "--", "(", ")", "\"", "#", "...", "!" * 40,
    "\x00", "\x1c", "\x7f",
]
NON_ASCII_BITS = ["é", "É", "中", "ſ", "\u212a", "\u0301", "\u00a0", "\u3000", "\u2028", "\x85", "½", "\u0663",
                  "²", "ʰ", "ǅ", "—", "“", "😀", "\ufffd"]
piece_text = st.lists(
    st.one_of(st.sampled_from(ASCII_BITS), st.sampled_from(ASCII_BITS), st.sampled_from(NON_ASCII_BITS),
              st.sampled_from(TRICKY)),
    max_size=120,
).map("".join)
# Shifts the text against the 64-byte windows.
offset_text = st.tuples(st.integers(0, 70), piece_text).map(lambda t: "a b" * (t[0] // 3) + " " * (t[0] % 3) + t[1])


def check_text(name: str, text: str) -> None:
    # regex and tiktoken disagree on a few code points (see test_patterns); the generated text
    # holds none of them, but the scalar level is the oracle there anyway.
    if disputed().isdisjoint(text):
        want, oracle = regex_spans(name, text), "regex"
    else:
        _core._set_simd_level("scalar")
        want, oracle = split_pieces(name, text), "the scalar level"
    assert_levels_agree(name, text, want, oracle)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=offset_text)
def test_generated_text_matches_regex_at_every_level(name: str, text: str) -> None:
    check_text(name, text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_any_text_matches_regex_at_every_level(name: str, text: str) -> None:
    check_text(name, text)


# The whole-window path (all piece starts of an ASCII window from its masks at once) decides
# each boundary by a local rule; these bits meet each rule's corner: contractions (chained, in
# any case, after a space or punctuation, ending a window), a lone punctuation or space before
# letters, camel case (o200k), newline runs after punctuation (eaten by [\r\n]* / [\r\n/]*),
# whitespace runs with and without newlines before each class, digit runs of every length mod 3,
# curly quotes and dashes inside ASCII text, and other non-ASCII characters right after ASCII runs
# (where the window must stop three bytes early).
WINDOW_BITS = [
    "a", "s", "t", "l", "e", "r", "v", "d", "m", "S", "LL", "Ve", "fooBar", "HTMLParser", "x" * 9,
    "'", "'s", "'S", "'t", "'ll", "'lL", "'re", "'ve", "'d", "'m", "'x", "'s's", "n't", "'sa",
    " ", "  ", "\t", " \t", "\n", "\r\n", "\n\n", " \n ", "\n  ", "\x0b", "\x0c", " " * 5,
    ".", ",", "/", ".\n/", "\n/", "(", "\"", "--", "1", "12", "123", "1234", "12345", "1" * 7,
]
# The characters the window takes in: Latin-1 letters (capital and small: o200k's classes) and
# common punctuation (curly quotes, dashes, the ellipsis); their neighbours that it must not take
# (the signs U+00D7 U+00F7, U+00AA (Lo), U+00B5, U+00B2 (No), no-break space, U+2028 (a space),
# U+201A, U+2020); and characters that stop the window.
WINDOW_NON_ASCII = ["é", "É", "ß", "ÿ", "À", "\u00d7", "\u00f7", "\u00aa", "\u00b5", "\u00b2", "\u00a0",
                    "\u201c", "\u201d", "\u2018", "\u2019", "\u2013", "\u2014", "\u2026", "\u2028", "\u201a",
                    "\u2020", "中", "ſ", "\u0663", "\u0301"]
window_text = st.tuples(
    st.integers(0, 70),
    st.lists(st.sampled_from(WINDOW_BITS), min_size=20, max_size=160),
    st.lists(st.tuples(st.integers(0, 159), st.sampled_from(WINDOW_NON_ASCII)), max_size=6),
).map(lambda t: " " * (t[0] % 5) + "ab " * (t[0] // 5)
      + "".join(b + "".join(c for k, c in t[2] if k == i) for i, b in enumerate(t[1])))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=window_text)
def test_window_rules_match_regex_at_every_level(name: str, text: str) -> None:
    check_text(name, text)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("run", [" ", "a", "A", "1", "!", "\n", "\r\n", " \n", "é", "'s"])
def test_long_runs_at_every_offset(name: str, run: str) -> None:
    # A run of one class that starts, crosses and ends at each position of the window.
    for lead in range(0, 70, 7):
        for length in (1, 2, 31, 32, 33, 63, 64, 65, 100):
            text = "x" * lead + " " + run * length + " y."
            assert_levels_agree(name, text, regex_spans(name, text), "regex")


@pytest.mark.parametrize("name", NAMES)
def test_invalid_utf8_is_rejected_the_same(name: str) -> None:
    for data in (b"abc\xff", b"a\xe4\xb8", b"\xed\xa0\x80", b"x" * 100 + b"\x80"):
        messages = set()
        for level in LEVELS:
            _core._set_simd_level(level)
            with pytest.raises(ValueError) as err:
                split_pieces(name, data)
            messages.add(str(err.value))
        assert len(messages) == 1
    good = ("héllo wörld 中文 😀 " * 20).encode("utf-8")
    assert_levels_agree(name, good, split_pieces(name, good.decode("utf-8")), "the str form")


# ---- real corpora ---------------------------------------------------------------------------

SMALL_CORPORA = ["corpora/en/taylorswift.txt", "corpora/multi/emoji.txt"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("rel", SMALL_CORPORA)
def test_small_corpora_lines_match_regex_at_every_level(name: str, rel: str) -> None:
    text = shared(*rel.split("/")).read_text("utf-8")
    pattern = COMPILED[name]
    assert_levels_agree(name, text, regex_spans(name, text, pattern), "regex")
    for line in text.splitlines(keepends=True):
        assert_levels_agree(name, line, regex_spans(name, line, pattern), "regex")


def python_source(limit: int) -> str:
    """The running Python's standard library .py files (code-like text; nothing to download)."""
    import sysconfig

    out: List[str] = []
    size = 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if "test" in path.parts or "site-packages" in path.parts:
            continue
        try:
            chunk = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        out.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return "".join(out)


def corpus_files() -> List[Path]:
    root = SHARED_DATA / "corpora"
    return sorted(p for p in root.rglob("*.txt") if p.is_file()) if root.is_dir() else []


def chunks(text: str, size: int) -> Iterator[str]:
    """Pieces of about `size` characters, cut after a newline."""
    start = 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_corpus_at_every_level_matches_scalar(name: str) -> None:
    """Every file under corpora/ (the big ones' first 4 MB) and 2 MB of Python source: whole
    chunks and every line, each level against the scalar level (which test_patterns holds
    against regex and tiktoken)."""
    texts = {str(p): read_prefix(p, 4 * MB) for p in corpus_files()}
    texts["python-stdlib"] = python_source(2 * MB)
    assert len(texts) > 1
    for label, text in texts.items():
        for chunk in chunks(text, 256 * 1024):
            _core._set_simd_level("scalar")
            want = split_pieces(name, chunk)
            assert_levels_agree(name, chunk, want, f"scalar ({label})")
        lines = text.splitlines(keepends=True)[:20000]
        _core._set_simd_level("scalar")
        want_lines = [split_pieces(name, line) for line in lines]
        for level in LEVELS[1:]:
            _core._set_simd_level(level)
            for line, want in zip(lines, want_lines):
                assert split_pieces(name, line) == want, f"{label} at {level}: {line!r}"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "llama3", "qwen2"])
def test_python_source_matches_regex_at_every_level(name: str) -> None:
    text = python_source(MB // 2)
    text = "".join(c for c in text if c not in disputed())
    assert_levels_agree(name, text, regex_spans(name, text), "regex")


# ---- the whole pipeline: ids --------------------------------------------------------------------

SAMPLES = [
    ("corpora/en/gutenberg_100mb.txt", 200_000),
    ("corpora/zh/jinyong_16novels.txt", 200_000),
    ("corpora/multi/udhr_sample.txt", 300_000),
    ("corpora/multi/emoji.txt", 100_000),
]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_ids_match_tiktoken_at_every_level(name: str, ciyuan_tokenizers, tiktoken_encodings) -> None:
    ours, theirs = ciyuan_tokenizers[name], tiktoken_encodings[name]
    texts = [read_prefix(shared(*rel.split("/")), limit) for rel, limit in SAMPLES]
    texts.append(python_source(200_000))
    for text in texts:
        want = theirs.encode_ordinary(text)
        for level in LEVELS:
            _core._set_simd_level(level)
            got = ours.encode_ids(text)
            assert got == want, f"{name} at {level}: first difference at token {first_difference(got, want)}"


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_ids_match_tiktoken_at_every_level_fast(name: str, ciyuan_tokenizers, tiktoken_encodings) -> None:
    ours, theirs = ciyuan_tokenizers[name], tiktoken_encodings[name]
    text = read_prefix(shared("corpora", "en", "taylorswift.txt"), 60_000) + "\r\n  x = 1234567  # ok\n\n"
    want = theirs.encode_ordinary(text)
    for level in LEVELS:
        _core._set_simd_level(level)
        assert ours.encode_ids(text) == want, level


@pytest.mark.parametrize("name", NAMES)
def test_count_pieces_counts_the_split(name: str) -> None:
    # The benchmark entry point (benchmarks/pretokenize_levels.py): the encoder's batches of 256.
    text = read_prefix(shared("corpora", "en", "taylorswift.txt"), 60_000) + "  x = 12345 \u201cdon't\u201d\n"
    data = text.encode("utf-8")
    for level in LEVELS:
        _core._set_simd_level(level)
        assert _core._count_pieces(name, data, 2) == len(split_pieces(name, text)), level
    with pytest.raises(ValueError, match="invalid UTF-8 at byte offset 1"):
        _core._count_pieces(name, b"a\xff")
