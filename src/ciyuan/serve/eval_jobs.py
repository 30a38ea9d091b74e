"""``ciyuan eval`` on the page: the chosen tokenizers measured on the text box and on the
corpora named with ``--corpus``, on a worker thread, with the report and the plots of
:func:`ciyuan.evaluation.write_plots` served when it is done.

Each run has a folder of its own in the server's temporary folder (the text box written as a
file, since :func:`~ciyuan.evaluation.evaluate` reads files, and the PNGs).

Example:
    >>> import tempfile, pathlib
    >>> from ciyuan import Tokenizer
    >>> from ciyuan.serve.catalog import Catalog
    >>> catalog = Catalog()
    >>> _ = catalog.add_loaded("tiny", Tokenizer.train(["low lower lowest"] * 4, None), origin="trained")
    >>> jobs = EvalJobs(catalog, {}, pathlib.Path(tempfile.mkdtemp()))
    >>> job = jobs.start(EvalRequest(tokenizers=["tiny"], corpora=["text"], text="low lower\\nlowest"))
    >>> done = jobs.wait(job.id, timeout=120)
    >>> done.state, done.report["metrics"][0]["tokens"] > 0
    ('done', True)
    >>> jobs.shutdown()
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from ciyuan.errors import InvalidInputError
from ciyuan.segment import Segmenter
from ciyuan.serve.catalog import Catalog
from ciyuan.serve.job_table import JobTable, UnknownJobError

__all__ = ["EvalRequest", "EvalJob", "EvalJobs", "TEXT_CORPUS", "eval_available"]

#: The name of the text box among the corpora.
TEXT_CORPUS = "text"


def eval_available() -> Optional[str]:
    """None when the page can measure and plot; else why not (what to install)."""
    missing = [m for m in ("numpy", "matplotlib") if importlib.util.find_spec(m) is None]
    if missing:
        return f"the plots need {' and '.join(missing)}: pip install 'ciyuan[eval]'"
    return None


@dataclass
class EvalRequest:
    """What to measure: tokenizer names, corpus names (``"text"``: the text box), and the
    options of :func:`~ciyuan.evaluation.evaluate` the page offers."""

    tokenizers: List[str]
    corpora: List[str]
    text: Optional[str] = None
    curves: bool = False
    segment_words: bool = False


@dataclass
class EvalJob:
    """One run as the page polls it."""

    id: str
    request: EvalRequest
    folder: Path
    state: str = "queued"  # queued, running, done, error
    message: str = ""
    error: Optional[str] = None
    report: Optional[Dict[str, Any]] = None
    markdown: str = ""
    plots: List[str] = field(default_factory=list)
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    def describe(self) -> Dict[str, Any]:
        """What ``GET /api/eval/{id}`` answers."""
        return {"id": self.id, "state": self.state, "message": self.message, "error": self.error,
                "report": self.report, "markdown": self.markdown,
                "plots": [{"name": p, "url": f"/api/eval/{self.id}/plots/{p}"} for p in self.plots]}


class EvalJobs(JobTable[EvalJob]):
    """The page's evaluation runs: one at a time on a worker thread, kept for polling
    (:class:`~ciyuan.serve.job_table.JobTable`: ``get``, ``list``, ``wait``, ``shutdown``).

    Args:
        catalog: the tokenizers.
        corpora: corpus name -> file or folder (``--corpus``).
        folder: where each run's files go (a subfolder per run).
        segmenter: the segmenter for words of Chinese text (``segment_words``), if any.
    """

    noun, failure = "evaluation run", "evaluation failed"

    def __init__(self, catalog: Catalog, corpora: Mapping[str, Path], folder: Path,
                 segmenter: Optional[Segmenter] = None) -> None:
        super().__init__("ciyuan-eval")
        self.catalog = catalog
        self.corpora = dict(corpora)
        self.folder = folder
        self.segmenter = segmenter

    def corpus_names(self) -> List[str]:
        return [TEXT_CORPUS, *self.corpora]

    def start(self, request: EvalRequest) -> EvalJob:
        """Queue a run (checked first: :class:`InvalidInputError` for a bad request, an unknown
        tokenizer's error for an unknown name)."""
        why = eval_available()
        if why:
            raise InvalidInputError(why)
        if not request.tokenizers:
            raise InvalidInputError("choose at least one tokenizer (in the Tokenize view)")
        for name in request.tokenizers:
            self.catalog.entry(name)  # 404 now rather than in the run
        if not request.corpora:
            raise InvalidInputError("choose at least one corpus")
        for name in request.corpora:
            if name != TEXT_CORPUS and name not in self.corpora:
                raise InvalidInputError(f"no corpus named {name!r}; known: {', '.join(self.corpus_names())}")
        if TEXT_CORPUS in request.corpora and not (request.text or "").strip():
            raise InvalidInputError("the text box is empty: type some text, or choose another corpus")
        if request.segment_words and self.segmenter is None:
            raise InvalidInputError("words by the Chinese segmenter need a dictionary: start ciyuan serve with --dict")
        return self._add(lambda job_id: EvalJob(job_id, request, self.folder / f"eval-{job_id}"))

    def plot(self, job_id: str, name: str) -> Path:
        """The PNG ``name`` of a finished run.

        Raises:
            UnknownJobError: no such run, or no such plot in it.
        """
        job = self.get(job_id)
        if name not in job.plots:
            raise UnknownJobError(f"evaluation run {job_id} has no plot {name!r}")
        return job.folder / "plots" / name

    def _say(self, job: EvalJob, message: str) -> None:
        self._check_closing()
        job.message = message

    def _work(self, job: EvalJob) -> None:
        from ciyuan.evaluation import evaluate, write_plots

        request = job.request
        job.state = "running"
        job.folder.mkdir(parents=True)
        tokenizers = {name: self.catalog.get(name) for name in request.tokenizers}
        corpora: List[Any] = []
        for name in request.corpora:
            if name == TEXT_CORPUS:
                path = job.folder / "text.txt"
                path.write_text(request.text or "", encoding="utf-8")
                corpora.append(("the text box", path))
            else:
                corpora.append((name, self.corpora[name]))
        # threads=1: the server's other requests keep a core.
        report = evaluate(tokenizers, corpora, segmenter=self.segmenter if request.segment_words else None,
                          curves=request.curves, threads=1, progress=lambda m: self._say(job, m))
        self._say(job, "drawing the plots")
        job.plots = [p.name for p in write_plots(report, job.folder / "plots")]
        job.report = report.to_dict()
        job.markdown = report.to_markdown()
        job.state, job.message = "done", ""
