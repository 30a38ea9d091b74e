"""The SentencePiece decoder against sentencepiece's decode on every shared model (random ids,
control, unknown and byte pieces among them) and on hand-made cases."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan.decoders import SentencePiece, from_dict
from tests.conftest import shared

spm = pytest.importorskip("sentencepiece")
pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")

MODELS = ["llama2", "albert", "spm-test", "spm-test-ja"]


def id_bytes(proto, i):
    """What the native models give for an id (the brief's id_bytes rule)."""
    p = proto.pieces[i]
    if p.type == 3:
        return b""
    if p.type == 6:
        return bytes([int(p.piece[3:5], 16)])
    return p.piece.encode()


def decoder_of(proto):
    unk = next(p.piece for p in proto.pieces if p.type == 2)
    return SentencePiece(unk_piece=unk, unk_surface=proto.trainer_spec.unk_surface,
                         add_dummy_prefix=proto.normalizer_spec.add_dummy_prefix,
                         remove_extra_whitespaces=proto.normalizer_spec.remove_extra_whitespaces)


def load(name):
    data = shared("tokenizers", "sentencepiece", f"{name}.model").read_bytes()
    return pb.ModelProto.FromString(data), spm.SentencePieceProcessor(model_proto=data)


@pytest.mark.parametrize("name", MODELS)
def test_random_ids_decode_as_sentencepiece(name):
    proto, sp = load(name)
    dec = decoder_of(proto)
    n = len(proto.pieces)
    rare = [i for i in range(n) if proto.pieces[i].type != 1] + \
        [i for i in range(n) if proto.pieces[i].piece.startswith("▁")][:100]
    rng = random.Random(13)
    for _ in range(3000):
        ids = [rng.choice(rare) if rng.random() < 0.5 else rng.randrange(n) for _ in range(rng.randrange(8))]
        assert dec.decode([id_bytes(proto, i) for i in ids]) == sp.decode(ids), ids


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_byte_runs_decode_as_sentencepiece(data):
    proto, sp = load("llama2")
    byte_ids = [i for i, p in enumerate(proto.pieces) if p.type == 6]
    ids = data.draw(st.lists(st.one_of(st.sampled_from(byte_ids), st.integers(0, len(proto.pieces) - 1)),
                             max_size=12))
    assert decoder_of(proto).decode([id_bytes(proto, i) for i in ids]) == sp.decode(ids)


def test_hand_made_cases():
    d = SentencePiece()
    assert d.decode([b"\xe2\x96\x81Hello", b"\xe2\x96\x81world"]) == "Hello world"
    assert d.decode([b"", b"\xe2\x96\x81a"]) == "a"  # a control piece first: the space still goes
    assert d.decode([b"<unk>", b"\xe2\x96\x81a"]) == " \u2047  a"
    assert d.decode([b"\xe4", b"\xb8", b"\xad", b"\xff"]) == "中\ufffd"
    assert d.decode([b"\xe2\x96\x81", b"\xe2\x96\x81a"]) == "a"  # remove_extra_whitespaces: every leading ▁
    keep = SentencePiece(remove_extra_whitespaces=False)
    assert keep.decode([b"\xe2\x96\x81", b"\xe2\x96\x81a"]) == " a"
    none = SentencePiece(add_dummy_prefix=False, remove_extra_whitespaces=False)
    assert none.decode([b"\xe2\x96\x81a"]) == " a"


def test_round_trips_through_to_dict():
    d = SentencePiece(unk_piece="[UNK]", unk_surface="?", add_dummy_prefix=False)
    assert from_dict(d.to_dict()) == d
