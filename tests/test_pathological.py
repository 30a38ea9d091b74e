"""Inputs that make naive BPE or regex splitting quadratic must finish in linear time."""

from __future__ import annotations

import time

import pytest

INPUTS = {
    "letters without a space": lambda n: ("abcdefghijklmnopqrstuvwxyz" * (n // 26 + 1))[:n],
    "one repeated character": lambda n: "a" * n,
    "one repeated CJK character": lambda n: "字" * (n // 3),
    "spaces": lambda n: " " * n,
    "digits": lambda n: "7" * n,
    "newlines": lambda n: "\r\n" * (n // 2),
    "minified code": lambda n: ("function(a,b){return a+b*c[0]/d.e||f&&g;}" * (n // 42 + 1))[:n],
    "apostrophes": lambda n: "'" * n,
}


def seconds(fn) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "gpt2"])
@pytest.mark.parametrize("kind", list(INPUTS))
def test_linear_time(ciyuan_tokenizers, name, kind):
    tok = ciyuan_tokenizers[name]
    small, large = INPUTS[kind](250_000), INPUTS[kind](1_000_000)
    ids = tok.encode_ids(large)
    assert tok.decode(ids) == large
    t_small = seconds(lambda: tok.encode_ids(small))
    t_large = seconds(lambda: tok.encode_ids(large))
    # 4x the input must cost well under 16x (quadratic); allow noise on a busy machine.
    assert t_large < 2.0, f"{kind}: 1 MB took {t_large:.2f} s"
    assert t_large < max(10 * t_small, 0.05), f"{kind}: {t_small:.4f} s -> {t_large:.4f} s"
