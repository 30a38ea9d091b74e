"""WordPiece, WordLevel and CharLevel models: behaviour, errors, serialization, and the greedy
algorithm against Hugging Face's own WordPiece model on generated vocabularies and words."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan.errors import DisallowedSpecialTokenError, FileFormatError, InvalidInputError, ModelError, UnknownIdError
from ciyuan.formats.bert_vocab import load_bert_vocab, parse_bert_vocab, save_bert_vocab
from ciyuan.front_end import FrontEnd, scanner
from ciyuan.models import CharLevel, WordLevel, WordPiece, from_dict

VOCAB = ["[UNK]", "un", "##aff", "##able", "a", "##a", "##b", "b", "[CLS]", "low", "##er", "##est", "lower", "你", "好"]


def enc_of(model, pattern="", specials=()):
    return model.make_encoder(scanner(pattern) if pattern else None, list(specials))


def test_greedy_longest_match_first():
    m = WordPiece(VOCAB)
    e = enc_of(m, "whitespace")
    d = e.encode("unaffable lowest lower aab", b"")
    assert [m.id_to_token(i) for i in d.ids] == ["un", "##aff", "##able", "low", "##est", "lower", "a", "##a", "##b"]
    assert d.byte_spans == [(0, 2), (2, 5), (5, 9), (10, 13), (13, 16), (17, 22), (23, 24), (24, 25), (25, 26)]


def test_unknown_part_makes_the_whole_word_unknown():
    m = WordPiece(VOCAB)
    d = enc_of(m, "whitespace").encode("lowx unaffable", b"")
    assert [m.id_to_token(i) for i in d.ids] == ["[UNK]", "un", "##aff", "##able"]
    assert d.byte_spans[0] == (0, 4)


def test_max_input_chars_per_word_counts_characters():
    m = WordPiece(["[UNK]", "你", "##你"], max_input_chars_per_word=3)
    e = enc_of(m)
    assert e.encode("你你你", b"").ids == [1, 2, 2]  # 9 bytes, 3 characters: allowed
    d = e.encode("你你你你", b"")
    assert d.ids == [0] and d.char_offsets("你你你你") == [(0, 4)]


def test_no_unk_token_raises():
    m = WordPiece(["a", "##b"], unk_token=None)
    e = enc_of(m)
    assert e.encode("ab", b"").ids == [0, 1]
    with pytest.raises(InvalidInputError, match="unk_token"):
        e.encode("abc", b"")
    with pytest.raises(ModelError, match="not in the vocabulary"):
        WordPiece(["a"], unk_token="[UNK]")


def test_prefix_is_configurable():
    m = WordPiece({"[UNK]": 0, "ab": 1, "@@c": 2}, continuing_subword_prefix="@@")
    assert enc_of(m).encode("abc", b"").ids == [1, 2]
    m = WordPiece({"[UNK]": 0, "ab": 1, "c": 2}, continuing_subword_prefix="")
    assert enc_of(m).encode("abc", b"").ids == [1, 2]


def test_vocab_mapping_with_holes_and_lookups():
    m = WordPiece({"[UNK]": 0, "x": 5})
    assert m.id_limit == 6 and m.vocab_size == 2
    assert m.token_to_id("x") == 5 and m.token_to_id("y") is None
    assert m.id_to_token(5) == "x"
    for bad in (1, -1, 6, 1 << 40):
        with pytest.raises(UnknownIdError):
            m.id_to_token(bad)
    assert m.get_vocab() == {"[UNK]": 0, "x": 5}
    with pytest.raises(ModelError):
        WordPiece({"a": 0, "b": 0})
    with pytest.raises(ModelError):
        WordPiece(["a", "a"])
    with pytest.raises(ModelError):
        WordPiece([])


def test_word_level_and_char_level():
    wl = WordLevel(["[UNK]", "hello", "world", "你好"])
    e = enc_of(wl, "whitespace")
    d = e.encode("hello big world 你好", b"")
    assert d.ids == [1, 0, 2, 3]
    assert d.char_offsets("hello big world 你好") == [(0, 5), (6, 9), (10, 15), (16, 18)]
    cl = CharLevel(["[UNK]", "你", "好", "a"])
    d = enc_of(cl).encode("你a好吗😀", b"")
    assert d.ids == [1, 3, 2, 0, 0]
    assert d.char_offsets("你a好吗😀") == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    with pytest.raises(InvalidInputError):
        enc_of(CharLevel(["a"], unk_token=None)).encode("ab", b"")
    with pytest.raises(InvalidInputError):
        enc_of(WordLevel(["a"], unk_token=None), "whitespace").encode("a b", b"")
    assert enc_of(CharLevel(["[UNK]", "😀"])).encode("😀", b"").ids == [1]


def test_to_dict_from_dict_round_trip():
    for m in (WordPiece(VOCAB, max_input_chars_per_word=7, continuing_subword_prefix="##"),
              WordLevel(VOCAB, unk_token=None), CharLevel(VOCAB)):
        again = from_dict(m.to_dict())
        assert type(again) is type(m) and again == m and again.to_dict() == m.to_dict()
    with pytest.raises(ModelError):
        from_dict({"type": "WordPiece"})


def test_vocab_txt_round_trip(tmp_path):
    path = tmp_path / "vocab.txt"
    m = WordPiece(VOCAB)
    m.save_vocab(path)
    assert path.read_text(encoding="utf-8") == "".join(t + "\n" for t in VOCAB)
    assert WordPiece.from_file(path) == m
    assert load_bert_vocab(path) == VOCAB
    with pytest.raises(ModelError):
        WordPiece({"[UNK]": 0, "x": 2}).save_vocab(tmp_path / "holes.txt")
    assert not (tmp_path / "holes.txt").exists()


@pytest.mark.parametrize("data, line, what", [
    (b"a\nb\na\n", 3, "listed twice"),
    (b"a\n\nb\n", 2, "empty line"),
    (b"a\nb\xff\n", 2, "invalid UTF-8"),
])
def test_vocab_txt_errors_name_file_and_line(tmp_path, data, line, what):
    path = tmp_path / "vocab.txt"
    path.write_bytes(data)
    with pytest.raises(FileFormatError, match=what) as info:
        load_bert_vocab(path)
    assert info.value.line == line and info.value.path == str(path)


def test_vocab_txt_line_ends():
    assert parse_bert_vocab(b"a\r\nb\r\n") == ["a", "b"]
    assert parse_bert_vocab(b"a\n \nb") == ["a", "", "b"]  # a whitespace line is the empty token
    assert parse_bert_vocab(b"a\nb") == ["a", "b"]
    with pytest.raises(FileFormatError):
        parse_bert_vocab(b"")


def test_save_vocab_is_atomic_and_checks_tokens(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("old\n")
    with pytest.raises(ModelError):
        save_bert_vocab(path, ["a", "b\nc"])
    assert path.read_text() == "old\n"


def test_encoder_special_tokens_and_batches():
    m = WordPiece(VOCAB)
    e = m.make_encoder(scanner("whitespace"), [("[CLS]", 8)])
    text = "[CLS] unaffable[CLS]low"
    assert e.encode(text, b"\x01").ids == [8, 1, 2, 3, 8, 9]
    assert e.encode(text, b"\x00").ids == [8, 0]  # "[CLS]" is also a word; "unaffable[CLS]low" is unknown
    with pytest.raises(DisallowedSpecialTokenError):
        e.encode(text, b"\x02")
    texts = [text, "", "lower", "aab " * 100]
    batch = e.encode_batch(texts, b"\x01", 2)
    assert [d.ids for d in batch] == [e.encode(t, b"\x01").ids for t in texts]
    assert [d.byte_spans for d in batch] == [e.encode(t, b"\x01").byte_spans for t in texts]
    assert e.encode_batch_ids(texts, b"\x01", 2) == [d.ids for d in batch]
    assert e.encode_ids(text, b"\x01") == batch[0].ids
    assert e.decode_bytes([1, 2, 3, 8]) == b"un##aff##able[CLS]"
    assert e.id_bytes(8) == b"[CLS]" and e.id_bytes(999) is None
    with pytest.raises(UnknownIdError):
        e.decode_bytes([999])
    with pytest.raises((OverflowError, TypeError)):
        e.decode_bytes([1 << 40])
    spans = e.encode_spans("unaffable lower", [(0, 9), (10, 15)])
    assert spans.ids == [1, 2, 3, 12]
    with pytest.raises(InvalidInputError):
        e.encode_spans("abc", [(0, 9)])


def test_encoder_rejects_bad_arguments():
    m = WordPiece(VOCAB)
    with pytest.raises(ValueError):
        m.make_encoder(scanner("no-such-pattern"), [])
    with pytest.raises(TypeError):
        m.make_encoder(FrontEnd.bert((True, True)), [])
    with pytest.raises(TypeError):
        m.make_encoder().encode(b"bytes", b"")
    with pytest.raises(UnicodeEncodeError):  # the Tokenizer replaces lone surrogates first
        m.make_encoder().encode("a\ud800", b"")


def test_long_words_are_linear():
    # A 1 MB word of a repeated character under a vocabulary with a long continuation token
    # that almost matches: the trie walk is bounded by the longest token, not the word.
    long_token = "##" + "a" * 200 + "b"
    m = WordPiece(["[UNK]", "a", "##a", long_token], max_input_chars_per_word=10**7)
    word = "a" * 1_000_000
    ids = enc_of(m).encode_ids(word, b"")
    assert len(ids) == 1_000_000 and ids[0] == 1 and set(ids[1:]) == {2}


# -- against Hugging Face's WordPiece model on generated vocabularies ----------------------------

ALPHABET = "abc你é"
pieces = st.text(alphabet=ALPHABET, min_size=1, max_size=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sets(pieces, max_size=12),
    st.sets(pieces, max_size=12),
    st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=12), min_size=1, max_size=6),
    st.integers(min_value=1, max_value=8),
)
def test_matches_hugging_face_wordpiece(words, continuations, text_words, max_chars):
    tokenizers = pytest.importorskip("tokenizers")
    tokens = ["[UNK]"] + sorted(words) + sorted("##" + c for c in continuations)
    vocab = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
    hf = tokenizers.Tokenizer(tokenizers.models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=max_chars))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    ours = WordPiece(vocab, max_input_chars_per_word=max_chars).make_encoder(scanner("whitespace"))
    text = " ".join(text_words)
    h = hf.encode(text, add_special_tokens=False)
    d = ours.encode(text, b"")
    assert d.ids == h.ids
    assert d.char_offsets(text) == h.offsets


def test_models_do_not_share_cached_words():
    # Two models with the same short words but different ids, used alternately on one thread.
    a = WordPiece(["[UNK]", "the", "cat"])
    b = WordPiece(["the", "[UNK]", "dog", "cat"])
    ea, eb = enc_of(a, "whitespace"), enc_of(b, "whitespace")
    for _ in range(3):
        assert ea.encode_ids("the cat dog", b"") == [1, 2, 0]
        assert eb.encode_ids("the cat dog", b"") == [0, 3, 2]


def test_special_ids_anywhere_in_32_bits():
    m = WordPiece(VOCAB)
    e = m.make_encoder(scanner("whitespace"), [("<big>", (1 << 32) - 1), ("<mid>", 1 << 31)])
    assert e.encode("a<big>b<mid>", b"\x01\x01").ids == [4, (1 << 32) - 1, 7, 1 << 31]
    assert e.decode_bytes([(1 << 32) - 1, 1 << 31, 4]) == b"<big><mid>a"
    assert e.id_bytes(1 << 30) is None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sets(pieces, max_size=15), st.lists(st.text(alphabet=ALPHABET + " ", max_size=15), min_size=1, max_size=4))
def test_word_level_matches_hugging_face(words, texts):
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {t: i for i, t in enumerate(["[UNK]", *sorted(words)])}
    hf = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    ours = WordLevel(vocab).make_encoder(scanner("whitespace"))
    for text in texts:
        h = hf.encode(text, add_special_tokens=False)
        d = ours.encode(text, b"")
        assert (d.ids, d.char_offsets(text)) == (h.ids, h.offsets)


def test_vocab_txt_reads_like_hugging_face(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tests.conftest import shared

    for name in ("bert-base-uncased-vocab.txt", "bert-base-chinese-vocab.txt"):
        path = shared("tokenizers", "bert", name)
        tokens = load_bert_vocab(path)
        hf = tokenizers.models.WordPiece.read_file(str(path))
        assert {t: i for i, t in enumerate(tokens) if t is not None} == hf
        model = WordPiece.from_file(path)
        assert model.get_vocab() == hf
        model.save_vocab(tmp_path / name)  # the empty token (from "\u2028") is written as " "
        assert load_bert_vocab(tmp_path / name) == tokens
        assert tokenizers.models.WordPiece.read_file(str(tmp_path / name)) == hf
    path = tmp_path / "vocab.txt"
    path.write_bytes("a \nb\t\r\nc\u3000\nd\nd \n".encode())
    assert load_bert_vocab(path) == ["a", "b", "c", None, "d"]
    assert tokenizers.models.WordPiece.read_file(str(path)) == {"a": 0, "b": 1, "c": 2, "d": 4}
    with pytest.raises(FileFormatError, match="empty line"):
        parse_bert_vocab(b"a\n\nb\n")
    with pytest.raises(ModelError):
        save_bert_vocab(tmp_path / "v2.txt", ["a "])
