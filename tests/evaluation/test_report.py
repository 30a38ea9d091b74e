"""EvalReport's Markdown, CSV and JSON, and write_plots."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from ciyuan.errors import InvalidInputError
from ciyuan.evaluation import EvalReport, evaluate, render_plots, write_plots
from ciyuan.evaluation.report import CorpusMetrics


@pytest.fixture(scope="module")
def report(small_udhr, real_tokenizers, tmp_path_factory):
    en = tmp_path_factory.mktemp("en") / "en.txt"
    en.write_text("A small English corpus.\nTwo lines | with a pipe.\n", encoding="utf-8")
    toks = {k: real_tokenizers[k] for k in ("gpt2", "bert")}
    return evaluate(toks, [small_udhr, en], curves=True, curve_sizes=[512, 2048])


def test_json_round_trip(report):
    data = json.loads(report.to_json())
    assert data["tokenizers"] == ["gpt2", "bert"] and len(data["metrics"]) == 4
    assert EvalReport.from_dict(data) == report or _nan_equal(EvalReport.from_dict(data), report)
    assert set(data) == {"tokenizers", "corpora", "metrics", "languages", "parity", "curves", "segmentation",
                         "token_lengths"}
    assert [p["vocab_size"] for p in data["curves"]] == [512, 2048]


def _nan_equal(a, b):
    return json.dumps(a.to_dict(), sort_keys=True) == json.dumps(b.to_dict(), sort_keys=True)


def test_nan_is_null_and_empty(tmp_path):
    row = CorpusMetrics(*(["t", "c"] + [0] * 5 + [math.nan] * 3 + ["whitespace", 1, 0] + [math.nan] * 7 + [2.5]))
    r = EvalReport(["t"], ["c"], metrics=[row])
    assert json.loads(r.to_json())["metrics"][0]["fertility"] is None
    assert _nan_equal(EvalReport.from_dict(json.loads(r.to_json())), r)
    assert next(csv.DictReader(io.StringIO(r.to_csv())))["fertility"] == ""
    assert "| t | c | 0 | - |" in r.to_markdown()


@pytest.mark.parametrize("table", ["metrics", "languages", "parity", "curves"])
def test_csv_tables(report, table):
    rows = list(csv.DictReader(io.StringIO(report.to_csv(table))))
    assert len(rows) == len(report.table(table))
    first = report.table(table)[0]
    for key, value in rows[0].items():
        assert str(getattr(first, key)) == value


def test_csv_unknown_table(report):
    with pytest.raises(InvalidInputError, match="unknown table"):
        report.to_csv("nope")


def test_markdown(report):
    md = report.to_markdown()
    for heading in ("## Compression, fertility, vocabulary", "## Parity across languages",
                    "## Tokens per character by script", "## Compression against vocabulary size"):
        assert heading in md
    assert "Two lines \\| with" not in md  # corpus names, not text
    table = md.split("\n\n")[1].splitlines()
    assert len(table) == 2 + 4 and all(line.count("|") == table[0].count("|") for line in table)
    assert "| Hans | 1 |" in md


def test_write_plots(report, tmp_path):
    out = tmp_path / "new" / "plots"
    paths = write_plots(report, out)
    assert [p.name for p in paths] == ["compression_vs_vocab.png", "tokens_per_char_by_script.png",
                                       "token_lengths.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
    # No curves, no multilingual folder: two plots, tokens per character by corpus.
    plain = EvalReport(report.tokenizers, report.corpora[1:],
                       metrics=[m for m in report.metrics if m.corpus == report.corpora[1]],
                       token_lengths=report.token_lengths)
    assert [p.name for p in write_plots(plain, tmp_path)] == ["tokens_per_char_by_script.png", "token_lengths.png"]
    pngs = render_plots(report)
    assert list(pngs) == [p.name for p in paths] and all(v[:4] == b"\x89PNG" for v in pngs.values())
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InvalidInputError, match="cannot create the plot folder"):
        write_plots(report, blocker / "sub")
