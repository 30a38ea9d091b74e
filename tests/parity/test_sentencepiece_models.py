"""The Unigram and SentencePiece BPE models against sentencepiece itself, for every model in
shared/data/tokenizers/sentencepiece (llama2: BPE with byte fallback; albert, spm-test,
spm-test-ja: Unigram): each ciyuan model is built from sentencepiece's own pieces, scores and
types (SentencePieceProcessor's accessors), and encodes the text sentencepiece normalizes
(``sp.normalize``: spaces already ``▁``); ids must equal ``sp.encode``'s on real corpora and on
generated text, and the Unigram models' n-best lists ``sp.nbest_encode``'s."""

from __future__ import annotations

from typing import Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan.models import SentencePieceBPE, Unigram
from ciyuan.models.pieces import PieceType, SentencePieceModel
from ciyuan.reference import unigram as ref
from tests.conftest import read_prefix, shared
from tests.parity.spm_tables import BASE, BYTES, models, processor

spm = pytest.importorskip("sentencepiece")

MODEL_NAMES = ["llama2", "albert", "spm-test", "spm-test-ja"]
_CACHE: Dict[str, Tuple[object, SentencePieceModel]] = {}


def load(name: str) -> Tuple[object, SentencePieceModel]:
    """sentencepiece's processor and the ciyuan model built from its pieces."""
    if name not in _CACHE:
        path = shared("tokenizers", "sentencepiece", f"{name}.model")
        sp = spm.SentencePieceProcessor(model_file=str(path))
        n = sp.get_piece_size()
        types: List[PieceType] = []
        for i in range(n):
            if sp.is_unknown(i):
                types.append(PieceType.UNKNOWN)
            elif sp.is_control(i):
                types.append(PieceType.CONTROL)
            elif sp.is_unused(i):
                types.append(PieceType.UNUSED)
            elif sp.is_byte(i):
                types.append(PieceType.BYTE)
            else:
                types.append(PieceType.NORMAL)
        # sentencepiece's accessors do not tell USER_DEFINED from NORMAL: its proto does.
        from sentencepiece import sentencepiece_model_pb2 as pb  # sentencepiece's own schema

        proto = pb.ModelProto()
        proto.ParseFromString(path.read_bytes())
        for i, piece in enumerate(proto.pieces):
            if piece.type == int(PieceType.USER_DEFINED):
                types[i] = PieceType.USER_DEFINED
        cls = SentencePieceBPE if proto.trainer_spec.model_type == 2 else Unigram
        model = cls([(sp.id_to_piece(i), sp.get_score(i)) for i in range(n)], unk_id=sp.unk_id(),
                    byte_fallback=PieceType.BYTE in types, types=types)
        _CACHE[name] = (sp, model)
    return _CACHE[name]


def mismatches(name: str, lines: List[str], limit: int = 5) -> List[str]:
    sp, model = load(name)
    encoder = model.make_encoder()
    lines = [line for line in lines if line]
    want = sp.encode(lines, num_threads=1)  # type: ignore[attr-defined]
    got = encoder.encode_batch_ids([sp.normalize(line) for line in lines], b"", 1, [], [])  # type: ignore[attr-defined]
    bad = []
    for line, w, g in zip(lines, want, got):
        if list(g) != w:
            bad.append(f"{line[:60]!r}: sentencepiece {w[:12]} ciyuan {list(g)[:12]}")
            if len(bad) >= limit:
                break
    return bad


CORPORA = {
    "shakespeare": ("corpora", "en", "tinyshakespeare.txt"),
    "gutenberg": ("corpora", "en", "gutenberg_100mb.txt"),
    "jinyong": ("corpora", "zh", "jinyong_16novels.txt"),
    "wagahaiwa": ("corpora", "multi", "wagahaiwa.ja.txt"),
    "udhr": ("corpora", "multi", "udhr_sample.txt"),
    "emoji": ("corpora", "multi", "emoji.txt"),
}
WHOLE = {"shakespeare": 10 << 20, "gutenberg": 4 << 20, "jinyong": 2 << 20, "wagahaiwa": 10 << 20,
         "udhr": 10 << 20, "emoji": 10 << 20}


@pytest.mark.parametrize("corpus", sorted(CORPORA))
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_corpus_prefix_matches_sentencepiece(name, corpus):
    lines = read_prefix(shared(*CORPORA[corpus]), 150_000).splitlines()
    assert mismatches(name, lines) == []


@pytest.mark.slow
@pytest.mark.parametrize("corpus", sorted(CORPORA))
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_whole_corpus_matches_sentencepiece(name, corpus):
    lines = read_prefix(shared(*CORPORA[corpus]), WHOLE[corpus]).splitlines()
    assert mismatches(name, lines) == []


# Generated text: whitespace runs, control characters, emoji, unassigned and private-use code
# points, CJK and Latin letters (no lone surrogates: they are not text).
TEXT = st.text(
    st.sampled_from(" \t\n\u3000\u00a0ab▁") | st.characters(codec="utf-8", exclude_categories=("Cs",))
    | st.sampled_from(["\u0378", "\U000e0001", "\ufffe", "\U0001f600", "\u200d", "\U0001f468", "ｱ", "é"]),
    max_size=40)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MODEL_NAMES), TEXT)
def test_generated_text_matches_sentencepiece(name, text):
    assert mismatches(name, [text]) == []


def nbest_groups(paths: List[Tuple[List[int], float]]) -> List[List[Tuple[int, ...]]]:
    """The paths grouped by score (within float rounding), best first; the last group is left
    out (the k-th cut may fall inside a group of equal scores)."""
    groups: List[Tuple[float, List[Tuple[int, ...]]]] = []
    for ids, score in sorted(paths, key=lambda p: -p[1]):
        if groups and abs(groups[-1][0] - score) <= 1e-5 * abs(score) + 1e-4:
            groups[-1][1].append(tuple(ids))
        else:
            groups.append((score, [tuple(ids)]))
    return [sorted(g) for _, g in groups[:-1]]


@pytest.mark.parametrize("name", ["albert", "spm-test", "spm-test-ja"])
def test_nbest_matches_sentencepiece(name):
    sp, model = load(name)
    lines = read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 20_000).splitlines()[:40]
    lines += ["hello world", "ab☃☃cd", "吾輩は猫である。"]
    for line in lines:
        if not line:
            continue
        proto = sp.nbest_encode_as_proto(line, 8)  # type: ignore[attr-defined]
        want = [([p.id for p in nb.pieces], nb.score) for nb in proto.nbests]
        got = [([i for i, _, _ in path], score) for path, score in model._native.nbest(sp.normalize(line), 8)]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5, abs=1e-3), line
        assert nbest_groups(got) == nbest_groups(want), line


# Generated piece tables (user-defined and unused pieces, byte fallback), as sentencepiece
# models with identity normalization: the native models against sentencepiece directly.
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([1, 2]))
def test_generated_tables_match_sentencepiece(data, model_type):
    pieces, fallback = data.draw(models())
    text = data.draw(st.text("ab▁cé☃x ", min_size=1, max_size=20))
    sp = processor(pieces, model_type, fallback)
    cls = Unigram if model_type == 1 else SentencePieceBPE
    model = cls([(p, s) for p, s, _ in pieces], unk_id=0, byte_fallback=fallback, types=[t for _, _, t in pieces])
    assert model.make_encoder().encode(text.replace(" ", "▁"), b"").ids == sp.encode(text)


# Long texts over tables of large scores with near ties: the running score passes
# sentencepiece's re-centring threshold (100000) every 50 to 100 pieces, at word starts and
# inside words, and the rounding at that size decides the ties.
LARGE_SCORES = st.sampled_from([-1000.0, -2000.0, -1000.0009765625, -2000.001953125, -999.9990234375, -1.0, -2.0,
                                -2.0009765625, -3000.5])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.booleans())
def test_long_texts_with_large_scores_match_sentencepiece(data, fallback):
    texts = ["a", "b", "ab", "▁a", "▁ab", "c", "bc", "▁", "▁b", "abc", "é"]
    scores = data.draw(st.lists(LARGE_SCORES, min_size=len(texts), max_size=len(texts)))
    pieces = BASE + [(p, s, int(PieceType.NORMAL)) for p, s in zip(texts, scores)] + (BYTES if fallback else [])
    words = data.draw(st.lists(st.sampled_from(["ab", " ab", " abc", "c", " c", "b", " ba", "☃", " ", "é"]),
                               min_size=50, max_size=300))
    text = "".join(words)
    sp = processor(pieces, 1, fallback)
    model = Unigram([(p, s) for p, s, _ in pieces], unk_id=0, byte_fallback=fallback, types=[t for _, _, t in pieces])
    want = sp.encode(text)
    assert model.make_encoder().encode(text.replace(" ", "▁"), b"").ids == want
    table = ref.Table(pieces, byte_fallback=fallback)  # and the reference, the other tests' oracle
    assert [table.ids[p] for p, _, _ in ref.viterbi(text.replace(" ", "▁"), table)] == want
