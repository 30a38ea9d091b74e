"""What every Python fuzz target shares: how it runs (atheris, or a replay of stored inputs), the
one rule of what counts as a crash, and a scratch directory for the files a parser reads.

A target is a module ``fuzz_NAME.py`` with ``test_one(data: bytes) -> None``. The rule: the
entry points may return or raise a :class:`ciyuan.errors.CiyuanError` (bad input, told clearly);
any other exception escaping ``test_one`` is a bug - a Python traceback where the user was
promised a ciyuan error - and a sanitizer report from the native core is a crash. Both make
atheris save the input.

Example (replaying stored inputs, as ``make fuzz-regress`` and tests/fuzz do)::

    >>> from fuzz_tiktoken import test_one                  # doctest: +SKIP
    >>> replay_dir(test_one, Path("tests/fuzz_corpus/tiktoken"))   # doctest: +SKIP
    12
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, List

REPO = Path(__file__).resolve().parents[2]
_SCRATCH = Path(tempfile.mkdtemp(prefix="ciyuan-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))


def scratch_file(name: str, data: bytes) -> Path:
    """``data`` written to ``name`` in this process's scratch directory (tmpfs when there is one:
    a parser is fed thousands of files a second)."""
    path = _SCRATCH / name
    path.write_bytes(data)
    return path


def ciyuan_errors_only() -> "contextlib.suppress":
    """Lets a CiyuanError pass (the promised outcome of bad input); everything else propagates."""
    from ciyuan.errors import CiyuanError

    return contextlib.suppress(CiyuanError)


class Data:
    """Typed values carved from the fuzzer's bytes, front to back; past the end reads give zeros
    and empty strings, so every input is usable (a plain-Python stand-in for atheris'
    FuzzedDataProvider, so replays need no atheris)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def int_in(self, lo: int, hi: int) -> int:
        """An int in [lo, hi] (two bytes of entropy)."""
        return lo + (self.byte() | self.byte() << 8) % (hi - lo + 1)

    def raw(self, max_len: int) -> bytes:
        n = min(self.byte() % (max_len + 1), len(self.data) - self.pos)
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def text(self, max_len: int) -> str:
        """A string decoded leniently (invalid bytes become U+FFFD, or lone surrogates U+DC80-U+DCFF)."""
        return self.raw(max_len).decode("utf-8", "surrogateescape" if self.byte() & 1 else "replace")

    def rest(self) -> bytes:
        out = self.data[self.pos:]
        self.pos = len(self.data)
        return out


def replay_dir(test_one: Callable[[bytes], None], directory: Path) -> int:
    """Runs ``test_one`` on every file under ``directory``; returns how many. An input that fails
    raises with its file named."""
    files: List[Path] = sorted(p for p in directory.rglob("*") if p.is_file()) if directory.is_dir() else []
    for path in files:
        try:
            test_one(path.read_bytes())
        except Exception as e:
            raise AssertionError(f"fuzz input {path} fails: {type(e).__name__}: {e}") from e
    return len(files)


def main(test_one: Callable[[bytes], None]) -> None:
    """Runs the target under atheris (libFuzzer's flags on the command line)."""
    import atheris

    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()


def instrumented():  # type: ignore[no-untyped-def]
    """A context for importing ciyuan: under atheris (a target run as a script) its modules are
    instrumented for Python coverage; in a replay, a context that does nothing."""
    if Path(sys.argv[0]).name.startswith("fuzz_"):
        import atheris

        return atheris.instrument_imports(include=["ciyuan"])
    return contextlib.nullcontext()


TEXTS = ("Hello world", "  héllo\tworld\n\n", "中文分词测试", "ab" * 40, "1234567 ''s 'LL", "🙂👍🏽", "")


def exercise(tok, d: Data) -> None:  # type: ignore[no-untyped-def]
    """What a user does with a loaded tokenizer, each step allowed to end in a CiyuanError: encode
    (plain, sampled, with special tokens allowed), batches on two threads, n-best, decode of the
    ids and of ids chosen by the input (in range or not), token lookups."""
    texts = [d.text(48), TEXTS[d.byte() % len(TEXTS)]]
    for text in texts:
        with ciyuan_errors_only():
            enc = tok.encode(text)
            with ciyuan_errors_only():
                tok.decode(enc.ids)
            enc.offsets, enc.tokens  # noqa: B018 - building them is the test
        with ciyuan_errors_only():
            tok.encode(text, allowed_special="all", disallowed_special=())
        with ciyuan_errors_only():
            tok.encode(text, sample=True, alpha=(d.byte() % 11) / 10, nbest_size=d.byte() % 5 - 1, seed=d.byte())
        with ciyuan_errors_only():
            tok.nbest(text, 1 + d.byte() % 4)
    with ciyuan_errors_only():
        tok.encode_batch(texts * 2, threads=2)
    with ciyuan_errors_only():
        tok.encode_batch_ids(texts, threads=2)
    ids = [d.int_in(-2, 2**16) for _ in range(d.byte() % 8)]
    if d.byte() & 1:
        ids.append(d.byte() * 2**24 + d.int_in(0, 2**16))  # around 2^32 - 1
    with ciyuan_errors_only():
        tok.decode(ids)
    with ciyuan_errors_only():
        tok.decode(ids, skip_special_tokens=True)
    for i in ids[:3]:
        with ciyuan_errors_only():
            tok.id_to_token(i)
    with ciyuan_errors_only():
        tok.token_to_id(texts[0])
