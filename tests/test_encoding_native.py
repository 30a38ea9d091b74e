"""Encodings made natively (a batch's, through _core.SlotClass and the native field getters) are
the Encodings the Python path makes: every field equal, settable, composable."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer, _core
from ciyuan.encoding import _NATIVE_SLOTS, Encoding
from ciyuan.models import WordPiece
from ciyuan.normalizers import BertNormalizer
from ciyuan.pre_tokenizers import BertPreTokenizer
from ciyuan.processors import BertProcessing

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "##s", ",", "!", "naive", "你", "好", "un", "##aff",
         "##able"]
FIELDS = ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask", "sequence_ids")
TEXTS = ["Hello, worlds!", "", "naïve 你好 unaffable", "hello " * 40, "x y", "\u00e9" * 3]


def bert(processor: bool = True) -> Tokenizer:
    model = WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]")
    return Tokenizer(model, normalizer=BertNormalizer(), pre_tokenizer=BertPreTokenizer(),
                     post_processor=BertProcessing(("[SEP]", 3), ("[CLS]", 2)) if processor else None,
                     special_tokens={"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3})


def fields(e: Encoding) -> tuple:
    return tuple(getattr(e, f) for f in FIELDS) + (len(e), e.n_sequences, repr(e))


@pytest.mark.parametrize("processor", [True, False])
def test_batch_equals_single_encodes(processor: bool) -> None:
    tok = bert(processor)
    batch = tok.encode_batch(TEXTS, threads=2)
    assert [fields(e) for e in batch] == [fields(tok.encode(t)) for t in TEXTS]
    # Read twice: the second read gives the same values (kept lists, or masks made again).
    assert [fields(e) for e in batch] == [fields(tok.encode(t)) for t in TEXTS]


def test_pairs_and_non_str_inputs_take_the_general_path() -> None:
    tok = bert()
    out = tok.encode_batch(["hello", ("hello", "world")])
    assert out[1].tokens == ["[CLS]", "hello", "[SEP]", "world", "[SEP]"]
    assert out[1].type_ids == [0, 0, 0, 1, 1]
    with pytest.raises(Exception, match="input 0"):
        tok.encode_batch([3])  # type: ignore[list-item]


def test_fields_of_a_batch_encoding_can_be_set_and_composed() -> None:
    tok = bert()
    e = tok.encode_batch(["hello world"])[0]
    assert e.special_tokens_mask == [1, 0, 0, 1]
    e.type_ids = [1, 1, 1, 1]
    assert e.type_ids == [1, 1, 1, 1]
    e.attention_mask[0] = 0  # a mask of a native result is made per read, as Hugging Face's
    assert e.attention_mask == [1, 1, 1, 1]
    assert e.offsets is e.offsets  # offsets are kept once made
    e.truncate(2)
    assert e.ids == [2, 4] and e.overflowing[0].ids == [5, 3]
    e.pad(4)
    assert e.attention_mask == [1, 1, 0, 0] and e.tokens == ["[CLS]", "hello", "[PAD]", "[PAD]"]


def test_native_slots_are_all_of_encodings_slots() -> None:
    assert sorted(_NATIVE_SLOTS) == sorted(Encoding.__slots__)


def test_slot_class_refuses_what_is_not_an_object_slot() -> None:
    class Plain:
        __slots__ = ("a",)

    with pytest.raises(TypeError, match="no slot 'b'"):
        _core.SlotClass(Plain, ["a", "b"])
    with pytest.raises(TypeError):
        _core.SlotClass(3, ["a"])


def test_batch_encodings_are_untracked_until_changed() -> None:
    """A batch's Encodings (and their ids lists) are left out of the cyclic collector's walks;
    anything that may give one a reference back to itself tracks it again first, so a cycle
    through a changed Encoding is still freed."""
    import gc
    import weakref

    tok = bert()
    batch = tok.encode_batch(["hello world", "naïve 你好"])
    for e in batch:
        assert not gc.is_tracked(e) and not gc.is_tracked(e.ids)
        assert not gc.is_tracked(e.offsets)
        assert e.type_ids == [0] * len(e)  # fields read the same untracked
    class Holder:
        pass

    e, holder = batch[0], Holder()
    holder.encoding = e  # type: ignore[attr-defined]
    e.tokens = [holder] * len(e)  # type: ignore[list-item]  # a cycle: e -> tokens -> holder -> e
    assert gc.is_tracked(e)
    ref = weakref.ref(holder)
    del e, holder, batch
    gc.collect()
    assert ref() is None
    for change in (lambda x: x.truncate(1), lambda x: x.pad(9), lambda x: x.set_type_id(1),
                   lambda x: setattr(x, "type_ids", [1] * len(x)), lambda x: x.merge_with(x.copy())):
        x = tok.encode_batch(["hello world"])[0]
        change(x)
        assert gc.is_tracked(x)
    _core.gc_track(3)  # not a container: nothing to do


# Words of the vocabulary, pieces of them, CJK, accents, punctuation and spaces: texts whose
# tokens are known, unknown and split, with offsets through the normalizer.
_PIECES = st.sampled_from(["hello", "world", "s", "un", "aff", "able", "naïve", "Naive", "你", "好", "!", ",", " ",
                           "  ", "\t", "e\u0301", "HELLO", "x", "\u00e9", "\U0001F600", "\u3000"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=12).map("".join), max_size=30), st.booleans(), st.sampled_from([1, 2]))
def test_generated_batches_equal_the_python_path(texts: list, processor: bool, threads: int) -> None:
    """Every field of a batch's Encodings (made natively, untracked, read through the native
    descriptors) equals that of an Encoding made on the Python side from the same native
    result (Encoding._from_native + the processor), in any order of reads, twice."""
    tok = bert(processor)
    batch = tok.encode_batch(texts, threads=threads)
    for text, e in zip(texts, batch):
        data = tok._encoder.encode(text, tok._policy((), "all"))
        raw = Encoding._from_native(tok, data, text)
        want = tok._post_process(raw, None, True) if processor else raw
        assert fields(e) == fields(want)
        assert fields(e)[::-1] == fields(want)[::-1]


def test_native_wrap_is_made_again_only_for_other_added_tokens() -> None:
    from ciyuan.encoding import AddedTokens, NativeWrap

    cls_, sep = AddedTokens([2], ["[CLS]"]), AddedTokens([3], ["[SEP]"])
    wrap = NativeWrap.of([cls_], 0, [sep])
    assert NativeWrap.of([cls_], 0, [sep]) is wrap
    assert NativeWrap.of([cls_], 1, [sep]) is not wrap  # another type id
    other = NativeWrap.of([AddedTokens([2], ["[CLS]"])], 0, [sep])  # equal, but another object
    assert other is not wrap and other.head_ids == wrap.head_ids
    assert NativeWrap.of([], 0, [sep]).head_ids == []
    # Two tokenizers with different templates, batches interleaved: each gets its own tokens.
    a, b = bert(), Tokenizer(bert().model, normalizer=BertNormalizer(), pre_tokenizer=BertPreTokenizer(),
                             post_processor=BertProcessing(("[CLS]", 2), ("[SEP]", 3)),
                             special_tokens={"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3})
    for _ in range(2):
        assert a.encode_batch(["hello"])[0].ids == [2, 4, 3]
        assert b.encode_batch(["hello"])[0].ids == [3, 4, 2]
