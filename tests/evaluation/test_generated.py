"""evaluate() against the plain-Python twin on hypothesis-generated corpora (any Unicode,
mixed scripts, stray specials' text, blank lines)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ciyuan.evaluation import evaluate
from ciyuan.evaluation.corpus import read_lines
from tests.evaluation.test_evaluate import _check

pieces = st.sampled_from(["hello", " world", "词元", "分词器", "Привет", "مرحبا", "नमस्ते", "🙂", "<|endoftext|>",
                          "[UNK]", "\t", "  ", "ünïcödé", "123", "!?"])
line = st.lists(st.one_of(pieces, st.text(st.characters(blacklist_categories=("Cs",),
                                                         blacklist_characters="\n\r"), max_size=6)),
                max_size=8).map("".join)
corpora = st.lists(line, min_size=0, max_size=6)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpora)
def test_generated_corpora(real_tokenizers, texts):
    toks = {k: real_tokenizers[k] for k in ("cl100k", "bert", "llama2")}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.txt"
        path.write_text("\n".join(texts) + "\n", encoding="utf-8")
        report = evaluate(toks, [path])
        lines = read_lines(path)
    assert lines == [t for t in "\n".join(texts).split("\n") if t.strip()]
    for row in report.metrics:
        _check(row, toks[row.tokenizer], lines)
