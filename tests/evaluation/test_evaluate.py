"""evaluate(): every figure against the plain-Python twin (ciyuan.reference.evaluation), which
walks each line's tokens from Tokenizer.encode, on a small multilingual corpus and the real
vocabularies."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from ciyuan import Tokenizer
from ciyuan.errors import InvalidInputError
from ciyuan.evaluation import evaluate
from ciyuan.evaluation.corpus import read_lines
from ciyuan.models import WordLevel, WordPiece
from ciyuan.pre_tokenizers import WhitespaceSplit
from ciyuan.reference.evaluation import corpus_figures
from ciyuan.segment import Dictionary, Segmenter

FIELDS = ("tokens", "bytes", "chars", "words", "bytes_per_token", "chars_per_token", "fertility", "types_used",
          "vocab_use", "zipf_exponent", "zipf_r2", "unk_rate", "byte_fallback_rate", "partial_char_rate",
          "renyi_efficiency")


def _encode(tok):
    return lambda line: tok.encode(line, add_special_tokens=False, allowed_special=(), disallowed_special=()).ids


def _unknown_ids(tok):
    found = {tok.token_to_id(t) for t in ("[UNK]", "<unk>")}
    return {i for i in found if i is not None}


def _byte_fallback_ids(tok):
    if not getattr(tok.model, "byte_fallback", False):
        return set()
    return {i for b in range(256) if (i := tok.token_to_id(f"<0x{b:02X}>")) is not None}


def _length_of(tok):
    """Plainly: the token's bytes, WordPiece's ## off, SentencePiece's ▁ a space; [UNK] none."""
    unknown = _unknown_ids(tok)
    wordpiece, spm = isinstance(tok.model, WordPiece), hasattr(tok.model, "pieces")

    def length(i):
        data = tok.model.id_bytes(i)
        if data is None or i in unknown:
            return 0
        if wordpiece and data.startswith(b"##") and len(data) > 2:
            data = data[2:]
        if spm:
            data = data.replace("\u2581".encode(), b" ")
        return len(data)

    return length


def _same(got, want):
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return got == pytest.approx(want, rel=1e-9, abs=1e-12)


def _check(row, tok, lines, words_of=lambda s: len(s.split())):
    want = corpus_figures(lines, _encode(tok), tok.model.id_bytes, tok.vocab_size, words_of=words_of,
                          length_of=_length_of(tok), unknown_ids=_unknown_ids(tok),
                          byte_fallback_ids=_byte_fallback_ids(tok))
    for name in FIELDS:
        assert _same(getattr(row, name), want[name]), (row.tokenizer, name, getattr(row, name), want[name])
    return want


def test_every_figure_equals_the_plain_computation(small_udhr, real_tokenizers):
    report = evaluate(real_tokenizers, [small_udhr])
    lines = [line for p in sorted(small_udhr.glob("*.txt")) for line in read_lines(p)]
    assert [m.tokenizer for m in report.metrics] == list(real_tokenizers)
    lengths = {}
    for row in report.metrics:
        tok = real_tokenizers[row.tokenizer]
        want = _check(row, tok, lines)
        lengths[row.tokenizer] = want["token_lengths"]
        assert row.lines == len(lines) and row.vocab_size == tok.vocab_size and row.word_method == "whitespace"
    # Special ids have no bytes: length 0 in both (none occur: no special tokens are added).
    assert report.token_lengths == lengths
    by = {m.tokenizer: m for m in report.metrics}
    # What each vocabulary is known for, on this text: BERT's [UNK] (Hindi and Arabic marks it
    # lacks), Llama 2's byte fallback, byte-level BPE cutting characters; none of it elsewhere.
    assert by["llama2"].byte_fallback_rate > 0 and by["gpt2"].byte_fallback_rate == 0
    assert by["gpt2"].partial_char_rate > by["cl100k"].partial_char_rate > by["o200k"].partial_char_rate > 0
    assert by["bert"].partial_char_rate == 0 and by["cl100k"].unk_rate == 0
    assert by["o200k"].bytes_per_token > by["cl100k"].bytes_per_token > by["gpt2"].bytes_per_token


def test_per_language_rows_and_parity(small_udhr, real_tokenizers):
    toks = {k: real_tokenizers[k] for k in ("cl100k", "bert")}
    report = evaluate(toks, [small_udhr])
    assert len(report.languages) == 2 * 6 and len(report.parity) == 2
    index = {r.split("\t")[0]: r.split("\t")[1:3] for r in
                 (small_udhr / "INDEX.tsv").read_text(encoding="utf-8").splitlines()[1:]}
    for name, tok in toks.items():
        rows = {r.language: r for r in report.languages if r.tokenizer == name}
        tokens = {k: sum(len(_encode(tok)(line)) for line in read_lines(small_udhr / f"{k}.txt")) for k in rows}
        for key, row in rows.items():
            lines = read_lines(small_udhr / f"{key}.txt")
            words = sum(len(line.split()) for line in lines)
            chars = sum(len(line) for line in lines)
            assert (row.tokens, row.words, row.chars) == (tokens[key], words, chars)
            assert [row.script, row.name] == index[key]
            assert row.fertility == tokens[key] / words and row.tokens_per_char == tokens[key] / chars
            assert row.premium == tokens[key] / tokens["eng"]
        summary = next(p for p in report.parity if p.tokenizer == name)
        fert = [tokens[k] / rows[k].words for k in rows]
        premium = {k: tokens[k] / tokens["eng"] for k in rows}
        assert summary.reference == "eng" and summary.languages == 6
        assert summary.fertility_median == pytest.approx(statistics.median(fert))
        assert summary.fertility_cv == pytest.approx(statistics.pstdev(fert) / statistics.mean(fert))
        assert (summary.fertility_min, summary.fertility_max) == (min(fert), max(fert))
        assert summary.premium_median == pytest.approx(statistics.median(premium.values()))
        assert summary.premium_max == max(premium.values())
        assert premium[summary.premium_max_language] == summary.premium_max
    scripts = report.scripts()
    assert set(scripts) == {index[k][0] for k in index}
    eng = next(r for r in report.languages if r.tokenizer == "cl100k" and r.language == "eng")
    assert scripts["Latn"]["cl100k"] == eng.tokens / eng.chars
    # Another reference language, by name; an unknown one gives no premium.
    named = evaluate({"cl100k": toks["cl100k"]}, [small_udhr], reference_language="Russian")
    assert named.parity[0].reference == "rus"
    none = evaluate({"cl100k": toks["cl100k"]}, [small_udhr], reference_language="xx")
    assert math.isnan(none.parity[0].premium_median) and none.parity[0].reference == ""


def test_fertility_by_the_chinese_segmenter(tmp_path, real_tokenizers):
    corpus = tmp_path / "zh.txt"
    corpus.write_text("研究生命起源 ok\n他说 hello 世界\n", encoding="utf-8")
    seg = Segmenter(Dictionary(["研究", "生命", "起源", "世界", "他", "说"]), "fmm")
    tok = real_tokenizers["cl100k"]
    report = evaluate({"cl100k": tok}, [corpus], segmenter=seg)
    row = report.metrics[0]

    def words_of(line):  # plain: segment each whitespace run that holds a Han character
        return sum(len(seg.lcut(run)) if any("\u4e00" <= c <= "\u9fff" for c in run) else 1 for run in line.split())

    assert row.words == 3 + 1 + 2 + 1 + 1 == words_of("研究生命起源 ok") + words_of("他说 hello 世界")
    assert row.word_method == "segmenter"
    _check(row, tok, read_lines(corpus), words_of)
    # A dictionary file works too (forward maximum matching).
    d = tmp_path / "dict.txt"
    d.write_text("研究\n生命\n起源\n世界\n他\n说\n", encoding="utf-8")
    assert evaluate({"cl100k": tok}, [corpus], segmenter=d).metrics[0].words == row.words


def test_without_real_data(tmp_path):
    """A word-level tokenizer, where every figure can be counted by hand."""
    tok = Tokenizer(WordLevel({"[UNK]": 0, "a": 1, "b": 2, "c": 3}, unk_token="[UNK]"), pre_tokenizer=WhitespaceSplit())
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"a b a\r\n\n   \nb d\n")
    row = evaluate([("w", tok)], [corpus]).metrics[0]
    assert (row.lines, row.tokens, row.words, row.bytes, row.chars) == (2, 5, 5, 8, 8)
    assert (row.types_used, row.vocab_use, row.unk_rate, row.partial_char_rate) == (3, 3 / 4, 1 / 5, 0)
    assert row.corpus == "c.txt"
    # Two corpora of one name are told apart by their paths; a (name, path) pair names one.
    other = tmp_path / "sub"
    other.mkdir()
    (other / "c.txt").write_text("a\n", encoding="utf-8")
    report = evaluate([("w", tok)], [corpus, other / "c.txt", ("mine", corpus)])
    assert report.corpora == [str(corpus), str(other / "c.txt"), "mine"]
    _check(row, tok, ["a b a", "b d"])


def test_texts_in_memory_are_a_corpus(tmp_path, real_tokenizers):
    tok = real_tokenizers["cl100k"]
    path = tmp_path / "c.txt"
    path.write_text("Hello there\n\n词元 tokens\r\n", encoding="utf-8")
    from_file = evaluate({"t": tok}, [path]).metrics[0]
    in_memory = evaluate({"t": tok}, [("box", ["Hello there\n", "词元 tokens\r\n"])]).metrics[0]
    assert in_memory.corpus == "box"
    for name in FIELDS:
        assert _same(getattr(in_memory, name), getattr(from_file, name))
    with pytest.raises(InvalidInputError, match="texts must be str"):
        evaluate({"t": tok}, [("box", [b"bytes"])])


def test_errors(tmp_path, real_tokenizers):
    tok = real_tokenizers["cl100k"]
    good = tmp_path / "good.txt"
    good.write_text("hello\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="no such file"):
        evaluate({"t": tok}, [tmp_path / "missing.txt"])
    with pytest.raises(InvalidInputError, match="no such file"):
        evaluate([str(tmp_path / "missing.tiktoken")], [good])
    with pytest.raises(InvalidInputError, match="no tokenizer"):
        evaluate({}, [good])
    with pytest.raises(InvalidInputError, match="no corpus"):
        evaluate({"t": tok}, [])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInputError, match=r"no \*\.txt"):
        evaluate({"t": tok}, [tmp_path / "empty"])
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\nbad \xff byte\n")
    with pytest.raises(InvalidInputError, match="bad.txt"):
        evaluate({"t": tok}, [bad])
    assert evaluate({"t": tok}, [bad], errors="replace").metrics[0].chars == len("okbad \ufffd byte")


def test_empty_corpus_gives_nan_not_an_error(tmp_path, real_tokenizers):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    row = evaluate({"t": real_tokenizers["gpt2"]}, [empty]).metrics[0]
    assert row.tokens == 0 and math.isnan(row.bytes_per_token) and math.isnan(row.renyi_efficiency)


def test_tokenizers_by_path_are_named_by_file(tmp_path, real_tokenizers):
    from tests.conftest import shared

    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n", encoding="utf-8")
    paths = [shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"), shared("tokenizers", "gpt2"),
             f"mine={shared('tokenizers', 'bert', 'bert-base-uncased-vocab.txt')}"]
    report = evaluate(paths, [corpus])
    assert report.tokenizers == ["cl100k_base", "gpt2", "mine"]
    assert isinstance(Path(report.corpora[0]), Path)
