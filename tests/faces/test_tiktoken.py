"""``Tokenizer.as_tiktoken()``: tiktoken's own test expectations (its tests/test_encoding.py and
tests/test_offsets.py, reimplemented), each run on tiktoken and on the face, plus both side by
side on corpus lines and hypothesis text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from tests.conftest import ENCODINGS, read_prefix, shared

tiktoken = pytest.importorskip("tiktoken")


@pytest.fixture(scope="module")
def pairs(ciyuan_tokenizers, tiktoken_encodings):
    """name -> (tiktoken's Encoding, ciyuan's face), for gpt2, cl100k_base and o200k_base."""
    return {name: (tiktoken_encodings[name], ciyuan_tokenizers[name].as_tiktoken()) for name in ENCODINGS}


def both(pairs, name):
    return pairs[name]


# -- tiktoken's test_encoding.py ----------------------------------------------------------------


def test_simple(pairs):
    for enc in both(pairs, "gpt2"):
        assert enc.encode("hello world") == [31373, 995]
        assert enc.decode([31373, 995]) == "hello world"
        assert enc.encode("hello <|endoftext|>", allowed_special="all") == [31373, 220, 50256]
    for enc in both(pairs, "cl100k_base"):
        assert enc.encode("hello world") == [15339, 1917]
        assert enc.decode([15339, 1917]) == "hello world"
        assert enc.encode("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]
    for name in ENCODINGS:
        for enc in both(pairs, name):
            for token in range(min(10_000, enc.max_token_value - 1)):
                assert enc.encode_single_token(enc.decode_single_token_bytes(token)) == token


def test_simple_repeated(pairs):
    expected = [[15], [405], [830], [2388], [20483], [10535], [24598], [8269], [10535, 830], [8269, 405],
                [8269, 830], [8269, 2388], [8269, 20483], [8269, 10535], [8269, 24598], [25645],
                [8269, 10535, 830]]
    for enc in both(pairs, "gpt2"):
        assert [enc.encode("0" * n) for n in range(1, 18)] == expected


def test_simple_regex(pairs):
    for enc in both(pairs, "cl100k_base"):
        assert enc.encode("rer") == [38149]
        assert enc.encode("'rer") == [2351, 81]
        assert enc.encode("today\n ") == [31213, 198, 220]
        assert enc.encode("today\n \n") == [31213, 27907]
        assert enc.encode("today\n  \n") == [31213, 14211]


def test_basic_encode(pairs):
    for enc in both(pairs, "gpt2"):  # r50k_base's ranks are GPT-2's
        assert enc.encode("hello world") == [31373, 995]
        assert enc.encode("") == []
    for enc in both(pairs, "cl100k_base"):
        assert enc.encode("hello world") == [15339, 1917]
        assert enc.encode(" \x850") == [220, 126, 227, 15]


def test_encode_surrogate_pairs(pairs):
    for enc in both(pairs, "cl100k_base"):
        assert enc.encode("👍") == [9468, 239, 235]
        assert enc.encode("\ud83d\udc4d") == [9468, 239, 235]  # a surrogate pair is its character
        assert enc.encode("\ud83d") == enc.encode("�")  # a lone surrogate is U+FFFD


@pytest.mark.parametrize("name", ENCODINGS)
def test_catastrophically_repetitive(pairs, name):
    for enc in both(pairs, name):
        for c in ["^", "0", "a", "'s", " ", "\n"]:
            big = c * 10_000
            assert enc.decode(enc.encode(big)) == big
            big = " " + big
            assert enc.decode(enc.encode(big)) == big
            big = big + "\n"
            assert enc.decode(enc.encode(big)) == big


@pytest.mark.parametrize("name", ENCODINGS)
def test_basic_roundtrip(pairs, name):
    for enc in both(pairs, name):
        values = ["hello", "hello ", "hello  ", " hello", " hello ", " hello  ", "hello world", "请考试我的软件！12345"]
        for value in values:
            assert enc.decode(enc.encode(value)) == value
            assert enc.decode(enc.encode_ordinary(value)) == value


@pytest.mark.parametrize("name", ENCODINGS)
def test_single_token_roundtrip(pairs, name):
    tik, face = both(pairs, name)
    assert face.n_vocab == tik.n_vocab and face.max_token_value == tik.max_token_value
    for enc in (tik, face):
        for token in range(enc.n_vocab):
            try:
                token_bytes = enc.decode_single_token_bytes(token)
            except KeyError:
                continue
            assert enc.encode_single_token(token_bytes) == token


def test_special_token(pairs):
    for enc in both(pairs, "cl100k_base"):
        eot = enc.encode_single_token("<|endoftext|>")
        assert eot == enc.eot_token
        fip = enc.encode_single_token("<|fim_prefix|>")
        fim = enc.encode_single_token("<|fim_middle|>")

        text = "<|endoftext|> hello <|fim_prefix|>"
        assert eot not in enc.encode(text, disallowed_special=())
        for disallowed in ("all", {"<|endoftext|>"}, {"<|fim_prefix|>"}):
            with pytest.raises(ValueError):
                enc.encode(text, disallowed_special=disallowed)
        with pytest.raises(ValueError):
            enc.encode(text)

        text = "<|endoftext|> hello <|fim_prefix|> there <|fim_middle|>"
        tokens = enc.encode(text, disallowed_special=())
        assert eot not in tokens and fip not in tokens and fim not in tokens
        for disallowed in ((), "all"):
            tokens = enc.encode(text, allowed_special="all", disallowed_special=disallowed)
            assert eot in tokens and fip in tokens and fim in tokens
        tokens = enc.encode(text, allowed_special={"<|fim_prefix|>"}, disallowed_special=())
        assert eot not in tokens and fip in tokens and fim not in tokens
        tokens = enc.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=())
        assert eot in tokens and fip not in tokens and fim not in tokens
        tokens = enc.encode(text, allowed_special={"<|fim_middle|>"}, disallowed_special=())
        assert eot not in tokens and fip not in tokens and fim in tokens


@pytest.mark.parametrize("name", ENCODINGS)
def test_batch_encode(pairs, name):
    for enc in both(pairs, name):
        text1, text2 = "hello world", "goodbye world"
        assert enc.encode_batch([text1]) == [enc.encode(text1)]
        assert enc.encode_batch([text1, text2]) == [enc.encode(text1), enc.encode(text2)]
        assert enc.encode_ordinary_batch([text1]) == [enc.encode_ordinary(text1)]
        assert enc.encode_ordinary_batch([text1, text2]) == [enc.encode_ordinary(text1), enc.encode_ordinary(text2)]


@given(text=st.text(max_size=80))
@settings(max_examples=150, deadline=None)
def test_hyp_roundtrip_and_ordinary(pairs, text):
    for name in ENCODINGS:
        tik, face = both(pairs, name)
        assert face.decode(face.encode(text)) == tik.decode(tik.encode(text))
        assert face.encode_ordinary(text) == face.encode(text, disallowed_special=()) == tik.encode_ordinary(text)


@given(batch=st.lists(st.text(max_size=40), max_size=6))
@settings(max_examples=60, deadline=None)
def test_hyp_batch_roundtrip(pairs, batch):
    tik, face = both(pairs, "cl100k_base")
    encoded = face.encode_batch(batch)
    assert encoded == [face.encode(t) for t in batch] == tik.encode_batch(batch)
    assert face.decode_batch(encoded) == [tik.decode(t) for t in encoded]


# -- tiktoken's test_offsets.py -----------------------------------------------------------------


def test_basic_offsets(pairs):
    for enc in both(pairs, "cl100k_base"):
        assert enc.decode_with_offsets([]) == ("", [])
        assert enc.decode_with_offsets(enc.encode("hello world")) == ("hello world", [0, 5])
        assert enc.decode_with_offsets(t for t in enc.encode("hello world")) == ("hello world", [0, 5])
        prompt = "hello world<|endoftext|> green cow"
        assert enc.decode_with_offsets(enc.encode(prompt, allowed_special="all")) == (prompt, [0, 5, 11, 24, 30])
        prompt = "我非常渴望与人工智能一起工作"
        assert enc.decode_with_offsets(enc.encode(prompt)) == (
            prompt, [0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10, 11, 12, 13])
        prompt = "நடிகர் சூர்யா"
        assert enc.decode_with_offsets(enc.encode(prompt)) == (
            prompt, [0, 0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 8, 8, 9, 9, 10, 11, 12, 12])
        assert enc.decode_with_offsets(enc.encode(" Ġ除")) == (" Ġ除", [0, 1])


def test_offsets_errors(pairs):
    for enc in both(pairs, "cl100k_base"):
        with pytest.raises(KeyError):
            enc.decode_with_offsets([enc.max_token_value + 1])
        with pytest.raises(UnicodeDecodeError):
            enc.decode_with_offsets([enc.encode_single_token(b"\x80")])


# -- the rest of the API, and the edges, side by side -------------------------------------------


def test_properties(pairs):
    for name in ENCODINGS:
        tik, face = both(pairs, name)
        assert face.name == tik.name == name
        assert repr(face) == repr(tik)
        assert face.special_tokens_set == tik.special_tokens_set
        assert face.eot_token == tik.eot_token
        assert face.token_byte_values() == tik.token_byte_values()
        assert face._special_tokens == tik._special_tokens
        assert face.is_special_token(face.eot_token) and not face.is_special_token(0)


def test_errors_like_tiktoken(pairs):
    tik, face = both(pairs, "cl100k_base")
    cases = [
        lambda e: e.decode([e.max_token_value + 1]),
        lambda e: e.decode([100261]),  # a hole between the ranks and the special tokens
        lambda e: e.decode_single_token_bytes(100261),
        lambda e: e.decode_bytes([-1]),
        lambda e: e.decode_bytes([1 << 40]),
        lambda e: e.decode_single_token_bytes(-1),
        lambda e: e.decode([1.5]),
        lambda e: e.encode_single_token("hello world"),
        lambda e: e.encode("hi <|foo|>", disallowed_special={"<|foo|>"}),
        lambda e: e.encode_single_token(b"\xff\xfe"),
    ]
    for case in cases:
        with pytest.raises(Exception) as theirs:
            case(tik)
        with pytest.raises(type(theirs.value)):
            case(face)
    # A name in allowed_special that is no special token is ignored.
    assert face.encode("hi <|endoftext|>", allowed_special={"<|foo|>"}, disallowed_special=()) == tik.encode(
        "hi <|endoftext|>", allowed_special={"<|foo|>"}, disallowed_special=())
    assert face.encode_batch(["a <|endoftext|>"], allowed_special="all") == [[64, 220, 100257]]
    assert face.decode([15339, 2, 128], errors="ignore") == tik.decode([15339, 2, 128], errors="ignore")
    assert face.decode_tokens_bytes([15339, 100257]) == tik.decode_tokens_bytes([15339, 100257])
    assert face.decode_bytes_batch([[15339], [1917]]) == tik.decode_bytes_batch([[15339], [1917]])
    np = pytest.importorskip("numpy")
    assert np.array_equal(face.encode_to_numpy("hello world"), tik.encode_to_numpy("hello world"))


@pytest.mark.parametrize("name", ENCODINGS)
def test_corpus_lines(pairs, name):
    tik, face = both(pairs, name)
    lines = read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 150_000).split("\n")
    lines += read_prefix(shared("corpora", "en", "taylorswift.txt"), 60_000).split("\n")
    assert face.encode_ordinary_batch(lines) == tik.encode_ordinary_batch(lines)
    assert [face.encode(t, allowed_special="all") for t in lines[:300]] == [
        tik.encode(t, allowed_special="all") for t in lines[:300]]


def test_face_of_a_trained_tokenizer_skips_the_template():
    from ciyuan.processors import TemplateProcessing
    from ciyuan.trainers import BpeTrainer

    tok = Tokenizer.train(["hello world"] * 5, BpeTrainer(270, byte_level=True, special_tokens=["<s>"]))
    tok.post_processor = TemplateProcessing(single="<s> $A", special_tokens=[("<s>", tok.special_tokens["<s>"])])
    enc = tok.as_tiktoken("mine")
    assert enc.name == "mine" and enc.encode("hello") == tok.encode("hello", add_special_tokens=False).ids
    assert enc.n_vocab == tok.vocab_size
