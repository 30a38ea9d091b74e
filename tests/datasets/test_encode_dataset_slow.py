"""The whole corpora (slow): the 105 MB English books as blank-line blocks, the 26 MB Chinese
novels as zstd JSON Lines, the UDHR's 485 languages as a glob of text files - every document read
back (Megatron with the independent reader, flat, Parquet) is ``encode_ids`` of it plus EOS.
Compared shard by shard, so memory stays bounded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from ciyuan.datasets import encode_dataset, iter_documents
from tests.conftest import shared
from tests.datasets.megatron_reader import MegatronShard

pytestmark = pytest.mark.slow


def _documents_back(out: Path) -> Iterator[np.ndarray]:
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"]
    fmt, dtype = manifest["job"]["format"], manifest["job"]["dtype"]
    for shard in manifest["shards"]:
        files = [out / f for f in shard["files"]]
        if fmt == "megatron":
            reader = MegatronShard(str(files[0])[: -len(".bin")])
            assert reader.dtype == np.dtype(dtype)
            yield from (reader[i] for i in range(len(reader)))
        elif fmt == "flat":
            ids, offsets = np.fromfile(files[0], dtype=dtype), np.load(files[1])
            yield from (ids[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1))
        else:
            import pyarrow.parquet as pq

            column = pq.read_table(files[0]).column("input_ids")
            for chunk in column.chunks:
                values, offsets = chunk.values.to_numpy(), chunk.offsets.to_numpy()
                yield from (values[offsets[i]:offsets[i + 1]] for i in range(len(chunk)))


def _check(out: Path, documents, tok, eos: int) -> int:  # noqa: ANN001
    count = 0
    back = _documents_back(out)
    for doc in documents:
        got = next(back)
        want = tok.encode_ids(doc.text, as_array=True)
        assert len(got) == len(want) + 1 and got[-1] == eos, (doc.source, doc.line)
        assert np.array_equal(got[:-1], want), (doc.source, doc.line)
        count += 1
    assert next(back, None) is None
    return count


def test_english_books_as_blocks_to_megatron(tmp_path: Path, cl100k) -> None:  # noqa: ANN001
    src = shared("corpora", "en", "gutenberg_100mb.txt")
    eos = cl100k.token_to_id("<|endoftext|>")
    result = encode_dataset(src, tmp_path / "out", cl100k, format="megatron", doc_per="block", eos=eos,
                            shard_tokens=5_000_000, disallowed_special=())
    assert len(result.shards) > 3
    cl100k_ids = iter_documents(src, doc_per="block")
    # disallowed_special=() above: the books are plain text; encode_ids's default refuses special-token text
    assert _check(tmp_path / "out", cl100k_ids, _Plain(cl100k), eos) == result.documents


def test_chinese_novels_jsonl_zst_to_flat_and_parquet(tmp_path: Path, cl100k, gpt2) -> None:  # noqa: ANN001
    import zstandard

    lines = [line for line in shared("corpora", "zh", "jinyong_16novels.txt").read_text().split("\n") if line]
    src = tmp_path / "zh.jsonl.zst"
    data = "".join(json.dumps({"text": line}, ensure_ascii=False) + "\n" for line in lines).encode()
    src.write_bytes(zstandard.ZstdCompressor().compress(data))
    for fmt, tok in (("flat", gpt2), ("parquet", cl100k)):
        eos = tok.token_to_id("<|endoftext|>")
        result = encode_dataset(src, tmp_path / fmt, tok, format=fmt, eos=eos, shard_tokens=3_000_000)
        assert result.documents == len(lines) and len(result.shards) > 1
        assert _check(tmp_path / fmt, iter_documents(src), tok, eos) == len(lines)


def test_udhr_languages_glob_to_every_format(tmp_path: Path, cl100k) -> None:  # noqa: ANN001
    pattern = str(shared("corpora", "multi", "udhr") / "*.txt")
    eos = cl100k.token_to_id("<|endoftext|>")
    for fmt in ("megatron", "flat", "parquet"):
        result = encode_dataset(pattern, tmp_path / fmt, cl100k, format=fmt, eos=eos, shard_tokens=400_000)
        assert _check(tmp_path / fmt, iter_documents(pattern), cl100k, eos) == result.documents > 10_000


class _Plain:
    """A tokenizer's encode_ids with special-token text read as text (as the run above)."""

    def __init__(self, tok) -> None:  # noqa: ANN001
        self.tok = tok

    def encode_ids(self, text: str, as_array: bool = False):  # noqa: ANN201
        return self.tok.encode_ids(text, disallowed_special=(), as_array=as_array)


def _peak_rss_kb(args) -> int:  # noqa: ANN001
    """VmHWM of a fresh process running ``ciyuan`` with ``args``."""
    import subprocess
    import sys

    code = ("import sys\nfrom ciyuan.cli import main\nassert main(sys.argv[1:]) == 0\n"
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], check=True, capture_output=True, text=True)
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_memory_does_not_grow_with_the_corpus(tmp_path: Path) -> None:
    """Peak RSS over the 105 MB books three times (315 MB: the file named thrice) is within 64 MB
    of that over them once: the pipeline's memory (a few batches of text and ids, the tokenizer)
    does not grow with the corpus. (RSS wanders by +-15 MB with the allocator once the pipeline is
    full, so the margin is not tighter.)"""
    books = shared("corpora", "en", "gutenberg_100mb.txt")
    tiktoken_file = shared("tokenizers", "tiktoken", "o200k_base.tiktoken")
    peaks = [_peak_rss_kb(["encode-dataset", "-t", tiktoken_file, *([books] * copies), "-o", tmp_path / str(copies),
                           "--doc-per", "block", "--disallowed-special", "", "--shard-tokens", "5M"])
             for copies in (1, 3)]
    print("peak RSS (KB) 105 MB vs 315 MB:", peaks)
    assert peaks[1] - peaks[0] < 64 << 10, peaks
