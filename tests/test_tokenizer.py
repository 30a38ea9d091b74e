"""The Tokenizer pipeline: special tokens, batches, offsets, decoding, persistence."""

from __future__ import annotations

import json

import pytest

import ciyuan
from ciyuan import normalizers
from ciyuan.errors import InvalidInputError
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import Split, WordPunct
from tests.conftest import shared
from tests.test_training import TEXTS


@pytest.fixture(scope="module")
def cl100k(ciyuan_tokenizers):
    return ciyuan_tokenizers["cl100k_base"]


def test_encode_returns_ids_tokens_offsets(cl100k):
    enc = cl100k.encode("Hello world")
    assert enc.ids == [9906, 1917]
    assert enc.tokens == ["Hello", "Ġworld"]
    assert enc.offsets == [(0, 5), (5, 11)]
    assert enc.attention_mask == [1, 1]
    assert len(enc) == 2
    assert cl100k.tokenize("Hello world") == ["Hello", "Ġworld"]


def test_offsets_of_split_characters(cl100k):
    # 词 is split over two byte-level tokens: both point at the whole character.
    text = "a 词元"
    enc = cl100k.encode(text)
    assert cl100k.decode(enc.ids) == text
    for token_id, (s, e) in zip(enc.ids, enc.offsets):
        assert cl100k.decode_bytes([token_id]) in text[s:e].encode()
    assert enc.offsets[0] == (0, 1)
    assert enc.offsets[-1][1] == len(text)


def test_special_tokens_follow_tiktoken(cl100k):
    text = "hi<|endoftext|>there"
    with pytest.raises(ciyuan.DisallowedSpecialTokenError, match="allowed_special"):
        cl100k.encode(text)
    assert cl100k.encode(text, allowed_special="all").ids == [6151, 100257, 19041]
    assert cl100k.encode(text, allowed_special={"<|endoftext|>"}).offsets[1] == (2, 15)
    as_text = cl100k.encode(text, disallowed_special=()).ids
    assert 100257 not in as_text and cl100k.decode(as_text) == text
    # Only the listed ones are refused.
    assert cl100k.encode("<|fim_prefix|>", disallowed_special={"<|endoftext|>"}).ids == cl100k.encode(
        "<|fim_prefix|>", disallowed_special=()).ids
    with pytest.raises(ciyuan.InvalidInputError, match="not special tokens"):
        cl100k.encode("x", allowed_special={"<|nope|>"})
    assert cl100k.decode([6151, 100257, 19041], skip_special_tokens=True) == "hithere"
    assert cl100k.token_to_id("<|endoftext|>") == 100257
    assert cl100k.id_to_token(100257) == "<|endoftext|>"


def test_batches_equal_single_encodes_whatever_the_threads(cl100k):
    texts = ["", "a", "Hello world", "中文 text", "x" * 5000, " \n\n  "] * 50
    single = [cl100k.encode_ids(t) for t in texts]
    for threads in (None, 1, 2, 7):
        assert cl100k.encode_batch_ids(texts, threads=threads) == single
        assert [e.ids for e in cl100k.encode_batch(texts, threads=threads)] == single
    assert [e.offsets for e in cl100k.encode_batch(texts[:6])] == [cl100k.encode(t).offsets for t in texts[:6]]
    with pytest.raises(ciyuan.InvalidInputError, match="threads"):
        cl100k.encode_batch_ids(texts, threads=0)


def test_empty_and_surrogates(cl100k):
    assert cl100k.encode("").ids == []
    assert cl100k.decode([]) == ""
    # A lone surrogate cannot be UTF-8: it is encoded as U+FFFD, as tiktoken does.
    assert cl100k.encode("a\ud800b").ids == cl100k.encode("a\ufffdb").ids
    assert cl100k.encode_batch_ids(["\udfff"]) == [cl100k.encode_ids("\ufffd")]
    with pytest.raises(TypeError):
        cl100k.encode(b"bytes")  # type: ignore[arg-type]


def test_decode_errors_name_the_id(cl100k):
    with pytest.raises(ciyuan.UnknownIdError, match="id 100261 at position 1"):
        cl100k.decode([1, 100261])
    with pytest.raises(ciyuan.UnknownIdError, match="id -1 at position 0"):
        cl100k.decode([-1])
    with pytest.raises(ciyuan.UnknownIdError, match="id 1099511627776 at position 0"):
        cl100k.decode([2**40])
    with pytest.raises(TypeError, match="position 0"):
        cl100k.decode(["1"])  # type: ignore[list-item]
    with pytest.raises(ciyuan.UnknownIdError):
        cl100k.id_to_token(10**9)
    # Invalid UTF-8 from partial tokens is replaced, like tiktoken; decode_bytes is exact.
    ids = cl100k.encode("词").ids
    assert cl100k.decode(ids[:1]) == "\ufffd"
    assert cl100k.decode_bytes(ids) == "词".encode()


def test_vocab(cl100k):
    assert cl100k.vocab_size == 100256 + 5
    vocab = cl100k.get_vocab()
    assert vocab["Hello"] == 9906 and vocab["<|endoftext|>"] == 100257
    assert cl100k.token_to_id("Ġworld") == 1917
    assert cl100k.token_to_id("no such token") is None


def test_save_and_load_round_trip(tmp_path, ciyuan_tokenizers):
    text = "Round trip: 词元, émoji 😀 and <|endoftext|>."
    for name, tok in ciyuan_tokenizers.items():
        path = tmp_path / f"{name}.json"
        tok.save(path)
        again = ciyuan.Tokenizer.from_file(path)
        assert again.encode(text, allowed_special="all").ids == tok.encode(text, allowed_special="all").ids
        assert again.to_dict() == tok.to_dict()


def test_corrupt_json_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "Tokenizer",\n "ciyuan": 1,\n')
    with pytest.raises(ciyuan.FileFormatError, match="bad.json:3: not valid JSON"):
        ciyuan.Tokenizer.from_file(bad)
    bad.write_text(json.dumps({"type": "Tokenizer", "ciyuan": 1, "model": {"type": "BPE"}}))
    with pytest.raises(ciyuan.FileFormatError, match="lacks the key 'vocab'"):
        ciyuan.Tokenizer.from_file(bad)
    bad.write_text(json.dumps({"type": "Tokenizer", "ciyuan": 99}))
    with pytest.raises(ciyuan.FileFormatError, match="version"):
        ciyuan.Tokenizer.from_file(bad)
    bad.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ciyuan.InvalidInputError, match="invalid UTF-8 at byte 7"):
        ciyuan.Tokenizer.from_file(bad)


def test_save_is_atomic(tmp_path, cl100k, monkeypatch):
    path = tmp_path / "tok.json"
    path.write_text("old")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", boom)
    with pytest.raises(ciyuan.InvalidInputError, match="cannot write .*tok.json"):  # a ciyuan error, naming it
        cl100k.save(path)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["tok.json"]


def test_normalizer_path_keeps_offsets():
    # Python stages (normalizer + any regex) and the native model: offsets into the original.
    vocab = {c: i for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")}
    vocab.update({"ab": 26, "<unk>": 27})
    tok = ciyuan.Tokenizer(
        BPE(vocab, [("a", "b")], unk_token="<unk>"),
        normalizer=normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]),
        # Letters only: the rest is dropped, which a Split must be told (invert + Removed).
        pre_tokenizer=Split(r"\p{L}+", behavior="Removed", invert=True),
    )
    text = "ＡＢc, ﬁx Ab"
    enc = tok.encode(text)
    assert enc.tokens == ["ab", "c", "f", "i", "x", "ab"]
    assert enc.offsets == [(0, 2), (2, 3), (5, 6), (5, 6), (6, 7), (8, 10)]
    assert tok.encode_batch([text])[0].ids == enc.ids


def test_native_and_python_paths_agree(cl100k):
    # The same pattern through the regex module (Python path) and the native scanner.
    from ciyuan.pre_tokenizers.patterns import CL100K_PATTERN

    slow = ciyuan.Tokenizer(cl100k.model, pre_tokenizer=Split(CL100K_PATTERN + "|(?!)"),
                            special_tokens=cl100k.special_tokens)
    assert slow.pre_tokenizer.native_pattern is None
    text = "Mixed 中文 text's  spaces\n\n and <|endoftext|> 123456!"
    for kwargs in ({"allowed_special": "all"}, {"disallowed_special": ()}):
        a, b = cl100k.encode(text, **kwargs), slow.encode(text, **kwargs)
        assert a.ids == b.ids and a.offsets == b.offsets
    with pytest.raises(ciyuan.DisallowedSpecialTokenError):
        slow.encode(text)


def test_word_punct_pretokenizer_and_repr():
    assert WordPunct().pre_tokenize_str("Hi, 你好!") == [("Hi", (0, 2)), (",", (2, 3)), ("你好", (4, 6)), ("!", (6, 7))]
    tok = ciyuan.Tokenizer(BPE({"a": 0}))
    assert "BPE(character-level, 1 tokens" in repr(tok)


def test_special_token_validation():
    model = BPE({"a": 0, "b": 1})
    with pytest.raises(ciyuan.ModelError, match="uses for 'b'"):
        ciyuan.Tokenizer(model, special_tokens={"<s>": 1})
    with pytest.raises(ciyuan.ModelError, match="share an id"):
        ciyuan.Tokenizer(model, special_tokens={"<s>": 5, "</s>": 5})
    with pytest.raises(ciyuan.ModelError, match="non-empty"):
        ciyuan.Tokenizer(model, special_tokens={"": 5})
    with pytest.raises(ciyuan.ModelError, match="2\\*\\*32"):
        ciyuan.Tokenizer(model, special_tokens={"<s>": 1 << 32})
    # The largest id works (it once made a table of 2**32 entries and crashed).
    tok = ciyuan.Tokenizer(model, special_tokens={"<s>": (1 << 32) - 1})
    assert tok.encode("a<s>b", allowed_special="all").ids == [0, (1 << 32) - 1, 1]
    assert tok.decode([0, (1 << 32) - 1]) == "a<s>"
    with pytest.raises(ciyuan.UnknownIdError):
        tok.decode([7])


def test_concurrent_python_threads(ciyuan_tokenizers):
    # encode releases the GIL and keeps its caches per thread: results must not depend on
    # other threads encoding at the same time, with the same or another tokenizer.
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"line {i}: 词元 tokens, émoji 😀 and spaces   {i * 7919}" for i in range(400)]
    names = ["cl100k_base", "o200k_base", "gpt2"]
    expected = {n: [ciyuan_tokenizers[n].encode_ids(t) for t in texts] for n in names}

    def work(k):
        name = names[k % 3]
        return name, [ciyuan_tokenizers[name].encode_ids(t) for t in texts]

    with ThreadPoolExecutor(8) as pool:
        for name, got in pool.map(work, range(24)):
            assert got == expected[name]


def test_batch_ids_equal_batch_encodings():
    tok = ciyuan.Tokenizer.from_bert_vocab(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt"))
    inputs = TEXTS[:4] + [("first text", "second text"), ""]
    full = [e.ids for e in tok.encode_batch(inputs)]
    assert tok.encode_batch_ids(inputs) == full
    assert tok.encode_batch_ids(TEXTS[:4]) == full[:4]
    assert tok.encode_batch_ids(TEXTS[:4], add_special_tokens=False) == [ids[1:-1] for ids in full[:4]]
    assert tok.encode_ids("hello world") == tok.encode("hello world").ids == [101, 7592, 2088, 102]
    tok.enable_padding(length=12)  # padding never cuts: longer texts keep their length
    assert [len(ids) for ids in tok.encode_batch_ids(TEXTS[:4])] == [max(12, len(ids)) for ids in full[:4]]
    with pytest.raises(InvalidInputError):
        tok.encode_batch([("only one",)])
    with pytest.raises(InvalidInputError):
        tok.enable_padding(pad_token="<pad>")


# -- subword regularization: sampling and n-best ---------------------------------------------------

MASK64 = (1 << 64) - 1


def item_seed(seed: int, index: int) -> int:
    """The seed of the generator the core gives text `index` of a call with `seed`
    (sample_rng in encoder.h: murmur3's 64-bit finalizer, twice)."""
    def fmix(x: int) -> int:
        x ^= x >> 33
        x = (x * 0xFF51AFD7ED558CCD) & MASK64
        x ^= x >> 33
        x = (x * 0xC4CEB9FE1A85EC53) & MASK64
        return x ^ (x >> 33)

    return fmix(seed ^ fmix((index + 0x9E3779B97F4A7C15) & MASK64))


def small_unigram():
    from ciyuan.models import Unigram

    return Unigram([("<unk>", 0.0), ("▁a", -1.0), ("b", -2.0), ("▁ab", -2.5), ("a", -3.0), ("▁", -2.0),
                    ("c", -4.0), ("bc", -3.5)], unk_id=0)


def unigram_tokenizer(**stages):
    from ciyuan import decoders

    # (decoder given: the SentencePiece decoder is not needed to check ids and offsets)
    return ciyuan.Tokenizer(small_unigram(), decoder=decoders.from_dict({"type": "BPESuffix", "suffix": ""}), **stages)


def small_bpe_tokenizer(**kwargs):
    vocab = {"l": 0, "o": 1, "w": 2, "e": 3, "r": 4, "lo": 5, "low": 6, "er": 7, "lower": 8, "[CLS]": 9, "[SEP]": 10}
    merges = [("l", "o"), ("lo", "w"), ("e", "r"), ("low", "er")]
    return ciyuan.Tokenizer(BPE(vocab, merges), pre_tokenizer=WordPunct(), **kwargs)


def test_sampling_arguments_are_checked():
    tok = small_bpe_tokenizer()
    for alpha in (-0.1, 1.5, float("nan"), float("inf"), "0.1", True, None):
        with pytest.raises(InvalidInputError, match=r"alpha \(the BPE-dropout probability\) must be a number betw"):
            tok.encode("lower", sample=True, alpha=alpha)
    for nbest_size in (1.5, True, 1 << 40, "2"):
        with pytest.raises(InvalidInputError, match="nbest_size must be an integer"):
            tok.encode_ids("lower", sample=True, nbest_size=nbest_size)
    for seed in ("7", 1.5, [1]):
        with pytest.raises(InvalidInputError, match="seed must be an integer or None"):
            tok.encode_batch(["lower"], sample=True, seed=seed)
    # Without sample=True nothing is sampled, and the sampling arguments are not looked at.
    assert tok.encode("lower", alpha=5.0, seed="x").tokens == ["lower"]
    uni = unigram_tokenizer()
    with pytest.raises(InvalidInputError, match=r"alpha \(the Unigram smoothing\) must be a finite number >= 0"):
        uni.encode("▁ab", sample=True, alpha=-0.5)
    assert uni.encode("▁ab", sample=True, alpha=5.0, nbest_size=3, seed=1).ids  # any alpha >= 0, any nbest_size


def test_models_that_cannot_sample_say_so():
    from ciyuan.models import WordLevel

    word_level = ciyuan.Tokenizer(WordLevel(["[UNK]", "hello"]), pre_tokenizer=WordPunct())
    with pytest.raises(ciyuan.ModelError, match="WordLevel models do not sample segmentations"):
        word_level.encode("hello", sample=True)
    bert = ciyuan.Tokenizer.from_bert_vocab(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt"))
    for call in (lambda: bert.encode_batch_ids(["hello"], sample=True), lambda: bert.encode_ids("hi", sample=True)):
        with pytest.raises(ciyuan.ModelError, match="WordPiece models do not sample segmentations"):
            call()
    with pytest.raises(ciyuan.ModelError, match="WordPiece models have one segmentation per text"):
        bert.nbest("hello", 2)
    with pytest.raises(ciyuan.ModelError, match="BPE models have one segmentation per text; n-best"):
        small_bpe_tokenizer().nbest("lower", 2)


def test_sampled_pairs_and_post_processing():
    tok = small_bpe_tokenizer(special_tokens={"[CLS]": 9, "[SEP]": 10})
    tok.post_processor = ciyuan.processors.BertProcessing(sep=("[SEP]", 10), cls=("[CLS]", 9))
    texts = ["lower lower lower", "low lower"]
    a = tok.encode(*texts, sample=True, alpha=0.5, seed=11)
    assert a.ids[0] == 9 and a.type_ids[-1] == 1 and tok.decode(a.ids, skip_special_tokens=True) == "".join(
        t.replace(" ", "") for t in texts)
    assert tok.encode_batch([tuple(texts)], sample=True, alpha=0.5, seed=11)[0].ids == a.ids
    batch = ["lower " * 8] * 30
    ids = tok.encode_batch_ids(batch, sample=True, alpha=0.5, seed=3, threads=2)
    assert ids == [e.ids for e in tok.encode_batch(batch, sample=True, alpha=0.5, seed=3, threads=1)]
    assert all(i[0] == 9 and i[-1] == 10 for i in ids) and len(set(map(tuple, ids))) > 1
    assert tok.encode_ids(batch[4], sample=True, alpha=0.5, seed=3) == tok.encode(batch[4], sample=True, alpha=0.5,
                                                                                    seed=3).ids


def test_unigram_samples_and_nbest_through_the_tokenizer():
    tok = unigram_tokenizer()
    model = tok.model
    text = "▁ab▁abc▁ab"
    assert tok.encode(text).ids == [i for i, _, _ in model._native.encode_tokens(text)]
    # n-best: the model's own list, with offsets in characters.
    best = tok.nbest(text, 6)
    own = model._native.nbest(text, 6)
    assert [(e.ids, s) for e, s in best] == [([i for i, _, _ in path], s) for path, s in own]
    assert best[0][0].ids == tok.encode(text).ids and len(best) == 6
    assert [s for _, s in best] == sorted((s for _, s in best), reverse=True)
    assert all("".join(e.tokens) == text and e.offsets[-1][1] == len(text) for e, _ in best)
    assert tok.nbest("", 3)[0][0].ids == [] and len(tok.nbest("", 3)) == 1
    assert len(tok.nbest("▁a", 10)) == 2  # fewer when the text has fewer
    # Sampling: the model's own sampler, run with the generator the core gives text 0 (and 1).
    for seed, alpha, nbest_size in ((0, 0.1, -1), (5, 1.0, 0), (9, 0.5, 3), (2, 0.2, 1)):
        got = tok.encode(text, sample=True, alpha=alpha, nbest_size=nbest_size, seed=seed).ids
        assert got == [i for i, _, _ in model._native.sample(text, alpha, nbest_size, item_seed(seed, 0))]
        batch = tok.encode_batch_ids([text, text], sample=True, alpha=alpha, nbest_size=nbest_size, seed=seed,
                                     threads=2)
        assert batch[1] == [i for i, _, _ in model._native.sample(text, alpha, nbest_size, item_seed(seed, 1))]
    draws = {tuple(tok.encode_ids(text, sample=True, alpha=0.1)) for _ in range(30)}
    assert len(draws) > 1


def test_unigram_nbest_on_the_python_path_maps_offsets():
    tok = unigram_tokenizer(normalizer=normalizers.Lowercase())
    assert not tok._native_path
    native = unigram_tokenizer()
    results = tok.nbest("▁AB▁aBC", 4)
    expected = native.nbest("▁ab▁abc", 4)
    assert [(e.ids, e.offsets, s) for e, s in results] == [(e.ids, e.offsets, s) for e, s in expected]
    assert tok.encode("▁AB▁aBC", sample=True, alpha=0.3, seed=4).ids == \
        native.encode("▁ab▁abc", sample=True, alpha=0.3, seed=4).ids


def test_nbest_needs_one_piece_of_ordinary_text():
    uni = unigram_tokenizer()
    for k in (0, -1, 1.5, True, None):
        with pytest.raises(InvalidInputError, match="k must be a positive integer"):
            uni.nbest("▁ab", k)
    split = unigram_tokenizer(pre_tokenizer=ciyuan.pre_tokenizers.WhitespaceSplit())
    assert [e.ids for e, _ in split.nbest("▁ab▁ab", 2)] == [e.ids for e, _ in uni.nbest("▁ab▁ab", 2)]  # one word
    with pytest.raises(ciyuan.ModelError, match="the pre-tokenizer cut this text into several"):
        split.nbest("▁ab ▁ab", 2)
    python_split = unigram_tokenizer(normalizer=normalizers.Lowercase(),
                                     pre_tokenizer=ciyuan.pre_tokenizers.WhitespaceSplit())
    with pytest.raises(ciyuan.ModelError, match="the pre-tokenizer cut this text into several"):
        python_split.nbest("▁ab ▁ab", 2)
    from ciyuan import decoders

    special = ciyuan.Tokenizer(small_unigram(), special_tokens={"<s>": 100},
                               decoder=decoders.from_dict({"type": "BPESuffix", "suffix": ""}))
    with pytest.raises(ciyuan.DisallowedSpecialTokenError):
        special.nbest("▁ab<s>", 2)
    with pytest.raises(ciyuan.ModelError, match="holds the special token '<s>'"):
        special.nbest("▁ab<s>", 2, allowed_special="all")
    assert special.nbest("▁ab<s>", 1, disallowed_special=())[0][0].tokens[0] == "▁ab"
