"""What the fuzz targets found, one test each (docs/reliability.md, "## Fuzzing", lists them):
each input used to end in a Python traceback other than a ciyuan error."""

from __future__ import annotations

import json

import pytest

from ciyuan import Tokenizer
from ciyuan.errors import CiyuanError, FileFormatError, InvalidInputError, ModelError
from ciyuan.models import BPE
from ciyuan.trainers import BpeTrainer


def test_bpe_token_with_a_lone_surrogate_is_a_model_error():
    # fuzz_models: UnicodeEncodeError from str.encode in BPE._token_bytes
    with pytest.raises(ModelError, match="lone surrogate"):
        BPE({"a": 0, "b\ud800": 1}, [])
    assert BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).token_to_id("\udc80") is None


def test_trainer_special_token_with_a_lone_surrogate_is_an_input_error():
    # fuzz_trainers: TypeError from the native config's special_tokens setter
    with pytest.raises(InvalidInputError, match="lone surrogate"):
        BpeTrainer(300, byte_level=True, special_tokens=["<s\udcff>"])


def test_deeply_nested_ciyuan_json_is_a_file_format_error(tmp_path):
    # fuzz_tokenizer_json: RecursionError from json.loads (also found and fixed by tests/reliability)
    path = tmp_path / "deep.json"
    path.write_text('{"ciyuan": 1, "model": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(FileFormatError, match="nested too deeply"):
        Tokenizer.from_file(path)


def _hf_file(tmp_path, **changes):
    tok = Tokenizer.train(["low lower lowest"] * 3, BpeTrainer(vocab_size=30))
    from ciyuan.formats.hf_json import hf_json_dict

    data = hf_json_dict(tok)
    data.update(changes)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data))
    return path


def test_hf_stage_type_of_the_wrong_type_is_a_file_format_error(tmp_path):
    # fuzz_tokenizer_json: TypeError (unhashable list) while naming the unknown type
    path = _hf_file(tmp_path, pre_tokenizer={"type": ["", -2]})
    with pytest.raises(FileFormatError):
        Tokenizer.from_file(path)


def test_hf_added_tokens_not_a_list_is_a_file_format_error(tmp_path):
    # fuzz_tokenizer_json: TypeError ('float' object is not iterable)
    path = _hf_file(tmp_path, added_tokens=0.5)
    with pytest.raises(CiyuanError, match="added tokens must be a list"):
        Tokenizer.from_file(path)


def test_word_level_decoder_separator_of_the_wrong_type_is_a_model_error(tmp_path):
    # fuzz_tokenizer_json: AttributeError ('list' object has no attribute 'join') at decode time
    from ciyuan.decoders import DECODERS

    with pytest.raises(ModelError, match="separator must be a string"):
        DECODERS.from_dict({"type": "WordLevel", "separator": ["x"]})


def test_wordpiece_unknown_word_message_cut_inside_a_character_is_an_input_error():
    # fuzz_models: a WordPiece model without an unk token quotes the first 64 bytes of the word
    # it cannot encode; cut inside a UTF-8 character, the message raised UnicodeDecodeError
    from ciyuan.models import WordPiece

    tok = Tokenizer(model=WordPiece({"a": 0, "b": 1}, unk_token=None, continuing_subword_prefix="▁"))
    with pytest.raises(InvalidInputError, match="cannot be encoded"):
        tok.encode("\ufffd" * 30)  # 90 bytes: byte 64 is inside the 22nd character


def test_subword_nmt_empty_piece_after_a_glossary_is_an_input_error():
    # fuzz_subword_nmt: a glossary match followed inside the word by a newline only left an empty
    # piece, and encoding it raised IndexError (subword-nmt's apply-bpe raises the same)
    from ciyuan.formats.subword_nmt import parse_codes
    from ciyuan.formats.subword_nmt_apply import SubwordNmt

    bpe = SubwordNmt(parse_codes("#version: 0.2\na b\n"), glossaries=[">w/"])
    assert bpe.process_line("a b>w/ c") == "a b@@ >w/ c"
    with pytest.raises(InvalidInputError, match="empty piece"):
        bpe.process_line("a\nb>w/\n a")
