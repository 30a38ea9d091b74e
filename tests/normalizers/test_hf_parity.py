"""ciyuan's normalizers against Hugging Face ``tokenizers`` 0.23: the same normalized text and the
same alignment (the original span of every normalized character, read from Hugging Face through
a tokenizer that makes each character a token), on corpus lines and generated text; and the
same tokenizer.json form.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ciyuan.normalizers as ours
from ciyuan.formats.sentencepiece import load_sentencepiece_proto
from ciyuan.normalizers.spm_charsmap import named_charsmap
from tests.conftest import shared
from tests.hf_components import assigned_text, corpus_lines, texts

hf = pytest.importorskip("tokenizers")
hn = hf.normalizers


def _albert_charsmap() -> bytes:
    proto = load_sentencepiece_proto(shared("tokenizers", "sentencepiece", "albert.model"))
    return bytes(proto.normalizer_spec.precompiled_charsmap)


CASES: Dict[str, Tuple[Callable[[], Any], Callable[[], Any]]] = {
    "NFC": (ours.NFC, hn.NFC),
    "NFD": (ours.NFD, hn.NFD),
    "NFKC": (ours.NFKC, hn.NFKC),
    "NFKD": (ours.NFKD, hn.NFKD),
    "Lowercase": (ours.Lowercase, hn.Lowercase),
    "StripAccents": (ours.StripAccents, hn.StripAccents),
    "NFD+StripAccents": (lambda: ours.Sequence([ours.NFD(), ours.StripAccents()]),
                         lambda: hn.Sequence([hn.NFD(), hn.StripAccents()])),
    "Strip": (ours.Strip, hn.Strip),
    "Strip-left": (lambda: ours.Strip(right=False), lambda: hn.Strip(right=False)),
    "Replace-string": (lambda: ours.Replace(" ", "\u2581"), lambda: hn.Replace(" ", "\u2581")),
    "Replace-longer": (lambda: ours.Replace("e", "<e>"), lambda: hn.Replace("e", "<e>")),
    "Replace-remove": (lambda: ours.Replace("th", ""), lambda: hn.Replace("th", "")),
    "Replace-regex": (lambda: ours.Replace({"Regex": " {2,}"}, " "), lambda: hn.Replace(hf.Regex(" {2,}"), " ")),
    "Replace-regex-w": (lambda: ours.Replace({"Regex": r"\w+"}, "w"), lambda: hn.Replace(hf.Regex(r"\w+"), "w")),
    "Prepend": (lambda: ours.Prepend("\u2581"), lambda: hn.Prepend("\u2581")),
    "Nmt": (ours.Nmt, hn.Nmt),
    "BertNormalizer": (ours.BertNormalizer, hn.BertNormalizer),
    "BertNormalizer-cased": (lambda: ours.BertNormalizer(lowercase=False), lambda: hn.BertNormalizer(lowercase=False)),
    "Precompiled-nmt_nfkc": (lambda: ours.Precompiled(named_charsmap("nmt_nfkc")),
                             lambda: hn.Precompiled(named_charsmap("nmt_nfkc"))),
    "Precompiled-albert": (lambda: ours.Precompiled(_albert_charsmap()), lambda: hn.Precompiled(_albert_charsmap())),
    "Sequence-llama": (lambda: ours.Sequence([ours.Prepend("\u2581"), ours.Replace(" ", "\u2581")]),
                       lambda: hn.Sequence([hn.Prepend("\u2581"), hn.Replace(" ", "\u2581")])),
    "Sequence-t5": (lambda: ours.Sequence([ours.Precompiled(named_charsmap("nmt_nfkc")),
                                           ours.Replace({"Regex": " {2,}"}, " ")]),
                    lambda: hn.Sequence([hn.Precompiled(named_charsmap("nmt_nfkc")),
                                         hn.Replace(hf.Regex(" {2,}"), " ")])),
}


REGEX_CASES = {"Replace-regex-w"}


def _hf_aligned(norm: Any) -> Any:
    """A HF tokenizer whose tokens are the normalized characters: their offsets are the alignment."""
    tok = hf.Tokenizer(hf.models.WordLevel({"x": 0}, unk_token="x"))
    tok.normalizer = norm
    tok.pre_tokenizer = hf.pre_tokenizers.Split(hf.Regex(r"[\s\S]"), "isolated")
    return tok


def _ours(norm: Any, text: str) -> Tuple[str, List[Tuple[int, int]]]:
    ns = norm.normalize(ours.NormalizedString.from_str(text))
    return ns.text, [ns.original_span(i, i + 1) for i in range(len(ns.text))]


def _theirs(norm: Any, tok: Any, text: str) -> Tuple[str, List[Tuple[int, int]]]:
    return norm.normalize_str(text), [tuple(o) for o in tok.encode(text).offsets]


def _check(name: str, lines: Any) -> None:
    make_ours, make_hf = CASES[name]
    mine, theirs = make_ours(), make_hf()
    tok = _hf_aligned(theirs)
    for line in lines:
        assert _ours(mine, line) == _theirs(theirs, tok, line), (name, line)


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
    make_ours, make_hf = CASES[name]
    mine, theirs = make_ours(), make_hf()
    theirs_dict = json.loads(theirs.__getstate__())
    assert ours.from_dict(theirs_dict) == mine
    assert ours.from_dict(mine.to_dict()) == mine
    tok = hf.Tokenizer(hf.models.WordLevel({"x": 0}, unk_token="x"))
    state = json.loads(tok.to_str())
    state["normalizer"] = mine.to_dict()
    reread = hf.Tokenizer.from_str(json.dumps(state)).normalizer
    assert json.loads(reread.__getstate__()) == theirs_dict


@pytest.mark.slow
def test_tables_are_current(tmp_path: Any) -> None:
    # hf_tables.py is what the generator writes from the installed tokenizers and this Python.
    import subprocess
    import sys
    from pathlib import Path

    import ciyuan.normalizers.hf_tables as tables

    script = Path(__file__).resolve().parents[2] / "scripts" / "gen_hf_normalizer_tables.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path)], check=True, capture_output=True)
    assert (tmp_path / "hf_tables.py").read_bytes() == Path(tables.__file__).read_bytes()
