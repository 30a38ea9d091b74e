"""Hugging Face's decoders (their JSON forms and decode_chain) held against `tokenizers`:
the same decoder built on both sides decodes the same token strings to the same text."""

from __future__ import annotations

import json
from typing import Any, Callable, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import decoders
from ciyuan.errors import ModelError

tokenizers = pytest.importorskip("tokenizers")
D = tokenizers.decoders

# (name, HF decoder, ciyuan decoder): every decoder type, with options off their defaults too.
CASES: List[Tuple[str, Callable[[], Any], Callable[[], decoders.Decoder]]] = [
    ("ByteLevel", lambda: D.ByteLevel(), lambda: decoders.ByteLevel()),
    ("WordPiece", lambda: D.WordPiece(), lambda: decoders.WordPiece()),
    ("WordPiece-raw", lambda: D.WordPiece(prefix="@@", cleanup=False), lambda: decoders.WordPiece("@@", False)),
    ("WordPiece-empty", lambda: D.WordPiece(prefix=""), lambda: decoders.WordPiece("")),
    ("Metaspace", lambda: D.Metaspace(), lambda: decoders.Metaspace()),
    ("Metaspace-never", lambda: D.Metaspace(prepend_scheme="never"), lambda: decoders.Metaspace("\u2581", "never")),
    ("Metaspace-first", lambda: D.Metaspace(replacement="_", prepend_scheme="first", split=False),
     lambda: decoders.Metaspace("_", "first", False)),
    ("BPEDecoder", lambda: D.BPEDecoder(), lambda: decoders.BPEDecoder()),
    ("BPEDecoder-@", lambda: D.BPEDecoder(suffix="@"), lambda: decoders.BPEDecoder("@")),
    ("ByteFallback", lambda: D.ByteFallback(), lambda: decoders.ByteFallback()),
    ("Fuse", lambda: D.Fuse(), lambda: decoders.Fuse()),
    ("Strip", lambda: D.Strip(" ", 1, 0), lambda: decoders.Strip(" ", 1, 0)),
    ("Strip-ab", lambda: D.Strip("a", 2, 1), lambda: decoders.Strip("a", 2, 1)),
    ("Replace", lambda: D.Replace("▁", " "), lambda: decoders.Replace("▁", " ")),
    ("Replace-multi", lambda: D.Replace("ab", "<>"), lambda: decoders.Replace("ab", "<>")),
    ("CTC", lambda: D.CTC(), lambda: decoders.CTC()),
    ("CTC-raw", lambda: D.CTC(pad_token="a", word_delimiter_token="b", cleanup=False),
     lambda: decoders.CTC("a", "b", False)),
    ("Llama2", lambda: D.Sequence([D.Replace("▁", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)]),
     lambda: decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                decoders.Strip(" ", 1, 0)])),
    ("Mistral", lambda: D.Sequence([D.Metaspace(), D.ByteFallback(), D.Fuse()]),
     lambda: decoders.Sequence([decoders.Metaspace(), decoders.ByteFallback(), decoders.Fuse()])),
]

# Token strings that exercise every decoder: spaces and their stand-ins, prefixes, suffixes,
# byte tokens (valid, invalid, lower case, Rust's "+" sign), CTC's pad and delimiter, clean-up.
PIECES = ["▁", "▁the", "Ġ", "Ġthe", "##", "##ing", "@@", "</w>", "lo</w>", "@", "<0x41>", "<0xE4>", "<0xB8>",
          "<0xAD>", "<0xff>", "<0x+A>", "<0xGG>", "<0x4>", "<pad>", "|", "a", "b", "ab", " ", "  x ", ".", " .",
          "n't", " 's", "do not", "'", "中", "é", "Ã©", "ä¸", "ŃĤ", "<s>", "_", "aab", "xa"]
tokens_lists = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=12)


def hf_decode(hf: Any, tokens: List[str]) -> Any:
    try:
        return hf.decode(tokens)
    except BaseException as e:  # noqa: BLE001 - HF panics (pyo3 PanicException)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return e


@pytest.mark.parametrize("name, make_hf, make_ours", CASES, ids=[c[0] for c in CASES])
@settings(max_examples=80, deadline=None)
@given(tokens=tokens_lists)
def test_decode_equals_tokenizers(name: str, make_hf: Callable[[], Any], make_ours: Callable[[], Any],
                                  tokens: List[str]) -> None:
    tokens = [t.encode("utf-8", "replace").decode("utf-8") for t in tokens]  # no lone surrogates
    theirs = hf_decode(make_hf(), tokens)
    if isinstance(theirs, BaseException):
        return  # HF panics (Strip on a token of nothing but its content; BPEDecoder on no token)
    assert make_ours().decode_tokens(tokens) == theirs


@pytest.mark.parametrize("name, make_hf, make_ours", CASES, ids=[c[0] for c in CASES])
def test_json_form(name: str, make_hf: Callable[[], Any], make_ours: Callable[[], Any]) -> None:
    """to_dict writes HF's JSON form, and from_dict reads it back."""
    hf_form = json.loads(make_hf().__getstate__())
    ours = make_ours()
    assert ours.to_dict() == hf_form
    assert decoders.from_dict(hf_form) == ours


def test_older_forms() -> None:
    assert decoders.from_dict({"type": "ByteLevel", "errors": "strict"}).errors == "strict"
    assert decoders.from_dict({"type": "ByteLevel"}).to_dict() == {
        "type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    old = decoders.from_dict({"type": "Metaspace", "replacement": "▁", "add_prefix_space": False})
    assert old.prepend_scheme == "never"
    assert decoders.from_dict({"type": "Metaspace", "str_rep": "_", "add_prefix_space": True}).replacement == "_"
    assert decoders.from_dict({"type": "Replace", "pattern": {"Regex": "a+"}, "content": "-"}).decode_tokens(
        ["caab", "a"]) == "c-b-"


def test_regex_replace_equals_tokenizers() -> None:
    """A {"Regex": ...} pattern (only reachable through JSON in `tokenizers`)."""
    data = {"type": "Replace", "pattern": {"Regex": r"\s+|▁"}, "content": "_"}
    hf_tok = tokenizers.Tokenizer(tokenizers.models.WordLevel({"a": 0}, unk_token="a"))
    state = json.loads(hf_tok.to_str())
    state["decoder"] = data
    hf_tok = tokenizers.Tokenizer.from_str(json.dumps(state))
    ours = decoders.from_dict(data)
    for tokens in (["a  b", "▁x"], ["\t", "yy"], []):
        assert ours.decode_tokens(tokens) == hf_tok.decoder.decode(tokens)


@pytest.mark.parametrize("data, message", [
    ({"type": "Metaspace", "replacement": "ab"}, "one character"),
    ({"type": "Metaspace", "prepend_scheme": "sometimes"}, "prepend_scheme"),
    ({"type": "Strip", "content": " ", "start": -1}, "start"),
    ({"type": "Replace", "pattern": {"Regex": "("}, "content": ""}, "not a valid regular expression"),
    ({"type": "Replace", "pattern": {"Glob": "*"}, "content": ""}, "String"),
    ({"type": "Replace", "content": ""}, "pattern"),
    ({"type": "Sequence"}, "decoders"),
    ({"type": "Sequence", "decoders": [{"type": "Unknown"}]}, "unknown decoder type"),
])
def test_bad_descriptions(data: Any, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        decoders.from_dict(data)


def test_no_decoder_is_word_level() -> None:
    """tokenizers without a decoder joins the token strings with spaces: decoders.WordLevel()."""
    from ciyuan import Tokenizer
    from tests.conftest import shared

    path = str(shared("tokenizers", "gpt2", "tokenizer.json"))
    hf = tokenizers.Tokenizer.from_file(path)
    hf.decoder = None
    ours = Tokenizer.from_file(path)
    ours.decoder = decoders.WordLevel()
    ids = hf.encode("Hello world, ça va? 中文 <|endoftext|>").ids
    for skip in (False, True):
        assert ours.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)
