"""The WordLevel and CharLevel decoders."""

from ciyuan import decoders


def test_word_and_char_level_decoders():
    assert decoders.WordLevel().decode([b"hello", b"world"]) == "hello world"
    assert decoders.CharLevel().decode(["词".encode(), "元".encode()]) == "词元"
