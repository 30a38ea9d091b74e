"""ciyuan.convert and `ciyuan convert`: writing a tokenizer in another format keeps every
encoding, or is refused naming what would be lost."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import List

import pytest

from ciyuan import Tokenizer
from ciyuan.cli import main
from ciyuan.convert import ConversionError, convert, target_of
from ciyuan.errors import ModelError
from ciyuan.formats.bpe_ranks import merges_from_ranks, ranks_from_merges
from ciyuan.formats.gpt2 import load_gpt2
from ciyuan.formats.tiktoken import load_tiktoken_ranks
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import Split
from tests.conftest import shared


def corpus_lines(per_file: int) -> List[str]:
    lines: List[str] = []
    for parts in (("en", "tinyshakespeare.txt"), ("zh", "jinyong_16novels.txt"), ("multi", "udhr_sample.txt"),
                  ("multi", "emoji.txt"), ("multi", "wagahaiwa.ja.txt")):
        with open(shared("corpora", *parts), encoding="utf-8") as f:
            lines += [line.rstrip("\n") for line in itertools.islice(f, per_file)]
    return lines


def ids_of(tok: Tokenizer, lines: List[str]) -> List[List[int]]:
    return tok.encode_batch_ids(lines)


@pytest.fixture(scope="module")
def gpt2() -> Tokenizer:
    return Tokenizer.from_gpt2(shared("tokenizers", "gpt2", "encoder.json"), shared("tokenizers", "gpt2", "vocab.bpe"))


def test_gpt2_files_to_tiktoken_keep_the_ids(gpt2: Tokenizer, tmp_path: Path) -> None:
    out = tmp_path / "gpt2.tiktoken"
    notes = convert(gpt2, out)
    assert notes == ["the pattern is not stored in a .tiktoken file: load it with pattern='gpt2'",
                     "special tokens are not stored in a .tiktoken file: load it with "
                     "special_tokens={'<|endoftext|>': 50256}"]
    back = Tokenizer.from_tiktoken(out, "gpt2", special_tokens={"<|endoftext|>": 50256})
    assert back.model.rank_by_token
    lines = corpus_lines(400)
    assert ids_of(back, lines) == ids_of(gpt2, lines)


@pytest.mark.parametrize("name", ["cl100k_base", pytest.param("o200k_base", marks=pytest.mark.slow)])
def test_tiktoken_ranks_as_merges_keep_the_ids(name: str, tmp_path: Path) -> None:
    """A rank file written as GPT-2's merge files (pattern lost, so --lossy) and read back as a
    merge-rule BPE with the same pattern encodes as the ranks do: the merges are exact."""
    source = Tokenizer.from_tiktoken(shared("tokenizers", "tiktoken", f"{name}.tiktoken"), name)
    with pytest.raises(ConversionError, match="GPT-2's files always load with GPT-2's pattern"):
        convert(source, tmp_path / "out", "gpt2")
    notes = convert(source, tmp_path / "out", "gpt2", lossy=True)
    assert any(n.startswith("lost: the pre-tokenizer") for n in notes)
    vocab, merges, _ = load_gpt2(tmp_path / "out" / "encoder.json", tmp_path / "out" / "vocab.bpe")
    merged = Tokenizer(BPE(vocab, merges, byte_level=True), pre_tokenizer=Split(name))
    lines = corpus_lines(400)
    assert ids_of(merged, lines) == ids_of(source, lines)


def test_trained_byte_level_bpe_to_tiktoken(tmp_path: Path) -> None:
    from ciyuan.trainers import BpeTrainer

    lines = corpus_lines(300)
    tok = Tokenizer.train(lines, trainer=BpeTrainer(vocab_size=600, byte_level=True))
    out = tmp_path / "trained.tiktoken"
    convert(tok, out, lossy=tok.normalizer is not None or tok.post_processor is not None)
    pattern = tok.pre_tokenizer.pattern  # type: ignore[union-attr]
    back = Tokenizer.from_tiktoken(out, pattern, special_tokens=tok.special_tokens)
    assert ids_of(back, lines) == ids_of(tok, lines)


def test_refusals_name_what_is_lost(tmp_path: Path) -> None:
    bert = Tokenizer.from_bert_vocab(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt"))
    with pytest.raises(ConversionError, match="not a byte-level BPE") as info:
        convert(bert, tmp_path / "bert.tiktoken")
    assert "lossy" not in str(info.value)  # nothing could be written at all
    with pytest.raises(ConversionError, match="only a SentencePiece tokenizer"):
        convert(bert, tmp_path / "bert.model")
    assert not (tmp_path / "bert.tiktoken").exists() and not (tmp_path / "bert.model").exists()
    assert convert(bert, tmp_path / "vocab.txt") == [
        "vocab.txt does not say whether to lowercase: load it with lowercase=True"]
    original = shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")
    assert (tmp_path / "vocab.txt").read_bytes() == original.read_bytes()
    with pytest.raises(ModelError, match="cannot tell the format"):
        target_of(tmp_path / "out.bin")
    with pytest.raises(ModelError, match="unknown target format 'xml'"):
        target_of(tmp_path / "out.bin", "xml")


def test_llama2_model_round_trip(tmp_path: Path) -> None:
    source = shared("tokenizers", "sentencepiece", "llama2.model")
    tok = Tokenizer.from_file(source)
    assert convert(tok, tmp_path / "copy.model") == []
    back = Tokenizer.from_file(tmp_path / "copy.model")
    lines = corpus_lines(100)
    assert ids_of(back, lines) == ids_of(tok, lines)


def test_ranks_from_merges_rejects_what_ranks_cannot_say() -> None:
    byte_tokens = [bytes([b]) for b in range(256)]
    a, b, c = ord("a"), ord("b"), ord("c")
    tokens = byte_tokens + [b"ab", b"bc", b"abc"]
    ab, bc, abc = 256, 257, 258
    ranks = ranks_from_merges(tokens, [(a, b), (b, c), (ab, c)])
    assert ranks[b"abc"] == abc
    # "abc" listed as a + bc: tiktoken's rule reaches it from ab + c (ab ranks first).
    with pytest.raises(ModelError, match="listed as b'a' \\+ b'bc', but ranks would make it from"):
        ranks_from_merges(tokens, [(a, b), (b, c), (a, bc)])
    with pytest.raises(ModelError, match="comes from a merge listed after"):
        ranks_from_merges(tokens, [(b, c), (a, b), (ab, c)])
    with pytest.raises(ModelError, match="made by no merge"):
        ranks_from_merges(tokens, [(a, b), (b, c)])
    with pytest.raises(ModelError, match="single bytes"):
        merges_from_ranks({b"a": 0})
    with pytest.raises(ModelError, match="not made by merging two tokens of lower rank"):
        merges_from_ranks({**{bytes([i]): i for i in range(256)}, b"abc": 256})


def test_merges_from_ranks_of_cl100k_are_gpt2_style() -> None:
    ranks = load_tiktoken_ranks(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"))
    merges = merges_from_ranks(ranks)
    assert len(merges) == len(ranks) - 256
    assert all(ranks[x] < ranks[x + y] and ranks[y] < ranks[x + y] for x, y in merges[:5000])


def test_cli_convert(gpt2: Tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    encoder = str(shared("tokenizers", "gpt2", "encoder.json"))
    out = tmp_path / "gpt2.tiktoken"
    assert main(["convert", encoder, str(out)]) == 0
    assert "load it with pattern='gpt2'" in capsys.readouterr().err
    assert load_tiktoken_ranks(out)[b" "] == gpt2.token_to_id("Ġ") == 220
    cl100k = str(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"))
    assert main(["convert", cl100k, str(tmp_path / "g"), "--to", "gpt2"]) == 1
    err = capsys.readouterr().err
    assert "error: a gpt2 file cannot hold this tokenizer" in err and "--lossy" in err
    assert not (tmp_path / "g").exists()
    assert main(["convert", cl100k, str(tmp_path / "g"), "--to", "gpt2", "--lossy"]) == 0
    assert (tmp_path / "g" / "vocab.bpe").exists() and "lost: " in capsys.readouterr().err
    assert main(["convert", cl100k, str(tmp_path / "x.bin")]) == 1
    assert "cannot tell the format" in capsys.readouterr().err
