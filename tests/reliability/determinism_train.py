"""Train every trainer once and print what each produced, as SHA-256 digests (a JSON object):
the child process of test_determinism's hash-seed test.

    python -m tests.reliability.determinism_train CORPUS ZH_CORPUS OUT_DIR THREADS

Why a separate process: the order of a Python ``dict`` or ``set`` of strings depends on the
interpreter's hash seed (``PYTHONHASHSEED``), which is fixed for the life of a process, so a
trained file that leaked such an order would still be identical across runs in one process.
Each child gets another seed (and another thread count).

What runs: the seven trainers of ``ciyuan.trainers`` (their saved files), subword-nmt's
``learn_codes``, and the textbook trainers of ``ciyuan.textbook`` (documents 000-004): the
``BPETokenizer`` vocabulary file, the merge tables of ``MergeTableBPE`` and ``BBPE``,
``sennrich.learn_bpe``, ``train_wordpiece_pmi``, ``zh_bpe_train``'s file and ``ciyuan zh-bpe
train``'s file. The textbook trainers take no thread count (they count in Python, and the
native merge loop is one thread): for them the seed is what varies.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple


def _digest(data: Any) -> str:
    if not isinstance(data, bytes):
        data = repr(data).encode("utf-8")  # lists and dicts in their order: an order change shows
    return hashlib.sha256(data).hexdigest()


def train_all(corpus: Path, zh: Path, out: Path, threads: int) -> Dict[str, str]:
    """name -> digest of what that trainer produced."""
    from ciyuan import Tokenizer
    from ciyuan.cli import main
    from ciyuan.formats.subword_nmt import codes_text
    from ciyuan.formats.subword_nmt_learn import learn_codes
    from ciyuan.textbook import BBPE, BPETokenizer, MergeTableBPE, train_wordpiece_pmi
    from ciyuan.textbook.sennrich import build_vocab, learn_bpe
    from ciyuan.textbook.zh_bpe import zh_bpe_train
    from ciyuan.trainers import (
        BpeTrainer,
        CharLevelTrainer,
        SentencePieceBPETrainer,
        UnigramTrainer,
        WordLevelTrainer,
        WordPieceTrainer,
    )

    out.mkdir(parents=True, exist_ok=True)
    lines: List[str] = corpus.read_text(encoding="utf-8").splitlines()
    digests: Dict[str, str] = {}
    trainers: Dict[str, Tuple[Callable[[], Any], str]] = {
        "bpe": (lambda: BpeTrainer(600, threads=threads), "tok.json"),
        "byte-level bpe": (lambda: BpeTrainer(500, byte_level=True, threads=threads), "tokenizer.json"),
        "wordpiece": (lambda: WordPieceTrainer(600, threads=threads), "tok.json"),
        "word level": (lambda: WordLevelTrainer(800, threads=threads), "tok.json"),
        "char level": (lambda: CharLevelTrainer(200, threads=threads), "tok.json"),
        "unigram": (lambda: UnigramTrainer(400, threads=threads), "spm.model"),
        "sentencepiece bpe": (lambda: SentencePieceBPETrainer(400, threads=threads), "spm.model"),
    }
    for name, (make, file_name) in trainers.items():
        path = out / f"{name.replace(' ', '-')}-{file_name}"
        Tokenizer.train(corpus, make()).save(path)  # a file: counted on `threads` threads
        digests[name] = _digest(path.read_bytes())
        path = out / f"{name.replace(' ', '-')}-texts-{file_name}"
        Tokenizer.train(lines, make()).save(path)  # texts
        digests[name + " (texts)"] = _digest(path.read_bytes())
    digests["subword-nmt learn_codes"] = _digest(codes_text(learn_codes(lines, 300)))

    BPETokenizer(vocab_size=400).fit(lines, out_fn=out / "bpe_tokenizer_vocab.txt")
    digests["textbook BPETokenizer"] = _digest((out / "bpe_tokenizer_vocab.txt").read_bytes())
    for cls in (MergeTableBPE, BBPE):
        bpe = cls(vocab_size=400).train(lines)
        digests[f"textbook {cls.__name__}"] = _digest((bpe.merge_table.merges, bpe.vocab, bpe.merge_counts))
    digests["textbook sennrich.learn_bpe"] = _digest(learn_bpe(build_vocab(lines), 300))
    digests["textbook train_wordpiece_pmi"] = _digest(train_wordpiece_pmi(lines, vocab_size=400))
    zh_bpe_train(zh, out / "zh_bpe.vocab", 300, 2)
    digests["textbook zh_bpe_train"] = _digest((out / "zh_bpe.vocab").read_bytes())
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["zh-bpe", "train", "--train_text", str(zh), "--save_vocab", str(out / "cli_zh_bpe.vocab"),
                     "--vocab_size", "300"])
    assert code == 0, "ciyuan zh-bpe train failed"
    digests["cli zh-bpe train"] = _digest((out / "cli_zh_bpe.vocab").read_bytes())
    return digests


if __name__ == "__main__":
    corpus_path, zh_path, out_dir, thread_count = sys.argv[1:5]
    print(json.dumps(train_all(Path(corpus_path), Path(zh_path), Path(out_dir), int(thread_count)), indent=1))
