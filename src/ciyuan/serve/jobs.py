"""Training on the page: one job at a time on a worker thread, its progress readable while it
runs (``GET /api/train/{id}``), the trained tokenizer added to the catalog when it is done.

Progress comes from the trainers themselves (:func:`ciyuan.trainers.progress.progress_listener`):
``counting`` until the words are counted, then ``training`` with the merges (BPE, WordPiece) or
the rounds of EM and pruning (Unigram) done out of their total.

Example:
    >>> from ciyuan.serve.catalog import Catalog
    >>> jobs = TrainingJobs(Catalog())
    >>> job = jobs.start(TrainRequest(model="bpe", vocab_size=270, text="low lower lowest " * 20))
    >>> jobs.wait(job.id, timeout=60).state
    'done'
    >>> jobs.shutdown()
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from ciyuan import decoders, normalizers, pre_tokenizers
from ciyuan.errors import InvalidInputError
from ciyuan.serve.catalog import Catalog
from ciyuan.serve.job_table import JobTable, UnknownJobError
from ciyuan.tokenizer import Tokenizer
from ciyuan.trainers import BpeTrainer, Trainer, UnigramTrainer, WordPieceTrainer
from ciyuan.trainers.progress import progress_listener

__all__ = ["TrainRequest", "Job", "TrainingJobs", "MODELS", "UnknownJobError"]

#: The models the page trains, and what each is.
MODELS: Dict[str, str] = {
    "bpe": "byte-level BPE (GPT-2's pre-tokenizer and bytes)",
    "wordpiece": "WordPiece (BERT's normalizer, pre-tokenizer and [CLS]/[SEP])",
    "unigram": "Unigram (NFKC, Metaspace and byte fallback, as Hugging Face's Llama-style files)",
}

# The smallest vocabulary each model can hold: byte-level BPE starts from the 256 bytes;
# WordPiece needs room for its special tokens; Unigram for its 3 meta and 256 byte pieces.
_MIN_VOCAB = {"bpe": 257, "wordpiece": 10, "unigram": 300}


@dataclass
class TrainRequest:
    """What to train: ``model`` (a key of :data:`MODELS`), ``vocab_size``, and the corpus as
    ``text`` (each line a document) or a file ``path`` (an upload)."""

    model: str
    vocab_size: int
    text: Optional[str] = None
    path: Optional[Path] = None
    name: Optional[str] = None

    def check(self, max_vocab: int) -> None:
        """Raises :class:`InvalidInputError` naming the field that is wrong."""
        if self.model not in MODELS:
            raise InvalidInputError(f"model must be one of {', '.join(MODELS)}, not {self.model!r}")
        least = _MIN_VOCAB[self.model]
        if isinstance(self.vocab_size, bool) or not isinstance(self.vocab_size, int) or \
                not least <= self.vocab_size <= max_vocab:
            raise InvalidInputError(f"vocab_size must be an integer from {least} to {max_vocab} for {self.model}, "
                                    f"not {self.vocab_size!r}")
        if (self.text is None) == (self.path is None):
            raise InvalidInputError("give the training text or an uploaded file (one of them)")
        if self.text is not None and not self.text.strip():
            raise InvalidInputError("the training text is empty: type or paste some text first")

    def trainer(self) -> Trainer:
        # threads=1: the page trains small corpora, and the server's other requests keep a core.
        if self.model == "bpe":
            return BpeTrainer(self.vocab_size, byte_level=True, show_progress=False, threads=1)
        if self.model == "wordpiece":
            return WordPieceTrainer(self.vocab_size, show_progress=False, threads=1)
        return UnigramTrainer(self.vocab_size, byte_fallback=True, show_progress=False, threads=1)

    def stages(self) -> Dict[str, Any]:
        """The stages around the model, as ``Tokenizer.train`` keywords. Every trained tokenizer
        must download as ``tokenizer.json``: Unigram's default stages (SentencePiece's own
        normalizer and decoder) have no Hugging Face form, so it gets the pipeline Hugging Face
        writes for Llama-style models instead."""
        if self.model != "unigram":
            return {}
        return {"normalizer": normalizers.NFKC(), "pre_tokenizer": pre_tokenizers.Metaspace(),
                "decoder": decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                              decoders.Fuse(), decoders.Strip(" ", 1, 0)])}


@dataclass
class Job:
    """One training run as the page polls it."""

    id: str
    request: TrainRequest
    state: str = "queued"  # queued, counting, training, done, error
    label: str = ""
    done: int = 0
    total: int = 0
    error: Optional[str] = None
    tokenizer: Optional[str] = None
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    def describe(self) -> Dict[str, Any]:
        """What ``GET /api/train/{id}`` answers."""
        fraction = None
        if self.state == "done":
            fraction = 1.0
        elif self.total and self.total < 1 << 62:
            fraction = round(min(self.done / self.total, 1.0), 4)
        return {"id": self.id, "state": self.state, "model": self.request.model, "label": self.label,
                "done": self.done, "total": self.total, "fraction": fraction, "error": self.error,
                "tokenizer": self.tokenizer}


class TrainingJobs(JobTable[Job]):
    """The page's training runs: queued on one worker thread, kept for polling
    (:class:`~ciyuan.serve.job_table.JobTable`: ``get``, ``list``, ``wait``, ``shutdown``)."""

    noun, failure = "training job", "training failed"

    def __init__(self, catalog: Catalog, max_vocab: int = 50_000) -> None:
        super().__init__("ciyuan-train")
        self.catalog = catalog
        self.max_vocab = max_vocab

    def start(self, request: TrainRequest) -> Job:
        """Queue a run (checked first: :class:`InvalidInputError` for a bad request)."""
        request.check(self.max_vocab)
        return self._add(lambda job_id: Job(job_id, request))

    def _listen(self, job: Job, label: str, done: int, total: int) -> None:
        self._check_closing()
        job.state, job.label, job.done, job.total = "training", label, done, total

    def _work(self, job: Job) -> None:
        request = job.request
        job.state = "counting"
        source: Union[List[str], List[Path]]
        if request.text is not None:
            source = request.text.splitlines(keepends=True)
        else:
            assert request.path is not None  # checked in start()
            source = [request.path]
        with progress_listener(lambda label, done, total: self._listen(job, label, done, total)):
            tok = Tokenizer.train(source, request.trainer(), **request.stages())
        name = request.name or f"trained-{request.model}-{job.id}"
        entry = self.catalog.add_loaded(name, tok, origin="trained", kind=request.model,
                                        source=f"trained on the page ({MODELS[request.model]})")
        job.tokenizer = entry.name
        job.state = "done"
