"""encode-dataset's progress line: the figures, and at most ten redraws a second."""

from __future__ import annotations

import io

from ciyuan.datasets.progress import DatasetProgress


def test_line_shows_documents_mb_tokens_rate_and_eta() -> None:
    out = io.StringIO()
    bar = DatasetProgress(total_bytes=200_000_000, stream=out)
    bar.start -= 10  # ten seconds in
    bar.update(documents=12_345, bytes_done=50_000_000, tokens=9_876_543, force=True)
    line = out.getvalue().split("\r")[-1]
    assert line.startswith("encode-dataset: 12,345 docs, 50.0/200.0 MB, 9,876,543 tokens, 5.0 MB/s, ETA 0:00:")
    assert line.endswith("0:00:30")
    bar.update(documents=12_346, bytes_done=50_000_001, tokens=1)  # within 0.1 s: not drawn
    assert out.getvalue().count("\r") == 1
    bar.close()
    assert out.getvalue().endswith("\n") and "12,346 docs" in out.getvalue()
