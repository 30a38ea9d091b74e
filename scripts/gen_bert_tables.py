"""Generate cpp/src/bert_tables.cc: per-code-point tables of the BERT front end.

The tables are not derived from a Unicode database but from Hugging Face ``tokenizers`` itself
(the version installed with the test dependencies): every code point is run through its
``BertNormalizer`` and ``BertPreTokenizer``, so ciyuan sees exactly the Unicode version of the
peer it must match (its Rust ``char`` methods, its NFD tables, its punctuation categories).

What is recorded per code point (surrogates excluded; they never reach the core):
  - removed by ``clean_text`` (control / format / unassigned / private use, NUL, U+FFFD);
  - mapped to a space by ``clean_text`` (whitespace);
  - padded with spaces by ``handle_chinese_chars`` (the CJK ideograph ranges);
  - whitespace and punctuation as ``BertPreTokenizer`` sees them;
  - its output under lowercase, under strip_accents (NFD minus Mn), and under both.
Each of those normalizations is per character in Hugging Face (NFD's canonical reordering is
the one exception; see docs in cpp/include/ciyuan/bert.h).

Usage:
    python scripts/gen_bert_tables.py            # writes cpp/src/bert_tables.cc
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List, Tuple

import tokenizers
from tokenizers import normalizers, pre_tokenizers

OUT = Path(__file__).resolve().parents[1] / "cpp" / "src" / "bert_tables.cc"

# Flag bits (must match cpp/include/ciyuan/bert.h).
F_REMOVE = 1  # clean_text removes it
F_CLEAN_SPACE = 2  # clean_text maps it to ' '
F_CJK = 4  # handle_chinese_chars pads it with spaces
F_SPACE = 8  # BertPreTokenizer splits on it (and drops it)
F_PUNCT = 16  # BertPreTokenizer isolates it
F_FOLD = 32  # lowercase / strip_accents change it (see the fold indices)

SEP = "\x01"


def code_points() -> List[int]:
    return [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def batch_normalize(norm, cps: List[int], sep: str) -> List[str]:
    """norm applied to each character alone, in one call (separator-joined)."""
    out: List[str] = []
    step = 65536
    for i in range(0, len(cps), step):
        chunk = [c for c in cps[i:i + step]]
        text = sep.join(chr(c) for c in chunk)
        parts = norm.normalize_str(text).split(sep)
        if len(parts) != len(chunk):  # a character's output contains the separator: go one by one
            parts = [norm.normalize_str(chr(c)) for c in chunk]
        out.extend(parts)
    return out


def main() -> None:
    cps = code_points()
    flags: Dict[int, int] = {c: 0 for c in cps}

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
    for table in folds:
        for c in table:
            flags[c] |= F_FOLD

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
    infos: List[Tuple[int, int, int, int]] = [(0, 0, 0, 0)]
    info_index: Dict[Tuple[int, int, int, int], int] = {infos[0]: 0}
    cp_info: Dict[int, int] = {}
    for c in cps:
        f = flags[c]
        if not f:
            continue
        rec = (f,) + tuple(pool_entry(t[c]) if c in t else 0 for t in folds)
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
    for f, a, b, c in infos:
        lines.append(f"    {{{f}, {{{a}, {b}, {c}}}}},")
    lines.append("};")
    lines.append("")
    lines.append(f"const uint32_t kFoldPool[{len(pool)}] = {{")
    emit(pool)
    lines.append("};")
    lines.append("")
    lines.append("}  // namespace bert")
    lines.append("}  // namespace ciyuan")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(blocks)} blocks, {len(infos)} infos, {len(pool)} pool entries", file=sys.stderr)


if __name__ == "__main__":
    main()
