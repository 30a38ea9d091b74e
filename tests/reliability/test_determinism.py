"""Determinism (issue 18, item 7): for every trainer, the saved file is byte-identical whatever
the thread count (1, 2 and 8) and from one run to the next, and with word counting spilled to
disk under a small memory limit.

The fast tests train on a seeded mixed-script corpus of ~1 MB written to a file (files are read
in chunks counted on all threads, so the threads really share the work); the slow test does the
same on the real English and Chinese corpora.

Beyond the seven trainers of ``ciyuan.trainers``: training with the counting pass on Ray
(``ciyuan.datasets.ray_engine.train``) saves the local run's file byte for byte whatever the
trainer's thread count and the size of the parts; and in fresh interpreters with other hash
seeds (``PYTHONHASHSEED``, which orders Python's sets and dicts of strings) and thread counts,
every trainer, the textbook trainers (``ciyuan.textbook``) and ``ciyuan zh-bpe train`` included,
produces the same bytes (tests/reliability/determinism_train.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Callable, Dict, Iterator, List

import pytest

from ciyuan import Tokenizer
from ciyuan.trainers import (
    BpeTrainer,
    CharLevelTrainer,
    SentencePieceBPETrainer,
    UnigramTrainer,
    WordLevelTrainer,
    WordPieceTrainer,
)
from tests.conftest import read_prefix, shared

ROOT = Path(__file__).resolve().parents[2]

THREADS = (1, 2, 8)

#: name -> trainer(threads, **extra) and the file the trained tokenizer is saved as.
TRAINERS: Dict[str, tuple] = {
    "bpe": (lambda t, **kw: BpeTrainer(2000, threads=t, **kw), "tok.json"),
    "byte-level bpe": (lambda t, **kw: BpeTrainer(1200, byte_level=True, threads=t, **kw), "tokenizer.json"),
    "wordpiece": (lambda t, **kw: WordPieceTrainer(1500, threads=t, **kw), "tok.json"),
    "word level": (lambda t, **kw: WordLevelTrainer(3000, threads=t, **kw), "tok.json"),
    "char level": (lambda t, **kw: CharLevelTrainer(500, threads=t, **kw), "tok.json"),
    "unigram": (lambda t, **kw: UnigramTrainer(800, threads=t, **kw), "spm.model"),
    "sentencepiece bpe": (lambda t, **kw: SentencePieceBPETrainer(800, threads=t, **kw), "spm.model"),
}


def _corpus(path: Path, chars: int, seed: str) -> Path:
    rng = random.Random(seed)
    syllables = ["ka", "to", "ri", "n", "sho", "ve", "la", "qu", "ence", "ing", "词", "元", "文", "本", "单",
                 "位", "é", "ü", "ß", "ж", "д", "ا", "ل", "1", "42", "2026"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(30_000)]
    cum, total = [], 0.0
    for i in range(len(words)):  # Zipf: many ties among rare pairs
        total += 1 / (i + 1)
        cum.append(total)
    lines: List[str] = []
    size = 0
    while size < chars:
        line = " ".join(rng.choices(words, cum_weights=cum, k=rng.randint(1, 25))) + rng.choice([".", "!", "", "。"])
        lines.append(line)
        size += len(line) + 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _corpus(tmp_path_factory.mktemp("determinism") / "corpus.txt", 1_000_000, "determinism")


def _trained_bytes(make: Callable[..., object], file_name: str, source: Path, out: Path, threads: int,
                   **kw: object) -> bytes:
    tok = Tokenizer.train(source, make(threads, **kw))  # a path: read in chunks on all threads
    out.mkdir(parents=True, exist_ok=True)
    tok.save(out / file_name)
    return (out / file_name).read_bytes()


@pytest.mark.parametrize("name", list(TRAINERS))
def test_trained_files_are_identical_across_threads_and_runs(corpus: Path, tmp_path: Path, name: str) -> None:
    make, file_name = TRAINERS[name]
    digests = {}
    for run, threads in enumerate(THREADS + (THREADS[-1], 1)):  # 8 and 1 twice: run to run
        data = _trained_bytes(make, file_name, corpus, tmp_path / str(run), threads)
        digests[(run, threads)] = hashlib.sha256(data).hexdigest()
    assert len(set(digests.values())) == 1, f"{name}: {digests}"


@pytest.mark.parametrize("name", ["bpe", "wordpiece", "word level"])
def test_spilled_counting_gives_the_same_file(corpus: Path, tmp_path: Path, name: str) -> None:
    """Counting under a memory limit spills sorted runs and merges them back: same file."""
    from ciyuan.trainers.corpus import count_words

    counts = count_words(corpus, memory_limit="256KB", spill_dir=tmp_path)
    assert counts.runs > 1  # the limit really spills on this corpus
    make, file_name = TRAINERS[name]
    plain = _trained_bytes(make, file_name, corpus, tmp_path / "plain", 2)
    (tmp_path / "runs").mkdir()
    for threads in (1, 8):
        spilled = _trained_bytes(make, file_name, corpus, tmp_path / f"spill{threads}", threads,
                                 memory_limit="256KB", spill_dir=tmp_path / "runs")
        assert spilled == plain, f"{name}: {threads} threads with spilling"


def test_subword_nmt_codes_are_identical_run_to_run(corpus: Path) -> None:
    from ciyuan.formats.subword_nmt import codes_text
    from ciyuan.formats.subword_nmt_learn import learn_codes

    lines = corpus.read_text(encoding="utf-8").splitlines()[:3000]
    first = codes_text(learn_codes(lines, 500))
    assert codes_text(learn_codes(lines, 500)) == first
    assert codes_text(learn_codes(list(reversed(lines)), 500)) == first  # counts, not order, decide


def test_trained_files_are_identical_across_hash_seeds(corpus: Path, tmp_path: Path) -> None:
    """Every trainer, in fresh interpreters with other hash seeds and thread counts: one process
    keeps one hash seed, so the tests above cannot see an order taken from a set or a dict of
    strings; these can. The child inherits the environment (under ``make sanitize`` the
    preloaded sanitizer runtime too)."""
    small = tmp_path / "small.txt"
    with corpus.open(encoding="utf-8") as f:
        small.write_text("".join(f.readline() for _ in range(1500)), encoding="utf-8")
    zh = shared("zh-bpe-sample", "smalltrain.txt")
    runs = []
    for seed, threads in (("0", 1), ("1", 8), ("4242", 2)):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-m", "tests.reliability.determinism_train", str(small), str(zh),
                              str(tmp_path / f"seed{seed}"), str(threads)],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append(json.loads(out.stdout))
    assert len(runs[0]) == 22  # 7 trainers x (a file, texts), subword-nmt, 6 textbook, the CLI
    for name in runs[0]:
        assert runs[0][name] == runs[1][name] == runs[2][name], f"{name}: differs across hash seeds / threads"


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    """A local Ray of 2 CPUs (tests/datasets' fixture), started only for the test that needs it."""
    pytest.importorskip("ray")
    from tests.datasets.conftest import local_ray

    with contextlib.ExitStack() as stack:
        stack.enter_context(local_ray(sys.modules[__name__]))
        yield
        # Ray's shutdown drops handles of its processes; a collection between it and the
        # fixture's own quiet collection warned "subprocess ... is still running" (seen once).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            stack.close()


#: The trainers the Ray engine takes (not CharLevelTrainer: its counting is one native pass).
RAY_TRAINERS = [name for name in TRAINERS if name != "char level"]


@pytest.mark.slow  # a Ray cluster's start, and 18 trainings
def test_ray_training_saves_the_local_file(corpus: Path, tmp_path: Path, ray_cluster: None) -> None:
    """ray_engine.train saves the local run's file byte for byte, with the trainer on 1, 2 or 8
    threads and the corpus cut into parts of two sizes (tests/datasets/test_ray_train.py
    compares the tokenizers' dicts on the real corpora; this compares saved files, per trainer)."""
    from ciyuan.datasets import ray_engine

    source = tmp_path / "ray.txt"
    with corpus.open(encoding="utf-8") as f:
        source.write_text("".join(f.readline() for _ in range(4000)), encoding="utf-8")  # ~200 KB
    for name in RAY_TRAINERS:
        make, file_name = TRAINERS[name]
        local = _trained_bytes(make, file_name, source, tmp_path / name / "local", 1)
        for threads, part_bytes in ((1, 40_000), (8, 40_000), (2, 90_000)):
            out = tmp_path / name / f"ray-{threads}-{part_bytes}"
            out.mkdir(parents=True)
            ray_engine.train(source, make(threads), part_bytes=part_bytes).save(out / file_name)
            assert (out / file_name).read_bytes() == local, f"{name}: Ray, {threads} threads, parts of {part_bytes}"


REAL = {  # larger vocabularies: the Chinese alphabet alone is some 4,600 characters
    "bpe": (lambda t: BpeTrainer(8000, threads=t), "tok.json"),
    "byte-level bpe": (lambda t: BpeTrainer(8000, byte_level=True, threads=t), "tokenizer.json"),
    "wordpiece": (lambda t: WordPieceTrainer(12000, threads=t), "tok.json"),
    "unigram": (lambda t: UnigramTrainer(8000, threads=t), "spm.model"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(REAL))
def test_real_corpora_identical_across_threads(tmp_path: Path, name: str) -> None:
    make, file_name = REAL[name]
    text = (read_prefix(shared("corpora", "en", "gutenberg_100mb.txt"), 6_000_000)
            + read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 3_000_000))
    source = tmp_path / "real.txt"
    source.write_text(text, encoding="utf-8")
    files = {t: _trained_bytes(make, file_name, source, tmp_path / str(t), t) for t in THREADS}
    assert files[1] == files[2] == files[8], name
