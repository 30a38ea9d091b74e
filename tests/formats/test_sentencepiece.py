"""SentencePiece .model files: the schema against sentencepiece's, reading the shared models,
byte-for-byte round trips, writing fresh tokenizers that sentencepiece loads, detection by
content, and one clear error per kind of bad file."""

from __future__ import annotations

import pytest

from ciyuan import Tokenizer
from ciyuan.decoders import SentencePiece
from ciyuan.errors import FileFormatError, ModelError
from ciyuan.formats.detect import detect_format
from ciyuan.formats.sentencepiece import looks_like_sentencepiece, tokenizer_proto
from ciyuan.formats.sentencepiece_proto import ModelProto
from ciyuan.models import Unigram
from ciyuan.normalizers import SentencePieceNormalizer
from tests.conftest import shared

spm = pytest.importorskip("sentencepiece")
pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")

MODELS = ["llama2", "albert", "spm-test", "spm-test-ja"]


def model_path(name):
    return shared("tokenizers", "sentencepiece", f"{name}.model")


def fields(d, prefix=""):
    out = {}
    for f in d.fields:
        enum = sorted((v.name, v.number) for v in f.enum_type.values) if f.enum_type else None
        out[prefix + d.name + "." + f.name] = (f.number, f.type, f.default_value if f.has_default_value else None,
                                               enum)
    for n in d.nested_types:
        out.update(fields(n, prefix + d.name + "."))
    return out


def test_schema_is_sentencepieces():
    ours, theirs = fields(ModelProto.DESCRIPTOR), fields(pb.ModelProto.DESCRIPTOR)
    for name in ("trainer_spec", "normalizer_spec"):
        ours.update(fields(ModelProto.DESCRIPTOR.fields_by_name[name].message_type))
        theirs.update(fields(pb.ModelProto.DESCRIPTOR.fields_by_name[name].message_type))
    assert {k: v for k, v in theirs.items() if ours.get(k) != v} == {}
    assert set(ours) - set(theirs) == {"ModelProto.self_test_data"}  # in the .proto, not in the wheel's copy


@pytest.mark.parametrize("name", MODELS)
def test_load_then_save_gives_the_same_message(name, tmp_path):
    path = model_path(name)
    tok = Tokenizer.from_file(path)
    out = tmp_path / "copy.model"
    tok.save(out)
    assert pb.ModelProto.FromString(out.read_bytes()) == pb.ModelProto.FromString(path.read_bytes())
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("name", MODELS)
def test_detected_by_content(name, tmp_path):
    copy = tmp_path / "model.bin"
    copy.write_bytes(model_path(name).read_bytes())
    assert looks_like_sentencepiece(copy) and detect_format(copy)[0] == "sentencepiece"
    assert Tokenizer.load(copy).encode("Hello world").ids == \
        spm.SentencePieceProcessor(model_file=str(model_path(name))).encode("Hello world")


def fresh_tokenizer(**normalizer):
    pieces = [("<unk>", 0.0), ("<s>", 0.0), ("</s>", 0.0), ("▁", -1.0), ("▁a", -2.0), ("b", -2.5), ("▁ab", -3.0),
              ("a", -3.5), ("c", -4.0), ("<u>", 0.0)]
    model = Unigram(pieces, unk_id=0, types=[2, 3, 3, 1, 1, 1, 1, 1, 1, 4])
    norm = SentencePieceNormalizer("nmt_nfkc", user_defined_symbols=["<u>"], **normalizer)
    decoder = SentencePiece(add_dummy_prefix=norm.add_dummy_prefix,
                            remove_extra_whitespaces=norm.remove_extra_whitespaces)
    return Tokenizer(model, normalizer=norm, decoder=decoder)


@pytest.mark.parametrize("normalizer", [{}, {"treat_whitespace_as_suffix": True}, {"add_dummy_prefix": False},
                                        {"remove_extra_whitespaces": False}])
def test_a_fresh_tokenizer_loads_in_sentencepiece(normalizer, tmp_path):
    tok = fresh_tokenizer(**normalizer)
    out = tmp_path / "fresh.model"
    tok.save(out)
    sp = spm.SentencePieceProcessor(model_file=str(out))
    for text in ["ab  a<u>b", " Ａb c ", "abc\tab", "", "xyz ab"]:
        assert tok.encode(text).ids == sp.encode(text), text
        assert tok.decode(sp.encode(text)) == sp.decode(sp.encode(text))
    assert (sp.bos_id(), sp.eos_id(), sp.pad_id(), sp.unk_id()) == (1, 2, -1, 0)
    back = Tokenizer.from_file(out)
    assert back.encode("ab a").ids == tok.encode("ab a").ids and back.decoder == tok.decoder


def test_trainer_options_are_recorded():
    proto = tokenizer_proto(fresh_tokenizer(), {"character_coverage": 0.98, "control_symbols": ["<x>"]})
    assert abs(proto.trainer_spec.character_coverage - 0.98) < 1e-6
    assert list(proto.trainer_spec.control_symbols) == ["<x>"]
    with pytest.raises(ModelError, match="not a SentencePiece trainer option"):
        tokenizer_proto(fresh_tokenizer(), {"no_such_option": 1})


def test_other_tokenizers_cannot_be_written(tmp_path):
    from ciyuan.models import WordLevel
    tok = Tokenizer(WordLevel(["[UNK]", "a"]))
    with pytest.raises(ModelError, match="only a SentencePiece tokenizer"):
        tok.save(tmp_path / "x.model")
    assert not (tmp_path / "x.model").exists()


def good_proto():
    return pb.ModelProto.FromString(model_path("spm-test").read_bytes())


def write(tmp_path, data):
    p = tmp_path / "bad.model"
    p.write_bytes(data)
    return p


def test_truncated_and_corrupt_files(tmp_path):
    data = model_path("spm-test").read_bytes()
    for broken, what in ((data[: len(data) // 2], "truncated or corrupt"), (b"\n\xff\xff\xff", "truncated or corrupt"),
                         (b"", "no pieces"), (b"\x0a\x03\x0a\x01", "truncated or corrupt")):
        with pytest.raises(FileFormatError, match=what) as e:
            Tokenizer.from_file(write(tmp_path, broken))
        assert "bad.model" in str(e.value)


@pytest.mark.parametrize("edit, what", [
    (lambda p: setattr(p.pieces[5], "piece", p.pieces[6].piece), "pieces collide"),
    (lambda p: setattr(p.pieces[0], "type", 1), "no unknown piece"),
    (lambda p: setattr(p.pieces[5], "type", 2), "2 unknown pieces"),
    (lambda p: setattr(p.trainer_spec, "unk_id", 7), "unk_id is 7"),
    (lambda p: setattr(p.trainer_spec, "model_type", 3), "WORD models are not supported"),
    (lambda p: setattr(p.trainer_spec, "byte_fallback", True), "byte piece <0x00> is missing"),
    (lambda p: setattr(p.pieces[5], "piece", ""), "piece 5 is empty"),
    (lambda p: setattr(p.normalizer_spec, "precompiled_charsmap", b"\x01\x02\x03\x04\x05"), "charsmap"),
])
def test_bad_models_are_one_clear_error(edit, what, tmp_path):
    proto = good_proto()
    edit(proto)
    with pytest.raises(FileFormatError, match=what):
        Tokenizer.from_file(write(tmp_path, proto.SerializeToString()))
