"""token_view: each token's kind, bytes and span, the counts, and the boundary differences,
held against Tokenizer.encode and a plain computation (also on hypothesis-generated text)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from ciyuan.serve.token_view import boundary_diff, counts, encoding_view, readable, token_kind


@pytest.fixture(scope="module")
def bpe(tiny_files: Path) -> Tokenizer:
    return Tokenizer.load(tiny_files / "tok-bpe.json")


def _plain_diff(length: int, spans: Dict[str, List[Tuple[int, int]]]) -> List[Tuple[int, List[str]]]:
    """The positions inside the text where some, not all, segmentations cut (the definition)."""
    cuts: Dict[str, Set[int]] = {}
    for name, pieces in spans.items():
        cuts[name] = {p for s, e in pieces if e > s for p in (s, e) if 0 < p < length}
    out = []
    for p in range(1, length):
        by = [n for n in spans if p in cuts[n]]
        if 0 < len(by) < len(spans):
            out.append((p, by))
    return out


def _spans(cuts: List[int], length: int) -> List[Tuple[int, int]]:
    points = [0, *sorted({c for c in cuts if 0 < c < length}), length]
    return list(zip(points, points[1:]))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.lists(st.integers(0, n), max_size=12), min_size=1, max_size=4))))
def test_boundary_diff_is_the_plain_definition(case: Tuple[int, List[List[int]]]) -> None:
    length, cut_lists = case
    spans = {f"t{i}": _spans(cuts, length) for i, cuts in enumerate(cut_lists)}
    assert [(d["pos"], d["by"]) for d in boundary_diff(length, spans)] == _plain_diff(length, spans)


def test_boundary_diff_ignores_empty_pieces() -> None:
    assert boundary_diff(4, {"a": [(0, 0), (0, 4), (4, 4)], "b": [(0, 4)]}) == []


@settings(max_examples=40, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_encoding_view_is_encode(bpe: Tokenizer, text: str) -> None:
    view = encoding_view(bpe, text)
    enc = bpe.encode(text)
    assert view["ids"] == enc.ids
    assert [(t["id"], t["token"], (t["start"], t["end"])) for t in view["tokens"]] == \
        list(zip(enc.ids, enc.tokens, enc.offsets))
    assert b"".join(bytes.fromhex(t["bytes"]) for t in view["tokens"]) == text.encode()  # byte-level: lossless
    assert view["counts"] == counts(text, len(enc.ids)) and view["hidden"] == 0
    for t in view["tokens"]:
        data = bytes.fromhex(t["bytes"])
        assert t["kind"] == token_kind(t["token"], data, False, False)
        assert (t["text"] is None) == (t["kind"] == "byte")


def test_counts() -> None:
    assert counts("", 0) == {"tokens": 0, "characters": 0, "bytes": 0, "bytes_per_token": None}
    assert counts("a中🙂", 2) == {"tokens": 2, "characters": 3, "bytes": 8, "bytes_per_token": 4.0}


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=20))
def test_readable_shows_whole_characters_and_hex_for_the_rest(data: bytes) -> None:
    shown = readable(data)
    try:
        assert shown == data.decode("utf-8")
    except UnicodeDecodeError:
        assert "⟨" in shown and "⟩" in shown


def test_kinds_on_bert_like_tokens(tiny_files: Path) -> None:
    wp = Tokenizer.load(tiny_files / "wp" / "tokenizer.json")
    view = encoding_view(wp, "lazy 🙂")  # no emoji in 200 WordPiece tokens: [UNK]
    kinds = [(t["token"], t["kind"]) for t in view["tokens"]]
    assert kinds[0] == ("[CLS]", "special") and kinds[-1] == ("[SEP]", "special")
    assert ("[UNK]", "unknown") in kinds
