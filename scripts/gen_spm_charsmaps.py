"""Generate src/ciyuan/normalizers/charsmaps/: the precompiled character maps of SentencePiece's
named normalization rules (nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf), xz-compressed.

They are built by ciyuan's own builder (``ciyuan.normalizers.spm_charsmap``) from the Unicode
17.0.0 database of the ``unicodedata2`` package (pinned: ``UNICODEDATA2``, in the ``test`` extra),
the version sentencepiece builds its named rules from, so the maps are sentencepiece's whatever
Python's own ``unicodedata`` version. Only generating needs ``unicodedata2``; the package reads
the shipped maps. Building all four takes ~15 s and ~280 MB; shipping the result makes
``SentencePieceNormalizer("nmt_nfkc")`` (the Unigram trainer's default) cost milliseconds.
``index.json`` records the Unicode version.

Usage:
    pip install unicodedata2==17.0.1
    python scripts/gen_spm_charsmaps.py            # writes src/ciyuan/normalizers/charsmaps/
    python scripts/gen_spm_charsmaps.py --out DIR  # writes DIR/ (tests compare it)
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path

from ciyuan.errors import ModelError
from ciyuan.normalizers.spm_charsmap import RULES, UNICODE_VERSION, build_charsmap, rule_map, unicode_database

OUT = Path(__file__).resolve().parents[1] / "src" / "ciyuan" / "normalizers" / "charsmaps"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (default: the package's)")
    out = parser.parse_args().out
    try:
        db = unicode_database()
    except ModelError as e:
        sys.exit(f"gen_spm_charsmaps.py: {e}")
    assert db.unidata_version == UNICODE_VERSION
    out.mkdir(parents=True, exist_ok=True)
    for rule in RULES:
        if rule == "identity":
            continue
        blob = build_charsmap(rule_map(rule, db))
        # preset 9 with no timestamps: the same bytes on every run
        (out / f"{rule}.xz").write_bytes(lzma.compress(blob, preset=9))
    index = {"generator": "scripts/gen_spm_charsmaps.py", "unicode_version": UNICODE_VERSION}
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
