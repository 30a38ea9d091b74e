"""``ciyuan encode-dataset``: flags named like encode_dataset's keyword arguments, the summary
line, errors with file:line and exit status 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from ciyuan.cli import main
from tests.conftest import shared
from tests.datasets.conftest import read_back, write_input


def _gpt2() -> str:
    return str(shared("tokenizers", "gpt2", "encoder.json"))


def test_help_explains(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["encode-dataset", "--help"])
    text = capsys.readouterr().out
    for flag in ("--format", "--bos", "--eos", "--shard-tokens", "--threads", "--skip-bad", "--doc-per", "--field",
                 "--column", "--dtype", "--overwrite", "--progress", "megatron-core", "resume"):
        assert flag in text, flag


def test_run_and_summary(tmp_path: Path, gpt2, capsys: pytest.CaptureFixture) -> None:  # noqa: ANN001
    src = write_input(["hello world", "second document"], tmp_path / "in", "jsonl.zst")
    assert main(["encode-dataset", "-t", _gpt2(), str(src), "-o", str(tmp_path / "out"), "--format", "flat",
                 "--bos", "50256", "--eos", "<|endoftext|>", "--shard-tokens", "1k", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "2 documents, " in err and "(uint16) in 1 flat shard(s)" in err and "MB/s" in err
    assert read_back(tmp_path / "out", "flat") == [[50256] + gpt2.encode_ids(t) + [50256]
                                                   for t in ("hello world", "second document")]


def test_errors_name_the_place(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "a.jsonl"
    src.write_text('{"text": "ok"}\n{"txt": "no"}\n')
    out = str(tmp_path / "out")
    assert main(["encode-dataset", "-t", _gpt2(), str(src), "-o", out]) == 1
    assert "a.jsonl:2: the object has no field 'text'" in capsys.readouterr().err
    # no shard was finished: the folder is free for other settings
    assert main(["encode-dataset", "-t", _gpt2(), str(src), "-o", out, "--skip-bad"]) == 0
    assert "1 bad documents skipped" in capsys.readouterr().err
    assert main(["encode-dataset", "-t", _gpt2(), str(src), "-o", out]) == 1  # another job
    assert "skip_bad is False now but was True" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["encode-dataset", "-t", _gpt2(), str(src), "-o", out, "--shard-tokens", "lots"])
    assert "not a token count" in capsys.readouterr().err
