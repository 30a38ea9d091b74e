"""The Python fuzz targets' stored inputs (tests/fuzz_corpus/NAME: the seeds and every input the
fuzzer found that crashed or added coverage), replayed through the targets' own test_one: an
input that once crashed stays fixed. ``make fuzz-regress`` replays the same files (and the C++
targets') on the sanitized build; here they run on the ordinary one, in a few seconds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

FUZZ_PY = Path(__file__).resolve().parents[2] / "fuzz" / "py"
CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"
TARGETS = sorted(p.stem[len("fuzz_"):] for p in FUZZ_PY.glob("fuzz_*.py"))


@pytest.fixture(scope="module", autouse=True)
def _fuzz_path():
    sys.path.insert(0, str(FUZZ_PY))
    yield
    sys.path.remove(str(FUZZ_PY))


def test_every_target_has_stored_inputs():
    assert TARGETS, "no fuzz targets found"
    for name in TARGETS:
        assert any((CORPUS / name).iterdir()), f"tests/fuzz_corpus/{name} is empty"


@pytest.mark.parametrize("name", TARGETS)
def test_stored_inputs_replay(name):
    import importlib

    from _harness import replay_dir

    module = importlib.import_module(f"fuzz_{name}")
    assert replay_dir(module.test_one, CORPUS / name) > 0
