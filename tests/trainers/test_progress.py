"""trainers/progress.py: the bar drawn on a stream, and progress_listener, which hands every
trainer's reports to a callback (ciyuan serve's progress bar)."""

from __future__ import annotations

import io
import threading
from typing import List, Tuple

import pytest

from ciyuan import Tokenizer
from ciyuan.errors import CiyuanError
from ciyuan.trainers import BpeTrainer, UnigramTrainer, WordPieceTrainer
from ciyuan.trainers.progress import progress_bar, progress_listener

CORPUS = ["low lower lowest newer wider", "the quick brown fox", "研究生命起源"] * 30


def test_without_listener_or_show_there_is_no_bar() -> None:
    with progress_bar("x", False) as bar:
        assert bar is None


def test_listener_gets_reports_and_nothing_is_drawn() -> None:
    seen: List[Tuple[str, int, int]] = []
    out = io.StringIO()
    with progress_listener(lambda *report: seen.append(report)), \
            progress_bar("training BPE", False, stream=out) as bar:
        assert bar is not None
        bar(1, 4)
        bar(4, 4)
    assert seen == [("training BPE", 1, 4), ("training BPE", 4, 4)]
    assert out.getvalue() == ""


def test_listener_and_drawn_bar_together() -> None:
    seen: List[Tuple[str, int, int]] = []
    out = io.StringIO()
    with progress_listener(lambda *report: seen.append(report)), \
            progress_bar("training BPE", True, stream=out) as bar:
        bar(2, 2)  # type: ignore[misc]
    assert seen == [("training BPE", 2, 2)]
    assert out.getvalue().endswith("2/2 merges\n")


@pytest.mark.parametrize("trainer,label", [(BpeTrainer(300, byte_level=True, show_progress=False), "training BPE"),
                                           (WordPieceTrainer(120, show_progress=False), "training WordPiece"),
                                           (UnigramTrainer(300, byte_fallback=True), "training Unigram")])
def test_every_trainer_reports_to_the_listener(trainer: object, label: str) -> None:
    seen: List[Tuple[str, int, int]] = []
    with progress_listener(lambda *report: seen.append(report)):
        Tokenizer.train(CORPUS, trainer)
    assert seen and {s[0] for s in seen} == {label}
    done = [s[1] for s in seen]
    # Counts only grow, and never pass the total (a run may stop before it: no pair left).
    assert done == sorted(done) and all(d <= t for _, d, t in seen)


def test_the_listener_is_this_threads_only() -> None:
    """A listener set on one thread does not hear a training run on another."""
    seen: List[Tuple[str, int, int]] = []
    other = threading.Thread(target=lambda: Tokenizer.train(CORPUS, BpeTrainer(300, byte_level=True,
                                                                                show_progress=False)))
    with progress_listener(lambda *report: seen.append(report)):
        other.start()
        other.join()
    assert seen == []


def test_a_listener_that_raises_stops_training() -> None:
    class Stop(CiyuanError):
        pass

    def stop(label: str, done: int, total: int) -> None:
        raise Stop("stopped")

    with progress_listener(stop), pytest.raises(Stop):
        Tokenizer.train(CORPUS, BpeTrainer(300, byte_level=True, show_progress=False))
