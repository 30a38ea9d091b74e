"""The page's background runs (training, evaluation): a table of jobs under a lock, run one at
a time on a worker thread, kept for polling, stopped at the server's shutdown.

A job is any object with an ``id``, a ``state``, an ``error`` and a ``finished`` event; a
table subclass says what a run does (``_work``) and how its jobs are named in messages.

Example:
    >>> from dataclasses import dataclass, field
    >>> @dataclass
    ... class Sleep:
    ...     id: str
    ...     state: str = "queued"
    ...     error: Optional[str] = None
    ...     finished: threading.Event = field(default_factory=threading.Event)
    >>> class Sleeps(JobTable[Sleep]):
    ...     noun, failure = "sleep", "sleeping failed"
    ...     def _work(self, job: Sleep) -> None:
    ...         job.state = "done"
    >>> table = Sleeps("sleeper")
    >>> job = table._add(Sleep)
    >>> table.wait(job.id, timeout=10).state
    'done'
    >>> table.get("7")
    Traceback (most recent call last):
        ...
    ciyuan.serve.job_table.UnknownJobError: no sleep '7'
    >>> table.shutdown()
"""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Dict, Generic, List, Optional, Protocol, TypeVar

from ciyuan.errors import CiyuanError

__all__ = ["JobTable", "UnknownJobError", "Cancelled"]


class UnknownJobError(CiyuanError, LookupError):
    """No job of that id (answered with 404)."""


class Cancelled(CiyuanError):
    """Raised from a run's progress report to stop it when the server shuts down."""


class _Job(Protocol):
    id: str
    state: str
    error: Optional[str]
    finished: threading.Event


J = TypeVar("J", bound=_Job)


class JobTable(Generic[J]):
    """Jobs by id, under a lock; queued on one worker thread (named ``thread_name``).

    Subclasses set ``noun`` (``"no <noun> '3'"``), ``failure`` (what an unexpected exception is
    reported as) and implement ``_work(job)``. A :class:`~ciyuan.errors.CiyuanError` from it is
    the job's error as it is; any other exception is reported to the page too, not lost in a
    thread.
    """

    noun = "job"
    failure = "the job failed"

    def __init__(self, thread_name: str) -> None:
        self._jobs: Dict[str, J] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        # One worker: runs queue behind each other, and the server's other requests keep a core.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name)

    def _add(self, make: Callable[[str], J]) -> J:
        """A new job ``make(id)``, kept and queued."""
        with self._lock:
            job = make(str(next(self._ids)))
            self._jobs[job.id] = job
        self._pool.submit(self._run, job)
        return job

    def get(self, job_id: str) -> J:
        """The job of that id (:class:`UnknownJobError` if there is none)."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise UnknownJobError(f"no {self.noun} {job_id!r}")
        return job

    def list(self) -> List[J]:
        with self._lock:
            return list(self._jobs.values())

    def wait(self, job_id: str, timeout: Optional[float] = None) -> J:
        """The job, once it has finished (or ``timeout`` seconds passed)."""
        job = self.get(job_id)
        job.finished.wait(timeout)
        return job

    def shutdown(self) -> None:
        """Stop the running job at its next progress report, drop the queued ones, and wait."""
        self._closing.set()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _check_closing(self) -> None:
        """Called from a run's progress reports: :class:`Cancelled` once the server shuts down."""
        if self._closing.is_set():
            raise Cancelled("the server is shutting down")

    def _work(self, job: J) -> None:
        raise NotImplementedError

    def _run(self, job: J) -> None:
        try:
            self._work(job)
        except CiyuanError as e:
            job.error, job.state = str(e), "error"
        except Exception as e:  # noqa: BLE001 - a job's failure is reported to the page, not lost in a thread
            job.error, job.state = f"{self.failure}: {type(e).__name__}: {e}", "error"
        finally:
            job.finished.set()
