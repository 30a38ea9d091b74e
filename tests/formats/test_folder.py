"""Tokenizer.from_pretrained on model folders as people have them, held against transformers'
AutoTokenizer reading the same folder (offline: transformers never reaches the Hub here)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest

from ciyuan import Tokenizer
from ciyuan.errors import FileFormatError
from ciyuan.formats.folder import read_model_folder
from tests.conftest import shared

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# folder name -> (files to copy: target name -> shared/data path parts, tokenizer_config.json)
FOLDERS: Dict[str, Any] = {
    "gpt2": ({"vocab.json": ("gpt2", "encoder.json"), "merges.txt": ("gpt2", "vocab.bpe")},
             {"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
              "unk_token": "<|endoftext|>", "model_max_length": 1024}),
    "llama2": ({"tokenizer.model": ("sentencepiece", "llama2.model")},
               {"tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "add_eos_token": False,
                "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "legacy": False}),
    "llama2-eos": ({"tokenizer.model": ("sentencepiece", "llama2.model")},
                   {"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": False, "add_eos_token": True,
                    "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": False, "normalized": False,
                                  "rstrip": False, "single_word": False, "special": True},
                    "eos_token": "</s>", "unk_token": "<unk>"}),
    "albert": ({"tokenizer.model": ("sentencepiece", "albert.model")},
               {"tokenizer_class": "AlbertTokenizer", "cls_token": "[CLS]", "sep_token": "[SEP]",
                "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "[MASK]"}),
    "bert-uncased": ({"vocab.txt": ("bert", "bert-base-uncased-vocab.txt")},
                     {"tokenizer_class": "BertTokenizer", "do_lower_case": True}),
    "bert-chinese": ({"vocab.txt": ("bert", "bert-base-chinese-vocab.txt")},
                     {"tokenizer_class": "BertTokenizer", "do_lower_case": False}),
    "gpt2-json": ({"tokenizer.json": ("gpt2", "tokenizer.json")}, None),
}


def make_folder(root: Path, name: str) -> Path:
    files, config = FOLDERS[name]
    folder = root / name
    folder.mkdir()
    for target, parts in files.items():
        shutil.copy(shared("tokenizers", *parts), folder / target)
    if config is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def corpus_lines(per_file: int) -> List[str]:
    paths = [("en", "tinyshakespeare.txt"), ("zh", "jinyong_16novels.txt"), ("multi", "udhr_sample.txt"),
             ("multi", "wagahaiwa.ja.txt"), ("multi", "emoji.txt")]
    lines: List[str] = []
    for parts in paths:
        with open(shared("corpora", *parts), encoding="utf-8") as f:
            lines += [line.rstrip("\n") for line in itertools.islice(f, per_file)]
    return lines + ["``Quoted'' Café naïve ÅNGSTRÖM", "[CLS] a [MASK] b[SEP]", "x  y\t z", "store-houses"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("models")
    for name in FOLDERS:
        make_folder(root, name)
    return root


def auto_tokenizer(folder: Path) -> Any:
    import transformers  # a test dependency: the peer, never skipped

    return transformers.AutoTokenizer.from_pretrained(str(folder))


def sentencepiece_where_peers_differ(folder: Path, hf: Any, lines: List[str], want: List[List[int]]) -> List[List[int]]:
    """transformers >= 5 turns a tokenizer.model into a `tokenizers` BPE whose merges are ordered by
    piece id, not score; on Llama 2's runs of spaces (pieces scored -1e9) that differs from
    SentencePiece, which the model was trained with. Where the two peers disagree, SentencePiece's
    ids (inside transformers' own BOS/EOS) are the ones ciyuan must give."""
    model = folder / "tokenizer.model"
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8")) if model.exists() else {}
    if not config.get("tokenizer_class", "").startswith("Llama"):
        return want
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(model))
    empty = hf("")["input_ids"]
    head = [i for i in empty if i == sp.bos_id()]
    tail = [i for i in empty if i == sp.eos_id()]
    fixed = []
    for line, ids in zip(lines, want):
        core = sp.encode(line)
        fixed.append(ids if ids[len(head):len(ids) - len(tail)] == core else head + core + tail)
    return fixed


def check_same(folder: Path, lines: List[str]) -> None:
    hf = auto_tokenizer(folder)
    ours = Tokenizer.from_pretrained(folder)
    want = sentencepiece_where_peers_differ(folder, hf, lines, hf(lines)["input_ids"])
    got = [e.ids for e in ours.encode_batch(lines)]
    bad = [(line, w, g) for line, w, g in zip(lines, want, got) if w != g]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ; first: {bad[0]!r}"
    pairs = list(zip(lines[:50], lines[50:100]))
    assert [e.ids for e in ours.encode_batch(pairs)] == hf([a for a, _ in pairs], [b for _, b in pairs])["input_ids"]


@pytest.mark.parametrize("name", list(FOLDERS))
def test_folder_matches_transformers(folders: Path, name: str) -> None:
    check_same(folders / name, corpus_lines(300))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FOLDERS))
def test_folder_matches_transformers_corpora(folders: Path, name: str) -> None:
    check_same(folders / name, corpus_lines(5000))


def test_folder_kinds(folders: Path, tmp_path: Path) -> None:
    assert read_model_folder(folders / "gpt2").kind == "gpt2"
    assert read_model_folder(folders / "llama2").kind == "sentencepiece"
    assert read_model_folder(folders / "bert-uncased").kind == "bert_vocab"
    assert read_model_folder(make_folder(tmp_path, "gpt2-json")).kind == "tokenizer.json"
    tiktoken_folder = tmp_path / "llama3-like"
    tiktoken_folder.mkdir()
    shutil.copy(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"), tiktoken_folder / "tokenizer.model")
    assert read_model_folder(tiktoken_folder).kind == "tiktoken"


def test_bos_and_eos_from_config(folders: Path) -> None:
    bos = Tokenizer.from_pretrained(folders / "llama2")
    eos = Tokenizer.from_pretrained(folders / "llama2-eos")
    plain = Tokenizer.from_file(folders / "llama2" / "tokenizer.model")
    body = plain.encode("Hello world").ids
    assert bos.encode("Hello world").ids == [1] + body
    assert eos.encode("Hello world").ids == body + [2]
    assert bos.encode("Hello world", add_special_tokens=False).ids == body


def test_added_tokens_decoder_and_map(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, "llama2")
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["added_tokens_decoder"] = {"32000": {"content": "<pad>", "special": True, "lstrip": False,
                                                "rstrip": False, "normalized": False, "single_word": False}}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    (folder / "special_tokens_map.json").write_text(json.dumps({"pad_token": "<pad>",
                                                                "additional_special_tokens": ["</s>"]}))
    info = read_model_folder(folder)
    assert info.special_content("pad_token") == "<pad>" and info.added[32000].content == "<pad>"
    assert [t.content for t in info.additional] == ["</s>"]
    tok = Tokenizer.from_pretrained(folder)
    assert tok.added_tokens[32000].content == "<pad>" and tok.added_tokens[32000].special
    assert tok.added_tokens[2].content == "</s>"
    assert tok.decode([32000]) == "<pad>"
    # (text after the token: transformers gives it no "▁" (legacy=False), see docs/formats.md)
    assert tok.encode("x<pad>").ids == auto_tokenizer(folder)("x<pad>")["input_ids"]


def test_hub_id_is_refused_with_advice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileFormatError, match="Hub id.*never downloads.*--local-dir"):
        Tokenizer.from_pretrained("meta-llama/Llama-2-7b-hf")
    with pytest.raises(FileFormatError, match="no such folder$"):
        Tokenizer.from_pretrained(tmp_path / "missing" / "x y")


def test_bad_folders(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hi")
    with pytest.raises(FileFormatError, match="no tokenizer file in this folder.*holds notes.md"):
        Tokenizer.from_pretrained(tmp_path)
    with pytest.raises(FileFormatError, match="not a folder"):
        Tokenizer.from_pretrained(tmp_path / "notes.md")
    folder = make_folder(tmp_path, "llama2")
    (folder / "tokenizer_config.json").write_text('{"bos_token": ')
    with pytest.raises(FileFormatError, match="tokenizer_config.json:1: not valid JSON"):
        Tokenizer.from_pretrained(folder)
    (folder / "tokenizer_config.json").write_text('{"bos_token": 3}')
    with pytest.raises(FileFormatError, match="bos_token must be a token string"):
        Tokenizer.from_pretrained(folder)
    (folder / "tokenizer_config.json").write_text('{"bos_token": "<nope>", "add_bos_token": true}')
    with pytest.raises(FileFormatError, match="'<nope>' is neither in added_tokens_decoder nor in the vocabulary"):
        Tokenizer.from_pretrained(folder)
    (folder / "tokenizer.model").write_bytes(b"\x00garbage")
    with pytest.raises(FileFormatError, match="neither a SentencePiece model nor a tiktoken file"):
        Tokenizer.from_pretrained(folder)
