"""Batches of ids (`encode_batch_ids`): each text's UTF-8 is made by the encoding thread from
the str's own storage (ASCII, Latin-1, UCS-2 and UCS-4 strs), the caller builds the lists while
the other threads encode, and nothing of that may show: the ids equal one-by-one `encode`, at
any thread count, and errors are those of the lowest failing text."""

from __future__ import annotations

import ctypes

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ciyuan
from ciyuan.errors import DisallowedSpecialTokenError
from tests.conftest import shared

# One text of each storage width CPython picks, and their mixtures.
TEXTS = [
    "",
    "plain ASCII text",
    "café naïve déjà",                 # Latin-1: one byte a character, not UTF-8
    "词元 tokenization 分词",            # UCS-2
    "emoji 😀 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 outside the BMP",  # UCS-4
    "\x00\x7f\x80\xff" + "\u07ff\u0800\uffff" + "\U00010000\U0010ffff",  # UTF-8 length boundaries
    " " * 50,
]


@pytest.fixture(scope="module")
def cl100k(ciyuan_tokenizers):
    return ciyuan_tokenizers["cl100k_base"]


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_batch_ids_equal_single_encodes(cl100k, threads):
    texts = TEXTS * 40  # more texts than runs, so that the threads and the caller interleave
    expected = [cl100k.encode(t).ids for t in texts]
    assert cl100k.encode_batch_ids(texts, threads=threads) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40), max_size=70),
       st.integers(min_value=1, max_value=4))
def test_generated_batches(cl100k, texts, threads):
    # (Hypothesis also tries the strings it finds in the code: a special token's text is refused
    # by both, the batch as a whole.)
    refused = [t for t in texts if any(s in t for s in cl100k.special_tokens)]
    if refused:
        with pytest.raises(DisallowedSpecialTokenError):
            cl100k.encode(refused[0])
        with pytest.raises(DisallowedSpecialTokenError):
            cl100k.encode_batch_ids(texts, threads=threads)
        return
    assert cl100k.encode_batch_ids(texts, threads=threads) == [cl100k.encode(t).ids for t in texts]


def test_str_subclass_and_tuple_input(cl100k):
    class Text(str):
        pass

    assert cl100k.encode_batch_ids((Text("hello 词元"), "x")) == [cl100k.encode("hello 词元").ids, [87]]


def test_lone_surrogates_become_replacement_characters(cl100k):
    # No UTF-8 form: the Tokenizer reads them as U+FFFD, as for a single text.
    texts = ["fine", "bad \ud800 here", "词\udfff", "fine again"]
    expected = [cl100k.encode(t.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd")).ids for t in texts]
    for threads in (1, 2):
        assert cl100k.encode_batch_ids(texts, threads=threads) == expected


def test_native_batch_raises_cpythons_unicode_error_for_the_first_bad_text(cl100k):
    encoder = cl100k._encoder
    texts = ["ok"] * 500 + ["x\ud800"] + ["ok"] * 500 + ["\udc00y"]
    for threads in (1, 2, 4):
        with pytest.raises(UnicodeEncodeError) as info:
            encoder.encode_batch_ids(texts, b"", threads)
        assert info.value.object == "x\ud800"


def test_non_str_item_is_a_type_error():
    tok = ciyuan.Tokenizer(ciyuan.models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"),
                           pre_tokenizer=ciyuan.pre_tokenizers.WhitespaceSplit())
    with pytest.raises(TypeError, match="expected str, got int"):
        tok._encoder.encode_batch_ids(["a", 3], b"", 1)


def test_disallowed_special_token_reports_the_first_text_at_any_thread_count(cl100k):
    texts = ["plain"] * 300 + ["one <|endoftext|>"] + ["plain"] * 300 + ["two <|fim_prefix|> <|endoftext|>"]
    for threads in (1, 2, 4):
        with pytest.raises(DisallowedSpecialTokenError, match="'<\\|endoftext\\|>' at byte 4"):
            cl100k.encode_batch_ids(texts, threads=threads)


def test_template_ids_around_each_text():
    bert = ciyuan.Tokenizer.from_bert_vocab(str(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")))
    texts = ["Hello, world!", "", "词元"] * 30
    for threads in (1, 2):
        assert bert.encode_batch_ids(texts, threads=threads) == [bert.encode(t).ids for t in texts]


def test_sampled_batches_do_not_depend_on_the_thread_count():
    albert = ciyuan.Tokenizer.from_file(str(shared("tokenizers", "sentencepiece", "albert.model")))
    texts = ["hello world, this is subword regularization", "词元 and 😀"] * 50
    one = albert.encode_batch_ids(texts, threads=1, sample=True, alpha=0.1, seed=7)
    assert albert.encode_batch_ids(texts, threads=3, sample=True, alpha=0.1, seed=7) == one
    assert [albert.encode(t, sample=True, alpha=0.1, seed=7).ids for t in texts[:1]] == one[:1]


def test_empty_batch(cl100k):
    assert cl100k.encode_batch_ids([]) == []


@pytest.mark.parametrize("threads", [2, 4])
def test_sentencepiece_word_table_shared_by_threads_and_models(threads):
    # The threads of a batch publish the words they work out in one table of the process, which
    # two models share (kept apart by their instance numbers): ids equal sentencepiece's.
    spm = pytest.importorskip("sentencepiece")
    lines = shared("corpora", "en", "taylorswift.txt").read_text("utf-8").splitlines()
    for name in ("albert", "llama2", "albert"):
        path = str(shared("tokenizers", "sentencepiece", f"{name}.model"))
        tok = ciyuan.Tokenizer.from_file(path)
        want = spm.SentencePieceProcessor(model_file=path).encode(lines)
        assert tok.encode_batch_ids(lines, threads=threads) == want
        assert tok.encode_batch_ids(lines[::-1], threads=threads) == want[::-1]


# ASCII runs of every length around the converter's blocks (16 Latin-1 or 8 UCS-2 code points a
# step), broken by one character of each storage width.
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=40),
                          st.sampled_from(["", "é", "\xff", "词", "\u0800", "😀", "\x7f"])), max_size=12))
def test_single_text_utf8_made_from_the_str_storage(cl100k, parts):
    text = "".join("ab cd, ef!"[: n % 10] * (n // 10 + 1) + c for n, c in parts)
    assert cl100k.encode_ids(text) == cl100k.encode(text).ids
    assert cl100k._encoder.encode_ids(text, b"") == cl100k.encode(text).ids


# Runs of code points of three UTF-8 bytes (U+0800..U+FFFF without surrogates), which a UCS-2
# str converts 8 at a time (a UCS-4 str 4), of every length around the blocks, broken by
# characters of the other widths and by the range's edges. Byte-level BPE loses nothing, so
# decoding the ids gives the text back exactly when its UTF-8 was made right; the ids are
# tiktoken's.
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=26),
                          st.sampled_from(["词", "\u0800", "\uffff", "\ud7ff", "\ue000", "，", "ア", "한"]),
                          st.sampled_from(["", "a", "\n", "é", "\u07ff", "😀"])), max_size=8))
def test_three_byte_runs_of_a_wide_str(cl100k, tiktoken_encodings, parts):
    joined = "".join(c * n + breaker for n, c, breaker in parts)
    # The same text stored as UCS-4 (a character beyond the BMP makes CPython store the whole
    # str so), and ASCII runs around the blocks of that width.
    for text in (joined, "😀" + joined, "😀" + joined.replace("a", "ab cd, ef!")):
        ids = cl100k.encode_ids(text)
        assert cl100k.decode(ids) == text
        assert ids == tiktoken_encodings["cl100k_base"].encode_ordinary(text)
        assert cl100k.encode_batch_ids([text, text[1:]], threads=2) == [ids, cl100k.encode_ids(text[1:])]


def test_native_single_text_raises_cpythons_unicode_error(cl100k):
    for text in ("x\ud800", "é" * 40 + "\udfff", "词" * 9 + "\ud800", "词" * 3 + "\udfff" + "词" * 12):
        with pytest.raises(UnicodeEncodeError) as info:
            cl100k._encoder.encode_ids(text, b"")
        assert info.value.object == text
    with pytest.raises(TypeError, match="expected str, got bytes"):
        cl100k._encoder.encode_ids(b"bytes", b"")


@pytest.mark.parametrize("threads", [1, 3])
def test_texts_shorter_than_a_word(cl100k, threads):
    # Pieces of a text under 8 bytes are read byte by byte: a text of 1-7 bytes in a buffer of its
    # own once had its piece read as 8 bytes (a heap over-read that `make sanitize` reported).
    texts = ["斉", "a", "ab c", "词元", "1234567", "\x00", "é"]
    assert cl100k.encode_batch_ids(texts, threads=threads) == [cl100k.encode(t).ids for t in texts]
    for t in texts:
        assert cl100k.encode_ids(t) == cl100k.encode(t).ids


def _cache_utf8(text: str) -> None:
    """Has CPython make and keep `text`'s UTF-8 form inside the str, as PyUnicode_AsUTF8AndSize
    does for any C code (tiktoken's binding, for one) that asks for it."""
    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    as_utf8.restype, as_utf8.argtypes = ctypes.c_char_p, [ctypes.py_object, ctypes.c_void_p]
    assert as_utf8(text, None) == text.encode("utf-8").split(b"\x00")[0]


@pytest.mark.parametrize("text", TEXTS[2:])
def test_a_str_with_its_utf8_cached_reads_that(cl100k, text):
    # A str that holds its UTF-8 form is read there (not converted again): the same ids, offsets,
    # counts and batches as the same text without it (a copy of the str made afresh).
    text = text * 3 + " and more 词元 ✓"
    fresh = "".join(list(text))
    _cache_utf8(text)
    assert cl100k.encode_ids(text) == cl100k.encode_ids(fresh)
    assert cl100k.encode(text).offsets == cl100k.encode(fresh).offsets
    assert cl100k.count_tokens(text) == len(cl100k.encode_ids(fresh))
    assert list(cl100k.encode_ids(text, as_array=True)) == cl100k.encode_ids(fresh)
    assert cl100k.encode_batch_ids([text, fresh], threads=2) == [cl100k.encode_ids(fresh)] * 2
