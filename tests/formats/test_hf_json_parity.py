"""Must-show of issue 14: tokenizer.json files written by `tokenizers` itself (trained here, in the
test, with varied normalizers, pre-tokenizers, templates and added tokens) and GPT-2's file load
in ciyuan and give the same ids, tokens, offsets and decoded text as `tokenizers`, on corpus
lines and on hypothesis-generated text. The fast tests take a few hundred lines, a call per line;
the slow ones every line of the English, Chinese (first 2 MB) and multilingual corpora, as
batches (encode_batch, decode_batch)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from tests.conftest import read_prefix, shared

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

ADDED = [AddedToken("<mask>", lstrip=True, special=True), AddedToken("[NEW]", single_word=True),
         AddedToken("hello world", normalized=True)]


def training_lines() -> List[str]:
    return read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 150_000).splitlines() + \
        read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 60_000).splitlines() + \
        read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 60_000).splitlines()


def byte_level_bpe() -> Any:
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.train_from_iterator(training_lines(), trainers.BpeTrainer(
        vocab_size=2000, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def byte_level_bpe_nfc_prefix() -> Any:
    tok = tokenizers.Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\p{N}"), "isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(training_lines(), trainers.BpeTrainer(
        vocab_size=1500, special_tokens=["<s>", "</s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                                       special_tokens=[("<s>", 0), ("</s>", 1)])
    return tok


def char_bpe_suffix() -> Any:
    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    tok.train_from_iterator(training_lines(), trainers.BpeTrainer(
        vocab_size=1500, special_tokens=["<unk>"], end_of_word_suffix="</w>"))
    return tok


def wordpiece() -> Any:
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(training_lines(), trainers.WordPieceTrainer(
        vocab_size=2000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    return tok


def word_level() -> Any:
    tok = tokenizers.Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(),
                                                 pre_tokenizers.Digits(individual_digits=True)])
    tok.train_from_iterator(training_lines(), trainers.WordLevelTrainer(vocab_size=3000, special_tokens=["[UNK]"]))
    return tok


def unigram() -> Any:
    tok = tokenizers.Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace("``", '"')])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    english = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 150_000).splitlines()
    tok.train_from_iterator(english, trainers.UnigramTrainer(
        vocab_size=1500, special_tokens=["<unk>", "<s>", "</s>"], unk_token="<unk>"))
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B:1 </s>:1",
                                                       special_tokens=[("</s>", tok.token_to_id("</s>"))])
    return tok


def word_level_nfd() -> Any:
    """WordLevel with the normalizers ciyuan has today (word_level's StripAccents aside)."""
    tok = tokenizers.Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(),
                                                 pre_tokenizers.Digits(individual_digits=True)])
    tok.train_from_iterator(training_lines(), trainers.WordLevelTrainer(vocab_size=3000, special_tokens=["[UNK]"]))
    return tok


def unigram_nfkc() -> Any:
    """Unigram with NFKC alone (unigram's Replace aside), Metaspace prepending to the first
    piece only, and a pair template."""
    tok = tokenizers.Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    english = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 150_000).splitlines()
    tok.train_from_iterator(english, trainers.UnigramTrainer(
        vocab_size=1200, special_tokens=["<unk>", "<cls>", "<sep>"], unk_token="<unk>"))
    tok.post_processor = processors.TemplateProcessing(
        single="$A <sep> <cls>", pair="$A <sep> $B:1 <sep>:1 <cls>:2",
        special_tokens=[("<sep>", tok.token_to_id("<sep>")), ("<cls>", tok.token_to_id("<cls>"))])
    return tok


PIPELINES: Dict[str, Callable[[], Any]] = {
    "byte_level_bpe": byte_level_bpe, "byte_level_bpe_nfc_digits_template": byte_level_bpe_nfc_prefix,
    "char_bpe_suffix": char_bpe_suffix, "wordpiece_bert": wordpiece, "word_level": word_level, "unigram": unigram,
    "word_level_nfd": word_level_nfd, "unigram_nfkc_first": unigram_nfkc,
}


def pair(name: str, folder: str) -> Tuple[Any, Tokenizer]:
    """The trained `tokenizers` tokenizer (with added tokens) and ciyuan's from its file, made
    once per test session."""
    return _made(name, folder)


@lru_cache(maxsize=None)
def _made(name: str, folder: str) -> Any:
    if name == "gpt2":
        path = shared("tokenizers", "gpt2", "tokenizer.json")
        return tokenizers.Tokenizer.from_file(str(path)), Tokenizer.from_file(path)
    hf = PIPELINES[name]()
    hf.add_special_tokens([ADDED[0]])
    hf.add_tokens(ADDED[1:])
    path = Path(folder) / name / "tokenizer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    hf.save(str(path))
    ours = Tokenizer.from_file(path)
    return tokenizers.Tokenizer.from_file(str(path)), ours


@pytest.fixture(scope="session")
def folder(tmp_path_factory: Any) -> str:
    return str(tmp_path_factory.mktemp("hf_json_parity"))


def differences(hf: Any, ours: Tokenizer, lines: List[str], limit: int = 3) -> List[str]:
    bad = []
    for line in lines:
        want, got = hf.encode(line), ours.encode(line)
        what = [name for name, a, b in (("ids", got.ids, want.ids), ("tokens", got.tokens, want.tokens),
                                         ("offsets", got.offsets, want.offsets)) if a != b]
        for skip in (False, True):
            if ours.decode(got.ids, skip_special_tokens=skip) != hf.decode(want.ids, skip_special_tokens=skip):
                what.append(f"decode(skip_special_tokens={skip})")
        if what:
            bad.append(f"{line[:60]!r}: {', '.join(what)}")
            if len(bad) >= limit:
                break
    return bad


def batch_differences(hf: Any, ours: Tokenizer, lines: List[str], limit: int = 3) -> List[str]:
    """:func:`differences` of every line, each library encoding and decoding the lines as one
    batch (its native, parallel path) instead of a call per line."""
    want, got = hf.encode_batch(lines), ours.encode_batch(lines)
    want_ids, got_ids = [w.ids for w in want], [g.ids for g in got]
    decoded = {skip: (ours.decode_batch(got_ids, skip_special_tokens=skip),
                      hf.decode_batch(want_ids, skip_special_tokens=skip)) for skip in (False, True)}
    bad = []
    for k, (line, w, g) in enumerate(zip(lines, want, got)):
        what = [name for name, a, b in (("ids", got_ids[k], want_ids[k]), ("tokens", g.tokens, w.tokens),
                                         ("offsets", g.offsets, w.offsets)) if a != b]
        what += [f"decode(skip_special_tokens={skip})" for skip, (a, b) in decoded.items() if a[k] != b[k]]
        if what:
            bad.append(f"{line[:60]!r}: {', '.join(what)}")
            if len(bad) >= limit:
                break
    return bad


def sample_lines() -> List[str]:
    return (read_prefix(shared("corpora", "en", "taylorswift.txt"), 20_000).splitlines()
            + read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 20_000).splitlines()
            + read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 40_000).splitlines()
            + ["hello world <mask>  [NEW] x[NEW]y Hello World <|endoftext|>", "", "  ", "``quoted'' 1948"])


# (unigram_nfkc_first holds a near tie, "▁---" as ▁ - -- or ▁ -- -, that only double sums
# decide as tokenizers does: see test_unigram_tie and tests/models/test_unigram_hf.py.)
NAMES = ["gpt2", *PIPELINES]


@pytest.mark.parametrize("name", NAMES)
def test_sample_lines(name: str, folder: str) -> None:
    hf, ours = pair(name, folder)
    assert differences(hf, ours, sample_lines()) == []


@pytest.mark.parametrize("name", NAMES)
def test_pairs_and_batches(name: str, folder: str) -> None:
    hf, ours = pair(name, folder)
    texts = [("Hello there, friend.", "我能吞下玻璃"), ("a <mask> b", "x")]
    for (a, b), want, got in zip(texts, hf.encode_batch(texts), ours.encode_batch(texts)):
        assert (got.ids, got.type_ids, got.offsets) == (want.ids, want.type_ids, want.offsets), (a, b)


# No combining marks: see test_composition_offsets below.
_TEXT = st.text(st.sampled_from(list("ab cd\tE\nfé1 2_.,'!?你好世界ﬁ①ｱ😀<>mask[NEW]")), max_size=40)


def test_combining_mark_offsets() -> None:
    """NFD, and a combining mark cut from the space before it: the piece starts at the mark."""
    from tokenizers.models import WordLevel as HfWordLevel

    from ciyuan import normalizers as ours_normalizers
    from ciyuan import pre_tokenizers as ours_pre_tokenizers
    from ciyuan.models import WordLevel

    hf = tokenizers.Tokenizer(HfWordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    hf.normalizer = normalizers.NFD()
    hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    ours = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"), normalizer=ours_normalizers.NFD(),
                     pre_tokenizer=ours_pre_tokenizers.WhitespaceSplit())
    # (only when the text has another change: "ñ" below is decomposed too)
    assert ours.encode("t \u0303eñ").offsets == hf.encode("t \u0303eñ").offsets


@pytest.mark.parametrize("name", ["unigram", "unigram_nfkc_first"])
def test_unigram_tie(name: str, folder: str) -> None:
    """Near ties ("▁---" as ▁ - -- or ▁ -- -, equal but for rounding) go tokenizers' way."""
    hf, ours = pair(name, folder)
    for text in ("---", "x ----- y", "-- -- ---"):
        assert ours.encode(text).tokens == hf.encode(text).tokens, text


def test_composition_offsets() -> None:
    """NFC composition: the composed character points at the first character it came from."""
    from tokenizers.models import WordLevel as HfWordLevel

    from ciyuan import normalizers as ours_normalizers
    from ciyuan.models import WordLevel

    hf = tokenizers.Tokenizer(HfWordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    hf.normalizer = normalizers.NFC()
    ours = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"), normalizer=ours_normalizers.NFC())
    assert ours.encode("E\u0301").offsets == hf.encode("E\u0301").offsets


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None)
@given(text=_TEXT)
def test_hypothesis(name: str, text: str, folder: str) -> None:
    hf, ours = pair(name, folder)
    assert differences(hf, ours, [text]) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_whole_corpora(name: str, folder: str) -> None:
    hf, ours = pair(name, folder)
    for path, limit in ((("corpora", "en", "tinyshakespeare.txt"), None),
                        (("corpora", "zh", "jinyong_16novels.txt"), 2 << 20),
                        (("corpora", "multi", "udhr_sample.txt"), None)):
        file = shared(*path)
        lines = (read_prefix(file, limit) if limit else file.read_text(encoding="utf-8")).splitlines()
        assert batch_differences(hf, ours, lines) == [], path


@pytest.mark.parametrize("name", NAMES)
def test_round_trip_through_ciyuan(name: str, folder: str, tmp_path: Path) -> None:
    """ciyuan writes back a tokenizer.json that tokenizers reads and encodes the same way."""
    hf, ours = pair(name, folder)
    ours.save(tmp_path / "tokenizer.json")
    again = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert differences(again, ours, sample_lines()) == []
    assert differences(hf, Tokenizer.from_file(tmp_path / "tokenizer.json"), sample_lines()) == []


def test_truncation_and_padding_from_the_file(folder: str, tmp_path: Path) -> None:
    """tokenizer.json's truncation and padding (as `tokenizers` writes them) apply in ciyuan."""
    hf = wordpiece()
    hf.enable_truncation(12, stride=3)
    hf.enable_padding(pad_id=hf.token_to_id("[PAD]"), pad_token="[PAD]", pad_to_multiple_of=8)
    hf.save(str(tmp_path / "tokenizer.json"))
    ours = Tokenizer.from_file(tmp_path / "tokenizer.json")
    batch = [("Hello there, my good friend, how are you today?", "我能吞下玻璃而不伤身体"), ("a", "b c")]
    for want, got in zip(hf.encode_batch(batch), ours.encode_batch(batch)):
        assert (got.ids, got.type_ids, got.attention_mask, got.offsets) == \
            (want.ids, want.type_ids, want.attention_mask, want.offsets)
        assert [o.ids for o in got.overflowing] == [o.ids for o in want.overflowing]
