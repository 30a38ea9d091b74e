"""BPE in Hugging Face's form (tokenizer.json's "model"): every option held against `tokenizers`
(ids and offsets of whole pipelines on corpus lines and generated text) and against the
reference twin (ciyuan.reference.hf_bpe)."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ciyuan
from ciyuan import models
from ciyuan.errors import InvalidInputError, ModelError
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import Split, WhitespaceSplit
from ciyuan.reference.hf_bpe import encode_word
from tests.conftest import read_prefix, shared

tokenizers = pytest.importorskip("tokenizers")

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# name -> the tokenizers.models.BPE options (and the trainer's prefix / suffix).
CONFIGS: Dict[str, Dict[str, Any]] = {
    "suffix": {"unk_token": "<unk>", "end_of_word_suffix": "</w>"},
    "prefix": {"unk_token": "<unk>", "continuing_subword_prefix": "##"},
    "prefix_fuse": {"unk_token": "<unk>", "continuing_subword_prefix": "##", "fuse_unk": True},
    "no_unk": {},
    "ignore_merges": {"unk_token": "<unk>", "end_of_word_suffix": "</w>", "ignore_merges": True},
    "byte_fallback": {"unk_token": "<unk>", "byte_fallback": True, "fuse_unk": True},
    "byte_fallback_no_unk": {"byte_fallback": True},
}
_TRAINER_KEYS = ("continuing_subword_prefix", "end_of_word_suffix")


def SPANS(enc: Any) -> List[Any]:  # noqa: N802 - a native result's byte spans
    return list(enc.byte_spans)


def training_lines() -> List[str]:
    return read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 60_000).splitlines()


def corpus_lines(per_file: int) -> List[str]:
    lines = read_prefix(shared("corpora", "en", "taylorswift.txt"), 30_000).splitlines()[:per_file]
    lines += read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 200_000).splitlines()[::25][:per_file]
    lines += read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 60_000).splitlines()[:per_file]
    return [x for x in lines if x]


def train_hf(options: Dict[str, Any]) -> Any:
    """A `tokenizers` BPE trained by `tokenizers` on Shakespeare (WhitespaceSplit words)."""
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(**options))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    trainer_options = {k: options[k] for k in _TRAINER_KEYS if k in options}
    hf.train_from_iterator(training_lines(), tokenizers.trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<unk>"], show_progress=False, **trainer_options))
    data = json.loads(hf.to_str())
    data["added_tokens"] = []  # the model alone: "<unk>" in the text is text (added tokens: tokenizer.json's part)
    if options.get("byte_fallback"):  # the <0xXX> tokens, as Llama 2 has them
        vocab = data["model"]["vocab"]
        for b in range(256):
            vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    return tokenizers.Tokenizer.from_str(json.dumps(data))


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def pair(request: Any) -> Any:
    """(name, HF tokenizer, ciyuan tokenizer from HF's JSON model)."""
    hf = train_hf(CONFIGS[request.param])
    model = models.from_dict(json.loads(hf.to_str())["model"])
    return request.param, hf, ciyuan.Tokenizer(model, pre_tokenizer=WhitespaceSplit())


def same(hf: Any, tok: Any, text: str) -> None:
    theirs = hf.encode(text, add_special_tokens=False)
    ours = tok.encode(text)
    assert ours.ids == theirs.ids, text
    assert ours.offsets == [tuple(o) for o in theirs.offsets], text
    assert ours.tokens == theirs.tokens, text


def test_corpus_lines(pair: Any) -> None:
    _, hf, tok = pair
    for line in corpus_lines(80):
        same(hf, tok, line)


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from("abcdefghilmnorstuwéü中 \t'!,.\u2581#<>"), max_size=60))
def test_generated_text(pair: Any, text: str) -> None:
    _, hf, tok = pair
    same(hf, tok, text)


@SETTINGS
@given(text=st.text(max_size=40))
def test_any_text(pair: Any, text: str) -> None:
    _, hf, tok = pair
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates (HF refuses them)
    same(hf, tok, text)


def test_reference_twin(pair: Any) -> None:
    """The reference twin gives the native encoder's tokens word by word."""
    name, hf, tok = pair
    data = json.loads(hf.to_str())["model"]
    options = {k: data.get(k) or ("" if k in _TRAINER_KEYS else None)
               for k in ("continuing_subword_prefix", "end_of_word_suffix", "unk_token")}
    merges = [tuple(m) for m in data["merges"]]
    for line in corpus_lines(30):
        for word in line.split():
            want = encode_word(word, data["vocab"], merges, fuse_unk=data["fuse_unk"],
                               byte_fallback=data["byte_fallback"], ignore_merges=data["ignore_merges"], **options)
            enc = tok.model.make_encoder().encode(word, b"")
            assert [(t, s, e) for t, (s, e) in zip(enc.ids, SPANS(enc))] == want, (name, word)


def test_gpt2_tokenizer_json() -> None:
    """GPT-2's tokenizer.json model (no "type", "a b" merges) is byte-level and encodes as HF."""
    path = shared("tokenizers", "gpt2", "tokenizer.json")
    model = models.from_dict(json.loads(path.read_text(encoding="utf-8"))["model"])
    assert isinstance(model, BPE) and model.byte_level and len(model.merges) == 50000
    hf = tokenizers.Tokenizer.from_file(str(path))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok = ciyuan.Tokenizer(model, pre_tokenizer=Split("gpt2"))
    for line in corpus_lines(60) + ["  two  spaces\n\nnew lines\t tab 😀 é"]:
        same(hf, tok, line)
        assert tok.decode(tok.encode(line).ids) == hf.decode(hf.encode(line).ids)


def test_llama3_style_ignore_merges() -> None:
    """Byte-level with ignore_merges (Llama 3): a piece that is a token is taken whole even when
    the merges would not make it."""
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "Ġ": 5, "bc": 6}
    merges = ["b c", "a b"]  # "abc" is not reachable by merges: a + bc has no merge
    data = {"type": "BPE", "vocab": vocab, "merges": merges, "ignore_merges": True, "byte_level": True}
    tok = ciyuan.Tokenizer(models.from_dict(data), pre_tokenizer=Split("gpt2"))
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(vocab, [tuple(m.split()) for m in merges], ignore_merges=True))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    for text in ("abc", "abcabc", "ab c abc", "cab"):
        same(hf, tok, text)
    assert tok.encode("abc").ids == [4]


def test_merge_encodings_and_round_trip() -> None:
    vocab = {"a": 0, "b": 1, "ab": 2, "abb": 3}
    strings = BPE.from_dict({"type": "BPE", "vocab": vocab, "merges": ["a b", "ab b"]})
    pairs = BPE.from_dict({"type": "BPE", "vocab": vocab, "merges": [["a", "b"], ["ab", "b"]]})
    assert strings.merges == pairs.merges == [("a", "b"), ("ab", "b")]
    assert not strings.byte_level and strings.drop_unknown
    data = strings.to_dict()
    assert list(data)[:10] == ["type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix",
                               "fuse_unk", "byte_fallback", "ignore_merges", "vocab", "merges"]
    assert BPE.from_dict(data).to_dict() == data
    # tokenizers reads ciyuan's form (it ignores the keys it does not know)
    hf = tokenizers.Tokenizer.from_str(json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None, "model": data}))
    assert hf.encode("abbab").ids == ciyuan.Tokenizer(strings).encode("abbab").ids == [3, 2]


def test_older_ciyuan_form_still_loads() -> None:
    """A BPE dict saved by ciyuan before tokenizer.json support (with encode_mode) keeps its
    meaning: no unknown token -> unknown text is an error, not dropped."""
    old = {"type": "BPE", "byte_level": False, "rank_by_token": False, "ignore_merges": False,
           "end_of_word_suffix": "", "end_of_word_symbol": "", "unk_token": None, "fuse_unk": False,
           "encode_mode": "merges", "dropout": None, "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}
    model = BPE.from_dict(old)
    assert not model.drop_unknown
    with pytest.raises(InvalidInputError):
        ciyuan.Tokenizer(model).encode("abc")
    hf_form = {k: v for k, v in old.items() if k not in ("encode_mode", "rank_by_token")}
    assert ciyuan.Tokenizer(BPE.from_dict(hf_form)).encode("abc").ids == [2]  # HF drops the unknown "c"


def test_byte_level_inference() -> None:
    assert models.bpe.looks_byte_level({"Ġthe": 0, "a": 1})
    assert not models.bpe.looks_byte_level({"▁the": 0, "a": 1})
    assert not models.bpe.looks_byte_level({"the": 0, "é": 1})  # Latin-1 text, no stand-in
    assert not BPE.from_dict({"type": "BPE", "vocab": {"Ġ": 0}, "merges": [], "byte_level": False}).byte_level


@pytest.mark.parametrize("data, message", [
    ({"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}, "not in the vocabulary"),
    ({"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]}, "two tokens"),
    ({"type": "BPE", "vocab": {"a": 0}, "merges": [3]}, "merge 1"),
    ({"type": "BPE", "vocab": ["a"], "merges": []}, "mapping"),
    ({"type": "BPE", "vocab": {"a": -1}, "merges": []}, "integer"),
    ({"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}, "given to both"),
    ({"type": "BPE", "merges": []}, "vocab"),
    ({"type": "BPE", "vocab": {"a": 0, "#": 1}, "merges": [["a", "#"]], "continuing_subword_prefix": "##"}, "shorter"),
])
def test_bad_descriptions(data: Dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError, match=message):
        models.from_dict(data)


@pytest.mark.slow
def test_whole_corpora(pair: Any) -> None:
    """Every line of the English, Chinese (first 2 MB) and multilingual corpora."""
    _, hf, tok = pair
    texts = [read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 1 << 30),
             read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 2 << 20),
             read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 1 << 30)]
    lines = [x for t in texts for x in t.splitlines() if x]
    theirs = hf.encode_batch(lines, add_special_tokens=False)
    ours = tok.encode_batch(lines)
    for line, a, b in zip(lines, theirs, ours):
        assert (b.ids, b.offsets) == (a.ids, [tuple(o) for o in a.offsets]), line


def test_unk_token_missing_from_the_vocabulary() -> None:
    """tokenizers loads a BPE whose unk_token is not in the vocabulary and fails only on text that
    needs it; so does ciyuan (the older ciyuan form still refuses it at load)."""
    data = {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [], "unk_token": "<unk>"}
    tok = ciyuan.Tokenizer(models.from_dict(data))
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(data["vocab"], [], unk_token="<unk>"))
    assert tok.encode("ab").ids == hf.encode("ab").ids == [0, 1]
    with pytest.raises(InvalidInputError):
        tok.encode("abc")
    with pytest.raises(Exception, match="Unk token"):
        hf.encode("abc")
    assert models.from_dict(data).to_dict()["unk_token"] == "<unk>"
    with pytest.raises(ModelError, match="not in the vocabulary"):
        BPE(data["vocab"], [], unk_token="<unk>")
