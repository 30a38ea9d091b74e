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


# --- one tokenizer of each kind shared by 8 Python threads doing everything at once ----------
# (issue 18, item 6). Each thread runs a mixed workload - encode with offsets, encode_batch,
# encode_batch_ids, count_tokens, decode, decode_batch - on its own slice; the results must be
# those of one thread doing the same alone. The SentencePiece models share a word table between
# threads (a seqlock per slot) and BERT batches make their Encodings in C++: both are here.


def _workload(tok, texts):
    ids = tok.encode_batch_ids(texts, threads=2)
    return {
        "encode": [(e.ids, e.offsets) for e in (tok.encode(t) for t in texts[:40])],
        "batch": [(e.ids, e.offsets) for e in tok.encode_batch(texts[40:120], threads=2)],
        "batch_ids": ids,
        "count": [tok.count_tokens(t) for t in texts[:40]],
        "decode": [tok.decode(i) for i in ids[:60]],
        "decode_batch": tok.decode_batch(ids, threads=2),
    }


@pytest.fixture(scope="module")
def shared_tokenizers(ciyuan_tokenizers):
    import ciyuan

    return {
        "cl100k_base": ciyuan_tokenizers["cl100k_base"],
        "bert": ciyuan.Tokenizer.from_bert_vocab(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt"),
                                                 lowercase=True),
        "llama2": ciyuan.Tokenizer.from_file(shared("tokenizers", "sentencepiece", "llama2.model")),
        "albert": ciyuan.Tokenizer.from_file(shared("tokenizers", "sentencepiece", "albert.model")),
    }


@pytest.mark.parametrize("name", ["cl100k_base", "bert", "llama2", "albert"])
def test_eight_threads_share_one_tokenizer(shared_tokenizers, lines, name):
    tok = shared_tokenizers[name]
    zh = read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 40_000).splitlines()
    texts = [t for pair in zip(lines[:2000], zh * 4) for t in pair]
    parts = [texts[i::8] for i in range(8)]
    expected = [_workload(tok, p) for p in parts]
    results = [None] * 8
    errors = []

    def run(i):
        try:
            for _ in range(2):  # twice: the second round meets the caches the others filled
                results[i] = _workload(tok, parts[i])
        except BaseException as e:  # noqa: BLE001 (reported below, with the thread)
            errors.append((i, e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hangs"
    assert not errors, errors
    assert results == expected


def test_segmenter_shared_by_threads_and_after_fork(lines):
    from ciyuan.segment import Dictionary, Segmenter

    seg = Segmenter(Dictionary.load(shared("dicts", "jieba_dict_small.txt")), "dag")
    zh = read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 200_000).splitlines()
    expected = [seg.lcut(t) for t in zh]
    assert seg.lcut_batch(zh, threads=2) == expected  # the pool is used before the fork
    results = [None] * 8

    def run(i):
        results[i] = seg.lcut_batch(zh[i::8], threads=2)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected[i::8] for i in range(8)]
    if sys.platform == "linux":
        global _WORKER_SEG
        _WORKER_SEG = seg
        with multiprocessing.get_context("fork").Pool(2) as pool:
            # get(timeout=): a deadlocked worker (Hugging Face tokenizers' issue #187) fails here
            # instead of hanging the suite.
            got = pool.map_async(_segment_in_worker, [zh[i::4] for i in range(4)]).get(timeout=300)
        assert got == [expected[i::4] for i in range(4)]


_WORKER_SEG = None


def _segment_in_worker(texts):
    assert _WORKER_SEG is not None
    return _WORKER_SEG.lcut_batch(texts, threads=2)


@pytest.mark.skipif(sys.platform != "linux", reason="the 'fork' start method")
def test_fork_workers_do_not_deadlock_after_every_kind_of_parallel_call(shared_tokenizers, lines):
    """The parent uses batches, decoding and training on all threads, then forks workers that do
    the same: every worker answers (no deadlock on a lock a parent thread held) and alike."""
    from ciyuan.trainers import BpeTrainer

    global _WORKER_TOKS
    _WORKER_TOKS = shared_tokenizers
    for tok in shared_tokenizers.values():
        tok.decode_batch(tok.encode_batch_ids(lines[:500], threads=2), threads=2)
    import ciyuan

    ciyuan.Tokenizer.train(lines[:2000], BpeTrainer(500, threads=2))
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map_async(_everything_in_worker, [(name, lines[i::8][:300]) for i in range(4)
                                                     for name in shared_tokenizers]).get(timeout=300)
    assert all(got), got


_WORKER_TOKS = None


def _everything_in_worker(job) -> bool:
    import ciyuan
    from ciyuan.trainers import BpeTrainer

    name, texts = job
    assert _WORKER_TOKS is not None
    tok = _WORKER_TOKS[name]
    ids = tok.encode_batch_ids(texts, threads=2)
    same = ids == [tok.encode_ids(t) for t in texts]
    same &= tok.decode_batch(ids, threads=2) == [tok.decode(i) for i in ids]
    trained = ciyuan.Tokenizer.train(texts, BpeTrainer(300, threads=2))
    return same and trained.to_dict() == ciyuan.Tokenizer.train(texts, BpeTrainer(300, threads=1)).to_dict()
