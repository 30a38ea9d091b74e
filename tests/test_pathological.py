"""Inputs that make naive BPE or regex splitting quadratic must cost work linear in their length.

No clock is read (a timed assert flakes on a loaded machine): the work is counted. Under
valgrind's callgrind, which counts the instructions a process executes whatever else the
machine runs, a child process encodes each input at n and at 4n characters, with a call to
``getppid()`` between encodes; ``--dump-before=getppid`` writes the instructions of each encode
to a file of its own. Linear work grows 4x; quadratic work 16x; the bound is 5x.

Under valgrind a tokenizer of 100k ranks takes a minute to load, so the child uses the first
8,000 ranks (tiktoken files) or merges (GPT-2) of the real files: the same native scanner,
model and merge loop, on a vocabulary that loads in a second. The round trip of the full
tokenizers on 1M characters of each input is checked directly (no counting). The same count
holds the load of a WordPiece vocabulary with one token of 200k and 800k characters to linear
work (its trie build once crossed the whole used region for each character of such a token).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from tests.conftest import shared

INPUTS = {
    "letters without a space": lambda n: ("abcdefghijklmnopqrstuvwxyz" * (n // 26 + 1))[:n],
    "one repeated character": lambda n: "a" * n,
    "one repeated CJK character": lambda n: "字" * (n // 3),
    "spaces": lambda n: " " * n,
    "digits": lambda n: "7" * n,
    "newlines": lambda n: "\r\n" * (n // 2),
    "minified code": lambda n: ("function(a,b){return a+b*c[0]/d.e||f&&g;}" * (n // 42 + 1))[:n],
    "apostrophes": lambda n: "'" * n,
    "nested brackets": lambda n: "(" * (n // 2) + ")" * (n // 2),
    "emoji sequence": lambda n: "👨‍👩‍👧‍👦" * (n // 11),
}

#: Linear work grows 4x from n to 4n characters (less when fixed costs weigh); n log n some
#: 4.5x at these sizes; quadratic 16x. Instruction counts do not depend on the load.
GROWTH_BOUND = 6.0
SMALL = 10_000


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "gpt2"])
@pytest.mark.parametrize("kind", list(INPUTS))
def test_round_trip_of_a_million_characters(ciyuan_tokenizers, name, kind):
    tok = ciyuan_tokenizers[name]
    text = INPUTS[kind](1_000_000)
    ids = tok.encode_ids(text)
    assert tok.decode(ids) == text
    assert tok.count_tokens(text) == len(ids)


# The child: loads the small tokenizers, then for each input kind encodes n and 4n characters,
# with os.getppid() (callgrind's dump point) before each encode and after the last.
CHILD = r'''
import json, os, sys
import ciyuan
spec = json.loads(sys.argv[1])
toks = {}
for name, (kind, paths) in spec["tokenizers"].items():
    if kind == "tiktoken":
        toks[name] = ciyuan.Tokenizer.from_tiktoken(paths[0], name, special_tokens={})
    else:
        toks[name] = ciyuan.Tokenizer.from_gpt2(paths[0], paths[1])
from tests.test_pathological import INPUTS
order = []
for name, tok in toks.items():
    for kind in spec["kinds"]:
        small, large = INPUTS[kind](spec["n"]), INPUTS[kind](4 * spec["n"])
        tok.encode_ids(INPUTS[kind](1000))  # first-use costs (caches) outside the counts
        for label, text in (("small", small), ("large", large)):
            os.getppid()
            tok.encode_ids(text)
            order.append([name, kind, label])
# A vocabulary with one very long token: the trie build of WordPiece (and of the segmentation
# dictionaries) once crossed the whole used region for each character of it.
from ciyuan.models import WordPiece
for label, n in (("small", 20 * spec["n"]), ("large", 80 * spec["n"])):
    tokens = ["[UNK]", "a", "x" * n]
    os.getppid()
    WordPiece(tokens, unk_token="[UNK]")
    order.append(["WordPiece vocabulary", "one token of 200k / 800k characters", label])
os.getppid()
print(json.dumps(order))
'''


def _small_tokenizers(folder: Path, ranks: int = 8000) -> Dict[str, list]:
    out: Dict[str, list] = {}
    for name in ("cl100k_base", "o200k_base"):
        lines = shared("tokenizers", "tiktoken", f"{name}.tiktoken").read_bytes().splitlines()[:ranks]
        path = folder / f"{name}.tiktoken"
        path.write_bytes(b"\n".join(lines) + b"\n")
        out[name] = ["tiktoken", [str(path)]]
    encoder = json.loads(shared("tokenizers", "gpt2", "encoder.json").read_text(encoding="utf-8"))
    merges = shared("tokenizers", "gpt2", "vocab.bpe").read_text(encoding="utf-8").splitlines()
    (folder / "encoder.json").write_text(json.dumps({t: i for t, i in encoder.items() if i < 256 + ranks}),
                                         encoding="utf-8")
    (folder / "vocab.bpe").write_text("\n".join(merges[:ranks + 1]) + "\n", encoding="utf-8")  # + the header
    out["gpt2"] = ["gpt2", [str(folder / "encoder.json"), str(folder / "vocab.bpe")]]
    return out


def _instructions(dump: Path) -> int:
    for line in dump.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise AssertionError(f"no instruction count in {dump}")


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("CIYUAN_SANITIZED") == "1",
                    reason="make sanitize: valgrind cannot host AddressSanitizer (valgrind's preload comes before "
                           "the ASan runtime, which then refuses to start; told to go on, it aborts: 'Shadow memory "
                           "range interleaves with an existing memory mapping'), and the sanitized core's "
                           "instruction counts would be ASan's checks, not the encoder's work")
def test_linear_work(tmp_path: Path) -> None:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        pytest.skip("valgrind is not installed (.ci/run installs it)")
    spec = {"tokenizers": _small_tokenizers(tmp_path), "kinds": list(INPUTS), "n": SMALL}
    child = tmp_path / "child.py"
    child.write_text(CHILD, encoding="utf-8")
    out = tmp_path / "cg.out"
    repo = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": repo}
    res = subprocess.run([valgrind, "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
                          sys.executable, str(child), json.dumps(spec)],
                         capture_output=True, text=True, env=env, cwd=repo)
    assert res.returncode == 0, res.stderr[-3000:]
    order: List[list] = json.loads(res.stdout.strip().splitlines()[-1])
    # Dump k (k = 1, 2, ...) holds what ran before the k-th getppid(): dump 1 is the loading,
    # dump k + 1 the k-th encode.
    counts = [_instructions(Path(f"{out}.{k + 1}")) for k in range(1, len(order) + 1)]
    work: Dict[tuple, Dict[str, int]] = {}
    for (name, kind, label), n in zip(order, counts):
        work.setdefault((name, kind), {})[label] = n
    report = {f"{name} / {kind}": round(w["large"] / w["small"], 2) for (name, kind), w in work.items()}
    print("instructions at 4n / at n:", json.dumps(report, indent=1, ensure_ascii=False))
    slow = {k: v for k, v in report.items() if v > GROWTH_BOUND}
    assert not slow, f"work grows faster than linear (4x expected): {slow}"
