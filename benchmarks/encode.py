"""Encoding throughput against the fast encoders (issue 15): every library side by side.

    python benchmarks/encode.py [--encodings gpt2,cl100k_base,o200k_base,llama3]
                                [--corpora en,zh,multi,code] [--threads 1,2] [--libs ciyuan,tiktoken,...]
                                [--rounds 5] [--mb 2] [--quick] [--no-rss]

The defaults run everything (about 17 minutes on a busy 2-core machine); --quick is a smoke run
(cl100k_base, English and Chinese, 0.3 MB slices, 2 rounds).

What is compared: ciyuan, tiktoken, gigatoken, fastokens, tokie, riptoken, rs-bpe, splintr-rs,
kitoken, bpe-openai (pip install -r benchmarks/requirements-peers.txt) and Hugging Face
tokenizers 1.0 (its own virtual environment: build/tokenizers1-venv, made by `make test`, or
TOKENIZERS1_PYTHON). Every library gets the same ranks: the official .tiktoken files of
../shared/data (gpt2 = r50k_base: OpenAI's GPT-2 encoder.json + vocab.bpe written as a
.tiktoken file; llama3 = Llama 3's pattern over cl100k_base's ranks, since Llama 3's own file is
not in the shared data). Libraries that only read a Hugging Face tokenizer.json get one built
from the same ranks (`hf_tokenizer_json`). A library that cannot do an encoding says "n/a
(why)"; nothing is dropped silently.

The protocol, for each (encoding x corpus x threads) row, all libraries in ONE process (each
encoding's tokenizers are loaded once, for all its rows):
- the corpus is cut into rounds + 1 consecutive slices of --mb MB (at line ends) that no other
  row of the encoding uses (smaller when the corpus is too small); the first is a warm-up, then
  each round every library encodes the same slice that no library has seen before (so no
  cross-round cache hits), in an order rotated by one each round;
- 1 thread: one call on the whole slice (ciyuan encode_ids, tiktoken encode_ordinary, ...);
  2 threads: the slice as ~64 KB documents, each library's batch call with 2 threads;
- wall time (perf_counter) and this process's CPU time (process_time) of every call: a library
  whose "single" call keeps more than one core busy is reported with its cores (CPU / wall) and
  compared per core (MB/s per core = bytes / CPU seconds), named as such;
- the ids of every library on every slice are checked against tiktoken's (a SHA-1 of the ids
  and the document lengths); a mismatch is printed as DIFFERENT, with the first document and
  token where the ids part from tiktoken's;
- ratios are taken per round (this library's speed over tiktoken's, over the fastest other
  library's in that round), the median of the rounds is printed;
- Hugging Face tokenizers 1.0 runs in a worker process of its own environment, driven in turn
  with the others: the main process writes each slice to a file, the worker reads it (untimed),
  encodes it when its turn comes and reports its wall and CPU seconds and the ids' SHA-1;
- peak RSS: one short worker process per library and row, running that library alone on the
  first timed slice of the row (load + one encode), reports its process peak: Linux's VmHWM
  (_common.peak_rss_mb), not getrusage's ru_maxrss, which a child started from this process
  inherits (a worker of an 800 MB parent reads 776 MB there, 13.5 MB in VmHWM).

Then, for English and Chinese: counting tokens and array outputs (ciyuan's count_tokens and
as_array calls when the installed ciyuan has them, and the peers' counting or array calls)
against len(encode_ids(...)), the same way on fresh slices. At the end, Markdown tables for
docs/benchmarks.md.

The legacy `--worker` mode (ciyuan or tiktoken alone, used by benchmarks/ab.py) is kept.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from array import array
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, SHARED_DATA, machine, median_seconds, peak_rss_mb, read_prefix  # noqa: E402

SCRIPT = Path(__file__).resolve()
TIKTOKEN = SHARED_DATA / "tokenizers" / "tiktoken"
GPT2 = SHARED_DATA / "tokenizers" / "gpt2"
CACHE = REPO / "build" / "encode-bench"  # derived files: gpt2.tiktoken, tokenizer.json per encoding
DOC_BYTES = 64 * 1024
ENCODING_NAMES = ("gpt2", "cl100k_base", "o200k_base", "llama3")
CORPUS_NAMES = ("en", "zh", "multi", "code")
CORPUS_LABEL = {"en": "English (gutenberg)", "zh": "Chinese (jinyong)", "multi": "multilingual (udhr)",
                "code": "code (Python stdlib)"}
LIB_NAMES = ("ciyuan", "ciyuan-array", "tiktoken", "gigatoken", "fastokens", "tokie", "riptoken", "rs-bpe",
             "splintr-rs", "kitoken", "bpe-openai", "hf-tokenizers-1.0")
MULTI_CORE = 1.15  # median cores above which a "single" call counts as multi-core


class Unavailable(Exception):
    """A library cannot do this encoding (the message says why)."""


# --------------------------------------------------------------------------------------------
# Encodings: the ranks file, the pattern, and the tokenizer.json made from them.


@dataclass(frozen=True)
class Enc:
    name: str          # gpt2 | cl100k_base | o200k_base | llama3
    ranks: Path        # a .tiktoken file
    pattern: str       # the regex, as tiktoken spells it
    hf_json: Path      # a tokenizer.json with the same ranks and pattern
    hf1_json: Path     # the same for tokenizers 1.0 (see tokenizers1_pattern)

    @property
    def official(self) -> Optional[str]:
        """The OpenAI encoding these ranks + pattern are (None for llama3's variant)."""
        return {"gpt2": "r50k_base", "cl100k_base": "cl100k_base", "o200k_base": "o200k_base"}.get(self.name)


def encoding(name: str, prepare: bool = True) -> Enc:
    """The encoding `name`; with prepare, writes its derived files into CACHE when missing."""
    from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS  # the same strings as tiktoken's

    ranks = CACHE / "gpt2.tiktoken" if name == "gpt2" else TIKTOKEN / ("cl100k_base.tiktoken" if name == "llama3"
                                                                      else f"{name}.tiktoken")
    pattern = NAMED_PATTERNS[name]
    pattern1 = tokenizers1_pattern(name, pattern, NAMED_PATTERNS["llama3"])
    # The derived files are named by the pattern they carry, so a changed pattern makes new ones.
    enc = Enc(name, ranks, pattern, CACHE / f"{name}-{short_hash(pattern)}.tokenizer.json",
              CACHE / f"{name}-{short_hash(pattern1)}.tokenizers1.json")
    if prepare:
        CACHE.mkdir(parents=True, exist_ok=True)
        if name == "gpt2" and not ranks.exists():
            from ciyuan.formats.gpt2 import load_gpt2
            from ciyuan.formats.tiktoken import save_tiktoken_ranks

            vocab, _, _ = load_gpt2(GPT2 / "encoder.json", GPT2 / "vocab.bpe")
            save_tiktoken_ranks(ranks, vocab)
        if not enc.hf_json.exists():
            hf_tokenizer_json(enc.ranks, enc.pattern, enc.hf_json)
        if not enc.hf1_json.exists():
            hf_tokenizer_json(enc.ranks, pattern1, enc.hf1_json)
    return enc


def short_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


#: GPT-2's pattern as OpenAI's encoder.py and Hugging Face spell it (tiktoken's r50k_base is the
#: same splitter written with possessive quantifiers).
GPT2_ORIGINAL = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def tokenizers1_pattern(enc_name: str, pattern: str, llama3: str) -> str:
    """The pattern tokenizers 1.0 is given.

    1.0 (rc3, as installed) refuses tiktoken's possessive spellings of the gpt2 and cl100k
    patterns ("this `Split` pattern needs a system-regex backend"); it runs the patterns it
    knows (GPT-2's, o200k's and Llama 3's spellings are in its library) with its own scanners.
    So gpt2 gets GPT-2's original spelling, and cl100k_base the Hugging Face spelling (= Llama
    3's pattern), which differs from tiktoken's only in how a run of whitespace after a line
    break at the very end of a text is cut; the ids check on every slice says whether that changed anything.
    """
    return {"gpt2": GPT2_ORIGINAL, "cl100k_base": llama3}.get(enc_name, pattern)


def hf_tokenizer_json(ranks_file: Path, pattern: str, path: Path) -> None:
    """Write a Hugging Face tokenizer.json equivalent to the tiktoken encoding: merges recovered
    from the ranks, the pattern as a Split pre-tokenizer, ByteLevel without its regex."""
    from ciyuan.byte_alphabet import bytes_to_printable
    from ciyuan.formats.tiktoken import load_tiktoken_ranks
    from ciyuan.reference.bpe import _merge_loop

    ranks = load_tiktoken_ranks(ranks_file)
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda x: x[1]):
        if len(token) == 1:
            continue
        # The two parts BPE joins last when it builds `token` from ranks below its own.
        parts = _merge_loop([bytes([b]) for b in token],
                            lambda a, b, rank=rank: r if (r := ranks.get(a + b)) is not None and r < rank else None)
        assert len(parts) == 2, token
        merges.append(f"{bytes_to_printable(parts[0])} {bytes_to_printable(parts[1])}")
    data = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                  "vocab": {bytes_to_printable(t): r for t, r in ranks.items()}, "merges": merges},
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


# --------------------------------------------------------------------------------------------
# Corpora, slices, documents.


def corpus_text(name: str, need: int) -> str:
    """At least `need` bytes of the corpus when it has them (all of it otherwise)."""
    corpora = SHARED_DATA / "corpora"
    if name == "en":
        return read_prefix(corpora / "en" / "gutenberg_100mb.txt", need)
    if name == "zh":
        return read_prefix(corpora / "zh" / "jinyong_16novels.txt", need)
    if name == "multi":
        # 485 languages, one file each: their lines shuffled (fixed seed), so that every slice
        # holds every script rather than a few languages each.
        lines: List[str] = []
        for path in sorted((corpora / "multi" / "udhr").glob("*.txt")):
            lines += path.read_text(encoding="utf-8").splitlines(keepends=True)
        random.Random(15).shuffle(lines)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if name == "code":
        # The running Python's standard library, .py files sorted by path (nothing downloaded);
        # the few test files that are deliberately not UTF-8 are left out.
        parts, size = [], 0
        stdlib = Path(sysconfig.get_paths()["stdlib"])
        for path in sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts):
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            parts.append(text if text.endswith("\n") else text + "\n")
            size += len(text)
            if size > need:
                break
        return "".join(parts)
    raise ValueError(f"unknown corpus {name!r} (one of {', '.join(CORPUS_NAMES)})")


def slices(name: str, count: int, size: int) -> List[str]:
    """`count` consecutive slices of ~`size` bytes each, cut at line ends (smaller when the corpus
    is too small for count x size)."""
    data = corpus_text(name, count * size + 1_000_000).encode("utf-8")
    size = min(size, len(data) // count)
    out, start = [], 0
    for _ in range(count):
        end = data.rfind(b"\n", start, start + size) + 1
        if end <= start:
            end = start + size
        out.append(data[start:end].decode("utf-8"))
        start = end
    return out


def documents(text: str) -> List[str]:
    """The text cut into ~64 KB (UTF-8) documents at line ends."""
    docs, cur, size = [], [], 0
    for line in text.splitlines(keepends=True):
        cur.append(line)
        size += len(line.encode("utf-8"))
        if size >= DOC_BYTES:
            docs.append("".join(cur))
            cur, size = [], 0
    if cur:
        docs.append("".join(cur))
    return docs


def documents_of(out: Any) -> Any:
    """A batch's ids per document: ciyuan's flat (ids, offsets) arrays cut at the offsets (views,
    no copy); any other batch output as it is."""
    if isinstance(out, tuple) and len(out) == 2:
        ids, offsets = out
        return [ids[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
    return out


def digest(out: Any, batch: bool) -> Tuple[str, int]:
    """SHA-1 of the ids (and of the document lengths for a batch), and the number of ids."""
    import numpy as np

    def flat(ids: Any) -> bytes:
        if isinstance(ids, np.ndarray):
            return ids.astype(np.uint32, copy=False).tobytes()
        return array("I", ids).tobytes()

    h = hashlib.sha1()
    out = documents_of(out) if batch else out
    if not batch:
        data = flat(out)
        h.update(data)
        return h.hexdigest(), len(data) // 4
    n = 0
    lengths = array("Q")
    for ids in out:
        data = flat(ids)
        h.update(data)
        lengths.append(len(data) // 4)
        n += len(data) // 4
    h.update(lengths.tobytes())
    return h.hexdigest(), n


# --------------------------------------------------------------------------------------------
# The libraries: name -> (load(encoding), encode(obj, text), encode_batch(obj, docs, threads), how).


@dataclass
class Lib:
    name: str
    load: Callable[[Enc], Any]
    encode: Callable[[Any, str], Any]
    batch: Callable[[Any, List[str], int], Any]
    how: str


def _only(enc: Enc, *names: str, why: str) -> None:
    if enc.name not in names:
        raise Unavailable(why)


def _load_ciyuan(enc: Enc) -> Any:
    import ciyuan

    return ciyuan.Tokenizer.from_tiktoken(enc.ranks, enc.name)


def _load_tiktoken(enc: Enc) -> Any:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    return tiktoken.Encoding(enc.name, pat_str=enc.pattern, mergeable_ranks=load_tiktoken_bpe(str(enc.ranks)),
                             special_tokens={})


def _load_gigatoken(enc: Enc) -> Any:
    import gigatoken

    scheme = {"gpt2": "r50k", "cl100k_base": "cl100k", "o200k_base": "o200k"}.get(enc.name)
    if scheme is not None:
        return gigatoken.Tokenizer.from_tiktoken(str(enc.ranks), scheme, {})
    try:  # not one of its named schemes: its tokenizer.json reader, with the pattern as a Split
        return gigatoken.Tokenizer(str(enc.hf_json))
    except Exception as e:  # noqa: BLE001 - any failure is reported as n/a with its message
        why = str(e).splitlines()[0][:90]
        raise Unavailable(f"no {enc.name} scheme; its tokenizer.json reader says: {why}") from None


def _load_fastokens(enc: Enc) -> Any:
    import fastokens

    return fastokens.Tokenizer.from_tiktoken(str(enc.ranks), pattern=enc.pattern, special_tokens={})


def _load_tokie(enc: Enc) -> Any:
    import tokie

    return tokie.Tokenizer.from_json(str(enc.hf_json))


def _load_riptoken(enc: Enc) -> Any:
    import riptoken

    return riptoken.CoreBPE(riptoken.load_tiktoken_bpe(str(enc.ranks)), {}, enc.pattern)


def _load_rs_bpe(enc: Enc) -> Any:
    _only(enc, "cl100k_base", "o200k_base", why="only its built-in cl100k_base and o200k_base")
    from rs_bpe.bpe import openai

    return getattr(openai, enc.name)()


def _load_splintr(enc: Enc) -> Any:
    import splintr

    try:
        return splintr.Tokenizer(str(enc.ranks), enc.pattern, {})
    except Exception as e:  # noqa: BLE001
        if enc.name in ("cl100k_base", "o200k_base"):
            # Its default regex engine rejects tiktoken's possessive quantifiers; its bundled
            # copies of these two encodings carry a pattern it accepts (ids checked as usual).
            return splintr.Tokenizer.from_pretrained(enc.name)
        raise Unavailable(f"its regex engine rejects the pattern ({str(e).splitlines()[0][:70]}) and it "
                          f"bundles no {enc.name}") from None


def _load_kitoken(enc: Enc) -> Any:
    import kitoken

    if enc.official:
        return kitoken.Kitoken.from_tiktoken_file(str(enc.ranks))
    return kitoken.Kitoken.from_tokenizers_file(str(enc.hf_json))  # the pattern travels in the json


def _load_bpe_openai(enc: Enc) -> Any:
    _only(enc, "cl100k_base", "o200k_base", why="only its bundled cl100k_base, o200k_base (and voyage3)")
    import bpe_openai
    from bpe_openai import _bindings

    # The native tokenizer for single calls; the tiktoken-style Encoding for its batch call.
    return _bindings.tokenizer_for_encoding(enc.name), bpe_openai.get_encoding(enc.name)


def _rs_bpe_batch(t: Any, docs: List[str], threads: int) -> Any:
    from rs_bpe.bpe import openai

    # It answers (ids per document, total tokens, seconds, threads used).
    return t.encode_batch_parallel(docs, openai.ParallelOptions(1, 1, threads))[0]


LIBS: Dict[str, Lib] = {lib.name: lib for lib in [
    Lib("ciyuan", _load_ciyuan,
        lambda t, s: t.encode_ids(s, disallowed_special=()),
        lambda t, d, n: t.encode_batch_ids(d, threads=n, disallowed_special=()),
        "Tokenizer.from_tiktoken; encode_ids(text, disallowed_special=()) / encode_batch_ids(docs, threads=n)"),
    Lib("ciyuan-array", _load_ciyuan,
        lambda t, s: t.encode_ids(s, disallowed_special=(), as_array=True),
        lambda t, d, n: t.encode_batch_ids(d, threads=n, disallowed_special=(), as_array=True),
        "the same tokenizer; encode_ids(text, as_array=True) -> numpy uint32 / encode_batch_ids(docs, "
        "threads=n, as_array=True) -> (flat ids, offsets): the output gigatoken's encode gives"),
    Lib("tiktoken", _load_tiktoken,
        lambda t, s: t.encode_ordinary(s),
        lambda t, d, n: t.encode_ordinary_batch(d, num_threads=n),
        "Encoding(ranks, pattern); encode_ordinary / encode_ordinary_batch(docs, num_threads=n)"),
    Lib("gigatoken", _load_gigatoken,
        lambda t, s: t.encode(s),
        lambda t, d, n: t.encode_batch_list(d, parallel=n > 1),
        "Tokenizer.from_tiktoken(path, scheme, {}); encode(text) -> numpy uint32 / encode_batch_list(docs, "
        "parallel=True) on its Rayon pool (2 threads on 2 cores)"),
    Lib("fastokens", _load_fastokens,
        lambda t, s: t.encode(s).ids,
        lambda t, d, n: [e.ids for e in t.encode_batch(d)],
        "Tokenizer.from_tiktoken(path, pattern); encode(text).ids / encode_batch(docs) (Rayon pool)"),
    Lib("tokie", _load_tokie,
        lambda t, s: t.encode(s, add_special_tokens=False).ids,
        lambda t, d, n: [e.ids for e in t.encode_batch(d, add_special_tokens=False)],
        "Tokenizer.from_json(tokenizer.json); encode(text).ids / encode_batch(docs) (Rayon pool)"),
    Lib("riptoken", _load_riptoken,
        lambda t, s: t.encode_ordinary(s),
        lambda t, d, n: t.encode_ordinary_batch(d),
        "CoreBPE(ranks, {}, pattern); encode_ordinary / encode_ordinary_batch(docs) (Rayon pool)"),
    Lib("rs-bpe", _load_rs_bpe,
        lambda t, s: t.encode(s),
        _rs_bpe_batch,
        "rs_bpe.bpe.openai.<name>(); encode / encode_batch_parallel(docs, ParallelOptions(1, 1, n))"),
    Lib("splintr-rs", _load_splintr,
        lambda t, s: t.encode_ordinary(s),
        lambda t, d, n: t.encode_batch(d),
        "Tokenizer(path, pattern, {}) (from_pretrained for cl100k/o200k); encode_ordinary / encode_batch "
        "(Rayon pool)"),
    Lib("kitoken", _load_kitoken,
        lambda t, s: t.encode(s),
        lambda t, d, n: t.encode_all(d),
        "Kitoken.from_tiktoken_file (from_tokenizers_file for llama3); encode / encode_all(docs)"),
    Lib("bpe-openai", _load_bpe_openai,
        lambda t, s: t[0].encode(s),
        lambda t, d, n: t[1].encode_ordinary_batch(d, num_threads=n),
        "native tokenizer_for_encoding(name).encode; get_encoding(name).encode_ordinary_batch(docs, "
        "num_threads=n) (a Python thread pool)"),
]}
HF_HOW = ("tokenizers 1.0 Tokenizer.from_file(tokenizer.json of the same ranks) in its own venv and process; "
          "encode(text).ids / [e.ids for e in encode_batch(docs)] (Rayon pool)")


# --------------------------------------------------------------------------------------------
# Hugging Face tokenizers 1.0 in its own virtual environment, driven turn by turn.


def tokenizers1_python() -> Optional[Path]:
    """The Python of the tokenizers 1.0 venv: TOKENIZERS1_PYTHON, this checkout's build/, or the
    main worktree's (the venv `make test` builds is not copied into other worktrees)."""
    if os.environ.get("TOKENIZERS1_PYTHON"):
        return Path(os.environ["TOKENIZERS1_PYTHON"])
    candidates = [REPO / "build" / "tokenizers1-venv" / "bin" / "python"]
    try:
        common = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                capture_output=True, text=True, check=True).stdout.strip()
        candidates.append(Path(common).parent / "build" / "tokenizers1-venv" / "bin" / "python")
    except (OSError, subprocess.CalledProcessError):
        pass
    return next((p for p in candidates if p.exists()), None)


def hf_worker_main(json_path: str) -> None:
    """Runs in the tokenizers 1.0 venv: load, then for each request line {"file", "threads"} read
    the slice (untimed), encode it, answer {"wall", "cpu", "digest", "n"}; "rss" answers the peak."""
    import tokenizers

    tok = tokenizers.Tokenizer.from_file(json_path)
    tok.encode("Hello, world! 你好 123", add_special_tokens=False)  # compiles the pattern: fail here, not later
    print(json.dumps({"version": tokenizers.__version__}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("rss"):
            print(json.dumps({"rss": peak_rss_mb()}), flush=True)
            continue
        data = json.loads(Path(req["file"]).read_text(encoding="utf-8"))
        batch = req["threads"] > 1
        wall, cpu = time.perf_counter(), time.process_time()
        if batch:
            out: Any = [e.ids for e in tok.encode_batch(data["docs"], add_special_tokens=False)]
        else:
            out = tok.encode(data["text"], add_special_tokens=False).ids
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        h, n = digest_plain(out, batch)
        print(json.dumps({"wall": wall, "cpu": cpu, "digest": h, "n": n}), flush=True)


def digest_plain(out: Any, batch: bool) -> Tuple[str, int]:
    """digest() without numpy (the tokenizers 1.0 venv may lack it); same bytes for lists."""
    h = hashlib.sha1()
    if not batch:
        h.update(array("I", out).tobytes())
        return h.hexdigest(), len(out)
    lengths = array("Q", (len(ids) for ids in out))
    for ids in out:
        h.update(array("I", ids).tobytes())
    h.update(lengths.tobytes())
    return h.hexdigest(), sum(lengths)


class HFWorker:
    """A tokenizers 1.0 worker process for one encoding."""

    def __init__(self, python: Path, enc: Enc) -> None:
        env = dict(os.environ, PYTHONPATH=str(SCRIPT.parent))
        self.proc = subprocess.Popen([str(python), str(SCRIPT), "--hf-worker", str(enc.hf1_json)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env)
        self.version = self._read()["version"]

    def _read(self) -> Dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            assert self.proc.stderr is not None
            last = self.proc.stderr.read().strip().splitlines()[-1:]
            raise Unavailable(f"its worker died: {last[0][:120] if last else 'no message'}")
        return json.loads(line)

    def ask(self, **req: Any) -> Dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


# --------------------------------------------------------------------------------------------
# Peak RSS: one library alone in a fresh process.


def rss_worker_main(lib: str, enc_name: str, slice_file: str, threads: int) -> None:
    enc = encoding(enc_name, prepare=False)
    data = json.loads(Path(slice_file).read_text(encoding="utf-8"))
    adapter = LIBS[lib]
    obj = adapter.load(enc)
    if threads > 1:
        adapter.batch(obj, data["docs"], threads)
    else:
        adapter.encode(obj, data["text"])
    print(json.dumps({"rss": peak_rss_mb()}))


def peak_rss(lib: str, enc: Enc, slice_file: str, threads: int, hf_python: Optional[Path]) -> Optional[float]:
    """Peak RSS (MB) of a fresh process that loads `lib` and encodes the slice once; None if it fails."""
    try:
        if lib == "hf-tokenizers-1.0":
            assert hf_python is not None
            worker = HFWorker(hf_python, enc)
            worker.ask(file=slice_file, threads=threads)
            rss = worker.ask(rss=True)["rss"]
            worker.close()
            return float(rss)
        out = subprocess.run([sys.executable, str(SCRIPT), "--rss-worker", lib, enc.name, slice_file, str(threads)],
                             capture_output=True, text=True, timeout=600)
        return float(json.loads(out.stdout.strip().splitlines()[-1])["rss"]) if out.returncode == 0 else None
    except Exception:  # noqa: BLE001 - a missing figure is printed as "?"
        return None


# --------------------------------------------------------------------------------------------
# One row: every library, alternating rounds.


@dataclass
class Result:
    lib: str
    walls: List[float] = field(default_factory=list)
    cpus: List[float] = field(default_factory=list)
    nbytes: List[int] = field(default_factory=list)
    different: List[str] = field(default_factory=list)  # one note per slice whose ids differ
    rss: Optional[float] = None
    na: Optional[str] = None

    def cores(self) -> float:
        return statistics.median(c / w for c, w in zip(self.cpus, self.walls))

    def mbps(self) -> float:
        return statistics.median(b / w / 1e6 for b, w in zip(self.nbytes, self.walls))

    def per_core(self) -> float:
        return statistics.median(b / c / 1e6 for b, c in zip(self.nbytes, self.cpus) if c > 0)


def run_row(enc: Enc, corpus: str, threads: int, texts: List[str], loaded: Dict[str, Any],
            unavailable: Dict[str, str], hf: Optional[HFWorker], tmp: Path) -> Dict[str, Result]:
    """Time every loaded library on texts[1:] (texts[0] is the warm-up), rotated order each round."""
    names = list(loaded) + (["hf-tokenizers-1.0"] if hf else [])
    results = {n: Result(n) for n in names}
    for n, why in unavailable.items():
        results[n] = Result(n, na=why)
    batch = threads > 1
    ref_lib = loaded["tiktoken"]
    for r, text in enumerate(texts):
        docs = documents(text) if batch else []
        nbytes = len(text.encode("utf-8"))
        slice_file = tmp / f"slice-{corpus}-{threads}-{r}.json"
        slice_file.write_text(json.dumps({"text": text, "docs": docs}, ensure_ascii=False), encoding="utf-8")
        # The reference: tiktoken's ids (its timed call below gives the same; computing it here
        # keeps no library's output alive while the others run).
        ref = digest(LIBS["tiktoken"].batch(ref_lib, docs, threads) if batch
                     else LIBS["tiktoken"].encode(ref_lib, text), batch)
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            if name == "hf-tokenizers-1.0":
                assert hf is not None
                if results[name].na is not None:
                    continue
                try:
                    ans = hf.ask(file=str(slice_file), threads=threads)
                except Unavailable as e:
                    results[name].na = str(e)
                    continue
                wall, cpu, got = ans["wall"], ans["cpu"], (ans["digest"], ans["n"])
            else:
                lib, obj = LIBS[name], loaded[name]
                wall, cpu = time.perf_counter(), time.process_time()
                out = lib.batch(obj, docs, threads) if batch else lib.encode(obj, text)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                got = digest(out, batch)
                if got[0] != ref[0]:  # say where (untimed): tiktoken's ids once more
                    expected = (LIBS["tiktoken"].batch(ref_lib, docs, threads) if batch
                                else LIBS["tiktoken"].encode(ref_lib, text))
                    where = first_difference(out, expected, batch, ref_lib)
                del out
            res = results[name]
            if got[0] != ref[0]:
                note = f"slice {r}: {got[1]:,} ids vs tiktoken's {ref[1]:,}"
                if name != "hf-tokenizers-1.0":
                    note += f"; {where}"
                res.different.append(note)
                print(f"    !!! {name}: ids DIFFERENT from tiktoken's ({enc.name}, {corpus}, {threads} thread(s), "
                      f"{note})", flush=True)
            if r > 0:  # slice 0 is the warm-up
                res.walls.append(wall)
                res.cpus.append(cpu)
                res.nbytes.append(nbytes)
    return results


def first_difference(out: Any, expected: Any, batch: bool, enc: Any) -> str:
    """Where a library's ids first part from tiktoken's (`enc` decodes the tokens around it)."""
    def show(ids: Sequence[int]) -> str:
        return "|".join(enc.decode([int(t)]) for t in ids).replace("\n", "\\n")

    docs_out = [list(map(int, ids)) for ids in documents_of(out)] if batch else [list(map(int, out))]
    docs_exp = [list(ids) for ids in expected] if batch else [list(expected)]
    if len(docs_out) != len(docs_exp):
        return f"{len(docs_out)} documents, tiktoken {len(docs_exp)}"
    for d, (a, b) in enumerate(zip(docs_out, docs_exp)):
        if a != b:
            if batch and sorted(map(tuple, docs_out)) == sorted(map(tuple, docs_exp)):
                return f"the same documents' ids in another order (document {d} first)"
            i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return (f"document {d}, token {i}: {show(a[max(0, i - 2):i + 4])!r} "
                    f"where tiktoken has {show(b[max(0, i - 2):i + 4])!r}")
    return "no difference found on a second look"


def speeds(results: Dict[str, Result], threads: int) -> Tuple[Dict[str, List[float]], Dict[str, bool]]:
    """Per-round comparison speeds (bytes/s) of every timed library: wall-clock, or per core for a
    library whose single call keeps more than one core busy (1 thread only)."""
    per_core = {n: threads == 1 and bool(r.walls) and r.cores() > MULTI_CORE for n, r in results.items()}
    out = {}
    for n, r in results.items():
        if r.walls:
            out[n] = [b / (c if per_core[n] else w) for b, w, c in zip(r.nbytes, r.walls, r.cpus)]
    return out, per_core


def ratios(results: Dict[str, Result], threads: int) -> Dict[str, Tuple[Optional[float], Optional[float], str]]:
    """lib -> (median ratio to tiktoken, median ratio to the fastest other library, who that is
    most often), each ratio taken per round."""
    sp, _ = speeds(results, threads)
    out = {}
    for n, s in sp.items():
        tt = (statistics.median(a / b for a, b in zip(s, sp["tiktoken"]))
              if "tiktoken" in sp and n != "tiktoken" else None)
        # ciyuan's two output kinds are one library: neither is the other's "fastest other".
        others = [m for m in sp if m != n and not (m.startswith("ciyuan") and n.startswith("ciyuan"))]
        if not others:
            out[n] = (tt, None, "")
            continue
        best_per_round = [max(others, key=lambda m: sp[m][i]) for i in range(len(s))]
        fo = statistics.median(s[i] / sp[best_per_round[i]][i] for i in range(len(s)))
        out[n] = (tt, fo, max(set(best_per_round), key=best_per_round.count))
    return out


def fmt_row_text(enc: Enc, corpus: str, threads: int, results: Dict[str, Result], slice_mb: float,
                 rounds: int, hf_version: str) -> str:
    _, per_core = speeds(results, threads)
    rat = ratios(results, threads)
    lines = [f"\n{enc.name} / {CORPUS_LABEL[corpus]} / {threads} thread{'s' if threads > 1 else ''}: "
             f"{slice_mb:.2f} MB slices, median of {rounds} rounds"]
    lines.append(f"  {'library':22} {'MB/s':>8} {'cores':>6} {'MB/s/core':>10} {'x tiktoken':>10} "
                 f"{'x fastest other':>16}  {'(who)':14} {'peak RSS':>9}  ids")
    order = sorted(results.values(), key=lambda r: (r.na is not None, -(r.mbps() if r.walls else 0)))
    for r in order:
        label = r.lib + ("*" if r.lib == "hf-tokenizers-1.0" else "")
        if r.na is not None:
            lines.append(f"  {label:22} n/a ({r.na})")
            continue
        if not r.walls:
            lines.append(f"  {label:22} n/a (no timed round)")
            continue
        tt, fo, who = rat[r.lib]
        core = f"{r.per_core():10.1f}" if per_core[r.lib] else f"{'':10}"
        rss = f"{r.rss:6.0f} MB" if r.rss is not None else f"{'?':>9}"
        ids = f"DIFFERENT ({len(r.different)} of {rounds + 1} slices)" if r.different else "identical"
        mark = " [per core]" if per_core[r.lib] else ""
        lines.append(f"  {label:22} {r.mbps():8.1f} {r.cores():6.2f} {core} "
                     f"{(f'{tt:.2f}x' if tt else '-'):>10} {(f'{fo:.2f}x' if fo else '-'):>16}  {who:14} {rss}  "
                     f"{ids}{mark}")
    if "hf-tokenizers-1.0" in results:
        lines.append(f"  * Hugging Face tokenizers {hf_version or '1.0'}: timed in its own process (its venv), "
                     "in turn with the others on the same slices")
    return "\n".join(lines)


def md_cell(r: Result, per_core: bool) -> str:
    if r.na is not None:
        return "n/a"
    if not r.walls:
        return "?"
    cell = f"{r.mbps():.1f}"
    if per_core:
        cell += f" ({r.cores():.1f} cores, {r.per_core():.1f}/core)"
    if r.rss is not None:
        cell += f" · {r.rss:.0f} MB"
    if r.different:
        cell += " **DIFFERENT**"
    return cell


# --------------------------------------------------------------------------------------------
# count_tokens / as_array (issue 15, item 3), when the installed ciyuan has them.


def counting_section(texts: List[str], loaded: Dict[str, Any],
                     summary: Dict[str, Tuple[float, float, bool]]) -> List[str]:
    """Alternating rounds on new slices: how many tokens, by len(encode_ids(...)), count_tokens and
    encode_ids(as_array=True) for ciyuan (when the installed ciyuan has them), and the peers' own
    counting or array calls; one call per slice, then the batch forms on ~64 KB documents with 2
    threads. Every count is checked against tiktoken's. `summary` gets call -> (MB/s, speed over
    the group's first call, count = tiktoken's)."""
    import inspect

    Variant = Tuple[str, Callable[[str, List[str]], int]]
    single: List[Variant] = []
    batch: List[Variant] = []
    tok = loaded.get("ciyuan")
    if tok is not None:
        single.append(("ciyuan len(encode_ids(text))", lambda s, d: len(tok.encode_ids(s, disallowed_special=()))))
        batch.append(("ciyuan encode_batch_ids(docs, threads=2), sum of len",
                      lambda s, d: sum(map(len, tok.encode_batch_ids(d, threads=2, disallowed_special=())))))
        if hasattr(tok, "count_tokens"):
            single.append(("ciyuan count_tokens(text)", lambda s, d: tok.count_tokens(s, disallowed_special=())))
        if hasattr(tok, "count_tokens_batch"):
            batch.append(("ciyuan count_tokens_batch(docs, threads=2), sum",
                          lambda s, d: sum(tok.count_tokens_batch(d, threads=2, disallowed_special=()))))
        if "as_array" in inspect.signature(tok.encode_ids).parameters:
            single.append(("ciyuan len(encode_ids(text, as_array=True))",
                           lambda s, d: len(tok.encode_ids(s, as_array=True, disallowed_special=()))))
        if "as_array" in inspect.signature(tok.encode_batch_ids).parameters:
            batch.append(("ciyuan encode_batch_ids(docs, 2, as_array=True)",
                          lambda s, d: len(tok.encode_batch_ids(d, threads=2, as_array=True,
                                                                disallowed_special=())[0])))
    if "tiktoken" in loaded:
        tt = loaded["tiktoken"]
        single.append(("tiktoken len(encode_ordinary(text))", lambda s, d: len(tt.encode_ordinary(s))))
        single.append(("tiktoken len(encode_to_numpy(text))",
                       lambda s, d: len(tt.encode_to_numpy(s, disallowed_special=()))))
        batch.append(("tiktoken encode_ordinary_batch(docs, 2), sum of len",
                      lambda s, d: sum(map(len, tt.encode_ordinary_batch(d, num_threads=2)))))
    if "gigatoken" in loaded:
        g = loaded["gigatoken"]
        single.append(("gigatoken len(encode(text)) [numpy]", lambda s, d: len(g.encode(s))))
        batch.append(("gigatoken encode_batch(docs) [awkward], total",
                      lambda s, d: int(g.encode_batch(d, parallel=True).layout.content.length)))
    if "tokie" in loaded:
        tk = loaded["tokie"]
        single.append(("tokie count_tokens(text)", lambda s, d: tk.count_tokens(s)))
        batch.append(("tokie count_tokens_batch(docs), sum", lambda s, d: sum(tk.count_tokens_batch(d))))
    if "fastokens" in loaded:
        fa = loaded["fastokens"]
        batch.append(("fastokens encode_batch_flat(docs) [bytes]", lambda s, d: len(fa.encode_batch_flat(d)[0]) // 4))
    if "rs-bpe" in loaded:
        rb = loaded["rs-bpe"]
        single.append(("rs-bpe count(text)", lambda s, d: rb.count(s)))
    if "bpe-openai" in loaded:
        bo = loaded["bpe-openai"][0]
        single.append(("bpe-openai count(text)", lambda s, d: bo.count(s)))

    lines = []
    for group, variants in (("one call per slice", single), ("~64 KB documents, 2 threads", batch)):
        if not variants:
            continue
        times: Dict[str, List[float]] = {n: [] for n, _ in variants}
        counts: Dict[str, List[int]] = {n: [] for n, _ in variants}
        nbytes = []
        for r, text in enumerate(texts):
            docs = documents(text)
            order = variants[r % len(variants):] + variants[: r % len(variants)]
            for name, fn in order:
                t = time.perf_counter()
                try:
                    n = fn(text, docs)
                except Exception as e:  # noqa: BLE001 - a peer's call that fails is said, not hidden
                    n = -1
                    print(f"    {name}: failed ({type(e).__name__}: {e})", flush=True)
                t = time.perf_counter() - t
                counts[name].append(n)
                if r > 0:
                    times[name].append(t)
            if r > 0:
                nbytes.append(len(text.encode("utf-8")))
        base = variants[0][0]
        ref = next((counts[n] for n, _ in variants if n.startswith("tiktoken")), counts[base])
        lines.append(f"  {group}:")
        lines.append(f"    {'call':56} {'MB/s':>8} {'x first line':>13}  count = tiktoken's")
        for name, _ in variants:
            mbps = statistics.median(b / t / 1e6 for b, t in zip(nbytes, times[name]))
            rel = statistics.median(a / b for a, b in zip(times[base], times[name]))
            same = "yes" if counts[name] == ref else "NO: DIFFERENT"
            summary[name] = (mbps, rel, counts[name] == ref)
            lines.append(f"    {name:56} {mbps:8.1f} {rel:12.2f}x  {same}")
    return lines


# --------------------------------------------------------------------------------------------
# The legacy single-library worker (benchmarks/ab.py runs it in two builds).


def legacy_worker(lib: str, enc_name: str, corpus: str, threads: int, mb: float, repeats: int) -> None:
    text = read_prefix_str(corpus_text(corpus, int(mb * 1_000_000)), int(mb * 1_000_000))
    docs = documents(text)
    nbytes = len(text.encode("utf-8"))
    enc = encoding(enc_name, prepare=False)
    obj = LIBS[lib].load(enc)
    run = (lambda: [LIBS[lib].encode(obj, text)]) if threads == 1 else (lambda: LIBS[lib].batch(obj, docs, threads))
    seconds, _ = median_seconds(run, repeats)
    rss = peak_rss_mb()
    check = LIBS[lib].batch(obj, docs, 1)
    print(json.dumps({"mbps": nbytes / seconds / 1e6, "rss": rss, "digest": digest(check, True)[0][:12]}))


def read_prefix_str(text: str, limit: int) -> str:
    """The first `limit` UTF-8 bytes of text, cut at a line end."""
    data = text.encode("utf-8")[:limit]
    return data[: data.rfind(b"\n") + 1].decode("utf-8")


# --------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encodings", default=",".join(ENCODING_NAMES))
    ap.add_argument("--corpora", default=",".join(CORPUS_NAMES))
    ap.add_argument("--libs", default=",".join(LIB_NAMES), help="tiktoken always runs (the ids' reference)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mb", type=float, default=2.0,
                    help="slice size in MB (smaller when a corpus is too small: udhr is 6.7 MB, jinyong 26 MB)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: cl100k_base, en + zh, 0.3 MB, 2 rounds")
    ap.add_argument("--no-rss", action="store_true", help="skip the peak-RSS worker processes")
    ap.add_argument("--worker", nargs=7, metavar="ARG", help=argparse.SUPPRESS)
    ap.add_argument("--hf-worker", metavar="JSON", help=argparse.SUPPRESS)
    ap.add_argument("--rss-worker", nargs=4, metavar="ARG", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.hf_worker:
        hf_worker_main(args.hf_worker)
        return
    if args.rss_worker:
        lib, enc_name, slice_file, threads = args.rss_worker
        rss_worker_main(lib, enc_name, slice_file, int(threads))
        return
    if args.worker:
        lib, enc_name, corpus, threads, mb, repeats, _ = args.worker
        legacy_worker(lib, enc_name, corpus, int(threads), float(mb), int(repeats))
        return
    if args.quick:
        args.mb, args.rounds = 0.3, 2
        if args.encodings == ",".join(ENCODING_NAMES):
            args.encodings = "cl100k_base"
        if args.corpora == ",".join(CORPUS_NAMES):
            args.corpora = "en,zh"
    encodings = [e for e in args.encodings.split(",") if e]
    corpora = [c for c in args.corpora.split(",") if c]
    thread_modes = [int(t) for t in args.threads.split(",") if t]
    wanted = [lib for lib in args.libs.split(",") if lib]
    for name in encodings + corpora + wanted:
        if name not in ENCODING_NAMES + CORPUS_NAMES + LIB_NAMES:
            sys.exit(f"unknown name {name!r}: encodings {ENCODING_NAMES}, corpora {CORPUS_NAMES}, libs {LIB_NAMES}")
    if "tiktoken" not in wanted:
        wanted.insert(0, "tiktoken")

    command = "python benchmarks/encode.py " + " ".join(sys.argv[1:])
    print(f"machine: {machine()}")
    print(f"command: {command.strip()}")
    print(f"{args.mb:g} MB slices, {args.rounds} rounds + 1 warm-up slice, every library on the same new slice "
          f"each round (order rotated); 1 thread = one call per slice, 2 threads = ~64 KB documents, batch call")
    print("How each library is driven:")
    for name in wanted:
        print(f"  {name:18} {HF_HOW if name == 'hf-tokenizers-1.0' else LIBS[name].how}")
    hf_python = tokenizers1_python() if "hf-tokenizers-1.0" in wanted else None

    rows: List[Tuple[Enc, str, int, Dict[str, Result], float]] = []
    count_lines: List[str] = []
    counting: Dict[Tuple[str, str], Dict[str, Tuple[float, float, bool]]] = {}
    hf_version = ""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="encode-bench-") as tmpdir:
        tmp = Path(tmpdir)
        for enc_name in encodings:
            enc = encoding(enc_name)
            loaded: Dict[str, Any] = {}
            unavailable: Dict[str, str] = {}
            for name in wanted:
                if name == "hf-tokenizers-1.0":
                    continue
                try:
                    t = time.perf_counter()
                    loaded[name] = LIBS[name].load(enc)
                    print(f"  [{enc_name}] {name} loaded in {time.perf_counter() - t:.1f} s", flush=True)
                except Unavailable as e:
                    unavailable[name] = str(e)
                except ImportError as e:
                    unavailable[name] = f"not installed: {e}"
                except Exception as e:  # noqa: BLE001 - reported, never dropped
                    unavailable[name] = f"failed to load: {type(e).__name__}: {str(e).splitlines()[0][:100]}"
            hf: Optional[HFWorker] = None
            if "hf-tokenizers-1.0" in wanted:
                if hf_python is None:
                    unavailable["hf-tokenizers-1.0"] = "no tokenizers 1.0 venv (`make test` builds it)"
                else:
                    try:
                        hf = HFWorker(hf_python, enc)
                        hf_version = hf.version
                    except Exception as e:  # noqa: BLE001
                        unavailable["hf-tokenizers-1.0"] = f"worker failed: {e}"
            for corpus in corpora:
                # Fresh slices for every row of this corpus (and for the counting section): the
                # libraries with a cache from pieces to ids must not meet a slice a second time.
                with_counting = corpus in ("en", "zh") and 1 in thread_modes
                per = args.rounds + 1
                blocks = len(thread_modes) + with_counting
                every = slices(corpus, blocks * per, int(args.mb * 1_000_000))
                slice_mb = statistics.median(len(t.encode("utf-8")) for t in every) / 1e6
                for b, threads in enumerate(thread_modes):
                    texts = every[b * per:(b + 1) * per]
                    results = run_row(enc, corpus, threads, texts, loaded, unavailable, hf, tmp)
                    if not args.no_rss:
                        # Two workers at a time (a peak of memory does not depend on sharing the
                        # cores), after the row's timing, so they never run beside a timed call.
                        slice_file = str(tmp / f"slice-{corpus}-{threads}-1.json")
                        with ThreadPoolExecutor(2) as pool:
                            futures = {r.lib: pool.submit(peak_rss, r.lib, enc, slice_file, threads, hf_python)
                                       for r in results.values() if r.na is None and r.walls}
                        for lib, future in futures.items():
                            results[lib].rss = future.result()
                    print(fmt_row_text(enc, corpus, threads, results, slice_mb, args.rounds, hf_version), flush=True)
                    rows.append((enc, corpus, threads, results, slice_mb))
                if with_counting:
                    count_lines.append(f"\n{enc.name} / {CORPUS_LABEL[corpus]}: counting and arrays, one thread, "
                                       f"{slice_mb:.2f} MB slices, median of {args.rounds} rounds")
                    summary = counting[(enc.name, corpus)] = {}
                    count_lines += counting_section(every[-per:], loaded, summary)
            if hf:
                hf.close()
            del loaded
    print(f"\nelapsed: {(time.perf_counter() - start) / 60:.1f} min")
    if count_lines:
        print("\nCounting tokens and array outputs (x first line: that call's speed over the group's first "
              "call's, per round, median):")
        print("\n".join(count_lines))
    print_markdown(rows, wanted, hf_version, command, args)
    print_counting_markdown(counting)


def print_counting_markdown(counting: Dict[Tuple[str, str], Dict[str, Tuple[float, float, bool]]]) -> None:
    """ciyuan's counting and array calls against len(encode_ids), one Markdown row per encoding
    and corpus (only the calls the installed ciyuan has)."""
    if not counting:
        return
    calls = [("ciyuan len(encode_ids(text))", "len(encode_ids) MB/s"),
             ("ciyuan count_tokens(text)", "count_tokens"),
             ("ciyuan len(encode_ids(text, as_array=True))", "encode_ids(as_array=True)"),
             ("ciyuan encode_batch_ids(docs, threads=2), sum of len", "2 threads: encode_batch_ids MB/s"),
             ("ciyuan count_tokens_batch(docs, threads=2), sum", "count_tokens_batch"),
             ("ciyuan encode_batch_ids(docs, 2, as_array=True)", "encode_batch_ids(as_array=True)"),
             ("gigatoken len(encode(text)) [numpy]", "gigatoken encode (numpy)")]
    print("\nCounting and arrays: MB/s of ciyuan's list calls, the others as their speed over those (per round, "
          "median); ✗ marks a count that differs from tiktoken's.\n")
    print("| encoding / corpus | " + " | ".join(title for _, title in calls) + " |")
    print("|---|" + "---:|" * len(calls))
    for (enc_name, corpus), summary in counting.items():
        cells = []
        for call, title in calls:
            if call not in summary:
                cells.append("-")
                continue
            mbps, rel, same = summary[call]
            cells.append((f"{mbps:.1f}" if title.endswith("MB/s") else f"{rel:.2f}×") + ("" if same else " ✗"))
        print(f"| {enc_name} / {corpus} | " + " | ".join(cells) + " |")


def print_markdown(rows: List[Tuple[Enc, str, int, Dict[str, Result], float]], wanted: List[str], hf_version: str,
                   command: str, args: argparse.Namespace) -> None:
    print("\n--- Markdown (docs/benchmarks.md) ---\n")
    print(f"`{command.strip()}`; {machine()}; {args.rounds} rounds + 1 warm-up, "
          f"MB/s medians, peak RSS of a fresh process running the library alone on one slice; "
          f"HF tokenizers {hf_version or '1.0'} timed in its own process.\n")
    libs = [n for n in wanted if n not in ("ciyuan", "ciyuan-array")]
    print("| encoding | corpus | threads | ciyuan MB/s · RSS | ciyuan × tiktoken | ciyuan × fastest other (who) | "
          "ciyuan as_array MB/s | as_array × fastest other (who) | " + " | ".join(libs) + " |")
    print("|---|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(libs))
    for enc, corpus, threads, results, _ in rows:
        _, per_core = speeds(results, threads)
        rat = ratios(results, threads)
        c = results.get("ciyuan")
        tt, fo, who = rat.get("ciyuan", (None, None, ""))
        cy = md_cell(c, per_core.get("ciyuan", False)) if c else "-"
        a = results.get("ciyuan-array")
        _, afo, awho = rat.get("ciyuan-array", (None, None, ""))
        ca = md_cell(a, per_core.get("ciyuan-array", False)) if a else "-"
        cells = [md_cell(results[n], per_core.get(n, False)) if n in results else "-" for n in libs]
        print(f"| {enc.name} | {corpus} | {threads} | {cy} | {f'{tt:.2f}×' if tt else '-'} | "
              f"{f'{fo:.2f}× ({who})' if fo else '-'} | {ca} | {f'{afo:.2f}× ({awho})' if afo else '-'} | "
              + " | ".join(cells) + " |")
    notes = sorted({f"{n}: n/a ({r.na})" for _, _, _, res, _ in rows for n, r in res.items() if r.na})
    if notes:
        print("\nNot measured:\n" + "\n".join(f"- {n}" for n in notes))


if __name__ == "__main__":
    main()
