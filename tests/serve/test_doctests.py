"""The examples in the serve modules' docstrings run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["config", "paths", "catalog", "token_view", "segmentation", "job_table", "jobs", "eval_jobs", "guard", "app"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    if name == "eval_jobs":
        pytest.importorskip("matplotlib")
    module = importlib.import_module(f"ciyuan.serve.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
