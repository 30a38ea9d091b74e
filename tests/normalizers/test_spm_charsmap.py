"""SentencePiece character maps: ciyuan's darts-clone writer and reader round-trip; the maps
ciyuan ships for the named rules (built from Unicode 17.0, sentencepiece's version) normalize
every code point as sentencepiece's own rules do and hold the same keys and values, whatever
Python's Unicode version; corrupt maps are clear errors."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import _core
from ciyuan.errors import ModelError
from ciyuan.normalizers import spm_charsmap as sc
from ciyuan.reference import spm_normalize as ref

spm = pytest.importorskip("sentencepiece")
pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")

CODE_POINTS = [cp for cp in range(1, 0x110000) if not 0xD800 <= cp <= 0xDFFF]


def bare(charsmap: bytes) -> _core.FrontEnd:
    """The native normalizer with only the character map (no whitespace rules)."""
    o = _core.SpmNormalizerOptions()
    o.charsmap = charsmap
    o.add_dummy_prefix = o.remove_extra_whitespaces = o.escape_whitespaces = False
    return _core.FrontEnd.sentencepiece(o)


def spm_bare(rule: str):
    return spm.SentencePieceNormalizer(rule_name=rule, add_dummy_prefix=False, escape_whitespaces=False,
                                       remove_extra_whitespaces=False)


keys = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), min_size=1, max_size=4)
values = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, values, min_size=1, max_size=40))
def test_build_then_read_gives_the_rules_back(rules):
    blob = sc.build_charsmap(rules)
    assert sc.read_charsmap(blob) == {k.encode(): v.encode() for k, v in rules.items()}


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, values, min_size=1, max_size=30), st.text(max_size=30))
def test_native_normalizer_on_a_built_map_is_the_reference(rules, text):
    text = text.replace("\0", "")
    want, _ = ref.normalize(text, rules, add_dummy_prefix=False, remove_extra_whitespaces=False,
                            escape_whitespaces=False)
    assert _core.spm_normalize(text, bare(sc.build_charsmap(rules)))[0] == want


def test_sentencepiece_reads_a_built_map():
    rules = {"a": "b", "ab": "X", "Ａ": "A", "é": "e\u0301", "\x01": ""}
    proto = pb.NormalizerSpec(name="custom", precompiled_charsmap=sc.build_charsmap(rules),
                                                       add_dummy_prefix=False, escape_whitespaces=False,
                                                       remove_extra_whitespaces=False)
    n = spm.SentencePieceNormalizer(normalizer_spec=proto)
    assert n.normalize("aabÁ\x01é Ａ") == "bXÁe\u0301 A"


def test_identity_is_no_rules():
    assert sc.named_charsmap("identity") == b""
    with pytest.raises(ModelError, match="unknown SentencePiece normalization rule"):
        sc.rule_map("nfc")


def compare_rule(rule: str, code_points) -> None:
    texts = ["a" + chr(cp) + "b" for cp in code_points]
    want = spm_bare(rule).normalize(texts)
    fe = bare(sc.named_charsmap(rule))
    assert [hex(cp) for cp, t, w in zip(code_points, texts, want) if _core.spm_normalize(t, fe)[0] != w] == []


def test_nmt_nfkc_on_a_sample_of_code_points():
    compare_rule("nmt_nfkc", CODE_POINTS[:0x3400] + CODE_POINTS[0xF900:0x10000:3])


# Characters that Python 3.11's Unicode (14.0) does not assign and sentencepiece's (17.0) does:
# modifier Cyrillic (15.0), capitals whose case folding is newer than Python (16.0 Latin and
# Garay, 17.0 Beria Erfe), U+A7F1 MODIFIER LETTER CAPITAL S (17.0, NFKC "S").
NEWER_THAN_PYTHON_311 = [0x1E030, 0x1E06D, 0x1C89, 0xA7CB, 0xA7DC, 0x10D50, 0x10D65, 0x16EA0, 0x16EB8, 0xA7F1]


@pytest.mark.parametrize("rule", sc.RULES)
def test_characters_newer_than_python(rule):
    compare_rule(rule, NEWER_THAN_PYTHON_311)
    text = "".join(chr(cp) + "\u0301" for cp in NEWER_THAN_PYTHON_311)  # composition rules too
    assert _core.spm_normalize(text, bare(sc.named_charsmap(rule)))[0] == spm_bare(rule).normalize(text)


def test_newer_characters_examples():
    assert _core.spm_normalize("\U0001E030", bare(sc.named_charsmap("nmt_nfkc")))[0] == "\u0430"
    assert _core.spm_normalize("\U00010D50\uA7DC", bare(sc.named_charsmap("nfkc_cf")))[0] == "\U00010D70\u019B"


class FakeDatabase:
    """A Unicode database that assigns U+3FFFD (unassigned in Python) as a capital letter."""
    unidata_version = sc.UNICODE_VERSION

    def __init__(self, name: str) -> None:
        self._name = name

    def category(self, ch: str) -> str:
        return "Lu" if ch == "\U0003FFFD" else "Ll"

    def name(self, ch: str, default: str = "") -> str:
        return self._name if ch == "\U0003FFFD" else default

    def lookup(self, name: str) -> str:
        if name == "TEST SMALL LETTER A":
            return "a"
        raise KeyError(name)


def test_capitals_newer_than_python_fold_by_name():
    assert sc._simple_fold("\U0003FFFD", FakeDatabase("TEST CAPITAL LETTER A")) == "a"
    with pytest.raises(ModelError, match="no case folding for U\\+3FFFD"):
        sc._simple_fold("\U0003FFFD", FakeDatabase("TEST CAPITAL LETTER B"))


def test_the_database_is_sentencepieces_version():
    assert sc.unicode_database().unidata_version == sc.UNICODE_VERSION == "17.0.0"


@pytest.mark.slow
@pytest.mark.parametrize("rule", sc.RULES)
def test_every_code_point_as_sentencepiece(rule):
    compare_rule(rule, CODE_POINTS)


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf"])
def test_built_rules_are_sentencepieces_rules(rule):
    """The keys and values equal sentencepiece's own map's."""
    import io
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world abc"] * 20), model_writer=out, vocab_size=20,
                                   normalization_rule_name=rule, minloglevel=2, hard_vocab_limit=False)
    proto = pb.ModelProto.FromString(out.getvalue())
    theirs = sc.read_charsmap(proto.normalizer_spec.precompiled_charsmap)
    ours = sc.read_charsmap(sc.named_charsmap(rule))
    assert {k: v for k, v in ours.items() if theirs.get(k) != v} == {}
    assert {k: v for k, v in theirs.items() if ours.get(k) != v} == {}


@pytest.mark.parametrize("blob, what", [
    (b"\x01\x02", "bytes long"),
    (struct.pack("<I", 4000) + b"\0" * 16, "claims 4000 bytes"),
    (struct.pack("<I", 6) + b"\0" * 16, "not a positive multiple of 4"),
])
def test_truncated_maps_are_model_errors(blob, what):
    with pytest.raises(ModelError, match=what):
        bare(blob)
    with pytest.raises(ModelError):
        sc.read_charsmap(blob)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=5, max_size=200), st.text(max_size=20))
def test_random_maps_never_crash(blob, text):
    try:
        fe = bare(blob)
        _core.spm_normalize(text, fe)
    except ModelError:
        pass


def test_a_value_outside_the_strings_is_a_model_error():
    good = sc.build_charsmap({"a": "b", "c": "d"})  # strings "b\0d\0": "c" -> byte 2
    size = struct.unpack_from("<I", good)[0]
    broken = struct.pack("<I", size) + good[4:4 + size] + b"x"
    with pytest.raises(ModelError, match="points at byte"):
        _core.spm_normalize("c", bare(broken))


@pytest.mark.slow
def test_shipped_maps_are_what_the_generator_writes(tmp_path):
    # src/ciyuan/normalizers/charsmaps is scripts/gen_spm_charsmaps.py's output (Unicode 17.0 from
    # unicodedata2, pinned in the test extra, whatever Python's Unicode); a difference means the
    # builder changed: rerun the script.
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    shipped = repo / "src" / "ciyuan" / "normalizers" / "charsmaps"
    assert f'"unicode_version": "{sc.UNICODE_VERSION}"' in (shipped / "index.json").read_text()
    run = subprocess.run([sys.executable, str(repo / "scripts" / "gen_spm_charsmaps.py"), "--out", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    for path in sorted(shipped.iterdir()):
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), f"{path.name} differs"


def test_named_maps_come_from_the_package():
    # Read, not built, whatever Python's Unicode version: the shipped copy is the named map.
    sc.named_charsmap.cache_clear()
    blob = sc._shipped_charsmap("nmt_nfkc")
    assert blob is not None and sc.named_charsmap("nmt_nfkc") == blob
    from ciyuan.normalizers import SentencePieceNormalizer
    from ciyuan.normalizers.base import NormalizedString

    normalizer = SentencePieceNormalizer("nmt_nfkc", add_dummy_prefix=False)
    assert normalizer.normalize(NormalizedString.from_str("Ａb\tc\x01d")).text == "Ab▁cd"
