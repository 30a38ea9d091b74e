"""Whole tokenizer.json pipelines that exercise the Hugging Face models, decoders and
post-processors (RoBERTa, Llama 3, Mistral, BERT, Unigram/Metaspace, </w> BPE, CTC), written by
`tokenizers` itself after training on Shakespeare and Jin Yong: `Tokenizer.from_file` gives
`tokenizers`' ids, tokens, offsets, type ids, special-token masks and decoded text (with and
without special tokens), for single texts and pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

from ciyuan import Tokenizer
from tests.conftest import read_prefix, shared

T = pytest.importorskip("tokenizers")
M, PT, N, D, P, TR = T.models, T.pre_tokenizers, T.normalizers, T.decoders, T.processors, T.trainers

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
BYTES = [f"<0x{b:02X}>" for b in range(256)]


def training_lines() -> List[str]:
    return (read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 200_000).splitlines()
            + read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 30_000).splitlines())


def roberta(lines: List[str]) -> Any:
    t = T.Tokenizer(M.BPE())
    t.pre_tokenizer = PT.ByteLevel(add_prefix_space=True)
    t.decoder = D.ByteLevel()
    t.train_from_iterator(lines, TR.BpeTrainer(vocab_size=1500, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                               initial_alphabet=PT.ByteLevel.alphabet(), show_progress=False))
    t.post_processor = P.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return t


def llama3(lines: List[str]) -> Any:
    t = T.Tokenizer(M.BPE(ignore_merges=True))
    t.pre_tokenizer = PT.Sequence([PT.Split(T.Regex(LLAMA3_PATTERN), "isolated"),
                                   PT.ByteLevel(add_prefix_space=False, use_regex=False)])
    t.decoder = D.ByteLevel()
    t.train_from_iterator(lines, TR.BpeTrainer(vocab_size=1500, special_tokens=["<|begin_of_text|>", "<|eot_id|>"],
                                               initial_alphabet=PT.ByteLevel.alphabet(), show_progress=False))
    t.post_processor = P.Sequence([P.ByteLevel(trim_offsets=False), P.TemplateProcessing(
        single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
        special_tokens=[("<|begin_of_text|>", 0)])])
    return t


def mistral(lines: List[str]) -> Any:
    t = T.Tokenizer(M.BPE(byte_fallback=True, fuse_unk=True, unk_token="<unk>"))
    t.pre_tokenizer = PT.Metaspace(prepend_scheme="first", split=False)
    t.decoder = D.Sequence([D.Metaspace(prepend_scheme="first", split=False), D.ByteFallback(), D.Fuse()])
    t.train_from_iterator(lines, TR.BpeTrainer(vocab_size=1500, special_tokens=["<unk>", "<s>", "</s>"] + BYTES,
                                               show_progress=False))
    t.post_processor = P.TemplateProcessing(single="<s> $A", pair="<s> $A <s>:1 $B:1", special_tokens=[("<s>", 1)])
    return t


def bert(lines: List[str]) -> Any:
    t = T.Tokenizer(M.WordPiece(unk_token="[UNK]"))
    t.normalizer = N.BertNormalizer()
    t.pre_tokenizer = PT.BertPreTokenizer()
    t.decoder = D.WordPiece()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    t.train_from_iterator(lines, TR.WordPieceTrainer(vocab_size=1500, special_tokens=specials, show_progress=False))
    t.post_processor = P.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    return t


def unigram(lines: List[str]) -> Any:
    t = T.Tokenizer(M.Unigram())
    t.normalizer = N.Lowercase()
    t.pre_tokenizer = PT.Metaspace()
    t.decoder = D.Metaspace()
    t.train_from_iterator(lines, TR.UnigramTrainer(vocab_size=2500, special_tokens=["<unk>", "<s>", "</s>"],
                                                   unk_token="<unk>", show_progress=False))
    t.post_processor = P.TemplateProcessing(single="$A </s>", pair="$A </s> $B:1 </s>:1", special_tokens=[("</s>", 2)])
    return t


def suffix(lines: List[str]) -> Any:
    t = T.Tokenizer(M.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    t.pre_tokenizer = PT.Whitespace()
    t.decoder = D.BPEDecoder()
    t.train_from_iterator(lines, TR.BpeTrainer(vocab_size=1500, special_tokens=["<unk>"], end_of_word_suffix="</w>",
                                               show_progress=False))
    return t


def ctc(lines: List[str]) -> Any:
    t = T.Tokenizer(M.WordLevel(unk_token="<unk>"))
    t.pre_tokenizer = PT.Split(T.Regex("."), "isolated")
    t.decoder = D.CTC(pad_token="<pad>", word_delimiter_token=" ")
    t.train_from_iterator(lines, TR.WordLevelTrainer(vocab_size=3000, special_tokens=["<pad>", "<unk>"],
                                                     show_progress=False))
    return t


BUILDERS: Dict[str, Callable[[List[str]], Any]] = {
    "roberta": roberta, "llama3": llama3, "mistral": mistral, "bert": bert, "unigram": unigram, "suffix": suffix,
    "ctc": ctc,
}


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def pipeline(request: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    hf = BUILDERS[request.param](training_lines())
    path: Path = tmp_path_factory.mktemp(request.param) / "tokenizer.json"
    hf.save(str(path))
    return request.param, T.Tokenizer.from_file(str(path)), Tokenizer.from_file(path)


def test_lines(pipeline: Any) -> None:
    name, hf, ours = pipeline
    texts = read_prefix(shared("corpora", "en", "taylorswift.txt"), 8_000).splitlines()[:40]
    texts += read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 200_000).splitlines()[::50][:60]
    texts += read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 30_000).splitlines()[-20:]
    texts += ["  leading and  trailing  ", "tab\tand\nnew line", "😀 é ĲĲ", ""]
    for i, text in enumerate(texts):
        for args in ((text,), (text, texts[i - 1])):
            a, b = hf.encode(*args), ours.encode(*args)
            assert b.ids == a.ids, (name, args)
            assert b.tokens == a.tokens, (name, args)
            assert b.offsets == [tuple(o) for o in a.offsets], (name, args)
            assert (b.type_ids, b.special_tokens_mask) == (a.type_ids, a.special_tokens_mask), (name, args)
            for skip in (False, True):
                assert ours.decode(b.ids, skip_special_tokens=skip) == hf.decode(a.ids, skip_special_tokens=skip)


@pytest.mark.slow
def test_whole_corpora(pipeline: Any) -> None:
    """Every line of the English, Chinese (first 2 MB) and multilingual corpora: ids, offsets, decode."""
    name, hf, ours = pipeline
    texts = [read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 1 << 30),
             read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 2 << 20),
             read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 1 << 30)]
    lines = [x for t in texts for x in t.splitlines() if x]
    theirs = hf.encode_batch(lines)
    mine = ours.encode_batch(lines)
    for line, a, b in zip(lines, theirs, mine):
        assert (b.ids, b.offsets) == (a.ids, [tuple(o) for o in a.offsets]), (name, line)
    for line, a in list(zip(lines, theirs))[::7]:
        for skip in (False, True):
            assert ours.decode(a.ids, skip_special_tokens=skip) == hf.decode(a.ids, skip_special_tokens=skip), line
