"""ciyuan.evaluation.metrics against numpy and the statistics module."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan.evaluation.metrics import quantile, ratio, renyi_efficiency, renyi_entropy, zipf_fit

counts_lists = st.lists(st.integers(1, 1000), min_size=2, max_size=60)


@settings(max_examples=60, deadline=None)
@given(counts_lists)
def test_zipf_fit_is_numpy_polyfit(counts):
    fit = zipf_fit(counts)
    freqs = sorted(counts, reverse=True)
    x, y = np.log(np.arange(1, len(freqs) + 1)), np.log(freqs)
    slope, _ = np.polyfit(x, y, 1)
    assert fit.exponent == pytest.approx(-slope, abs=1e-9)
    if np.var(y) > 1e-12:
        assert fit.r2 == pytest.approx(np.corrcoef(x, y)[0, 1] ** 2, abs=1e-9)


def test_zipf_fit_edges():
    assert math.isnan(zipf_fit([5]).exponent) and math.isnan(zipf_fit([]).r2)
    assert zipf_fit([0, 3, 3]).exponent == 0 and zipf_fit([3, 3]).r2 == 1.0
    assert zipf_fit([100, 50, 25]).exponent > 0


@settings(max_examples=60, deadline=None)
@given(counts_lists, st.sampled_from([0.5, 1.0, 2.0, 2.5, 3.0]))
def test_renyi(counts, alpha):
    p = np.asarray(counts, dtype=float) / sum(counts)
    want = -(p * np.log(p)).sum() if alpha == 1 else np.log((p ** alpha).sum()) / (1 - alpha)
    assert renyi_entropy(counts, alpha) == pytest.approx(want, abs=1e-9)
    assert renyi_efficiency(counts, 1000, alpha) == pytest.approx(want / math.log(1000), abs=1e-9)


def test_renyi_edges():
    assert renyi_efficiency([4, 4, 4, 4], 4) == pytest.approx(1.0)
    assert math.isnan(renyi_efficiency([], 10)) and math.isnan(renyi_efficiency([3], 1))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40), st.sampled_from([0, 0.1, 0.5, 0.9, 1]))
def test_quantile_is_numpys(values, q):
    assert quantile(values, q) == pytest.approx(float(np.quantile(values, q)), rel=1e-9, abs=1e-6)
    if q == 0.5:
        assert quantile(values, q) == pytest.approx(statistics.median(values), rel=1e-9, abs=1e-6)


def test_ratio():
    assert ratio(1, 4) == 0.25 and math.isnan(ratio(1, 0)) and math.isnan(quantile([], 0.5))
