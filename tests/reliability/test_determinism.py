"""Determinism (issue 18, item 7): for every trainer, the saved file is byte-identical whatever
the thread count (1, 2 and 8) and from one run to the next, and with word counting spilled to
disk under a small memory limit.

The fast tests train on a seeded mixed-script corpus of ~1 MB written to a file (files are read
in chunks counted on all threads, so the threads really share the work); the slow test does the
same on the real English and Chinese corpora.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Callable, Dict, List

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
