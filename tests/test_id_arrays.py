"""Outputs and inputs of ids that skip Python ints: count_tokens, encode_ids(as_array=True),
encode_batch_ids(as_array=True) (flat ids + offsets), decode of integer buffers, batch decode.
Each is held to the list API it stands for, on every kind of tokenizer (tiktoken-style, BERT
with its template, SentencePiece BPE and Unigram, added tokens on the Python path, BPE-dropout),
with and without numpy."""

from __future__ import annotations

import array
import subprocess
import sys
from typing import Any, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ciyuan
from ciyuan import _id_arrays
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import Split
from tests.conftest import read_prefix, shared

np = pytest.importorskip("numpy")

TEXTS = [
    "",
    "hello world",
    "Hello, World! It's 2024... <|endoftext|> and <|fim_prefix|>",
    "词元 tokenization 分词，中文文本。",
    "emoji 😀 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 <s> </s> [CLS] [SEP] <mask>",
    "   leading and trailing spaces   \n\n\tTabs\r\n",
    "bad \ud800 surrogate",
    "a" * 300,
]
SPECIALS: List[Dict[str, Any]] = [{"allowed_special": "all"}, {"disallowed_special": ()}, {}]


@pytest.fixture(scope="module")
def tokenizers(ciyuan_tokenizers) -> Dict[str, ciyuan.Tokenizer]:
    spm = shared("tokenizers", "sentencepiece")
    added = ciyuan.Tokenizer.from_gpt2(shared("tokenizers", "gpt2", "encoder.json"),
                                       shared("tokenizers", "gpt2", "vocab.bpe"))
    added.add_special_tokens(["<s>", "</s>"])
    added.add_tokens(["词元", ciyuan.AddedToken("world", lstrip=True)])  # a flag: the Python path
    gpt2 = ciyuan_tokenizers["gpt2"]
    dropout = ciyuan.Tokenizer(BPE(gpt2.model.get_vocab(), gpt2.model.merges, byte_level=True, dropout=0.3),
                               pre_tokenizer=Split("gpt2"))
    return {
        "cl100k": ciyuan_tokenizers["cl100k_base"],
        "o200k": ciyuan_tokenizers["o200k_base"],
        "bert": ciyuan.Tokenizer.from_bert_vocab(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")),
        "llama2": ciyuan.Tokenizer.from_file(str(spm / "llama2.model")),
        "albert": ciyuan.Tokenizer.from_file(str(spm / "albert.model")),
        "added": added,
        "dropout": dropout,
    }


NAMES = ["cl100k", "o200k", "bert", "llama2", "albert", "added", "dropout"]


def outcome(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """The result of fn(*args, **kwargs), or the type of the error it raised."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the error type is what is compared
        return type(e)


@pytest.mark.parametrize("name", NAMES)
def test_count_tokens_is_len_of_encode_ids(tokenizers, name):
    tok = tokenizers[name]
    for kwargs in SPECIALS:
        for text in TEXTS:
            want = outcome(lambda *a, **k: len(tok.encode_ids(*a, **k)), text, seed=1, **kwargs)
            if name == "dropout":  # a sampled segmentation: its length varies with the draw
                assert isinstance(outcome(tok.count_tokens, text, **kwargs), int)
                continue
            assert outcome(tok.count_tokens, text, **kwargs) == want, (text, kwargs)
        counts = outcome(tok.count_tokens_batch, TEXTS, threads=2, **kwargs)
        if name != "dropout":
            assert counts == outcome(lambda **k: [len(ids) for ids in tok.encode_batch_ids(TEXTS, **k)], **kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_as_array_equals_encode_ids(tokenizers, name):
    tok = tokenizers[name]
    for kwargs in SPECIALS:
        for text in TEXTS:
            want = outcome(tok.encode_ids, text, seed=5, **kwargs)
            got = outcome(tok.encode_ids, text, seed=5, as_array=True, **kwargs)
            if isinstance(want, list):
                assert isinstance(got, np.ndarray) and got.dtype == np.uint32 and got.ndim == 1
                assert got.tolist() == want, (text, kwargs)
            else:
                assert got == want


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_batch_flat_and_offsets_equal_encode_batch_ids(tokenizers, name, threads):
    tok = tokenizers[name]
    texts = TEXTS * 7
    for kwargs in SPECIALS:
        want = outcome(tok.encode_batch_ids, texts, threads=threads, seed=2, **kwargs)
        got = outcome(tok.encode_batch_ids, texts, threads=threads, seed=2, as_array=True, **kwargs)
        if not isinstance(want, list):
            assert got == want
            continue
        flat, offsets = got
        assert flat.dtype == np.uint32 and offsets.dtype == np.int64 and len(offsets) == len(texts) + 1
        assert offsets[0] == 0 and offsets[-1] == len(flat)
        assert [flat[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))] == want


def test_batch_without_template_and_of_pairs(tokenizers):
    bert = tokenizers["bert"]
    flat, offsets = bert.encode_batch_ids(["a b", "c"], add_special_tokens=False, as_array=True)
    assert flat.tolist() == sum(bert.encode_batch_ids(["a b", "c"], add_special_tokens=False), [])
    flat, offsets = bert.encode_batch_ids([("a b", "c"), "d"], as_array=True)  # pairs: the list path
    assert [flat[offsets[i]:offsets[i + 1]].tolist() for i in range(2)] == bert.encode_batch_ids([("a b", "c"), "d"])
    empty, offsets = bert.encode_batch_ids([], as_array=True)
    assert len(empty) == 0 and offsets.tolist() == [0]


def test_arrays_share_the_encoder_memory_and_are_writable(tokenizers):
    ids = tokenizers["cl100k"].encode_ids("hello world", as_array=True)
    assert ids.base is not None and ids.flags.writeable
    ids[0] = 7  # the array owns its ids: nothing else sees the write
    assert tokenizers["cl100k"].encode_ids("hello world")[0] == 15339


def test_without_numpy_arrays_are_array_array(tokenizers, monkeypatch):
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` raises ImportError
    monkeypatch.setattr(_id_arrays, "_numpy", None)  # looked up again
    assert _id_arrays.numpy_module() is None
    for name in ("cl100k", "bert", "added", "dropout"):
        tok = tokenizers[name]
        text = TEXTS[3]
        ids = tok.encode_ids(text, as_array=True, seed=1)
        assert isinstance(ids, array.array) and ids.itemsize == 4 and ids.tolist() == tok.encode_ids(text, seed=1)
        flat, offsets = tok.encode_batch_ids(TEXTS[:4], as_array=True, seed=1, disallowed_special=())
        assert isinstance(flat, array.array) and isinstance(offsets, array.array) and offsets.itemsize == 8
        want = tok.encode_batch_ids(TEXTS[:4], seed=1, disallowed_special=())
        assert [flat[offsets[i]:offsets[i + 1]].tolist() for i in range(4)] == want
        assert tok.decode(ids) == tok.decode(tok.encode_ids(text, seed=1))


def test_importing_ciyuan_does_not_import_numpy():
    code = ("import sys, ciyuan; from ciyuan import tokenizer, _id_arrays; "
            "print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- decoding ----------------------------------------------------------------------------------

DTYPES = ["uint32", "int32", "int64", "uint64", "uint16", "<u4"]


@pytest.mark.parametrize("name", NAMES)
def test_decode_of_arrays_equals_decode_of_lists(tokenizers, name):
    tok = tokenizers[name]
    text = "\n".join(TEXTS[1:6])
    ids = tok.encode_ids(text, allowed_special="all", seed=0)
    want, want_bytes = tok.decode(ids), tok.decode_bytes(ids)
    skipped = tok.decode(ids, skip_special_tokens=True)
    arrays = [np.array(ids, dtype=d) for d in DTYPES if max(ids) < np.iinfo(np.dtype(d)).max]
    arrays += [tuple(ids), array.array(_id_arrays.UINT32_CODE, ids), memoryview(np.array(ids, dtype=np.uint32)),
               np.repeat(np.array(ids, dtype=np.int64), 2)[::2], tok.encode_ids(text, allowed_special="all",
                                                                                 seed=0, as_array=True)]
    for a in arrays:
        assert tok.decode(a) == want, type(a)
        assert tok.decode_bytes(a) == want_bytes
        assert tok.decode(a, skip_special_tokens=True) == skipped
    assert tok.decode_batch(arrays, threads=2) == [want] * len(arrays)
    assert tok.decode_bytes_batch(arrays, threads=2) == [want_bytes] * len(arrays)
    assert tok.decode_batch([ids, []], skip_special_tokens=True) == [skipped, tok.decode([])]


def test_decode_of_a_long_array_and_a_long_batch(tokenizers):
    cl100k = tokenizers["cl100k"]
    text = read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 200_000)
    ids = cl100k.encode_ids(text, as_array=True)  # long: the GIL is released
    assert cl100k.decode(ids) == text
    lines = text.splitlines()
    batch = [cl100k.encode_ids(line, as_array=True) for line in lines]
    for threads in (1, 2, 4):
        assert cl100k.decode_batch(batch, threads=threads) == lines
    flat, offsets = cl100k.encode_batch_ids(lines, as_array=True)
    assert cl100k.decode_bytes(flat) == "".join(lines).encode()


def test_decode_generators_ranges_and_special_ids_beyond_the_model(tokenizers):
    cl100k = tokenizers["cl100k"]
    assert cl100k.decode(i for i in [15339, 1917]) == "hello world"
    assert cl100k.decode(range(32, 35)) == cl100k.decode([32, 33, 34])
    assert cl100k.decode(np.array([100257, 15339], dtype=np.int64)) == "<|endoftext|>hello"
    assert cl100k.decode(np.array([15339, 1917], dtype=object)) == "hello world"  # read as a sequence
    tok = ciyuan.Tokenizer(BPE({"a": 0, "b": 1}), special_tokens={"<s>": (1 << 32) - 1})
    assert tok.decode(np.array([0, (1 << 32) - 1, 1], dtype=np.uint32)) == "a<s>b"
    assert tok.decode(np.array([0, (1 << 32) - 1], dtype=np.uint32), skip_special_tokens=True) == "a"


def test_decode_errors(tokenizers):
    cl100k = tokenizers["cl100k"]
    for bad, position in (([1, 100261], 1), ([-1], 0), (np.array([5, -3], dtype=np.int64), 1),
                          (np.array([2**40], dtype=np.uint64), 0), (np.array([0, 200000], dtype=np.uint32), 1)):
        with pytest.raises(ciyuan.UnknownIdError, match=f"at position {position} is not in the vocabulary"):
            cl100k.decode(bad)
    with pytest.raises(ciyuan.UnknownIdError, match="id -3 at position 1"):
        cl100k.decode_bytes(np.array([5, -3], dtype=np.int32))
    for bad in ([1.5], [True], ["1"], [None]):
        with pytest.raises(TypeError, match="position 0"):
            cl100k.decode(bad)
    for bad in (np.array([1.0]), np.array([True]), np.array([1 + 2j])):
        with pytest.raises(TypeError, match="integers"):
            cl100k.decode(bad)
    with pytest.raises(ciyuan.InvalidInputError, match="one-dimensional"):
        cl100k.decode(np.zeros((2, 2), dtype=np.uint32))
    with pytest.raises(TypeError):
        cl100k.decode("abc")  # type: ignore[arg-type]
    with pytest.raises(ciyuan.UnknownIdError, match="sequence 2: id 100261 at position 1"):
        cl100k.decode_batch([[1], np.array([2]), [3, 100261]], threads=2)
    with pytest.raises(TypeError, match="position 0"):
        cl100k.decode_bytes_batch([[1], [2.0]])


def test_decode_with_a_token_decoder(tokenizers):
    # BERT's WordPiece decoder reads each token: arrays give the same text as lists.
    bert = tokenizers["bert"]
    ids = bert.encode_ids("Hello, world! 词元")
    for a in (np.array(ids, dtype=np.int64), bert.encode_ids("Hello, world! 词元", as_array=True)):
        assert bert.decode(a) == bert.decode(ids)
        assert bert.decode(a, skip_special_tokens=True) == bert.decode(ids, skip_special_tokens=True)
    assert bert.decode_batch([ids, np.array(ids)], skip_special_tokens=True) == \
        [bert.decode(ids, skip_special_tokens=True)] * 2
    with pytest.raises(ciyuan.UnknownIdError):
        bert.decode(np.array([10**6], dtype=np.int64))


def test_decode_table_follows_added_tokens(ciyuan_tokenizers):
    tok = ciyuan.Tokenizer.from_gpt2(shared("tokenizers", "gpt2", "encoder.json"),
                                     shared("tokenizers", "gpt2", "vocab.bpe"))
    assert tok.decode([31373]) == "hello"
    with pytest.raises(ciyuan.UnknownIdError):
        tok.decode([50257])
    tok.add_tokens(["<new>"])
    assert tok.decode(np.array([31373, 50257])) == "hello<new>"


# -- the tiktoken face -------------------------------------------------------------------------

def test_tiktoken_face_arrays(tokenizers):
    enc = tokenizers["cl100k"].as_tiktoken()
    text = "hello world <|endoftext|> 词元"
    ids = enc.encode(text, allowed_special="all")
    got = enc.encode_to_numpy(text, allowed_special="all")
    assert got.dtype == np.uint32 and got.tolist() == ids
    assert enc.decode(got) == text and enc.decode_bytes(np.array(ids)) == text.encode()
    assert enc.decode_batch([ids, got]) == [text, text]
    assert enc.decode_bytes_batch([ids, got], num_threads=2) == [text.encode()] * 2
    with pytest.raises(KeyError):
        enc.decode_bytes(np.array([100261]))
    with pytest.raises(ValueError):
        enc.encode_to_numpy("<|endoftext|>")


# -- generated text ----------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=30), st.integers(min_value=1, max_value=3))
def test_generated_texts(ciyuan_tokenizers, texts, threads):
    tok = ciyuan_tokenizers["cl100k_base"]
    want = tok.encode_batch_ids(texts, disallowed_special=())
    flat, offsets = tok.encode_batch_ids(texts, threads=threads, disallowed_special=(), as_array=True)
    assert [flat[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))] == want
    assert tok.count_tokens_batch(texts, threads=threads, disallowed_special=()) == [len(w) for w in want]
    for text, ids in zip(texts, want):
        assert tok.count_tokens(text, disallowed_special=()) == len(ids)
        assert tok.encode_ids(text, disallowed_special=(), as_array=True).tolist() == ids
    assert tok.decode_batch([flat[offsets[i]:offsets[i + 1]] for i in range(len(texts))], threads=threads) == \
        [tok.decode(ids) for ids in want]
