"""Replays the stored inputs of the Python fuzz targets (tests/fuzz_corpus/NAME) without atheris:
``python fuzz/py/replay.py [--dir DIR] NAME...`` (all targets without names; ``--dir``: the
inputs in DIR instead, e.g. a working corpus that atheris grew). ``make fuzz-regress`` runs it on
the sanitized build; tests/fuzz/test_fuzz_corpus.py runs the same replays in the test suite."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import REPO, replay_dir  # noqa: E402


def targets() -> list:
    return sorted(p.stem[len("fuzz_"):] for p in Path(__file__).resolve().parent.glob("fuzz_*.py"))


def main(args: list) -> int:
    """``[--dir DIR] NAME...``: the stored inputs of each target (or all of DIR, for one target)."""
    directory = None
    if args[:1] == ["--dir"]:
        directory, args = Path(args[1]), args[2:]
    total = 0
    for name in args or targets():
        module = importlib.import_module(f"fuzz_{name}")
        n = replay_dir(module.test_one, directory or REPO / "tests" / "fuzz_corpus" / name)
        print(f"== {name}: {n} inputs replayed")
        total += n
    print(f"{total} stored inputs replayed, none failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
