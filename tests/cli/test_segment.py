"""`ciyuan segment` and `ciyuan seg-eval`."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ciyuan.cli import main
from tests.conftest import shared


def run(args, stdin=b""):
    return subprocess.run([sys.executable, "-m", "ciyuan", *args], input=stdin, capture_output=True, timeout=120)


@pytest.fixture()
def dict_path(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("研究\n研究生\n生命\n起源\n", encoding="utf-8")
    return path


def test_segment_files_and_stdin(tmp_path, dict_path):
    src = tmp_path / "in.txt"
    src.write_text("研究生命起源\n\n，。\nabc 研究\r\nlast line", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["segment", "--dict", str(dict_path), str(src), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == "研究生 命 起源\n\n， 。\nabc 研究\nlast line\n"
    assert main(["segment", "-d", str(dict_path), "--method", "bmm", "--baseline", str(src), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == "研究 生命 起源\n\n， 。\na b c 研究\nl a s t l i n e\n"
    r = run(["segment", "--dict", str(dict_path), "--method", "bimm"], "研究生命起源\n".encode())
    assert r.returncode == 0 and r.stdout.decode() == "研究 生命 起源\n"


def test_segment_errors(tmp_path, dict_path):
    bad_dict = tmp_path / "bad.txt"
    bad_dict.write_text("研究\n研究 x y z\n", encoding="utf-8")
    r = run(["segment", "--dict", str(bad_dict)], "研究\n".encode())
    assert r.returncode == 1 and "bad.txt:2: expected 'word'" in r.stderr.decode()
    r = run(["segment", "--dict", str(bad_dict), "--lenient-dict"], "研究\n".encode())
    assert r.returncode == 0 and r.stdout.decode() == "研究\n" and "bad.txt:2" in r.stderr.decode()

    src = tmp_path / "in.txt"
    src.write_bytes(b"\xe7\xa0\x94\n\xe7\x94\x9f\xff\n")  # 研, then 生 and a stray byte
    out = tmp_path / "out.txt"
    out.write_text("previous")
    r = run(["segment", "--dict", str(dict_path), str(src), "-o", str(out)])
    assert r.returncode == 1 and "in.txt: invalid UTF-8 at byte 7 (line 2)" in r.stderr.decode()
    assert out.read_text() == "previous"
    r = run(["segment", "--dict", str(dict_path), "--errors", "replace", str(src)])
    assert r.returncode == 0 and r.stdout.decode() == "研\n生 \ufffd\n"
    r = run(["segment", "--dict", str(tmp_path / "missing.txt")], b"")
    assert r.returncode == 1 and "cannot read dictionary" in r.stderr.decode()
    # The dictionary loads while the input is read: its error still leaves the output alone.
    r = run(["segment", "--dict", str(bad_dict), str(src), "-o", str(out)])
    assert r.returncode == 1 and "bad.txt:2" in r.stderr.decode() and out.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "in.txt", "out.txt", "words.txt"]


def test_segment_blocks(tmp_path, dict_path, monkeypatch, capsys):
    # A file larger than a block is segmented block by block, cut at line ends; an error in a
    # later block names the byte and line in the whole file.
    from ciyuan.cli import segment as _cli_segment

    monkeypatch.setattr(_cli_segment, "CHUNK_BYTES", 16)
    src = tmp_path / "in.txt"
    src.write_bytes("研究生命起源\n".encode() * 5 + b"ab\xff\n")
    out = tmp_path / "out.txt"
    assert main(["segment", "--dict", str(dict_path), str(src), "-o", str(out)]) == 1
    assert "in.txt: invalid UTF-8 at byte 97 (line 6)" in capsys.readouterr().err
    src.write_bytes("研究生命起源\n".encode() * 5 + b"ab")
    assert main(["segment", "--dict", str(dict_path), str(src), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == "研究生 命 起源\n" * 5 + "ab\n"


def test_seg_eval(tmp_path, capsys):
    gold = tmp_path / "gold.txt"
    gold.write_text("共同  创造  美好  的  新  世纪\n\n女士  们  ，  先生  们\n", encoding="utf-8")
    pred = tmp_path / "pred.txt"
    pred.write_text("共同 创造 美好的 新世纪\n多余\n女士们 ， 先生 们\n", encoding="utf-8")
    words = tmp_path / "words.txt"
    words.write_text("共同\n创造\n美好\n的\n女士\n们\n，\n", encoding="utf-8")
    assert main(["seg-eval", "--gold", str(gold), "--words", str(words), str(pred)]) == 0
    out = capsys.readouterr().out
    assert "=== F MEASURE:\t0.526\n" in out and "=== IV Recall Rate:\t0.500\n" in out
    assert main(["seg-eval", "--gold", str(gold), "--words", str(words), "--diffs", str(pred)]) == 0
    assert "--- line 1: 4 missed, 2 extra\ngold: 共同 创造 [美好] [的] [新] [世纪]" in capsys.readouterr().out


@pytest.mark.slow
def test_sighan_pipeline_through_the_cli(tmp_path, capsys):
    words = shared("sighan2005", "pku_training_words.utf8")
    out = tmp_path / "seg.txt"
    assert main(["segment", "--dict", str(words), "--baseline", str(shared("sighan2005", "pku_test.utf8")),
                 "-o", str(out)]) == 0
    assert main(["seg-eval", "--gold", str(shared("sighan2005", "pku_test_gold.utf8")), "--words", str(words),
                 str(out)]) == 0
    summary = capsys.readouterr().out
    assert "=== TOTAL TEST WORD COUNT:\t112281\n" in summary and "=== F MEASURE:\t0.874\n" in summary
