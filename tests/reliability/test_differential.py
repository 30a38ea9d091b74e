"""Differential fuzzing (issue 18, item 3): generated hostile text through ciyuan and through
the library it claims to match, with zero differences.

Peers and what is compared:
- tiktoken (gpt2, cl100k_base, o200k_base): ids; decode of the ids; decode of random id lists,
  whose bytes are often invalid UTF-8 (both replace them with U+FFFD the same way);
- Hugging Face tokenizers (GPT-2's tokenizer.json, BERT uncased's vocab.txt): ids and offsets;
- sentencepiece (llama2.model: BPE with byte fallback; albert.model: Unigram): ids and decode;
- jieba (``cut(HMM=False)``, its small dictionary): the words;
- subword-nmt (``apply_bpe.BPE`` with codes it learned on Shakespeare): the output line.

The text: any Unicode (lone surrogates for the peers that take them), runs of whitespace of
every kind and of digits of several scripts, emoji sequences (ZWJ families, skin tones, flags,
keycaps), very long words, and mixtures of them. Slow (real tokenizer files) and bounded:
``EXAMPLES`` examples per peer and property.
"""

from __future__ import annotations

import io
import os
import warnings
from typing import Any, Dict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan import UnknownIdError
from tests.conftest import ENCODINGS, read_prefix, shared

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("CIYUAN_DIFF_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

SPACES = [" ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x85", "\u00a0", "\u1680", "\u2000", "\u2009",
          "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\x1c", "\u200b", "\ufeff"]
DIGITS = list("0123456789") + list("٠١٢٣٤٥٦٧٨٩") + list("०१२३") + list("０１２３") + ["½", "²", "Ⅻ", "𝟘"]
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇨🇳", "🇺🇸", "1️⃣", "#️⃣", "🧑🏿‍🚀", "❤️", "\u200d", "\ufe0f", "🏴󠁧󠁢󠁳󠁣󠁴󠁿"]
LETTERS = list("aZéßİſǅʰ中文字한글ひらカナаяαωאבعربतमษ") + ["\u0301", "\u0308", "'s", "'LL", "n't"]
PUNCT = list(".,;:!?-—…()[]{}<>«»\"'`~@#$%^&*_+=/\\|。，、！？《》「」")

pieces = st.sampled_from(SPACES + DIGITS + EMOJI + LETTERS + PUNCT)
text_no_surrogates = st.one_of(
    st.text(max_size=120),
    st.lists(pieces, max_size=60).map("".join),
    st.lists(st.sampled_from(SPACES), min_size=1, max_size=80).map("".join),  # whitespace runs
    st.lists(st.sampled_from(DIGITS), min_size=1, max_size=200).map("".join),  # digit runs
    st.lists(st.sampled_from(EMOJI), min_size=1, max_size=40).map("".join),  # emoji sequences
    # very long words: one letter or a short cycle repeated, with text around it
    st.tuples(st.text(max_size=10), st.sampled_from(LETTERS + DIGITS + PUNCT), st.integers(100, 3000),
              st.text(max_size=10)).map(lambda t: t[0] + t[1] * t[2] + t[3]),
    st.tuples(st.lists(pieces, min_size=1, max_size=6).map("".join), st.integers(50, 600)).map(lambda t: t[0] * t[1]),
)
# Lone surrogates (invalid in UTF-8): tiktoken replaces them with U+FFFD before encoding.
text_any = st.one_of(text_no_surrogates, st.text(st.characters(codec=None, categories=["Cs", "Lo", "Zs", "Nd"]),
                                                  max_size=40))


# --- tiktoken ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ENCODINGS)
@SETTINGS
@given(text=text_any)
def test_tiktoken(ciyuan_tokenizers: Dict[str, Any], tiktoken_encodings: Dict[str, Any], name: str,
                  text: str) -> None:
    tok, enc = ciyuan_tokenizers[name], tiktoken_encodings[name]
    ids = enc.encode(text, disallowed_special=())
    assert tok.encode_ids(text, disallowed_special=()) == ids
    assert tok.encode(text, disallowed_special=()).ids == ids
    assert tok.count_tokens(text, disallowed_special=()) == len(ids)
    assert tok.decode(ids) == enc.decode(ids)


@pytest.mark.parametrize("name", ENCODINGS)
@SETTINGS
@given(data=st.data())
def test_tiktoken_decode_of_any_ids(ciyuan_tokenizers: Dict[str, Any], tiktoken_encodings: Dict[str, Any],
                                    name: str, data: st.DataObject) -> None:
    """Random ids, biased to the byte tokens: their bytes are often invalid UTF-8."""
    tok, enc = ciyuan_tokenizers[name], tiktoken_encodings[name]
    byte_ids = [enc.encode_single_token(bytes([b])) for b in range(256)]
    ranks = len(enc._mergeable_ranks)  # ids 0 .. ranks - 1; the special tokens above, with holes
    ids = data.draw(st.lists(st.one_of(st.sampled_from(byte_ids), st.integers(0, ranks - 1)), max_size=40))
    assert tok.decode_bytes(ids) == enc.decode_bytes(ids)
    assert tok.decode(ids) == enc.decode(ids)  # errors="replace" alike
    hole = data.draw(st.integers(ranks, enc.max_token_value + 10))
    if hole not in enc._special_tokens.values():  # an id that is no token: both refuse it
        with pytest.raises(KeyError):
            enc.decode_bytes([hole])
        with pytest.raises(UnknownIdError):
            tok.decode_bytes([hole])


# --- Hugging Face tokenizers --------------------------------------------------------------


@pytest.fixture(scope="module")
def hf_pairs() -> Dict[str, tuple]:
    tokenizers = pytest.importorskip("tokenizers")
    import ciyuan

    gpt2 = shared("tokenizers", "gpt2", "tokenizer.json")
    bert = shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")
    return {
        "gpt2 tokenizer.json": (ciyuan.Tokenizer.from_file(gpt2), tokenizers.Tokenizer.from_file(str(gpt2))),
        "bert uncased": (ciyuan.Tokenizer.from_bert_vocab(bert, lowercase=True),
                         tokenizers.BertWordPieceTokenizer(str(bert), lowercase=True)),
    }


@pytest.mark.parametrize("name", ["gpt2 tokenizer.json", "bert uncased"])
@SETTINGS
@given(text=text_no_surrogates)
def test_hugging_face_tokenizers(hf_pairs: Dict[str, tuple], name: str, text: str) -> None:
    ours, theirs = hf_pairs[name]
    want = theirs.encode(text)
    got = ours.encode(text)
    assert got.ids == want.ids
    assert got.offsets == want.offsets
    for skip in (True, False):  # Hugging Face skips special tokens by default, ciyuan does not
        assert ours.decode(got.ids, skip_special_tokens=skip) == theirs.decode(want.ids, skip_special_tokens=skip)


# --- sentencepiece -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spm_pairs() -> Dict[str, tuple]:
    spm = pytest.importorskip("sentencepiece")
    import ciyuan

    out = {}
    for name in ("llama2", "albert"):
        path = shared("tokenizers", "sentencepiece", f"{name}.model")
        out[name] = (ciyuan.Tokenizer.from_file(path), spm.SentencePieceProcessor(model_file=str(path)))
    return out


@pytest.mark.parametrize("name", ["llama2", "albert"])
@SETTINGS
@given(text=text_no_surrogates)
def test_sentencepiece(spm_pairs: Dict[str, tuple], name: str, text: str) -> None:
    ours, sp = spm_pairs[name]
    ids = sp.encode(text)
    assert ours.encode(text).ids == ids
    assert ours.decode(ids) == sp.decode(ids)


# --- jieba ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jieba_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    from ciyuan.segment import Dictionary, Segmenter

    path = shared("dicts", "jieba_dict_small.txt")
    with warnings.catch_warnings():  # jieba imports pkg_resources, which warns on new setuptools
        warnings.simplefilter("ignore")
        jieba = pytest.importorskip("jieba")
        jieba.setLogLevel(60)
        tok = jieba.Tokenizer(dictionary=str(path))
        tok.tmp_dir = str(tmp_path_factory.mktemp("jieba"))  # its cache here, not in /tmp
        tok.initialize()
    words = [line.split()[0] for line in path.read_text(encoding="utf-8").splitlines()[:3000] if line.split()]
    return Segmenter(Dictionary.load(path), "dag"), tok, words


zh_text = st.one_of(
    text_no_surrogates,
    st.lists(st.one_of(st.sampled_from(SPACES + DIGITS + PUNCT + ["iPhone", "C++", "3.14", "a_b", "x-y", "95%"]),
                       st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x4EFF), max_size=8)),
             max_size=40).map("".join),
)


@SETTINGS
@given(data=st.data())
def test_jieba_cut_without_hmm(jieba_pair: tuple, data: st.DataObject) -> None:
    seg, tok, words = jieba_pair
    # Dictionary words glued together, with hostile text between them.
    text = data.draw(st.lists(st.one_of(st.sampled_from(words), zh_text), max_size=12).map("".join))
    assert seg.lcut(text) == list(tok.cut(text, HMM=False))


# --- subword-nmt -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def subword_nmt_pair() -> tuple:
    pytest.importorskip("subword_nmt")
    from subword_nmt.apply_bpe import BPE
    from subword_nmt.learn_bpe import learn_bpe

    from ciyuan.formats.subword_nmt import parse_codes
    from ciyuan.formats.subword_nmt_apply import SubwordNmt

    corpus = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 200_000)
    codes = io.StringIO()
    learn_bpe(io.StringIO(corpus), codes, 2000)
    text = codes.getvalue()
    return SubwordNmt(parse_codes(text)), BPE(io.StringIO(text))


# subword-nmt works on lines split at spaces: newlines end the line it is given.
line_text = text_no_surrogates.map(lambda t: t.replace("\n", " ").replace("\r", " "))


@SETTINGS
@given(text=line_text)
def test_subword_nmt_apply_bpe(subword_nmt_pair: tuple, text: str) -> None:
    ours, theirs = subword_nmt_pair
    assert ours.process_line(text) == theirs.process_line(text)
