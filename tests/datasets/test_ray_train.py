"""Training with the counting pass on Ray (ciyuan.datasets.ray_engine.train) gives the tokenizer
the local run gives, byte for byte: BPE, WordPiece and Unigram on real corpora cut into several
parts, texts as well as files, and with a Ray worker killed mid-job.

One local 2-CPU Ray cluster (the ``ray_cluster`` fixture) serves this module's tests.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from ciyuan.errors import InvalidInputError
from ciyuan.trainers import BpeTrainer, CharLevelTrainer, UnigramTrainer, WordPieceTrainer
from tests.conftest import read_prefix, shared

ray = pytest.importorskip("ray")
from ciyuan.datasets import ray_engine  # noqa: E402  (after the skip: the module needs Ray)


@pytest.fixture(scope="module", autouse=True)
def on_ray(ray_cluster: Any) -> Iterator[None]:
    """The module's local Ray of 2 CPUs; this test module's classes travel to the workers by value."""
    ray_cluster.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray_cluster.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def same(a: Tokenizer, b: Tokenizer) -> None:
    assert json.dumps(a.to_dict(), ensure_ascii=False) == json.dumps(b.to_dict(), ensure_ascii=False)


def both(source: Any, make: Any, **kw: Any) -> Tuple[Tokenizer, Tokenizer]:
    local = Tokenizer.train(source, make())
    distributed = ray_engine.train(source, make(), **kw)
    return local, distributed


# -- real data, files cut into several parts --------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: BpeTrainer(3000, byte_level=True),
    lambda: BpeTrainer(2000, min_frequency=2, end_of_word_suffix="</w>"),
    lambda: WordPieceTrainer(3000),
    lambda: UnigramTrainer(1500),
], ids=["bpe-bytes", "bpe-suffix", "wordpiece", "unigram"])
def test_english_file_in_parts(make: Any) -> None:
    path = shared("corpora", "en", "tinyshakespeare.txt")  # 1.1 MB: 6 parts of 200 KB
    same(*both(path, make, part_bytes=200_000))


@pytest.mark.parametrize("make", [lambda: BpeTrainer(3000, byte_level=True), lambda: WordPieceTrainer(20000),
                                  lambda: UnigramTrainer(9000)], ids=["bpe", "wordpiece", "unigram"])
def test_chinese_and_multilingual_files(make: Any, tmp_path: Path) -> None:
    zh = tmp_path / "zh.txt"
    zh.write_text(read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 600_000), encoding="utf-8")
    files = [zh, shared("corpora", "multi", "udhr_sample.txt"), shared("corpora", "multi", "emoji.txt")]
    same(*both(files, make, part_bytes=150_000))


def test_texts_in_parts() -> None:
    lines = read_prefix(shared("corpora", "en", "taylorswift.txt"), 200_000).splitlines()
    local = Tokenizer.train(iter(lines), BpeTrainer(800, byte_level=True))  # a generator: read once
    same(local, ray_engine.train(iter(lines), BpeTrainer(800, byte_level=True), part_bytes=20_000))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(st.characters(blacklist_categories=["Cs"]), max_size=40), min_size=1, max_size=60),
       st.integers(1, 300))
def test_generated_text(texts: List[str], part_bytes: int) -> None:
    try:
        local = Tokenizer.train(texts, BpeTrainer(300, byte_level=True))
    except InvalidInputError as e:  # no words at all: the same error
        with pytest.raises(InvalidInputError, match=re.escape(str(e))):
            ray_engine.train(texts, BpeTrainer(300, byte_level=True), part_bytes=part_bytes)
        return
    same(local, ray_engine.train(texts, BpeTrainer(300, byte_level=True), part_bytes=part_bytes))


@pytest.mark.slow
def test_gutenberg_105mb_bpe() -> None:
    path = shared("corpora", "en", "gutenberg_100mb.txt")  # 4 parts of 32 MB
    same(*both(path, lambda: BpeTrainer(8000, byte_level=True)))


def test_cli_train_ray(tmp_path: Path) -> None:
    from ciyuan.cli import main

    path = str(shared("corpora", "en", "tinyshakespeare.txt"))
    args = ["train", "--model", "wordpiece", "--vocab-size", "2000", "--no-progress"]
    assert main(args + ["--output", str(tmp_path / "local.json"), path]) == 0
    assert main(args + ["--ray", "--output", str(tmp_path / "ray.json"), path]) == 0
    assert (tmp_path / "local.json").read_bytes() == (tmp_path / "ray.json").read_bytes()


def test_cli_train_ray_jsonl_field(tmp_path: Path) -> None:
    """A JSON Lines field: the driver reads the documents and sends them in batches."""
    from ciyuan.cli import main

    src = tmp_path / "docs.jsonl"
    lines = read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 300_000).splitlines()
    src.write_text("".join(json.dumps({"text": t, "n": i}, ensure_ascii=False) + "\n" for i, t in enumerate(lines)),
                   encoding="utf-8")
    args = ["train", "--model", "bpe", "--byte-level", "--vocab-size", "3000", "--no-progress", "--field", "text"]
    assert main(args + ["--output", str(tmp_path / "local.json"), str(src)]) == 0
    assert main(args + ["--ray", "--output", str(tmp_path / "ray.json"), str(src)]) == 0
    assert (tmp_path / "local.json").read_bytes() == (tmp_path / "ray.json").read_bytes()


# -- a worker killed mid-job ------------------------------------------------------------------


class KillOnce:
    """Words as runs of non-spaces, but the first call (in any process) kills its own process,
    as a machine lost mid-job would: Ray runs the task again elsewhere."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def split(self, text: str) -> List[Tuple[int, int]]:
        if not os.path.exists(self.marker):
            Path(self.marker).touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return [m.span() for m in re.finditer(r"\S+", text)]


def test_worker_killed_mid_job(tmp_path: Path) -> None:
    path = shared("corpora", "en", "tinyshakespeare.txt")
    marker = tmp_path / "killed"
    distributed = ray_engine.train(path, BpeTrainer(1500), pre_tokenizer=KillOnce(str(marker)), part_bytes=300_000)
    assert marker.exists(), "no worker was killed"
    local = Tokenizer.train(path, BpeTrainer(1500), pre_tokenizer=KillOnce(str(marker)))  # the marker is there
    assert distributed.model.to_dict() == local.model.to_dict()


# -- errors are those of the local run --------------------------------------------------------


def test_invalid_utf8_names_file_byte_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good line\n" * 50 + b"bad \xff here\n" + b"more\n" * 10)
    with pytest.raises(InvalidInputError) as local:
        Tokenizer.train(path, BpeTrainer(300, byte_level=True))
    with pytest.raises(InvalidInputError) as distributed:
        ray_engine.train(path, BpeTrainer(300, byte_level=True), part_bytes=100)
    assert str(distributed.value) == str(local.value)
    assert "byte 504 (line 51)" in str(distributed.value)


def test_invalid_utf8_replaced_as_local(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes((b"good line \xe4\xb8 here\n" + "好的 lines\n".encode() * 30 + b"bad \xff\n") * 40)
    for make, stages in [(lambda: BpeTrainer(400, byte_level=True), {}),
                         # SentencePiece's whitespace words with no stages read files as U+FFFD always
                         (lambda: UnigramTrainer(60), dict(pre_tokenizer=None, normalizer=None))]:
        local = Tokenizer.train(path, make(), errors="replace", **stages)
        same(local, ray_engine.train(path, make(), errors="replace", part_bytes=700, **stages))
    unigram = dict(pre_tokenizer=None, normalizer=None)
    same(Tokenizer.train(path, UnigramTrainer(60), **unigram),
         ray_engine.train(path, UnigramTrainer(60), part_bytes=700, **unigram))


def test_unsupported_trainers() -> None:
    with pytest.raises(InvalidInputError, match="CharLevelTrainer"):
        ray_engine.train(["ab"], CharLevelTrainer(10))
    with pytest.raises(InvalidInputError, match="input_sentence_size"):
        ray_engine.train(["ab"], UnigramTrainer(10, input_sentence_size=5))
