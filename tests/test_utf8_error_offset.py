"""The native UTF-8 check (``_core.utf8_error_offset``, used on every chunk the trainers and the
Ray reader take in) against Python's own decoder: the same first invalid byte, on text mixing
ASCII runs, characters of two to four bytes and broken sequences."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import _core

# Runs of ASCII long and short (the checker's 8-byte steps), characters of every length, and
# bytes that break a sequence: stray continuations, truncated leads, overlongs, surrogates.
PARTS = ["a", "hello world, ", "x" * 17, "\n", "é", "“", "—", "中文", "😀", "ж"]
BROKEN = [b"\x80", b"\xbf", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xe4\xb8", b"\xf0\x9f\x98",
          b"\xf4\x90\x80\x80", b"\xff", b"\xc3"]
parts = st.one_of(st.sampled_from(PARTS).map(lambda s: s.encode()), st.sampled_from(BROKEN),
                  st.text(max_size=12).map(lambda s: s.encode("utf-8", "surrogatepass")))


def first_error(data: bytes) -> int:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start
    return len(data)


@settings(max_examples=600, deadline=None)
@given(st.lists(parts, max_size=40).map(b"".join))
def test_first_invalid_byte_as_python_finds_it(data):
    assert _core.utf8_error_offset(data) == first_error(data)


def test_ascii_after_a_three_byte_character_is_checked_to_its_end():
    line = ("“" + "a" * 100 + "”").encode()
    assert _core.utf8_error_offset(line * 50) == len(line) * 50
    assert _core.utf8_error_offset(line + b"a" * 61 + b"\xff" + line) == len(line) + 61
