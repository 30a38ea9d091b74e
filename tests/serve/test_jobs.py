"""Training jobs: the request's checks, progress as the trainer reports it, the tokenizer
added under its name, and a run stopped when the server shuts down."""

from __future__ import annotations

from pathlib import Path

import pytest

from ciyuan.errors import InvalidInputError
from ciyuan.serve.catalog import Catalog
from ciyuan.serve.jobs import TrainingJobs, TrainRequest, UnknownJobError
from tests.serve.conftest import CORPUS, TEXT

TEXT_CORPUS = "\n".join(CORPUS)


@pytest.fixture()
def jobs():
    jobs = TrainingJobs(Catalog(), max_vocab=1000)
    yield jobs
    jobs.shutdown()


def test_a_run_reports_progress_and_offers_the_tokenizer(jobs: TrainingJobs) -> None:
    job = jobs.wait(jobs.start(TrainRequest("bpe", 300, text=TEXT_CORPUS, name="mine")).id, timeout=120)
    assert job.state == "done" and job.tokenizer == "mine"
    assert job.label == "training BPE" and 0 < job.done <= job.total
    assert job.describe()["fraction"] == 1.0
    tok = jobs.catalog.get("mine")
    assert tok.vocab_size == 300
    assert jobs.catalog.entry("mine").origin == "trained"
    assert tok.decode(tok.encode(TEXT).ids) == TEXT  # byte-level BPE: lossless


def test_names_of_unnamed_runs(jobs: TrainingJobs) -> None:
    first = jobs.wait(jobs.start(TrainRequest("wordpiece", 120, text=TEXT_CORPUS)).id, timeout=120)
    assert first.tokenizer == f"trained-wordpiece-{first.id}"


def test_a_file_corpus(jobs: TrainingJobs, tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT_CORPUS, encoding="utf-8")
    job = jobs.wait(jobs.start(TrainRequest("unigram", 320, path=corpus)).id, timeout=120)
    assert job.state == "done", job.error
    tok = jobs.catalog.get(job.tokenizer)  # type: ignore[arg-type]
    assert tok.decode(tok.encode("lazy dog").ids) == "lazy dog"


@pytest.mark.parametrize("request_,fragment", [
    (TrainRequest("bpe", 300), "one of them"),
    (TrainRequest("bpe", 300, text="x", path=Path("y")), "one of them"),
    (TrainRequest("bpe", 2000, text="x"), "from 257 to 1000"),
    (TrainRequest("bpe", True, text="x"), "integer"),  # type: ignore[arg-type]
    (TrainRequest("unigram", 299, text="x"), "from 300"),
    (TrainRequest("sentencepiece", 300, text="x"), "model must be one of"),
])
def test_bad_requests(jobs: TrainingJobs, request_: TrainRequest, fragment: str) -> None:
    with pytest.raises(InvalidInputError, match=fragment):
        jobs.start(request_)
    assert jobs.list() == []


def test_shutdown_stops_a_run_at_its_next_report(jobs: TrainingJobs) -> None:
    jobs._closing.set()  # as shutdown() does first
    job = jobs.wait(jobs.start(TrainRequest("bpe", 300, text=TEXT_CORPUS)).id, timeout=120)
    assert job.state == "error" and "shutting down" in (job.error or "")
    assert job.tokenizer is None and jobs.catalog.entries() == []


def test_unknown_job(jobs: TrainingJobs) -> None:
    with pytest.raises(UnknownJobError):
        jobs.get("1")
