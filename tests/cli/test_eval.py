"""`ciyuan eval`."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from ciyuan.cli import main
from tests.conftest import shared


def run(args):
    return subprocess.run([sys.executable, "-m", "ciyuan", *args], capture_output=True, timeout=600)


@pytest.fixture()
def corpus(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("Hello world, hello tokens.\n词元是最小的单位。\n", encoding="utf-8")
    return path


def test_formats_and_output(tmp_path, corpus, capsys):
    cl100k = str(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"))
    bert = f"bert={shared('tokenizers', 'bert', 'bert-base-uncased-vocab.txt')}"
    assert main(["eval", cl100k, bert, "--corpus", str(corpus)]) == 0
    out, err = capsys.readouterr()
    assert "| cl100k_base | " in out and "| bert | " in out and "ciyuan eval: bert: " in err
    assert main(["eval", cl100k, "--corpus", str(corpus), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr()[0])))
    assert rows[0]["tokenizer"] == "cl100k_base" and rows[0]["lines"] == "2"
    out_json = tmp_path / "r.json"
    assert main(["eval", cl100k, "--corpus", str(corpus), "-f", "json", "-o", str(out_json)]) == 0
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["metrics"][0]["tokens"] == sum(
        len(t) for t in _cl100k().encode_batch_ids(corpus.read_text(encoding="utf-8").splitlines()))


def _cl100k():
    from ciyuan import Tokenizer

    return Tokenizer.load(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"))


def test_plots_and_curve(tmp_path, corpus, capsys):
    gpt2 = str(shared("tokenizers", "gpt2"))
    plots = tmp_path / "plots"
    assert main(["eval", gpt2, "--corpus", str(corpus), "--plot", str(plots), "--curve-sizes", "300,1000",
                 "--format", "csv", "--table", "curves"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr()[0])))
    assert [r["vocab_size"] for r in rows] == ["300", "1000"]
    assert sorted(p.name for p in plots.iterdir()) == ["compression_vs_vocab.png", "token_lengths.png",
                                                       "tokens_per_char_by_script.png"]
    # --no-curve with --plot: the other two plots only.
    other = tmp_path / "other"
    assert main(["eval", gpt2, "--corpus", str(corpus), "--plot", str(other), "--no-curve"]) == 0
    assert len(list(other.iterdir())) == 2


def test_segmentation_and_zh_dict(tmp_path, corpus, capsys):
    gold = tmp_path / "gold.txt"
    gold.write_text("词元 是 最小 的 单位 。\n", encoding="utf-8")
    words = tmp_path / "dict.txt"
    words.write_text("词元\n最小\n单位\n", encoding="utf-8")
    bert_zh = str(shared("tokenizers", "bert", "bert-base-chinese-vocab.txt"))
    assert main(["eval", bert_zh, "--corpus", str(corpus), "--gold", str(gold), "--zh-dict", str(words),
                 "-f", "json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    seg = data["segmentation"][0]
    assert (seg["gold_words"], seg["predicted_words"], seg["correct"]) == (6, 9, 3)  # 是 的 。 found
    # "Hello world, hello tokens." 4 words; 词元/是/最小/的/单位/。 by forward maximum matching: 6.
    assert data["metrics"][0]["words"] == 4 + 6 and data["metrics"][0]["word_method"] == "segmenter"


def test_errors(tmp_path, corpus):
    cl100k = str(shared("tokenizers", "tiktoken", "cl100k_base.tiktoken"))
    r = run(["eval", cl100k, "--corpus", str(tmp_path / "missing.txt")])
    assert r.returncode == 1 and b"ciyuan eval: error: corpus" in r.stderr and b"no such file" in r.stderr
    r = run(["eval", str(tmp_path / "nope.tiktoken"), "--corpus", str(corpus)])
    assert r.returncode == 1 and b"no such file" in r.stderr
    r = run(["eval", cl100k, "--corpus", str(corpus), "--curve-sizes", "1k"])
    assert r.returncode == 1 and b"--curve-sizes" in r.stderr
    r = run(["eval", cl100k])
    assert r.returncode == 2 and b"--corpus" in r.stderr
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\n")
    r = run(["eval", cl100k, "--corpus", str(bad)])
    assert r.returncode == 1 and b"bad.txt" in r.stderr and b"UTF-8" in r.stderr
    assert run(["eval", cl100k, "--corpus", str(bad), "--errors", "replace"]).returncode == 0


@pytest.mark.slow
def test_eval_bert_gpt2_cl100k_o200k_on_the_udhr(tmp_path):
    """The issue's run: the four vocabularies over the 485 UDHR languages, table and plots."""
    tok = shared("tokenizers")
    udhr = shared("corpora", "multi", "udhr")
    plots = tmp_path / "plots"
    out = tmp_path / "report.json"
    args = ["eval", f"bert={tok / 'bert' / 'bert-base-uncased-vocab.txt'}", f"gpt2={tok / 'gpt2'}",
            f"cl100k={tok / 'tiktoken' / 'cl100k_base.tiktoken'}", f"o200k={tok / 'tiktoken' / 'o200k_base.tiktoken'}",
            "--corpus", str(udhr), "--plot", str(plots), "--threads", "2"]
    r = run(args)
    assert r.returncode == 0, r.stderr.decode()
    md = r.stdout.decode()
    assert md.count("| 485 |") == 4 and "## Tokens per character by script" in md
    assert sorted(p.name for p in plots.iterdir()) == ["compression_vs_vocab.png", "token_lengths.png",
                                                       "tokens_per_char_by_script.png"]
    assert run([*args[:-4], "-f", "json", "-o", str(out), "--threads", "2"]).returncode == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    by = {m["tokenizer"]: m for m in data["metrics"]}
    assert len(data["languages"]) == 4 * 485
    # The four vocabularies as they are known: o200k compresses best, BERT leaves [UNK]s, the
    # byte-level BPEs cut characters into bytes (GPT-2 most), none has byte fallback.
    assert by["o200k"]["bytes_per_token"] > by["cl100k"]["bytes_per_token"] > by["gpt2"]["bytes_per_token"]
    assert by["bert"]["unk_rate"] > 0 and by["cl100k"]["unk_rate"] == 0
    assert by["gpt2"]["partial_char_rate"] > by["cl100k"]["partial_char_rate"] > by["o200k"]["partial_char_rate"]
    parity = {p["tokenizer"]: p for p in data["parity"]}
    assert parity["o200k"]["premium_median"] < parity["gpt2"]["premium_median"]
