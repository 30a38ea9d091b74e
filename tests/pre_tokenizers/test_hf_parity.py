"""ciyuan's pre-tokenizers against Hugging Face ``tokenizers`` 0.23: the same pieces and the same
character offsets (``pre_tokenize_str``), on corpus lines and generated text, and the same
tokenizer.json form (``to_dict``) read back by both.

Known differences: code points assigned after Hugging Face's Unicode (16) but in the ``regex``
module's (17 and later) are classed differently by the components that use the ``regex``
module's classes (REGEX_CASES below); everything else is identical.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ciyuan.pre_tokenizers as ours
from ciyuan.pre_tokenizers.patterns import GPT2_ORIGINAL_PATTERN, O200K_PATTERN
from tests.hf_components import assigned_text, corpus_lines, hf_pieces, ours_pieces, texts

hf = pytest.importorskip("tokenizers")
hp = hf.pre_tokenizers

_BEHAVIORS = {"Removed": "removed", "Isolated": "isolated", "MergedWithPrevious": "merged_with_previous",
              "MergedWithNext": "merged_with_next", "Contiguous": "contiguous"}


def _cases() -> Dict[str, Tuple[Callable[[], Any], Callable[[], Any], bool]]:
    """name -> (ciyuan factory, HF factory, byte-level pieces)."""
    cases: Dict[str, Tuple[Callable[[], Any], Callable[[], Any], bool]] = {
        "ByteLevel": (ours.ByteLevel, hp.ByteLevel, True),
        "ByteLevel-no-prefix": (lambda: ours.ByteLevel(add_prefix_space=False),
                                lambda: hp.ByteLevel(add_prefix_space=False), True),
        "ByteLevel-no-regex": (lambda: ours.ByteLevel(use_regex=False), lambda: hp.ByteLevel(use_regex=False), True),
        "Metaspace": (ours.Metaspace, hp.Metaspace, False),
        "Metaspace-first": (lambda: ours.Metaspace(prepend_scheme="first"),
                            lambda: hp.Metaspace(prepend_scheme="first"), False),
        "Metaspace-never-nosplit": (lambda: ours.Metaspace("_", "never", split=False),
                                    lambda: hp.Metaspace("_", "never", split=False), False),
        "Whitespace": (ours.Whitespace, hp.Whitespace, False),
        "WhitespaceSplit": (ours.WhitespaceSplit, hp.WhitespaceSplit, False),
        "Punctuation": (ours.Punctuation, hp.Punctuation, False),
        "Punctuation-contiguous": (lambda: ours.Punctuation("Contiguous"), lambda: hp.Punctuation("contiguous"), False),
        "Digits": (ours.Digits, hp.Digits, False),
        "Digits-individual": (lambda: ours.Digits(True), lambda: hp.Digits(True), False),
        "CharDelimiterSplit": (lambda: ours.CharDelimiterSplit(" "), lambda: hp.CharDelimiterSplit(" "), False),
        "UnicodeScripts": (ours.UnicodeScripts, hp.UnicodeScripts, False),
        "Split-gpt2": (lambda: ours.Split({"Regex": GPT2_ORIGINAL_PATTERN}),
                       lambda: hp.Split(hf.Regex(GPT2_ORIGINAL_PATTERN), "isolated"), False),
        "Split-o200k": (lambda: ours.Split({"Regex": O200K_PATTERN}),
                        lambda: hp.Split(hf.Regex(O200K_PATTERN), "isolated"), False),
        "Sequence-bytelevel": (
            lambda: ours.Sequence([ours.Split({"Regex": O200K_PATTERN}), ours.ByteLevel(False, use_regex=False)]),
            lambda: hp.Sequence([hp.Split(hf.Regex(O200K_PATTERN), "isolated"), hp.ByteLevel(False, use_regex=False)]),
            True),
        "Sequence-metaspace": (
            lambda: ours.Sequence([ours.Punctuation(), ours.Metaspace(prepend_scheme="first")]),
            lambda: hp.Sequence([hp.Punctuation(), hp.Metaspace(prepend_scheme="first")]), False),
    }
    for behavior, hf_name in _BEHAVIORS.items():
        for invert in (False, True):
            cases[f"Split-regex-{behavior}-{invert}"] = (
                lambda b=behavior, i=invert: ours.Split({"Regex": r"\s+|[,.]"}, b, i),
                lambda b=hf_name, i=invert: hp.Split(hf.Regex(r"\s+|[,.]"), b, i), False)
            cases[f"Split-string-{behavior}-{invert}"] = (
                lambda b=behavior, i=invert: ours.Split({"String": "e"}, b, i),
                lambda b=hf_name, i=invert: hp.Split("e", b, i), False)
    return cases


CASES = _cases()
# The components whose character classes come from the regex module (a general pattern, the
# wordpunct scanner, \p{N}): its Unicode is newer than Hugging Face's Rust crates and Oniguruma,
# so code points assigned since (e.g. U+3D000) differ; their generated text keeps to characters
# Python's older Unicode assigns (see tests/hf_components.py).
REGEX_CASES = {name for name in CASES if name.startswith(("Split-", "Sequence-", "Whitespace", "Digits"))}
REGEX_CASES.discard("WhitespaceSplit")


def _check(name: str, lines: Any) -> None:
    make_ours, make_hf, byte_level = CASES[name]
    mine, theirs = make_ours(), make_hf()
    for line in lines:
        assert ours_pieces(mine, line, byte_level) == hf_pieces(theirs, line), (name, line)


@pytest.mark.parametrize("name", list(CASES))
def test_corpus_prefixes(name: str) -> None:
    for corpus in ("en", "zh", "multi", "emoji"):
        _check(name, corpus_lines(corpus, 20_000))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_corpora(name: str) -> None:
    for corpus in ("en", "zh", "multi", "emoji"):
        _check(name, corpus_lines(corpus, 400_000))  # whole corpora: the pipelines (test_hf_json_parity)


@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated(name: str, data: st.DataObject) -> None:
    # A general regex engine: Python-assigned characters (see tests/hf_components.py).
    _check(name, [data.draw(assigned_text if name in REGEX_CASES else texts)])


@pytest.mark.parametrize("name", list(CASES))
def test_tokenizer_json_form(name: str) -> None:
    # ciyuan writes HF's dict, and HF reads it back as the same component (and vice versa).
    make_ours, make_hf, _ = CASES[name]
    mine, theirs = make_ours(), make_hf()
    theirs_dict = json.loads(theirs.__getstate__())
    assert ours.from_dict(theirs_dict) == mine
    assert ours.from_dict(mine.to_dict()) == mine
    tok = hf.Tokenizer(hf.models.WordLevel({"x": 0}, unk_token="x"))
    state = json.loads(tok.to_str())
    state["pre_tokenizer"] = mine.to_dict()
    reread = hf.Tokenizer.from_str(json.dumps(state)).pre_tokenizer
    assert json.loads(reread.__getstate__()) == theirs_dict


@pytest.mark.slow
def test_script_table_is_current(tmp_path: Any) -> None:
    # hf_scripts.py is what the generator measures from the installed tokenizers.
    import subprocess
    import sys
    from pathlib import Path

    import ciyuan.pre_tokenizers.hf_scripts as table

    script = Path(__file__).resolve().parents[2] / "scripts" / "gen_hf_script_table.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path)], check=True, capture_output=True)
    assert (tmp_path / "hf_scripts.py").read_bytes() == Path(table.__file__).read_bytes()
