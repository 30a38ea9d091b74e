"""SentencePieceNormalizer: the native normalizer against the plain-Python reference (whitespace
options, user-defined symbols, alignment), the Python normalize() against the native front end,
sentencepiece's own normalizer, serialization and bad options."""

from __future__ import annotations

import functools

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ciyuan import _core
from ciyuan.errors import ModelError
from ciyuan.normalizers import NormalizedString, SentencePieceNormalizer, from_dict
from ciyuan.normalizers.spm_charsmap import build_charsmap, read_charsmap
from ciyuan.reference import spm_normalize as ref
from ciyuan.tokenizer import Tokenizer
from tests.conftest import shared

spm = pytest.importorskip("sentencepiece")

RULES = {"Ａ": "A", "\t": " ", "\x01": "", "ﬁ": "fi", "e\u0301": "é", "ab": "X", "…": "...", "\u3000": " ",
         "s": " s "}
CHARSMAP = build_charsmap(RULES)

TEXT = st.lists(st.one_of(st.sampled_from(list(" \t\x01\u3000▁aAbeｅs\u0301ﬁ…😀") + ["ab", "<u>", "<u", "ab "]),
                          st.characters(blacklist_categories=("Cs",))), max_size=25).map("".join)
FLAG_NAMES = ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces", "treat_whitespace_as_suffix")
FLAGS = st.fixed_dictionaries({name: st.booleans() for name in FLAG_NAMES})
USER = st.lists(st.sampled_from(["<u>", "ab", "▁a", "😀", "e\u0301", " "]), max_size=3, unique=True)


def spans_of(orig, text):
    """Per normalized character: (orig[k], orig[k + 1]) (what the Python normalize gives)."""
    return [(orig[k], orig[k + 1]) for k in range(len(text))]


def assert_is_the_reference(normalizer, text, rules, user, flags):
    """The native normalizer's text and alignment equal the reference's with these rules."""
    want, orig = ref.normalize(text, rules, suffix=flags["treat_whitespace_as_suffix"], user_defined_symbols=user,
                               add_dummy_prefix=flags["add_dummy_prefix"],
                               remove_extra_whitespaces=flags["remove_extra_whitespaces"],
                               escape_whitespaces=flags["escape_whitespaces"])
    got = normalizer.normalize(NormalizedString.from_str(text))
    assert got.text == want
    assert (got.spans or []) == spans_of(orig, want)


@settings(max_examples=400, deadline=None)
@given(TEXT, FLAGS, USER)
def test_native_is_the_reference(text, flags, user):
    n = SentencePieceNormalizer("identity", charsmap=CHARSMAP, user_defined_symbols=user, **flags)
    assert_is_the_reference(n, text, RULES, user, flags)


@settings(max_examples=300, deadline=None)
@given(TEXT, FLAGS)
@example("\U0001E030", dict.fromkeys(FLAG_NAMES, False))  # Unicode 15.0, newer than Python 3.11's
def test_as_sentencepiece_normalizes(text, flags):
    flags.pop("treat_whitespace_as_suffix")
    ours = SentencePieceNormalizer("nmt_nfkc", **flags)
    theirs = spm.SentencePieceNormalizer(rule_name="nmt_nfkc", **flags)
    assert ours.normalize_str(text) == theirs.normalize(text)


def test_alignment_maps_tokens_to_the_original():
    got = SentencePieceNormalizer().normalize(NormalizedString.from_str("  Ａb\t\tc "))
    assert got.text == "▁Ab▁c"
    # The dummy prefix sits at the start of the first kept character; a collapsed run of
    # spaces maps to the whole run.
    assert got.spans == [(2, 2), (2, 3), (3, 4), (4, 6), (6, 7)]
    assert got.original_span(0, 3) == (2, 4)
    assert got.original_span(3, 5) == (4, 7)


def test_normalize_keeps_an_earlier_alignment():
    first = NormalizedString("xxAB", "AB", [(0, 2), (2, 3)])
    got = SentencePieceNormalizer().normalize(first)
    assert got.text == "▁AB" and got.original == "xxAB"
    assert got.original_span(0, 3) == (0, 3)


def test_only_spaces_normalize_to_nothing():
    assert SentencePieceNormalizer().normalize(NormalizedString.from_str(" \t \u3000")).text == ""


def test_round_trips_through_to_dict():
    for n in (SentencePieceNormalizer(), SentencePieceNormalizer("nfkc_cf", treat_whitespace_as_suffix=True),
              SentencePieceNormalizer("identity", charsmap=CHARSMAP, user_defined_symbols=["<u>"])):
        back = from_dict(n.to_dict())
        assert back == n and back.precompiled_charsmap == n.precompiled_charsmap
    assert "bytes" in repr(SentencePieceNormalizer(charsmap=CHARSMAP))


def test_front_end_and_options():
    n = SentencePieceNormalizer("identity", add_dummy_prefix=False, user_defined_symbols=["<u>"])
    o = n.native_options(split_by_whitespace=False)
    assert (o.add_dummy_prefix, o.split_by_whitespace, o.user_defined_symbols) == (False, False, ["<u>"])
    assert o.charsmap == b""
    fe = _core.FrontEnd.sentencepiece(o)
    assert fe.kind == _core.FrontEndKind.SENTENCEPIECE and fe.sentencepiece_options.user_defined_symbols == ["<u>"]


@pytest.mark.parametrize("kwargs, message", [
    ({"rule": "nfc"}, "unknown SentencePiece normalization rule"),
    ({"charsmap": "abc"}, "charsmap must be bytes"),
    ({"charsmap": b"\x05\x00\x00\x00abc"}, "corrupt"),
    ({"add_dummy_prefix": 1}, "add_dummy_prefix must be True or False"),
    ({"user_defined_symbols": "ab"}, "user_defined_symbols"),
    ({"user_defined_symbols": [""]}, "user_defined_symbols"),
])
def test_bad_options_are_model_errors(kwargs, message):
    with pytest.raises(ModelError, match=message):
        SentencePieceNormalizer(**kwargs)


def test_user_symbols_over_characters_without_rules():
    # The symbols start with characters that start no rule (copied in runs when no symbol is
    # there) and go on over characters that do: matched, they are copied unnormalized.
    n = SentencePieceNormalizer("identity", charsmap=CHARSMAP, user_defined_symbols=["▁ﬁ", "中Ａ", "é…"])
    text = "x▁ﬁ中Ａ中é…▁ﬁﬁ é…"
    assert n.normalize_str(text) == "▁x▁ﬁ中Ａ中é…▁ﬁfi▁é…"
    assert SentencePieceNormalizer("identity", charsmap=CHARSMAP).normalize_str(text) == "▁x▁fi中A中é...▁fifi▁é..."
    assert ref.normalize(text, RULES, user_defined_symbols=["▁ﬁ", "中Ａ", "é…"])[0] == "▁x▁ﬁ中Ａ中é…▁ﬁfi▁é…"


def test_lone_surrogates_read_as_replacement():
    assert SentencePieceNormalizer("identity").normalize_str("a\ud800b") == "▁a\ufffdb"


# The native normalizer copies runs of characters that start no key of the charsmap (a table per
# code point, built from the trie) and walks the trie only elsewhere. The tests below use a real
# charsmap (albert's nmt_nfkc, with compositions, compatibility ideographs and fullwidth forms)
# and real user-defined symbols.


@functools.lru_cache(maxsize=None)
def model_normalizer(name):
    """(our normalizer of the model, sentencepiece's normalizer of the model, the charsmap's rules)."""
    path = shared("tokenizers", "sentencepiece", f"{name}.model")
    ours = Tokenizer.from_file(path).normalizer
    rules = {k.decode("utf-8"): v.decode("utf-8") for k, v in read_charsmap(ours.charsmap or b"").items()}
    return ours, spm.SentencePieceNormalizer(model_file=str(path)), rules


# After each character: nothing, a letter, combining marks (compositions start at the character
# before them: "e" + U+0301, "カ" + U+3099), a fullwidth letter and an ideograph.
FOLLOWERS = ["", "a", "\u0301", "\u3099", "\uff21", "中"]


@pytest.mark.slow
def test_every_bmp_character_as_sentencepiece():
    # Every character of the BMP, alone and before each follower: a character wrongly taken as
    # starting no key (e.g. a composition's first character) is copied instead of replaced.
    ours, theirs, _ = model_normalizer("albert")
    plain = SentencePieceNormalizer(charsmap=ours.charsmap)  # sentencepiece's normalizer has no user symbols
    texts = [chr(c) + f for c in range(0x80, 0x10000) if not 0xD800 <= c <= 0xDFFF for f in FOLLOWERS]
    texts += [chr(c) + f for c in range(1, 0x80) for f in FOLLOWERS]
    want = theirs.normalize(texts)
    got = [plain.normalize_str(t) for t in texts]
    assert [(t, g, w) for t, g, w in zip(texts, got, want) if g != w] == []


CJK_PIECES = st.one_of(
    st.sampled_from(["中", "文", "\uf900", "\ufa11", "\u2f00", "，", "。", "！", "「", "」", "Ａ", "ｶ", "ﾞ", "カ", "か",
                     "\u3099", "\u309a", "\u0301", "\u0327", "e", "a", "A", " ", "  ", "\u3000", "\t", "(", ")", "\"",
                     "-", ".", "–", "£", "€", "…", "“", "”", "😀", "한", "\u1100\u1161", "ﬁ", "①", "㍻", "\u00a0"]),
    st.characters(blacklist_categories=("Cs",)),
    st.characters(min_codepoint=0x3000, max_codepoint=0xffef, blacklist_categories=("Cs",)))
CJK_TEXT = st.lists(CJK_PIECES, max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(CJK_TEXT, FLAGS)
def test_a_real_charsmap_with_user_symbols_is_the_reference(text, flags):
    # albert's charsmap and user-defined symbols on CJK-heavy text: the text and the alignment.
    ours, _, rules = model_normalizer("albert")
    user = ours.user_defined_symbols
    n = SentencePieceNormalizer(charsmap=ours.charsmap, user_defined_symbols=user, **flags)
    assert_is_the_reference(n, text, rules, user, flags)


@settings(max_examples=300, deadline=None)
@given(CJK_TEXT)
def test_a_real_charsmap_as_sentencepiece(text):
    ours, theirs, _ = model_normalizer("albert")
    assert SentencePieceNormalizer(charsmap=ours.charsmap).normalize_str(text) == theirs.normalize(text)
