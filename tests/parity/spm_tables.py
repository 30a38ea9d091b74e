"""Piece tables as sentencepiece models (protobufs with identity normalization), for tests that
hold ciyuan's Unigram / SentencePiece BPE encoders (native and reference) against sentencepiece
on generated tables."""

from __future__ import annotations

from typing import Any, List, Tuple

from hypothesis import strategies as st

from ciyuan.reference import unigram as ref

BASE = [("<unk>", 0.0, ref.UNKNOWN), ("<s>", 0.0, ref.CONTROL), ("</s>", 0.0, ref.CONTROL)]
BYTES = [(f"<0x{b:02X}>", 0.0, ref.BYTE) for b in range(256)]


def processor(pieces: List[Tuple[str, float, int]], model_type: int, byte_fallback: bool) -> Any:
    """A SentencePieceProcessor of these pieces (model_type 1: unigram, 2: bpe)."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    for p, s, t in pieces:
        x = m.pieces.add()
        x.piece, x.score, x.type = p, s, t
    m.trainer_spec.model_type = model_type
    m.trainer_spec.byte_fallback = byte_fallback
    m.trainer_spec.unk_id = 0
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.add_dummy_prefix = False
    m.normalizer_spec.remove_extra_whitespaces = False
    m.normalizer_spec.escape_whitespaces = True
    return spm.SentencePieceProcessor(model_proto=m.SerializeToString())


CHARS = "ab▁cé"


@st.composite
def models(draw: Any) -> Tuple[List[Tuple[str, float, int]], bool]:
    """(pieces, byte_fallback): a generated table with user-defined and unused pieces."""
    texts = draw(st.lists(st.text(CHARS, min_size=1, max_size=3), min_size=1, max_size=14, unique=True))
    scores = draw(st.lists(st.sampled_from([-1.0, -1.5, -2.0, -3.0]) | st.floats(-9, -0.125, width=32),
                           min_size=len(texts), max_size=len(texts)))
    kinds = draw(st.lists(st.sampled_from([ref.NORMAL] * 4 + [ref.USER_DEFINED, ref.UNUSED]),
                          min_size=len(texts), max_size=len(texts)))
    if ref.NORMAL not in kinds:
        kinds[0] = ref.NORMAL
    fallback = draw(st.booleans())
    pieces = BASE + list(zip(texts, scores, kinds)) + (BYTES if fallback else [])
    return pieces, fallback


def build(cls: Any, drawn: Tuple[List[Tuple[str, float, int]], bool]) -> Any:
    """A ciyuan model class (Unigram, SentencePieceBPE) over a table ``models()`` drew."""
    pieces, fallback = drawn
    return cls([(p, s) for p, s, _ in pieces], unk_id=0, byte_fallback=fallback, types=[t for _, _, t in pieces])
