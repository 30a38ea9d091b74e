"""subword-nmt codes: ciyuan's SubwordNmt vs subword-nmt's apply_bpe.BPE, side by side.

    python benchmarks/subword_nmt.py [--repeats 3] [--mb 10] [--markdown docs/benchmarks.md]

Codes: `subword-nmt learn-bpe -s 10000` on tinyshakespeare.txt (learned once, in a temporary
folder), and its `get-vocab` vocabulary. Texts: tinyshakespeare.txt itself (1.1 MB) and the
first --mb MB of gutenberg_100mb.txt (other English: more words the codes never saw). Each
configuration runs in a fresh worker process: build the applier from the files, then process
every line (keeping its newline) as `apply-bpe` does; the figure is the median wall time of
--repeats runs, each with a fresh applier (an empty word cache: both libraries cache words),
after one warm-up, with the worker's peak RSS. Configurations:
  plain:      apply-bpe -c codes
  vocabulary: apply-bpe -c codes --vocabulary vocab --vocabulary-threshold 50
ciyuan's output is checked to be identical to subword-nmt's (sha256 of the whole output).

Learning (also in fresh workers, median of --repeats): ciyuan's learn_codes (the native
BpeTrainer with subword-nmt's tie rule) vs subword-nmt's learn_bpe, 10,000 merges on
tinyshakespeare.txt; the codes are checked to be identical.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, append_markdown, machine, median_seconds, peak_rss_mb, read_prefix, run_worker  # noqa: E402

SHAKESPEARE = SHARED_DATA / "corpora" / "en" / "tinyshakespeare.txt"
GUTENBERG = SHARED_DATA / "corpora" / "en" / "gutenberg_100mb.txt"
SYMBOLS = 10000
THRESHOLD = 50


def _texts(mb: int) -> Dict[str, str]:
    return {"tinyshakespeare (1.1 MB)": SHAKESPEARE.read_text(encoding="utf-8"),
            f"gutenberg ({mb} MB)": read_prefix(GUTENBERG, mb * 1_000_000)}


def _import_subword_nmt() -> None:
    # This script's folder comes first on sys.path, and this script is named subword_nmt too.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    sys.modules.pop("subword_nmt", None)


def learn_worker(lib: str, repeats: int) -> None:
    lines = SHAKESPEARE.read_text(encoding="utf-8").splitlines(keepends=True)
    if lib == "ciyuan":
        from ciyuan.formats.subword_nmt import codes_text
        from ciyuan.formats.subword_nmt_learn import learn_codes

        def run() -> str:
            return codes_text(learn_codes(lines, SYMBOLS))
    else:
        _import_subword_nmt()
        import io

        from subword_nmt.learn_bpe import learn_bpe

        def run() -> str:
            out = io.StringIO()
            learn_bpe(lines, out, SYMBOLS)
            return out.getvalue()

    digest = hashlib.sha256(run().encode("utf-8")).hexdigest()
    seconds, times = median_seconds(run, repeats)
    print(json.dumps({"seconds": seconds, "runs": [round(t, 3) for t in times], "rss_mb": peak_rss_mb(),
                      "sha256": digest}))


def worker(lib: str, mode: str, text_name: str, codes: str, vocab: str, mb: int, repeats: int) -> None:
    text = _texts(mb)[text_name]
    lines = text.splitlines(keepends=True)
    threshold = THRESHOLD if mode == "vocabulary" else None
    if lib == "ciyuan":
        from ciyuan.formats.subword_nmt_apply import SubwordNmt

        def run() -> str:
            bpe = SubwordNmt(codes, vocab=vocab if threshold else None, vocabulary_threshold=threshold)
            return "".join(bpe.process_lines(lines))
    else:
        _import_subword_nmt()
        from subword_nmt.apply_bpe import BPE, read_vocabulary

        def run() -> str:
            with open(codes, encoding="utf-8") as c:
                words = None
                if threshold:
                    with open(vocab, encoding="utf-8") as v:
                        words = read_vocabulary(v, threshold)
                bpe = BPE(c, vocab=words)
            return "".join(bpe.process_line(line) for line in lines)

    digest = hashlib.sha256(run().encode("utf-8")).hexdigest()
    seconds, times = median_seconds(run, repeats)
    print(json.dumps({"seconds": seconds, "runs": [round(t, 3) for t in times], "rss_mb": peak_rss_mb(),
                      "mbps": len(text.encode("utf-8")) / 1e6 / seconds, "sha256": digest}))


def learn(folder: Path) -> Tuple[str, str]:
    codes, vocab = folder / "codes.txt", folder / "vocab.txt"
    exe = Path(sys.executable).parent / "subword-nmt"
    with open(SHAKESPEARE, "rb") as f, open(codes, "wb") as out:
        subprocess.run([str(exe), "learn-bpe", "-s", str(SYMBOLS)], stdin=f, stdout=out, stderr=subprocess.DEVNULL,
                       check=True)
    with open(SHAKESPEARE, "rb") as f, open(vocab, "wb") as out:
        subprocess.run([str(exe), "get-vocab"], stdin=f, stdout=out, check=True)
    return str(codes), str(vocab)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--mb", type=int, default=10, help="MB of gutenberg_100mb.txt (default 10)")
    ap.add_argument("--markdown", metavar="FILE", help="append the results to this markdown file")
    args = ap.parse_args()
    if args.worker and args.worker[0] == "learn":
        learn_worker(args.worker[1], int(args.worker[2]))
        return
    if args.worker:
        lib, mode, text_name, codes, vocab, mb, repeats = args.worker
        worker(lib, mode, text_name, codes, vocab, int(mb), int(repeats))
        return
    rows: List[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        codes, vocab = learn(Path(tmp))
        for text_name in _texts(args.mb):
            for mode in ("plain", "vocabulary"):
                results = {}
                for lib in ("ciyuan", "subword-nmt"):
                    r = json.loads(run_worker(Path(__file__), [lib, mode, text_name, codes, vocab, str(args.mb),
                                                               str(args.repeats)], {}))
                    results[lib] = r
                    print(f"{text_name:26s} {mode:10s} {lib:11s} {r['seconds']:7.3f} s {r['mbps']:6.2f} MB/s "
                          f"peak RSS {r['rss_mb']:5.0f} MB runs {r['runs']}", file=sys.stderr)
                same = results["ciyuan"]["sha256"] == results["subword-nmt"]["sha256"]
                c, s = results["ciyuan"], results["subword-nmt"]
                rows.append(f"| {text_name} | {mode} "
                            f"| {c['seconds']:.3f} s ({c['mbps']:.2f} MB/s, {c['rss_mb']:.0f} MB) "
                            f"| {s['seconds']:.3f} s ({s['mbps']:.2f} MB/s, {s['rss_mb']:.0f} MB) "
                            f"| {s['seconds'] / c['seconds']:.1f}x | {'yes' if same else 'NO'} |")
                if not same:
                    print(f"OUTPUT DIFFERS: {text_name} {mode}", file=sys.stderr)
    learned = {}
    for lib in ("ciyuan", "subword-nmt"):
        learned[lib] = r = json.loads(run_worker(Path(__file__), ["learn", lib, str(args.repeats)], {}))
        print(f"learn {SYMBOLS} {lib:11s} {r['seconds']:7.3f} s peak RSS {r['rss_mb']:5.0f} MB runs {r['runs']}",
              file=sys.stderr)
    c, s = learned["ciyuan"], learned["subword-nmt"]
    same = c["sha256"] == s["sha256"]
    rows.append(f"| tinyshakespeare (1.1 MB) | learn {SYMBOLS} merges | {c['seconds']:.3f} s ({c['rss_mb']:.0f} MB) "
                f"| {s['seconds']:.3f} s ({s['rss_mb']:.0f} MB) | {s['seconds'] / c['seconds']:.1f}x "
                f"| {'yes' if same else 'NO'} |")
    lines = [f"{machine()}; codes: subword-nmt learn-bpe -s {SYMBOLS} on tinyshakespeare; vocabulary threshold "
             f"{THRESHOLD}; median of {args.repeats} runs, each with a fresh applier (empty word cache), "
             "one worker process per configuration (peak RSS).", "",
             "| text | options | ciyuan (SubwordNmt / learn_codes) | subword-nmt (apply_bpe.BPE / learn_bpe) "
             "| speed-up | identical output |",
             "|---|---|---|---|---|---|", *rows]
    print("\n".join(lines))
    append_markdown(args.markdown, [("subword-nmt codes (`benchmarks/subword_nmt.py`)", lines)])


if __name__ == "__main__":
    main()
