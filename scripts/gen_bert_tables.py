"""Generate cpp/src/generated/bert_tables.cc: per-code-point tables of the BERT front end.

The tables are not derived from a Unicode database but from Hugging Face ``tokenizers`` itself
(the version installed with the test dependencies): every code point is run through its
``BertNormalizer`` and ``BertPreTokenizer``, so ciyuan sees exactly the Unicode version of the
peer it must match (its Rust ``char`` methods, its NFD tables, its punctuation categories).

What is recorded per code point (surrogates excluded; they never reach the core):
  - removed by ``clean_text`` (control / format / unassigned / private use, NUL, U+FFFD);
  - mapped to a space by ``clean_text`` (whitespace);
  - padded with spaces by ``handle_chinese_chars`` (the CJK ideograph ranges);
  - whitespace and punctuation as ``BertPreTokenizer`` sees them;
  - its output under lowercase, under strip_accents (NFD minus Mn), and under both;
  - for NFD's canonical reordering (the one step of the normalizer that is not per character):
    its decomposition and the combining class of each part, as Hugging Face's NFD orders them.
    Its Unicode tables are older than Python's, so the classes are measured, not read from
    unicodedata: each mark is placed against reference marks by asking NFD which comes first.

Usage:
    python scripts/gen_bert_tables.py            # writes cpp/src/generated/bert_tables.cc
    python scripts/gen_bert_tables.py --out DIR  # writes DIR/bert_tables.cc (tests compare it)
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from pathlib import Path
from typing import Dict, List, Tuple

import tokenizers
from tokenizers import normalizers, pre_tokenizers

OUT = Path(__file__).resolve().parents[1] / "cpp" / "src" / "generated" / "bert_tables.cc"

# Flag bits (must match cpp/include/ciyuan/bert.h).
F_REMOVE = 1  # clean_text removes it
F_CLEAN_SPACE = 2  # clean_text maps it to ' '
F_CJK = 4  # handle_chinese_chars pads it with spaces
F_SPACE = 8  # BertPreTokenizer splits on it (and drops it)
F_PUNCT = 16  # BertPreTokenizer isolates it
F_FOLD = 32  # lowercase / strip_accents change it (see the fold indices)
F_CCC = 64  # its NFD holds a character of non-zero combining class (canonical reordering)
F_HANGUL = 128  # a Hangul syllable: strip_accents decomposes it by the Unicode formula (not stored)


def hangul_parts(c: int) -> str:
    s = c - 0xAC00
    parts = [0x1100 + s // 588, 0x1161 + (s % 588) // 28] + ([0x11A7 + s % 28] if s % 28 else [])
    return "".join(map(chr, parts))

SEP = "\x01"


def code_points() -> List[int]:
    return [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def batch_normalize(norm, cps: List[int], sep: str) -> List[str]:
    """norm applied to each character alone, in one call (separator-joined)."""
    out: List[str] = []
    step = 65536
    for i in range(0, len(cps), step):
        chunk = list(cps[i:i + step])
        text = sep.join(chr(c) for c in chunk)
        parts = norm.normalize_str(text).split(sep)
        if len(parts) != len(chunk):  # a character's output contains the separator: go one by one
            parts = [norm.normalize_str(chr(c)) for c in chunk]
        out.extend(parts)
    return out


def combining_classes(cps: List[int]) -> Tuple[Dict[int, int], Dict[int, str]]:
    """Hugging Face's view of canonical combining classes, as ranks (only the order matters),
    and its NFD of every code point that decomposes or is a mark."""
    nfd = normalizers.NFD()

    def first_of(a: str, b: str) -> str:  # which of two marks NFD puts first
        return nfd.normalize_str(a + b)[0]

    # NFD (Hugging Face's) of every code point whose decomposition differs.
    decomp: Dict[int, str] = {}
    rest = [c for c in cps if c != 1]
    for c, r in zip(rest, batch_normalize(nfd, rest, SEP)):
        if r != chr(c):
            decomp[c] = r
    # Candidates: marks in Python's (newer) tables; Hugging Face may not know some of them.
    marks = [c for c in cps if unicodedata.combining(chr(c)) and c not in decomp]
    # Reference marks: per class value, the lowest code point Hugging Face orders consistently
    # against U+0334 (class 1) and U+0301 (class 230).
    refs: Dict[int, int] = {}
    for c in marks:
        v = unicodedata.combining(chr(c))
        if v in refs:
            continue
        ch = chr(c)
        ok = (v > 1 and first_of(ch, "\u0334") == "\u0334") or (v == 1 and first_of("\u0301", ch) == ch)
        if ok and (v >= 230 or first_of("\u0301", ch) == ch) and (v <= 230 or first_of(ch, "\u0301") == "\u0301"):
            refs[v] = c
    values = sorted(refs)
    rank: Dict[int, int] = {}
    for c in marks:
        ch = chr(c)
        above = [v for v in values if first_of(ch, chr(refs[v])) == chr(refs[v]) and refs[v] != c]
        below = [v for v in values if first_of(chr(refs[v]), ch) == ch and refs[v] != c]
        if not above and not below:
            continue  # a starter for Hugging Face
        lo = max(above) if above else 0
        hi = min(below) if below else 1000
        equal = [v for v in values if lo < v < hi]
        if len(equal) > 1:
            raise SystemExit(f"U+{c:04X}: ambiguous combining class between {lo} and {hi}")
        rank[c] = 2 * (values.index(equal[0]) + 1) if equal else 2 * (values.index(lo) + 1) + 1 if lo else 1
    if max(rank.values()) > 255:
        raise SystemExit("combining-class ranks overflow a byte")
    for c in rank:
        decomp.setdefault(c, chr(c))
    return rank, decomp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="write bert_tables.cc into this directory instead")
    args = ap.parse_args()
    out = args.out / OUT.name if args.out else OUT
    cps = code_points()
    flags: Dict[int, int] = dict.fromkeys(cps, 0)

    clean = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False,
                                       lowercase=False)
    for c, r in zip(cps, batch_normalize(clean, cps, "|")):
        if c == ord("|"):
            r = clean.normalize_str("|")
        if r == "":
            flags[c] |= F_REMOVE
        elif r == " " and c != 0x20:
            flags[c] |= F_CLEAN_SPACE
        elif r != chr(c):
            raise SystemExit(f"clean_text maps U+{c:04X} to {r!r}: not modelled")
    flags[0x20] |= F_CLEAN_SPACE

    cjk = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=False,
                                     lowercase=False)
    rest = [c for c in cps if c != 1]
    for c, r in zip(rest, batch_normalize(cjk, rest, SEP)):
        if r == f" {chr(c)} ":
            flags[c] |= F_CJK
        elif r != chr(c):
            raise SystemExit(f"handle_chinese_chars maps U+{c:04X} to {r!r}: not modelled")

    pre = pre_tokenizers.BertPreTokenizer()
    for c in cps:
        pieces = [p for p, _ in pre.pre_tokenize_str(f"a{chr(c)}b")]
        if pieces == ["a", "b"]:
            flags[c] |= F_SPACE
        elif pieces == ["a", chr(c), "b"]:
            flags[c] |= F_PUNCT
        elif pieces != [f"a{chr(c)}b"]:
            raise SystemExit(f"BertPreTokenizer splits a U+{c:04X} b as {pieces!r}: not modelled")

    folds: List[Dict[int, str]] = []
    for strip, lower in ((False, True), (True, False), (True, True)):
        norm = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=strip,
                                          lowercase=lower)
        rest = [c for c in cps if c != 1]
        table = {c: r for c, r in zip(rest, batch_normalize(norm, rest, SEP)) if r != chr(c)}
        r1 = norm.normalize_str("\x01")
        if r1 != "\x01":
            table[1] = r1
        folds.append(table)
    # Hangul syllables decompose by formula: checked here, computed at run time, not stored.
    for c in range(0xAC00, 0xD7A4):
        if c in folds[0] or folds[1].get(c) != hangul_parts(c) or folds[2].get(c) != hangul_parts(c):
            raise SystemExit(f"U+{c:04X}: Hangul syllable not folded by the formula")
        del folds[1][c], folds[2][c]
        flags[c] |= F_HANGUL | F_FOLD
    for table in folds:
        for c in table:
            flags[c] |= F_FOLD

    ccc_rank, decomp = combining_classes(cps)
    for c, parts in decomp.items():
        if any(ccc_rank.get(ord(ch), 0) for ch in parts):
            flags[c] |= F_CCC

    # Fold strings: a pool of code points, each entry [length, cp...]; index 0 = identity.
    pool: List[int] = [0]
    pool_index: Dict[str, int] = {}

    def pool_entry(s: str) -> int:
        if s not in pool_index:
            pool_index[s] = len(pool)
            pool.append(len(s))
            pool.extend(ord(ch) for ch in s)
        return pool_index[s]

    # Per code point: an info record (flags, fold index per mode); records are shared.
    infos: List[Tuple[int, ...]] = [(0, 0, 0, 0, 0, 0)]
    info_index: Dict[Tuple[int, ...], int] = {infos[0]: 0}
    cp_info: Dict[int, int] = {}
    decomp_entries: List[Tuple[int, int]] = []  # (cp, pool offset) for F_CCC code points
    decomp_pool: List[int] = []
    for c in cps:
        f = flags[c]
        if not f:
            continue
        first = last = 0
        if f & F_CCC:
            parts = decomp[c]
            first, last = ccc_rank.get(ord(parts[0]), 0), ccc_rank.get(ord(parts[-1]), 0)
            decomp_entries.append((c, len(decomp_pool)))
            decomp_pool.append(len(parts))
            for ch in parts:
                decomp_pool.extend((ord(ch), ccc_rank.get(ord(ch), 0)))
        rec = (f, first, last) + tuple(pool_entry(t[c]) if c in t else 0 for t in folds)
        if rec not in info_index:
            info_index[rec] = len(infos)
            infos.append(rec)
        cp_info[c] = info_index[rec]
    if len(infos) >= 65536 or len(pool) >= 65536:
        raise SystemExit("tables overflow 16-bit indices")

    # Two-stage table over cp >> 8 blocks; block 0 is all zeros.
    blocks: List[Tuple[int, ...]] = [tuple([0] * 256)]
    block_index: Dict[Tuple[int, ...], int] = {blocks[0]: 0}
    stage1: List[int] = []
    for hi in range(0x1100):
        block = tuple(cp_info.get((hi << 8) | lo, 0) for lo in range(256))
        if block not in block_index:
            block_index[block] = len(blocks)
            blocks.append(block)
        stage1.append(block_index[block])

    lines = [
        "// Generated by scripts/gen_bert_tables.py -- do not edit; regenerate with",
        "//     python scripts/gen_bert_tables.py",
        f"// Source: Hugging Face tokenizers {tokenizers.__version__} (BertNormalizer, BertPreTokenizer),",
        "// probed one code point at a time.",
        '#include "ciyuan/bert.h"',
        "",
        "namespace ciyuan {",
        "namespace bert {",
        "",
        f'const char kTablesSource[] = "tokenizers {tokenizers.__version__}";',
        "",
        f"const uint16_t kStage1[{len(stage1)}] = {{",
    ]

    def emit(values: List[int], per_line: int = 20) -> None:
        for i in range(0, len(values), per_line):
            lines.append("    " + ",".join(str(v) for v in values[i:i + per_line]) + ",")

    emit(stage1)
    lines.append("};")
    lines.append("")
    lines.append(f"const uint16_t kStage2[{len(blocks)}][256] = {{")
    for b in blocks:
        lines.append("  {")
        emit(list(b), 32)
        lines.append("  },")
    lines.append("};")
    lines.append("")
    lines.append(f"const CharInfo kInfos[{len(infos)}] = {{")
    for f, first, last, a, b, c in infos:
        lines.append(f"    {{{f}, {first}, {last}, {{{a}, {b}, {c}}}}},")
    lines.append("};")
    lines.append("")
    lines.append(f"const size_t kDecompCount = {len(decomp_entries)};")
    lines.append(f"const DecompEntry kDecomp[{len(decomp_entries)}] = {{")
    for c, off in decomp_entries:
        lines.append(f"    {{{c}, {off}}},")
    lines.append("};")
    lines.append(f"const uint32_t kDecompPool[{len(decomp_pool)}] = {{")
    emit(decomp_pool)
    lines.append("};")
    lines.append("")
    lines.append(f"const uint32_t kFoldPool[{len(pool)}] = {{")
    emit(pool)
    lines.append("};")
    lines.append("")
    lines.append("}  // namespace bert")
    lines.append("}  // namespace ciyuan")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(blocks)} blocks, {len(infos)} infos, {len(pool)} pool entries", file=sys.stderr)


if __name__ == "__main__":
    main()
