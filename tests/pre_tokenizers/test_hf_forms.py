"""The tokenizer.json forms of the pre-tokenizers and normalizers: older spellings still load,
bad fields are clear errors, and a component ciyuan lacks is named."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ciyuan.normalizers as cn
import ciyuan.pre_tokenizers as cp
from ciyuan.errors import CiyuanError, ModelError
from ciyuan.pre_tokenizers.behavior import BEHAVIORS, apply_behavior
from ciyuan.pre_tokenizers.patterns import CL100K_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN
from ciyuan.reference import split_behavior


def test_ciyuan_split_files_still_load() -> None:
    # ciyuan's own Split dict before tokenizer.json: a name or a regex; gaps now become pieces.
    old = cp.from_dict({"type": "Split", "pattern": "cl100k_base"})
    assert old.native_pattern == "cl100k_base"
    assert cp.from_dict(old.to_dict()) == old and cp.from_dict(old.to_dict()).native_pattern == "cl100k_base"
    digits = cp.from_dict({"type": "Split", "pattern": r"\d+"})
    assert digits.pre_tokenize_str("a12b") == [("a", (0, 1)), ("12", (1, 3)), ("b", (3, 4))]


def test_tokenizer_json_patterns_pick_the_native_scanners() -> None:
    for pattern, name in ((LLAMA3_PATTERN, "llama3"), (QWEN2_PATTERN, "qwen2")):
        assert cp.Split({"Regex": pattern}).native_pattern == name
    # tiktoken's spelling read as Oniguruma reads it is another pattern ({1,3}+ repeats).
    assert cp.Split({"Regex": CL100K_PATTERN}).native_pattern is None
    assert cp.Split({"Regex": CL100K_PATTERN}).pre_tokenize_str("1948")[0][0] == "1948"
    assert cp.Split("cl100k_base").pre_tokenize_str("1948")[0][0] == "194"
    # Not the pieces alone: a behavior or invert keeps the regex path.
    assert cp.Split({"Regex": LLAMA3_PATTERN}, "Removed").native_pattern is None


def test_metaspace_legacy_fields() -> None:
    assert cp.from_dict({"type": "Metaspace", "replacement": "▁", "add_prefix_space": False}).prepend_scheme == "never"
    assert cp.from_dict({"type": "Metaspace", "replacement": "▁", "str_rep": "▁",
                         "add_prefix_space": True}).prepend_scheme == "always"


def test_sequence_of_passthrough_and_scanner_is_native() -> None:
    seq = cp.Sequence([cp.Split({"Regex": LLAMA3_PATTERN}), cp.ByteLevel(add_prefix_space=False, use_regex=False)])
    assert seq.native_pattern == "llama3"
    assert cp.ByteLevel(add_prefix_space=False).native_pattern == "gpt2"
    assert cp.ByteLevel().native_pattern is None  # the prefix space rewrites the text


@pytest.mark.parametrize("data", [
    {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated", "invert": False},
    {"type": "Split", "pattern": {"Glob": "*"}, "behavior": "Isolated", "invert": False},
    {"type": "Split", "pattern": {"String": " "}, "behavior": "Sideways", "invert": False},
    {"type": "Metaspace", "replacement": "ab", "prepend_scheme": "always", "split": True},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes", "split": True},
    {"type": "Digits", "individual_digits": "yes"},
    {"type": "Sequence", "pretokenizers": {"type": "Whitespace"}},
    {"type": "UnicodeWords"},
])
def test_bad_pre_tokenizers_are_clear_errors(data: dict) -> None:
    with pytest.raises(CiyuanError):
        cp.from_dict(data)


def test_missing_component_is_named() -> None:
    with pytest.raises(ModelError, match="UnicodeWords"):
        cp.from_dict({"type": "UnicodeWords"})
    with pytest.raises(ModelError, match="ByteFallbackNormalizer"):
        cn.from_dict({"type": "ByteFallbackNormalizer"})


@pytest.mark.parametrize("data", [
    {"type": "Replace", "pattern": {"Regex": "["}, "content": ""},
    {"type": "Replace", "pattern": {"String": ""}, "content": "x"},
    {"type": "Replace", "pattern": {"String": "a"}},
    {"type": "Precompiled", "precompiled_charsmap": "not base64!"},
    {"type": "Precompiled", "precompiled_charsmap": "AAAA"},
    {"type": "Strip", "strip_left": "yes", "strip_right": True},
])
def test_bad_normalizers_are_clear_errors(data: dict) -> None:
    with pytest.raises(CiyuanError):
        cn.from_dict(data)


def test_normalizer_forms_round_trip() -> None:
    for n in (cn.Strip(left=False), cn.Replace({"Regex": r"\s+"}, " "), cn.Prepend("▁"), cn.Nmt(), cn.StripAccents(),
              cn.Sequence([cn.NFKC(), cn.Lowercase()])):
        assert cn.from_dict(n.to_dict()) == n
    assert cn.Strip(left=False).to_dict() == {"type": "Strip", "strip_left": False, "strip_right": True}


@st.composite
def _cut(draw: st.DrawFn) -> tuple:
    length = draw(st.integers(0, 30))
    points = sorted(draw(st.lists(st.integers(0, length), max_size=12, unique=True)))
    pairs = [(a, b) for a, b in zip(points[::2], points[1::2]) if b > a]
    return length, pairs


@settings(max_examples=300, deadline=None)
@given(cut=_cut(), behavior=st.sampled_from(BEHAVIORS), invert=st.booleans())
def test_behaviors_match_the_reference_twin(cut: tuple, behavior: str, invert: bool) -> None:
    length, matches = cut
    assert apply_behavior(length, matches, behavior, invert) == split_behavior.pieces(length, matches, behavior, invert)


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.sampled_from("ab ,"), max_size=20), behavior=st.sampled_from(BEHAVIORS), invert=st.booleans())
def test_behaviors_match_tokenizers(text: str, behavior: str, invert: bool) -> None:
    hf = pytest.importorskip("tokenizers")
    names = {"Removed": "removed", "Isolated": "isolated", "MergedWithPrevious": "merged_with_previous",
             "MergedWithNext": "merged_with_next", "Contiguous": "contiguous"}
    theirs = hf.pre_tokenizers.Split(hf.Regex("[ ,]"), names[behavior], invert).pre_tokenize_str(text)
    mine = cp.Split({"Regex": "[ ,]"}, behavior, invert).pre_tokenize_str(text)
    assert mine == [(p, tuple(o)) for p, o in theirs]
