"""tokenizer.json: hostile files (one clear FileFormatError each, naming the file and the place),
and what ciyuan writes loads in `tokenizers` and encodes identically."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from ciyuan import Tokenizer
from ciyuan.convert import convert
from ciyuan.errors import FileFormatError, ModelError
from ciyuan.formats.detect import detect_format
from ciyuan.formats.hf_json import MAX_FILE_BYTES, looks_like_hf_json, read_hf_json
from ciyuan.models import WordLevel
from ciyuan.trainers import BpeTrainer
from tests.conftest import read_prefix, shared

tokenizers = pytest.importorskip("tokenizers")

WORDS = ["the quick brown fox jumps over the lazy dog", "pack my box with five dozen liquor jugs",
         "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich", "我能吞下玻璃而不伤身体。",
         "  spaces   and\ttabs\nand lines\r\n", "1948 12345 3.14159 $100 #tag @user e-mail", "🙂👍🏽 ok"]


def minimal(**changes: Any) -> Dict[str, Any]:
    """A small valid tokenizer.json (WordLevel), with ``changes`` applied at the top."""
    data: Dict[str, Any] = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1, "b": 2}, "unk_token": "[UNK]"},
    }
    data.update(changes)
    return data


def write(tmp_path: Path, data: Any, name: str = "tokenizer.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_minimal_loads_and_is_detected(tmp_path: Path) -> None:
    path = write(tmp_path, minimal())
    assert detect_format(path)[0] == "huggingface"
    assert Tokenizer.from_file(path).encode("a").ids == [1]
    assert Tokenizer.load(path).encode("b").ids == [2]


def test_ciyuan_json_is_not_taken_for_tokenizer_json(tmp_path: Path) -> None:
    tok = Tokenizer(WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    tok.save(tmp_path / "mine.json")
    assert not looks_like_hf_json((tmp_path / "mine.json").read_bytes())
    assert detect_format(tmp_path / "mine.json")[0] == "ciyuan"


BPE_MODEL = {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}


@pytest.mark.parametrize("data, where, message", [
    (minimal(normalizer={"type": "Frobnicate"}), "normalizer", "'Frobnicate' is not one ciyuan has"),
    (minimal(model={"type": "Frobnicate", "vocab": {}}), "model", "'Frobnicate' is not one ciyuan has"),
    (minimal(model={"vocab": {"a": 0}, "unk_token": "a", "weird": 1, "type": None}), "model", ""),
    (minimal(model={"type": "WordLevel", "vocab": {"a": 0, "b": 99999999999}, "unk_token": "a"}),
     "model.vocab['b']", "out of range"),
    (minimal(model={"type": "WordLevel", "vocab": {"a": 0, "b": -1}, "unk_token": "a"}),
     "model.vocab['b']", "out of range"),
    (minimal(model={"type": "WordLevel", "vocab": {"a": 0, "b": 0}, "unk_token": "a"}),
     "model.vocab", "share the id 0"),
    (minimal(model=dict(BPE_MODEL, merges=["a b", "ab c"])), "model.merges[1]", "'c', which is not in"),
    (minimal(model=dict(BPE_MODEL, merges=["a b c"])), "model.merges[0]", "not two tokens"),
    (minimal(model={"type": "Unigram", "vocab": [["a", -1.0], ["a", -2.0]], "unk_id": 0}), "model.vocab[1]",
     "given twice"),
    (minimal(added_tokens=[{"id": 3, "content": "<s>"}, {"id": 4, "content": "<s>"}]), "added_tokens",
     "given twice"),
    (minimal(added_tokens=[{"id": "x", "content": "<s>"}]), "added_tokens", "integer id"),
    (minimal(model=None), "model", "missing"),
    ([1, 2], "", "expected a JSON object"),
])
def test_hostile_contents(tmp_path: Path, data: Any, where: str, message: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(FileFormatError) as info:
        Tokenizer.from_file(path) if isinstance(data, dict) else read_hf_json(path)
    text = str(info.value)
    assert text.startswith(str(path)), text
    assert where in text and message in text, text


def test_duplicate_vocabulary_key(tmp_path: Path) -> None:
    """JSON parsers keep the last of two equal keys silently; the gap it leaves in the ids
    sends the reader looking for it."""
    raw = json.dumps(minimal()).replace('"a": 1', '"a": 1, "b": 3, "a": 2', 1)
    raw = raw.replace('"b": 2}', '"c": 4}', 1)
    path = write(tmp_path, raw)
    with pytest.raises(FileFormatError, match=r"model.vocab: the token 'a' is given twice"):
        Tokenizer.from_file(path)


def test_truncated_json(tmp_path: Path) -> None:
    full = json.dumps(minimal(model={"type": "BPE", "vocab": {f"t{i}": i for i in range(500)}, "merges": []}))
    path = write(tmp_path, full[: len(full) // 2])
    with pytest.raises(FileFormatError, match=r"tokenizer.json:1: not valid JSON: the file ends inside"):
        Tokenizer.from_file(path)


def test_deeply_nested_json(tmp_path: Path) -> None:
    path = write(tmp_path, '{"version": "1.0", "added_tokens": [], "model": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(FileFormatError, match="nests too deeply"):
        Tokenizer.from_file(path)


def test_deeply_nested_sequence(tmp_path: Path) -> None:
    """Valid JSON, but Sequences nested 400 deep (800 JSON levels): refused at the stage."""
    depth = 400
    pre = '{"type": "Sequence", "pretokenizers": [' * depth + '{"type": "WhitespaceSplit"}' + "]}" * depth
    raw = json.dumps(minimal(pre_tokenizer="PRE")).replace('"PRE"', pre)
    path = write(tmp_path, raw)
    with pytest.raises(FileFormatError, match="pre_tokenizer"):
        Tokenizer.from_file(path)


def test_a_gigabyte_string_is_refused_before_reading(tmp_path: Path) -> None:
    """A file holding a 1 GB string: refused by its size, before anything is read (the file is
    sparse, so the test writes a few bytes)."""
    path = tmp_path / "tokenizer.json"
    with open(path, "wb") as f:
        f.write(b'{"version": "1.0", "added_tokens": [], "model": {"vocab": {"')
        f.truncate((1 << 30) + 64)
    assert path.stat().st_size > MAX_FILE_BYTES
    with pytest.raises(FileFormatError, match="bytes; a tokenizer.json is at most"):
        Tokenizer.from_file(path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_bytes(json.dumps(minimal()).encode().replace(b'"a"', b'"\xff"'))
    with pytest.raises(FileFormatError, match="invalid UTF-8"):
        Tokenizer.from_file(path)


# -- writing: tokenizers loads what ciyuan writes ---------------------------------------------------

def assert_hf_same(hf: Any, ours: Tokenizer, lines: List[str]) -> None:
    for line in lines:
        want, got = hf.encode(line), ours.encode(line)
        assert got.ids == want.ids, line
        assert got.tokens == want.tokens, line
        assert got.offsets == want.offsets, line
        for skip in (False, True):
            assert ours.decode(got.ids, skip_special_tokens=skip) == hf.decode(want.ids, skip_special_tokens=skip)


def test_trained_byte_level_bpe_loads_in_tokenizers(tmp_path: Path) -> None:
    tok = Tokenizer.train(WORDS * 5, BpeTrainer(vocab_size=300, byte_level=True))
    tok.add_special_tokens(["<|endoftext|>"])
    tok.save(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert_hf_same(hf, tok, WORDS + ["a<|endoftext|>b"])


def test_convert_to_huggingface_target(tmp_path: Path) -> None:
    tok = Tokenizer.train(WORDS * 5, BpeTrainer(vocab_size=300, byte_level=True))
    notes = convert(tok, tmp_path / "out", to="huggingface")
    assert notes == [] or all("special" in n for n in notes)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    assert_hf_same(hf, tok, WORDS)


def test_component_without_counterpart_is_refused(tmp_path: Path) -> None:
    from ciyuan.pre_tokenizers import ZhSentence

    tok = Tokenizer(WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"), pre_tokenizer=ZhSentence())
    with pytest.raises(ModelError, match="no Hugging Face counterpart"):
        tok.save(tmp_path / "tokenizer.json")


@pytest.mark.slow
def test_cl100k_written_as_tokenizer_json(tmp_path: Path) -> None:
    """cl100k_base (ranks, no merges) written with the merges that rebuild its ranks and
    ignore_merges: tokenizers encodes every line as ciyuan does."""
    tok = Tokenizer.from_tiktoken(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"), "cl100k_base")
    tok.save(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    lines = (read_prefix(shared("corpora", "en", "taylorswift.txt"), 1 << 20).splitlines()
             + read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 1 << 19).splitlines()
             + shared("corpora", "multi", "udhr_sample.txt").read_text(encoding="utf-8").splitlines())
    assert_hf_same(hf, tok, lines)


def corpus_lines() -> List[str]:
    return (shared("corpora", "en", "tinyshakespeare.txt").read_text(encoding="utf-8").splitlines()
            + read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 2 << 20).splitlines()
            + shared("corpora", "multi", "udhr_sample.txt").read_text(encoding="utf-8").splitlines())


@pytest.mark.slow
@pytest.mark.parametrize("source", ["cl100k_base", "gpt2_files"])
def test_round_trip_keeps_every_encoding(source: str, tmp_path: Path) -> None:
    """cl100k_base (.tiktoken) and GPT-2's encoder.json + vocab.bpe, written as tokenizer.json
    and read back: every line encodes to the same ids and offsets (and still on the native path)."""
    if source == "cl100k_base":
        tok = Tokenizer.from_tiktoken(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"), "cl100k_base")
    else:
        gpt2 = ("tokenizers", "gpt2")
        tok = Tokenizer.from_gpt2(shared(*gpt2, "encoder.json"), shared(*gpt2, "vocab.bpe"))
    convert(tok, tmp_path / "tokenizer.json")
    back = Tokenizer.from_file(tmp_path / "tokenizer.json")
    assert back._native_path
    lines = corpus_lines()
    assert back.encode_batch_ids(lines) == tok.encode_batch_ids(lines)
    for want, got in zip(tok.encode_batch(lines), back.encode_batch(lines)):
        assert got.offsets == want.offsets
    assert back.decode_batch(tok.encode_batch_ids(lines)) == lines


def _trainers() -> Dict[str, Any]:
    from ciyuan import trainers

    return {"bpe_char": trainers.BpeTrainer(vocab_size=400),
            "bpe_suffix": trainers.BpeTrainer(vocab_size=400, end_of_word_suffix="</w>"),
            "word_level": trainers.WordLevelTrainer(vocab_size=500), "char_level": trainers.CharLevelTrainer()}


@pytest.mark.parametrize("kind", ["bpe_char", "bpe_suffix", "word_level", "char_level"])
def test_ciyuan_trained_models_write_as_tokenizers_reads_them(kind: str, tmp_path: Path) -> None:
    """Every trainer's default pipeline, written as tokenizer.json: tokenizers gives the same
    ids, tokens, offsets and text, and ciyuan reads it back the same (WordPunct is written as
    Whitespace, BPESuffix as BPEDecoder, CharLevel as WordLevel behind a one-character Split)."""
    lines = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 60_000).splitlines()
    tok = Tokenizer.train(lines, _trainers()[kind])
    tok.save(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    back = Tokenizer.from_file(tmp_path / "tokenizer.json")
    for other in (hf, back):
        for line in lines[:400] + ["  x  y ", ""]:
            want, got = tok.encode(line), other.encode(line)
            assert (got.ids, got.tokens, got.offsets) == (want.ids, want.tokens, want.offsets), line
            assert other.decode(got.ids, skip_special_tokens=False) == tok.decode(want.ids), line


def test_sentencepiece_normalizer_is_refused_by_name(tmp_path: Path) -> None:
    from ciyuan import trainers

    lines = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 60_000).splitlines()
    tok = Tokenizer.train(lines, trainers.UnigramTrainer(vocab_size=300))
    with pytest.raises(ModelError, match="SentencePieceNormalizer.*no Hugging Face counterpart"):
        tok.save(tmp_path / "tokenizer.json")


def test_other_targets_name_the_added_tokens_they_lose(tmp_path: Path) -> None:
    from ciyuan.convert import ConversionError

    tok = Tokenizer.train(WORDS * 5, BpeTrainer(vocab_size=300, byte_level=True))
    tok.add_tokens(["<new>"])
    with pytest.raises(ConversionError, match="added tokens \\('<new>'\\)"):
        convert(tok, tmp_path / "x.tiktoken")
    convert(tok, tmp_path / "tokenizer.json")  # tokenizer.json holds them
    assert Tokenizer.from_file(tmp_path / "tokenizer.json").encode("a<new>").tokens[-1] == "<new>"


def test_tokenizer_json_with_the_model_first(tmp_path: Path) -> None:
    """Keys in another order (the model first, its vocabulary filling the first kilobytes): still
    read as a tokenizer.json."""
    data = minimal()
    data["model"]["vocab"].update({f"w{i}": i + 3 for i in range(2000)})
    ordered = {"model": data.pop("model"), **data}
    path = write(tmp_path, json.dumps(ordered).replace('"added_tokens": [], ', ""), name="odd.json")
    assert Tokenizer.from_file(path).encode("w7").ids == [10]


def test_cli_convert_tiktoken_to_tokenizer_json(tmp_path: Path, capsys: Any) -> None:
    """`ciyuan convert x.tiktoken out/tokenizer.json`, then `ciyuan encode -t` on it."""
    from ciyuan.cli import main

    src = shared("tokenizers", "tiktoken", "cl100k_base.tiktoken")
    assert main(["convert", str(src), str(tmp_path / "out" / "tokenizer.json")]) == 0
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    tok = Tokenizer.from_file(tmp_path / "out" / "tokenizer.json")
    want = Tokenizer.from_tiktoken(src, "cl100k_base").encode("hello world 1948").ids
    assert tok.encode("hello world 1948").ids == hf.encode("hello world 1948").ids == want
