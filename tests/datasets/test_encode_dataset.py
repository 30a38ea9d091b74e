"""encode_dataset round trips: every document read back from each output format (Megatron with
the independent reader) equals ``encode_ids`` of that document with BOS/EOS as asked, for the
English, Chinese and multilingual corpora as text, JSON Lines (plain, .gz, .zst) and Parquet;
the same bytes whatever the thread count and batch size."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import List

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan.datasets import encode_dataset, iter_documents
from ciyuan.errors import DisallowedSpecialTokenError, InvalidInputError
from tests.datasets.conftest import corpus_lines, read_back, tree_bytes, write_input

FORMATS = ("megatron", "flat", "parquet")


@functools.lru_cache(maxsize=None)
def _docs(corpus: str, limit: int) -> tuple:
    return tuple(corpus_lines(corpus, limit))


def _expected(tok, docs, bos: List[int], eos: List[int]) -> List[List[int]]:  # noqa: ANN001
    return [bos + tok.encode_ids(d) + eos for d in docs]


# Every corpus in each plain kind; the compressed kinds (the same reader behind a decompressor) on one.
ROUND_TRIPS = [(c, k) for c in ("en", "zh", "multi") for k in ("txt", "jsonl", "parquet")] + [
    ("zh", "jsonl.gz"), ("multi", "jsonl.zst")]


@pytest.mark.parametrize("corpus, kind", ROUND_TRIPS)
def test_round_trip_every_format(tmp_path: Path, cl100k, corpus: str, kind: str) -> None:  # noqa: ANN001
    docs = list(_docs(corpus, 15_000))
    src = write_input(docs, tmp_path / "in", kind)
    eot = cl100k.token_to_id("<|endoftext|>")
    want = _expected(cl100k, docs, [], [eot])
    for fmt in FORMATS:
        out = tmp_path / fmt
        result = encode_dataset(src, out, cl100k, format=fmt, eos="<|endoftext|>", shard_tokens=3000)
        assert read_back(out, fmt) == want, (corpus, kind, fmt)
        assert result.documents == len(docs) and result.tokens == sum(map(len, want))
        assert len(result.shards) > 1 and result.dtype == ("int32" if fmt == "megatron" else "uint32")


def test_uint16_vocabulary_and_bos_eos_lists(tmp_path: Path, gpt2) -> None:  # noqa: ANN001
    docs = list(_docs("en", 20_000))
    src = write_input(docs, tmp_path / "in", "jsonl")
    want = _expected(gpt2, docs, [50256, 50256], [50256])
    for fmt in FORMATS:
        result = encode_dataset(src, tmp_path / fmt, gpt2, format=fmt, bos=[50256, "<|endoftext|>"],
                                eos=50256, shard_tokens=None)
        assert result.dtype == "uint16" and len(result.shards) == 1
        assert read_back(tmp_path / fmt, fmt) == want


def test_against_tiktoken(tmp_path: Path, cl100k, tiktoken_encodings) -> None:  # noqa: ANN001
    """The peer itself: the flat shards are tiktoken's encode_ordinary of each document."""
    docs = list(_docs("multi", 60_000)) + list(_docs("zh", 30_000))
    src = write_input(docs, tmp_path / "in", "jsonl.zst")
    encode_dataset(src, tmp_path / "out", cl100k, format="flat", shard_tokens=10_000)
    assert read_back(tmp_path / "out", "flat") == tiktoken_encodings["cl100k_base"].encode_ordinary_batch(docs)


def test_same_bytes_whatever_threads_and_batches(tmp_path: Path, cl100k) -> None:  # noqa: ANN001
    docs = list(_docs("zh", 25_000))
    src = write_input(docs, tmp_path / "in", "txt")
    for fmt in FORMATS:
        runs = []
        for i, (threads, batch_chars) in enumerate([(1, 1 << 20), (2, 997), (3, 1)]):
            out = tmp_path / f"{fmt}{i}"
            encode_dataset(src, out, cl100k, format=fmt, threads=threads, batch_chars=batch_chars, shard_tokens=2000,
                           bos="<|endoftext|>")
            runs.append(tree_bytes(out))
        assert runs[0] == runs[1] == runs[2], fmt


def test_parquet_row_groups_do_not_depend_on_batches(tmp_path: Path, cl100k, monkeypatch) -> None:  # noqa: ANN001
    """Row groups close at a fixed token count at a document's end: the file is the same bytes
    however the documents were batched (small groups here, to have many)."""
    import pyarrow.parquet as pq

    from ciyuan.datasets import writers

    monkeypatch.setattr(writers, "_PARQUET_ROW_GROUP_TOKENS", 777)
    docs = list(_docs("en", 30_000))
    src = write_input(docs, tmp_path / "in", "txt")
    outs = []
    for batch_chars in (1, 333, 1 << 20):
        out = tmp_path / str(batch_chars)
        encode_dataset(src, out, cl100k, format="parquet", batch_chars=batch_chars)
        outs.append(tree_bytes(out))
    assert outs[0] == outs[1] == outs[2]
    assert pq.ParquetFile(tmp_path / "1" / "shard_00000.parquet").num_row_groups > 5


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40), min_size=1, max_size=12),
       st.integers(1, 30), st.sampled_from(FORMATS))
def test_hypothesis_documents(tmp_path_factory, cl100k, docs: List[str], shard_tokens: int,  # noqa: ANN001
                              fmt: str) -> None:
    """Any texts (JSON Lines keeps them whole, newlines included): the ids read back are encode_ids."""
    tmp = tmp_path_factory.mktemp("h")
    src = write_input(docs, tmp / "in", "jsonl")
    encode_dataset(src, tmp / fmt, cl100k, format=fmt, eos=100257, shard_tokens=shard_tokens, disallowed_special=())
    assert read_back(tmp / fmt, fmt) == [cl100k.encode_ids(d, disallowed_special=()) + [100257] for d in docs]


def test_shards_hold_whole_documents(tmp_path: Path, cl100k) -> None:  # noqa: ANN001
    docs = ["a " * 50, "b", "c " * 3, "d " * 10]
    src = write_input(docs, tmp_path / "in", "jsonl")
    result = encode_dataset(src, tmp_path / "out", cl100k, format="flat", shard_tokens=12)
    lengths = [len(cl100k.encode_ids(d)) for d in docs]
    assert lengths[0] > 12 and lengths[1] + lengths[2] <= 12 and lengths[2] + lengths[3] > 12
    # the long document is a shard of its own; the next two share one; the last starts a new one
    assert [s.documents for s in result.shards] == [1, 2, 1]
    assert all(s.tokens <= 12 for s in result.shards[1:])


def test_skip_bad_counts_refused_special_tokens(tmp_path: Path, cl100k) -> None:  # noqa: ANN001
    docs = ["fine", "has <|endoftext|> inside", "also fine"]
    src = write_input(docs, tmp_path / "in", "jsonl")
    with pytest.raises(DisallowedSpecialTokenError, match=r"docs\.jsonl:2: "):
        encode_dataset(src, tmp_path / "a", cl100k, format="flat")
    result = encode_dataset(src, tmp_path / "b", cl100k, format="flat", skip_bad=True)
    assert result.skipped == 1
    assert read_back(tmp_path / "b", "flat") == [cl100k.encode_ids("fine"), cl100k.encode_ids("also fine")]
    result = encode_dataset(src, tmp_path / "c", cl100k, format="flat", disallowed_special=())
    assert read_back(tmp_path / "c", "flat")[1] == cl100k.encode_ids(docs[1], disallowed_special=())


def test_doc_per_block_and_file(tmp_path: Path, gpt2) -> None:  # noqa: ANN001
    text = "para one\nline two\n\n\n  \npara two\n"
    (tmp_path / "a.txt").write_text(text)
    (tmp_path / "b.txt").write_text("whole\n\nfile")
    encode_dataset(tmp_path / "a.txt", tmp_path / "blocks", gpt2, format="flat", doc_per="block")
    want = [gpt2.encode_ids("para one\nline two"), gpt2.encode_ids("para two")]
    assert read_back(tmp_path / "blocks", "flat") == want
    encode_dataset(tmp_path / "*.txt", tmp_path / "files", gpt2, format="flat", doc_per="file")
    assert read_back(tmp_path / "files", "flat") == [gpt2.encode_ids(text), gpt2.encode_ids("whole\n\nfile")]


def test_a_finished_run_is_left_alone_and_another_run_refused(tmp_path: Path, gpt2) -> None:  # noqa: ANN001
    src = write_input(list(_docs("en", 5000)), tmp_path / "in", "txt")
    out = tmp_path / "out"
    first = encode_dataset(src, out, gpt2, format="megatron", shard_tokens=300)
    before = tree_bytes(out)
    again = encode_dataset(src, out, gpt2, format="megatron", shard_tokens=300)
    assert tree_bytes(out) == before and again.resumed_shards == len(first.shards)
    with pytest.raises(InvalidInputError, match="shard_tokens is 400 now but was 300"):
        encode_dataset(src, out, gpt2, format="megatron", shard_tokens=400)
    with src.open("a") as f:
        f.write("one more line\n")
    with pytest.raises(InvalidInputError, match="changed since the first run"):
        encode_dataset(src, out, gpt2, format="megatron", shard_tokens=300)
    encode_dataset(src, out, gpt2, format="flat", overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "shard_00000.bin", "shard_00000.offsets.npy"]


def test_a_manifest_with_blake2b_checksums_still_resumes(tmp_path: Path, gpt2) -> None:  # noqa: ANN001
    """Earlier versions checksummed the inputs with blake2b: such a run goes on, and a changed
    input is still found."""
    src = write_input(list(_docs("en", 5000)), tmp_path / "in", "txt")
    out = tmp_path / "out"
    first = encode_dataset(src, out, gpt2, format="megatron", shard_tokens=300)
    manifest = json.loads((out / "manifest.json").read_text())
    (entry,) = manifest["inputs"]
    assert entry["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    del entry["sha256"]
    entry["blake2b"] = hashlib.blake2b(src.read_bytes(), digest_size=16).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert encode_dataset(src, out, gpt2, format="megatron", shard_tokens=300).resumed_shards == len(first.shards)
    with src.open("a") as f:
        f.write("one more line\n")
    with pytest.raises(InvalidInputError, match="changed since the first run"):
        encode_dataset(src, out, gpt2, format="megatron", shard_tokens=300)


def test_folder_and_glob_inputs_in_sorted_order(tmp_path: Path, gpt2) -> None:  # noqa: ANN001
    for name, text in (("b/2.jsonl", "two"), ("a.jsonl", "one"), ("b/10.jsonl", "ten"), (".hidden.jsonl", "x")):
        path = tmp_path / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"text": text}) + "\n")
    assert [d.text for d in iter_documents(tmp_path / "in")] == ["one", "ten", "two"]
    assert [d.text for d in iter_documents(str(tmp_path / "in" / "**" / "*.jsonl"))] == ["one", "ten", "two"]
    encode_dataset(tmp_path / "in", tmp_path / "out", gpt2, format="parquet")
    assert read_back(tmp_path / "out", "parquet") == [gpt2.encode_ids(t) for t in ("one", "ten", "two")]


def test_output_inside_an_input_folder(tmp_path: Path, gpt2) -> None:  # noqa: ANN001
    write_input(["one", "two"], tmp_path, "jsonl")
    first = encode_dataset(tmp_path, tmp_path / "out", gpt2, format="flat")
    again = encode_dataset(tmp_path, tmp_path / "out", gpt2, format="flat")  # its own shards are not inputs
    assert first.documents == again.documents == 2 and again.resumed_shards == 1


def test_arguments_checked(tmp_path: Path, gpt2) -> None:  # noqa: ANN001
    src = write_input(["x"], tmp_path / "in", "txt")
    with pytest.raises(InvalidInputError, match="no token '<nope>'"):
        encode_dataset(src, tmp_path / "o", gpt2, eos="<nope>")
    with pytest.raises(InvalidInputError, match="outside the vocabulary"):
        encode_dataset(src, tmp_path / "o", gpt2, bos=50257)
    with pytest.raises(InvalidInputError, match="format must be one of"):
        encode_dataset(src, tmp_path / "o", gpt2, format="npy")
    with pytest.raises(InvalidInputError, match="dtype for megatron"):
        encode_dataset(src, tmp_path / "o", gpt2, format="megatron", dtype="uint32")
    with pytest.raises(InvalidInputError, match="shard_tokens must be a positive integer"):
        encode_dataset(src, tmp_path / "o2", gpt2, shard_tokens=0)
    from ciyuan import Tokenizer

    saved = gpt2.to_dict()
    saved["model"]["dropout"] = 0.1
    dropout = Tokenizer.from_dict(saved)
    with pytest.raises(InvalidInputError, match="BPE dropout"):
        encode_dataset(src, tmp_path / "o3", dropout)


def test_megatron_index_layout(tmp_path: Path, gpt2) -> None:  # noqa: ANN001
    """The .idx bytes field by field (the layout megatron-core's reader expects)."""
    src = write_input(["hello world", "a", "big cat"], tmp_path / "in", "txt")
    encode_dataset(src, tmp_path / "out", gpt2, format="megatron")
    idx = (tmp_path / "out" / "shard_00000.idx").read_bytes()
    lengths = [len(gpt2.encode_ids(t)) for t in ("hello world", "a", "big cat")]
    assert idx[:9] == b"MMIDIDX\x00\x00"
    assert idx[9:17] == (1).to_bytes(8, "little") and idx[17] == 8  # version 1; uint16
    assert idx[18:34] == (3).to_bytes(8, "little") + (4).to_bytes(8, "little")
    rest = np.frombuffer(idx[34:34 + 12], "<i4").tolist(), np.frombuffer(idx[46:46 + 24], "<i8").tolist()
    assert rest == (lengths, [0, 2 * lengths[0], 2 * (lengths[0] + lengths[1])])
    assert np.frombuffer(idx[70:], "<i8").tolist() == [0, 1, 2, 3]


def test_a_pipeline_gives_the_same_bytes(tmp_path: Path, cl100k) -> None:  # noqa: ANN001
    """Another pipeline (here: every document encoded alone with encode_ids, batches split in two,
    every third batch searched for refused documents as a remote worker does) changes nothing in
    the output."""
    from ciyuan.datasets.encode import EncodedBatch, encode_finding_refused

    docs = list(_docs("multi", 20_000)) + ["bad <|endoftext|> text"] + list(_docs("en", 5_000))
    src = write_input(docs, tmp_path / "in", "jsonl")
    seen = []

    class Reading:
        def __init__(self, run) -> None:  # noqa: ANN001
            self.run = run
            self.skipped = 0

        def bytes_done(self) -> int:
            return 0

        def close(self) -> None:
            pass

        def __iter__(self):  # noqa: ANN204
            run = self.run
            for n, batch in enumerate(run.batches()):
                half = len(batch.texts) // 2
                for first, texts in ((batch.first, batch.texts[:half]), (batch.first + half, batch.texts[half:])):
                    seen.append(len(texts))
                    if n % 3 == 2 or any("<|endoftext|>" in t for t in texts):
                        ids, offsets, kept, refusal = encode_finding_refused(run.tok, texts, run.encode_args,
                                                                             stop_at_first=False)
                        assert refusal is None
                        yield EncodedBatch(first, len(texts), ids, offsets, kept)
                        continue
                    lists = [run.tok.encode_ids(t) for t in texts]
                    yield EncodedBatch(first, len(texts), np.array([i for ids in lists for i in ids], dtype=np.uint32),
                                       np.cumsum([0] + [len(ids) for ids in lists]))
            self.skipped = run.stream.skipped

    options = dict(format="megatron", eos=100257, shard_tokens=3000, batch_chars=2000, skip_bad=True)
    encode_dataset(src, tmp_path / "local", cl100k, **options)
    result = encode_dataset(src, tmp_path / "other", cl100k, pipeline=Reading, **options)
    assert len(seen) > 6 and result.skipped == 1
    assert tree_bytes(tmp_path / "other") == tree_bytes(tmp_path / "local")


def test_many_refused_documents_in_one_batch(tmp_path: Path, cl100k) -> None:  # noqa: ANN001
    """Refused documents spread over several re-encoding groups: exactly they are left out."""
    docs = [f"document {i}" + (" <|endoftext|>" if i % 7 == 3 else "") for i in range(1500)]
    src = write_input(docs, tmp_path / "in", "jsonl")
    result = encode_dataset(src, tmp_path / "out", cl100k, format="flat", skip_bad=True, eos=100257,
                            shard_tokens=2000)
    good = [d for i, d in enumerate(docs) if i % 7 != 3]
    assert result.skipped == len(docs) - len(good)
    assert read_back(tmp_path / "out", "flat") == [cl100k.encode_ids(d) + [100257] for d in good]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [s["rejected"] for s in manifest["shards"]][-1] <= result.skipped


@pytest.mark.parametrize("stop_after", [1, 4, 9])
def test_interrupted_run_with_refused_and_bad_documents_resumes(tmp_path: Path, cl100k, stop_after: int) -> None:  # noqa: ANN001
    """A run stopped by an exception mid-way (after some shards) and started again gives the
    same bytes and the same skipped count, with refused (special-token) and bad (JSON) documents
    before and after the stop."""
    lines = []
    for i in range(1200):
        if i % 97 == 5:
            lines.append("{broken json")
        else:
            text = f"line {i} " * (i % 5 + 1) + (" <|endoftext|>" if i % 11 == 2 else "")
            lines.append(json.dumps({"text": text}))
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    options = dict(format="megatron", skip_bad=True, eos=100257, shard_tokens=500, batch_chars=700)
    whole = encode_dataset(src, tmp_path / "whole", cl100k, **options)

    class Stop(Exception):
        pass

    class Stopping:
        def __init__(self, run) -> None:  # noqa: ANN001
            from ciyuan.datasets.encode import _local_pipeline

            self.local = _local_pipeline(run)
            self.skipped = 0
            self.bytes_done = self.local.bytes_done
            self.close = self.local.close

        def __iter__(self):  # noqa: ANN204
            for n, batch in enumerate(self.local):
                if n == stop_after:
                    raise Stop
                yield batch

    with pytest.raises(Stop):
        encode_dataset(src, tmp_path / "out", cl100k, pipeline=Stopping, **options)
    resumed = encode_dataset(src, tmp_path / "out", cl100k, **options)
    assert resumed.resumed_shards > 0 or stop_after == 1
    assert tree_bytes(tmp_path / "out") == tree_bytes(tmp_path / "whole")
    assert resumed.skipped == whole.skipped == sum(1 for i in range(1200) if i % 97 == 5 or i % 11 == 2)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists open files through /proc")
def test_a_refused_document_leaves_no_input_file_open(tmp_path: Path, cl100k) -> None:  # noqa: ANN001
    # The reader stopped by the tokenizer's refusal was a generator suspended inside its open
    # file, in a reference cycle with its stream: the file stayed open until the cyclic garbage
    # collector ran (and closing it there could come first: a ResourceWarning). With the
    # collector off, nothing but an explicit close frees it.
    import gc
    import os

    # The refused document early, and more than two of the reader's 4 MB chunks after it.
    docs = ["a <|endoftext|> b"] + [f"document number {i}, " * 4 for i in range(120_000)]
    path = write_input(docs, tmp_path / "in", "jsonl")

    def open_inputs() -> List[str]:
        fds = Path("/proc/self/fd")
        return [name for name in os.listdir(fds) if os.path.realpath(fds / name) == str(path.resolve())]

    gc.disable()
    try:
        with pytest.raises(DisallowedSpecialTokenError):
            encode_dataset(path, tmp_path / "out", cl100k, format="flat", batch_chars=1000)
        assert open_inputs() == []
    finally:
        gc.enable()
