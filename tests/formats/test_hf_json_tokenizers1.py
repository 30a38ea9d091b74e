"""Must-show of issue 14: a tokenizer trained by ciyuan and saved as tokenizer.json loads in
`tokenizers` 0.2x, in `tokenizers` 1.0 (a pre-release, in a virtual environment of its own that
`make test` makes: CIYUAN_TOKENIZERS1_PYTHON, or build/tokenizers1-venv) and in
`transformers.PreTrainedTokenizerFast`, and each encodes exactly as ciyuan does."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from ciyuan import Tokenizer
from ciyuan.trainers import BpeTrainer, WordPieceTrainer
from tests.conftest import REPO, read_prefix, shared

tokenizers = pytest.importorskip("tokenizers")

LINES_EXTRA = ["Hello <|endoftext|> world", "  spaces\tand\ttabs  ", "1948 12345 émigré ﬁne", "", "🙂 你好"]


def corpus_lines() -> List[str]:
    return (read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 40_000).splitlines()
            + read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 15_000).splitlines()
            + read_prefix(shared("corpora", "multi", "udhr_sample.txt"), 30_000).splitlines() + LINES_EXTRA)


def trained(kind: str) -> Tokenizer:
    lines = corpus_lines()
    if kind == "byte_bpe":
        tok = Tokenizer.train(lines, BpeTrainer(vocab_size=1200, byte_level=True))
        tok.add_special_tokens(["<|endoftext|>"])
        return tok
    tok = Tokenizer.train(lines, WordPieceTrainer(vocab_size=4000))
    tok.enable_truncation(64)
    return tok


def ours_encodings(tok: Tokenizer, lines: List[str]) -> List[Dict[str, Any]]:
    return [{"ids": e.ids, "tokens": e.tokens, "offsets": [list(o) for o in e.offsets]}
            for e in (tok.encode(line) for line in lines)]


# tokenizers 1.0's Encoding has ids, type_ids and attention_mask (no tokens or offsets); its
# Tokenizer has decode.
_PEER = """
import json, sys, tokenizers
tok = tokenizers.Tokenizer.from_file(sys.argv[1])
lines = json.load(open(sys.argv[2], encoding="utf-8"))
out = [{"ids": list(e.ids), "type_ids": list(e.type_ids), "text": tok.decode(list(e.ids))}
       for e in map(tok.encode, lines)]
print(json.dumps({"version": tokenizers.__version__, "encodings": out}))
"""


def tokenizers1_python() -> str:
    python = os.environ.get("CIYUAN_TOKENIZERS1_PYTHON") or str(REPO / "build" / "tokenizers1-venv" / "bin" / "python")
    if not Path(python).exists():
        pytest.skip("tokenizers 1.0 is not installed: `make test` makes build/tokenizers1-venv (or set "
                    "CIYUAN_TOKENIZERS1_PYTHON to a Python that has it)")
    return python


@pytest.mark.parametrize("kind", ["byte_bpe", "wordpiece"])
def test_ciyuan_trained_loads_in_tokenizers_0_2x_and_1_0(kind: str, tmp_path: Path) -> None:
    tok = trained(kind)
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    lines = corpus_lines()
    want = ours_encodings(tok, lines)
    hf = tokenizers.Tokenizer.from_file(str(path))
    got = [{"ids": e.ids, "tokens": e.tokens, "offsets": [list(o) for o in e.offsets]} for e in map(hf.encode, lines)]
    assert got == want, f"tokenizers {tokenizers.__version__}"
    (tmp_path / "lines.json").write_text(json.dumps(lines), encoding="utf-8")
    run = subprocess.run([tokenizers1_python(), "-c", _PEER, str(path), str(tmp_path / "lines.json")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    peer = json.loads(run.stdout)
    assert peer["version"].startswith("1."), peer["version"]
    assert len(peer["encodings"]) == len(lines)
    for line, theirs in zip(lines, peer["encodings"]):
        ours = tok.encode(line)
        assert theirs["ids"] == ours.ids and theirs["type_ids"] == ours.type_ids, (peer["version"], line)
        assert theirs["text"] == tok.decode(ours.ids, skip_special_tokens=True), (peer["version"], line)


@pytest.mark.parametrize("kind", ["byte_bpe", "wordpiece"])
def test_ciyuan_trained_loads_in_transformers(kind: str, tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    tok = trained(kind)
    tok.save(tmp_path / "tokenizer.json")
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    # transformers leaves the file's truncation off unless a call asks for it.
    limit = {"truncation": True, "max_length": tok.truncation.max_length} if tok.truncation else {}
    for line in corpus_lines():
        assert fast(line, **limit)["input_ids"] == tok.encode(line).ids, line
        assert fast.decode(tok.encode(line).ids) == tok.decode(tok.encode(line).ids), line
