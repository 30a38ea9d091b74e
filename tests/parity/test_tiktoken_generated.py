"""Ids identical to tiktoken on generated text; round trips and offsets everywhere."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ENCODINGS

# Text biased towards what the splitting rules care about, plus anything Unicode has.
TRICKY = list("'sStTdDmMlLvVrReE ſK\t\n\r\x0b\x0c\x85\u00a0\u2028\u3000/0123456789١٢")
TRICKY += ["a", "Z", "é", "\u0301", "ǅ", "ʰ", "中", "文", "。", "，", "😀", "\u200d", "ß", "İ", "!", "?", "."]
texts = st.one_of(
    st.text(),
    st.text(alphabet=st.sampled_from(TRICKY), max_size=60),
    st.lists(st.sampled_from(TRICKY + ["hello", " world", "'ll", "  ", "\r\n", "123456"]), max_size=30).map("".join),
)

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("name", ENCODINGS)
@SETTINGS
@given(text=texts)
def test_same_ids_as_tiktoken(ciyuan_tokenizers, tiktoken_encodings, name, text):
    tok, enc = ciyuan_tokenizers[name], tiktoken_encodings[name]
    expected = enc.encode(text, disallowed_special=())
    encoding = tok.encode(text, disallowed_special=())
    assert encoding.ids == expected
    # tiktoken turns lone surrogates into U+FFFD; so do we, one character for one.
    clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert tok.decode(encoding.ids) == clean
    check_offsets(tok, clean, encoding)


def check_offsets(tok, text, encoding) -> None:
    """Offsets cover the text in order, and each token's bytes come from its span."""
    offsets = encoding.offsets
    assert len(offsets) == len(encoding.ids)
    end = 0
    for token_id, (s, e) in zip(encoding.ids, offsets):
        assert 0 <= s < e <= len(text)
        assert s <= end  # no gaps: byte-level pieces are contiguous
        assert s >= end - 1  # at most one shared character (a character split over tokens)
        assert tok.decode_bytes([token_id]) in text[s:e].encode("utf-8")
        end = e
    assert end == len(text)


# Words that are rarely tokens, so that they are merged (not found whole nor in the piece cache):
# letters of little-used combinations, runs of one letter (ties between equal pairs go leftmost),
# two-byte characters beside ASCII, and lengths on both sides of the short-piece merge's 8 and 16
# bytes, at the start, in the middle and at the very end of the text.
RARE_LETTERS = list("qxzjkvwyaeouhQXZJaaaa") + ["é", "ñ", "ß", "ж", "ю", "ø", "中"]
rare_words = st.lists(st.sampled_from(RARE_LETTERS), min_size=1, max_size=20).map("".join)


@pytest.mark.parametrize("name", ENCODINGS)
@SETTINGS
@given(words=st.lists(rare_words, min_size=1, max_size=12), sep=st.sampled_from([" ", "  ", "\n", ", "]))
def test_rare_words_merge_as_tiktoken(ciyuan_tokenizers, tiktoken_encodings, name, words, sep):
    tok, enc = ciyuan_tokenizers[name], tiktoken_encodings[name]
    text = sep.join(words)
    expected = enc.encode_ordinary(text)
    assert tok.encode_ids(text, disallowed_special=()) == expected
    encoding = tok.encode(text, disallowed_special=())
    assert encoding.ids == expected
    check_offsets(tok, text, encoding)


@pytest.mark.parametrize("name", ENCODINGS)
def test_short_pieces_met_again_as_tiktoken(ciyuan_tokenizers, tiktoken_encodings, name):
    """Short pieces that are not tokens, met again: from the thread's short-piece cache.

    More of them than the cache holds (two to a set, the older one evicted), pieces of more ids
    than a cache entry keeps, and pieces that differ only in trailing NUL bytes (their keys are
    zero-padded); read once in order and twice shuffled, every time with tiktoken's ids.
    """
    tok, enc = ciyuan_tokenizers[name], tiktoken_encodings[name]
    rng = random.Random(15)
    letters, marks, wide = "qxzjkvwyQXZ", "^`~|\\{}<>\x00", "ʬʭʮʯж中"
    pieces = [" " + "".join(rng.choices(letters, k=rng.randint(2, 7))) for _ in range(40_000)]
    pieces += ["".join(rng.choices(marks, k=rng.randint(1, 8))) + " " for _ in range(4_000)]
    pieces += [" " + "".join(rng.choices(wide, k=rng.randint(1, 2))) for _ in range(4_000)]
    for _ in range(3):
        text = "".join(pieces)
        assert tok.encode_ids(text, disallowed_special=()) == enc.encode_ordinary(text)
        rng.shuffle(pieces)


@pytest.mark.parametrize("name", ENCODINGS)
def test_pieces_of_many_tokens_met_again_as_tiktoken(ciyuan_tokenizers, tiktoken_encodings, name):
    """Pieces of 7 to 24 tokens, met again: their tokens live in the thread's long-piece records.

    Indented lines (gpt2 has no token of several spaces: a space each) and runs of marks, ASCII
    and not, short and long; more distinct ones than there are records (16K, handed out in
    turn, so that an entry's record has gone to another piece when it is met again); read three
    times in new orders, as ids, as an array and with offsets, every time with tiktoken's ids.
    """
    tok, enc = ciyuan_tokenizers[name], tiktoken_encodings[name]
    rng = random.Random(16)
    marks, wide = "^`~|\\{}<>$%&*+=@#", "¤¦§¨©ª«¬®¯°±²³´µ¶·¸¹º»¼½¾¿"
    items = ["\n" + " " * k + "x" for k in range(1, 26)] * 40
    items += [" " + "".join(rng.choices(marks, k=rng.randint(6, 24))) + "\n" for _ in range(24_000)]
    items += [" " + "".join(rng.choices(wide, k=rng.randint(4, 11))) + "\n" for _ in range(3_000)]
    many = sum(len(enc.encode_ordinary(item)) > 6 for item in set(items))
    assert many > 17_000  # more than the records: some are met again after theirs went elsewhere
    for round_ in range(3):
        text = "".join(items)
        expected = enc.encode_ordinary(text)
        assert tok.encode_ids(text, disallowed_special=()) == expected
        assert tok.encode_ids(text, disallowed_special=(), as_array=True).tolist() == expected
        if round_ == 2:
            encoding = tok.encode(text, disallowed_special=())
            assert encoding.ids == expected
            check_offsets(tok, text, encoding)
        rng.shuffle(items)
