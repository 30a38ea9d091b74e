"""Training reads JSON Lines fields, Parquet columns and Python iterators (a Hugging Face dataset's
column) directly: each document counts as the same text given in a list would, with or without a
memory limit, in Python and on the command line."""

from __future__ import annotations

import gzip
import json

import pytest

from ciyuan import Tokenizer
from ciyuan.cli import main
from ciyuan.datasets import iter_documents
from ciyuan.errors import InvalidInputError
from ciyuan.pre_tokenizers import Split
from ciyuan.trainers import BpeTrainer, UnigramTrainer
from ciyuan.trainers.corpus import count_words
from tests.conftest import read_prefix, shared


@pytest.fixture(scope="module")
def documents():
    """Real documents: paragraphs of Shakespeare and lines of the UDHR in many scripts."""
    en = [b for b in read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 200_000).split("\n\n") if b]
    multi = [line for line in shared("corpora", "multi", "udhr_sample.txt").read_text(encoding="utf-8").splitlines()
             if line][:2000]
    return en + multi


def write_jsonl(path, docs, field="text", opener=open):
    with opener(path, "wt", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": i, field: d}, ensure_ascii=False) + "\n")
    return path


def snapshot(counts):
    return counts.words(), counts.total


def test_jsonl_and_parquet_files_count_as_their_texts(documents, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa
    zstd = pytest.importorskip("zstandard")

    expected = snapshot(count_words(documents, Split("gpt2")))
    plain = write_jsonl(tmp_path / "docs.jsonl", documents)
    gz = write_jsonl(tmp_path / "docs.jsonl.gz", documents, opener=gzip.open)
    zst = tmp_path / "docs.jsonl.zst"
    zst.write_bytes(zstd.ZstdCompressor().compress(plain.read_bytes()))
    parquet = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"text": documents}), parquet, row_group_size=500)
    for path in (plain, gz, zst, parquet):
        assert snapshot(count_words(path, Split("gpt2"))) == expected, path.name
        assert snapshot(count_words(str(path), Split("gpt2"), memory_limit="256KB")) == expected, path.name


def test_other_fields_and_columns_through_iter_documents(documents, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    expected = snapshot(count_words(documents, Split("gpt2")))
    jsonl = write_jsonl(tmp_path / "docs.jsonl", documents, field="content")
    parquet = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"body": documents}), parquet)
    assert snapshot(count_words(iter_documents(jsonl, field="content"), Split("gpt2"))) == expected
    assert snapshot(count_words(iter_documents(parquet, column="body"), Split("gpt2"))) == expected
    # two files in order: the first's documents, then the second's
    both = snapshot(count_words(documents + documents, Split("gpt2")))
    assert snapshot(count_words(iter_documents([jsonl, jsonl], field="content"), Split("gpt2"))) == both


def test_a_generator_trains_as_the_list(documents):
    def gen():
        yield from documents

    def train(source, **limit):
        return Tokenizer.train(source, BpeTrainer(500, byte_level=True, **limit)).to_dict()["model"]

    expected = train(documents)
    assert train(gen()) == expected
    assert train(gen(), memory_limit="256KB") == expected


def test_a_hugging_face_dataset_column(documents):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict({"text": documents, "n": list(range(len(documents)))})
    expected = snapshot(count_words(documents, Split("gpt2")))
    assert snapshot(count_words(ds["text"], Split("gpt2"))) == expected
    with pytest.raises(InvalidInputError, match=r"dataset\['text'\]"):
        count_words(ds, Split("gpt2"))


def test_unigram_from_jsonl_equals_from_texts(documents, tmp_path):
    jsonl = write_jsonl(tmp_path / "docs.jsonl", documents)

    def train(source):
        return Tokenizer.train(source, UnigramTrainer(3000, seed_size=20000)).to_dict()["model"]

    assert train(jsonl) == train(documents)


def test_cli_trains_from_jsonl_parquet_and_globs(documents, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    half = len(documents) // 2
    data = tmp_path / "data"
    data.mkdir()
    write_jsonl(data / "a.jsonl", documents[:half], field="content")
    pq.write_table(pa.table({"content": documents[half:]}), data / "b.parquet")

    def cli(*inputs, extra=()):
        out = tmp_path / "tok.json"
        code = main(["train", "--model", "bpe", "--byte-level", "--vocab-size", "500", "--no-progress",
                     "--output", str(out), *extra, *inputs])
        assert code == 0
        return json.loads(out.read_text(encoding="utf-8"))["model"]

    expected = Tokenizer.train(documents, BpeTrainer(500, byte_level=True)).to_dict()["model"]
    assert cli(str(data), extra=["--field", "content"]) == expected
    assert cli(str(data / "*"), extra=["--field", "content", "--memory-limit", "256KB"]) == expected


def test_cli_text_files_still_read_line_by_line(tmp_path):
    corpus = shared("corpora", "en", "taylorswift.txt")
    out = tmp_path / "tok.json"
    assert main(["train", "--model", "bpe", "--byte-level", "--vocab-size", "400", "--no-progress", "--output",
                 str(out), str(corpus)]) == 0
    expected = Tokenizer.train(corpus, BpeTrainer(400, byte_level=True)).to_dict()["model"]
    assert json.loads(out.read_text(encoding="utf-8"))["model"] == expected


def test_cli_compressed_text_needs_doc_per(tmp_path, capsys):
    path = tmp_path / "a.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("some text\n")
    assert main(["train", "--vocab-size", "300", "--no-progress", "--output", str(tmp_path / "t.json"),
                 str(path)]) == 1
    assert "--doc-per line" in capsys.readouterr().err
    assert main(["train", "--vocab-size", "300", "--no-progress", "--doc-per", "line", "--output",
                 str(tmp_path / "t.json"), str(path)]) == 0
