"""The helper-thread pool behind every batch (cpp/src/parallel.cc): it lives between calls, so it
must give the same ids after fork(), in "fork" multiprocessing workers, and to many Python threads
that batch at once (one gets the pool, the others threads of their own)."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading

import pytest

from tests.conftest import read_prefix, shared


@pytest.fixture(scope="module")
def lines():
    return read_prefix(shared("corpora", "en", "gutenberg_100mb.txt"), 300_000).splitlines()


def test_batches_alike_whatever_the_threads(ciyuan_tokenizers, lines):
    tok = ciyuan_tokenizers["cl100k_base"]
    one = tok.encode_batch_ids(lines, threads=1)
    for threads in (2, 3, 8, 2):  # the pool grows, then serves a smaller job
        assert tok.encode_batch_ids(lines, threads=threads) == one
        assert tok.count_tokens_batch(lines, threads=threads) == [len(ids) for ids in one]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX")
def test_batches_in_a_child_after_fork(ciyuan_tokenizers, lines):
    tok = ciyuan_tokenizers["cl100k_base"]
    one = tok.encode_batch_ids(lines, threads=1)
    assert tok.encode_batch_ids(lines, threads=2) == one  # the parent's pool exists before the fork
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only if its batches are right (it never returns to pytest)
        code = 1
        try:
            if tok.encode_batch_ids(lines, threads=2) == one and tok.encode_batch_ids(lines, threads=3) == one:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(sys.platform != "linux", reason="the 'fork' start method")
def test_batches_in_fork_workers(ciyuan_tokenizers, lines):
    tok = ciyuan_tokenizers["cl100k_base"]
    tok.encode_batch_ids(lines, threads=2)  # the parent used the pool
    global _WORKER_TOK
    _WORKER_TOK = tok
    with multiprocessing.get_context("fork").Pool(2) as pool:
        assert all(pool.map(_alike_in_worker, [lines[i::4] for i in range(4)]))


_WORKER_TOK = None


def _alike_in_worker(texts) -> bool:
    assert _WORKER_TOK is not None
    return _WORKER_TOK.encode_batch_ids(texts, threads=2) == _WORKER_TOK.encode_batch_ids(texts, threads=1)


def test_many_python_threads_batching_at_once(ciyuan_tokenizers, lines):
    tok = ciyuan_tokenizers["cl100k_base"]
    parts = [lines[i::8] for i in range(8)]
    expected = [tok.encode_batch_ids(p, threads=1) for p in parts]
    results = [None] * 8

    def run(i):
        results[i] = tok.encode_batch_ids(parts[i], threads=2)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected
