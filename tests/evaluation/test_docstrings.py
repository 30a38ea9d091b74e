"""The examples in ciyuan.evaluation's docstrings (and its reference twin's) run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["corpus", "curve", "evaluate", "metrics", "report", "segmentation", "token_kinds", "words"]


@pytest.mark.parametrize("name", [f"ciyuan.evaluation.{m}" for m in MODULES] + ["ciyuan.reference.evaluation"])
def test_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
