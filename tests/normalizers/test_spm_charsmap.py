"""SentencePiece character maps: ciyuan's darts-clone writer and reader round-trip; the maps
ciyuan builds for the named rules normalize every code point as sentencepiece's own rules do
(apart from characters newer than Python's Unicode); corrupt maps are clear errors."""

from __future__ import annotations

import struct
import unicodedata

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


def newer_than_python(cp: int, out: str) -> bool:
    """A difference that comes from sentencepiece's newer Unicode: the character (or what
    sentencepiece made of it) is unassigned in Python's unicodedata."""
    return unicodedata.category(chr(cp)) == "Cn" or any(unicodedata.category(c) == "Cn" for c in out)


def compare_rule(rule: str, code_points) -> None:
    texts = ["a" + chr(cp) + "b" for cp in code_points]
    want = spm_bare(rule).normalize(texts)
    fe = bare(sc.named_charsmap(rule))
    differ = [(cp, w) for cp, t, w in zip(code_points, texts, want) if _core.spm_normalize(t, fe)[0] != w]
    assert [hex(cp) for cp, w in differ if not newer_than_python(cp, w)] == []


def test_nmt_nfkc_on_a_sample_of_code_points():
    compare_rule("nmt_nfkc", CODE_POINTS[:0x3400] + CODE_POINTS[0xF900:0x10000:3])


@pytest.mark.slow
@pytest.mark.parametrize("rule", sc.RULES)
def test_every_code_point_as_sentencepiece(rule):
    compare_rule(rule, CODE_POINTS)


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["nfkc", "nmt_nfkc_cf"])
def test_built_rules_are_sentencepieces_rules(rule):
    """The keys and values equal sentencepiece's own map's, but for newer characters."""
    import io
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world abc"] * 20), model_writer=out, vocab_size=20,
                                   normalization_rule_name=rule, minloglevel=2, hard_vocab_limit=False)
    proto = pb.ModelProto.FromString(out.getvalue())
    theirs = sc.read_charsmap(proto.normalizer_spec.precompiled_charsmap)
    ours = sc.read_charsmap(sc.named_charsmap(rule))
    assert {k: v for k, v in ours.items() if theirs.get(k) != v} == {}
    assert all(any(unicodedata.category(c) == "Cn" for c in k.decode()) for k in theirs.keys() - ours.keys())


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
    # src/ciyuan/normalizers/charsmaps is scripts/gen_spm_charsmaps.py's output for this Unicode
    # version; a difference means the builder changed: rerun the script.
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    shipped = repo / "src" / "ciyuan" / "normalizers" / "charsmaps"
    if '"unicode_version": "%s"' % unicodedata.unidata_version not in (shipped / "index.json").read_text():
        pytest.skip("the shipped maps are for another Unicode version")
    run = subprocess.run([sys.executable, str(repo / "scripts" / "gen_spm_charsmaps.py"), "--out", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    for path in sorted(shipped.iterdir()):
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), f"{path.name} differs"


def test_named_maps_come_from_the_package():
    # Read, not built: the shipped copy decompresses to the builder's map for a small sample.
    sc.named_charsmap.cache_clear()
    blob = sc._shipped_charsmap("nmt_nfkc")
    if sc._SHIPPED.joinpath("index.json").read_text().find(unicodedata.unidata_version) < 0:
        assert blob is None
        return
    assert blob is not None and sc.named_charsmap("nmt_nfkc") == blob
    from ciyuan.normalizers import SentencePieceNormalizer
    from ciyuan.normalizers.base import NormalizedString

    normalizer = SentencePieceNormalizer("nmt_nfkc", add_dummy_prefix=False)
    assert normalizer.normalize(NormalizedString.from_str("Ａb\tc\x01d")).text == "Ab▁cd"
