#!/usr/bin/env python3
"""Generate the Unicode character-class tables used by the native pre-tokenizer scanners.

Regenerate (from the repository root, in the dev venv that has `regex` and `tiktoken`):

    python scripts/gen_unicode_tables.py

This writes cpp/src/generated/unicode_tables.cc and cpp/include/ciyuan/unicode_tables.h; both are
committed. Every property is taken from a regex engine itself, never from a hand-written
list: the scanners must split exactly like the engines do, so we ask the engines.

* The `regex` module (the pre-tokenizers' reference) gives, for every code point except the
  surrogates: \\p{L}, \\p{N}, \\s, \\w, o200k's [\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}] ("upper") and
  [\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}] ("lower"), and which code points match each contraction letter
  s d m t l v r e case-insensitively (e.g. U+017F LONG S matches `s` under (?i)).
* tiktoken's Rust regex (fancy-regex over regex-syntax) is asked the same questions for the
  classes the gpt2 / cl100k_base / o200k_base patterns use, through an Encoding whose
  vocabulary is the 256 single bytes: encode_ordinary() then returns exactly the matched
  characters. Its Unicode tables are older than `regex`'s, and those patterns exist for id
  parity with tiktoken, so code points on which the two disagree get the kTiktokenAlt bit and
  their tiktoken classes in a small range table (kTiktokenRanges). `--regex-only` skips this.

Layout: flags (uint8 bits) per code point; ASCII in a 128-entry table, the rest in a two-stage
table: kStage1[cp >> 8] names a 256-entry block of kStage2 (identical blocks are shared).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import re
import sys
from pathlib import Path

import regex

ROOT = Path(__file__).resolve().parents[1]
OUT_CC = ROOT / "cpp" / "src" / "generated" / "unicode_tables.cc"
OUT_H = ROOT / "cpp" / "include" / "ciyuan" / "unicode_tables.h"

MAX_CP = 0x10FFFF
BLOCK = 256

# Flag bits; keep in sync with the enum emitted into unicode_tables.h (it is emitted from here).
BITS = {
    "kLetter": (0, r"\p{L}", "\\p{L}"),
    "kNumber": (1, r"\p{N}", "\\p{N}"),
    "kSpace": (2, r"\s", "\\s (Unicode White_Space)"),
    "kWord": (3, r"\w", "\\w of the regex module"),
    "kO200kUpper": (4, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"),
    "kO200kLower": (5, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]"),
}
ALT_BIT = 6  # kTiktokenAlt
# Classes the tiktoken patterns use (\w is not used by them; \s is checked to be identical).
TIKTOKEN_CLASSES = ["kLetter", "kNumber", "kSpace", "kO200kUpper", "kO200kLower"]
CONTRACTION_LETTERS = "sdmtlvre"

# One letter first assigned in each Unicode version, to name the version an engine knows.
VERSION_PROBES = [
    ("14.0", 0x0870),   # ARABIC LETTER ALEF WITH ATTACHED FATHA
    ("15.0", 0x1E4D0),  # NAG MUNDARI LETTER O
    ("15.1", 0x2EBF0),  # CJK Extension I
    ("16.0", 0x1C89),   # CYRILLIC CAPITAL LETTER TJE
    ("17.0", 0x323B0),  # CJK Extension J
]


def all_chars() -> str:
    return "".join(chr(c) for c in range(MAX_CP + 1) if not 0xD800 <= c <= 0xDFFF)


def regex_set(pattern: str, text: str) -> set[int]:
    return {ord(c) for c in regex.findall(pattern, text)}


def tiktoken_set(pattern: str, text: str) -> set[int]:
    import tiktoken

    ranks = {bytes([i]): i for i in range(256)}
    enc = tiktoken.Encoding("probe", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    return {ord(c) for c in enc.decode_bytes(enc.encode_ordinary(text)).decode("utf-8")}


def regex_unicode_version() -> str:
    meta = importlib.metadata.metadata("regex")
    m = re.search(r"supports Unicode (\d+(?:\.\d+)*)", meta.get_payload() or str(meta))
    return m.group(1) if m else "unknown"


def probe_version(letters: set[int]) -> str:
    known = [v for v, cp in VERSION_PROBES if cp in letters]
    return ">= " + known[-1] if known else "< " + VERSION_PROBES[0][0]


def c_array(values, per_line=16, fmt="{:d}") -> str:
    vals = [fmt.format(v) for v in values]
    return "\n".join("    " + ", ".join(vals[i:i + per_line]) + "," for i in range(0, len(vals), per_line))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--regex-only", action="store_true",
                    help="do not ask tiktoken; the tiktoken patterns then use the regex module's classes")
    ap.add_argument("--out", type=Path, help="write unicode_tables.cc and .h into this directory instead")
    args = ap.parse_args()
    out_cc, out_h = (args.out / OUT_CC.name, args.out / OUT_H.name) if args.out else (OUT_CC, OUT_H)

    text = all_chars()
    flags = bytearray(MAX_CP + 1)
    sets = {}
    for name, (bit, pat, _) in BITS.items():
        sets[name] = regex_set(pat, text)
        for cp in sets[name]:
            flags[cp] |= 1 << bit

    # Sanity checks the scanners rely on (their SSE2 ASCII masks hard-code these ASCII classes).
    assert not (sets["kWord"] & sets["kSpace"]), "a character is both \\w and \\s"
    assert not (sets["kLetter"] & sets["kNumber"])
    assert not ((sets["kLetter"] | sets["kNumber"]) & sets["kSpace"])
    lower_ascii = {ord(c) for c in "abcdefghijklmnopqrstuvwxyz"}
    upper_ascii = {c - 32 for c in lower_ascii}
    for cp in range(128):
        want_l = cp in lower_ascii | upper_ascii
        assert (cp in sets["kLetter"]) == want_l
        assert (cp in sets["kO200kUpper"]) == (cp in upper_ascii)
        assert (cp in sets["kO200kLower"]) == (cp in lower_ascii)
        assert (cp in sets["kNumber"]) == (0x30 <= cp <= 0x39)
        assert (cp in sets["kSpace"]) == (cp == 0x20 or 0x09 <= cp <= 0x0D)
        assert (cp in sets["kWord"]) == (want_l or 0x30 <= cp <= 0x39 or cp == 0x5F)

    # Case-insensitive contraction letters: the ASCII pair plus any other code point.
    folds = []
    for letter in CONTRACTION_LETTERS:
        matched = regex_set("(?i:%s)" % letter, text)
        assert {ord(letter), ord(letter.upper())} <= matched, letter
        folds += [(cp, letter) for cp in sorted(matched) if cp >= 128]

    tk_note = "not consulted (--regex-only)"
    alt_ranges = []
    if not args.regex_only:
        import tiktoken

        tk = {}
        for name in TIKTOKEN_CLASSES:
            tk[name] = tiktoken_set(BITS[name][1], text)
        for letter in CONTRACTION_LETTERS:
            assert tiktoken_set("(?i:%s)" % letter, text) == regex_set("(?i:%s)" % letter, text), letter
        assert tk["kSpace"] == sets["kSpace"], "tiktoken's \\s differs; extend the alt table to \\s"
        tk_flags = {}
        for name in TIKTOKEN_CLASSES:
            for cp in sets[name] ^ tk[name]:
                tk_flags[cp] = None
        for cp in sorted(tk_flags):
            f = flags[cp] & (1 << BITS["kWord"][0])  # \w is not a tiktoken class; keep regex's
            for name in TIKTOKEN_CLASSES:
                if cp in tk[name]:
                    f |= 1 << BITS[name][0]
            assert cp >= 128
            flags[cp] |= 1 << ALT_BIT
            if alt_ranges and alt_ranges[-1][1] == cp - 1 and alt_ranges[-1][2] == f:
                alt_ranges[-1][1] = cp
            else:
                alt_ranges.append([cp, cp, f])
        tk_note = (f"tiktoken {tiktoken.__version__} (Rust regex; its Unicode tables: "
                   f"{probe_version(tk['kLetter'])}); {len(tk_flags)} code points differ")

    # Two-stage table.
    blocks: dict[bytes, int] = {}
    stage1 = []
    stage2 = []
    for hi in range((MAX_CP + 1) // BLOCK):
        blk = bytes(flags[hi * BLOCK:(hi + 1) * BLOCK])
        if blk not in blocks:
            blocks[blk] = len(blocks)
            stage2.append(blk)
        stage1.append(blocks[blk])
    stage1_type = "uint8_t" if len(blocks) <= 256 else "uint16_t"

    rx_ver = regex.__version__
    uni_ver = regex_unicode_version()
    header_note = (
        f"// Generated by scripts/gen_unicode_tables.py -- do not edit; regenerate with\n"
        f"//     python scripts/gen_unicode_tables.py\n"
        f"// Source: Python `regex` {rx_ver} (Unicode {uni_ver}); tiktoken view: {tk_note}.\n"
    )

    bit_doc = "\n".join(
        f"    {name} = 1u << {bit},  // {doc}" for name, (bit, _, doc) in BITS.items()
    )
    h = f"""{header_note}
// Character classes for the pre-tokenizer scanners (see cpp/src/pretokenize.cc).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ciyuan {{
namespace unicode {{

// Flag bits of a code point.
enum : uint8_t {{
{bit_doc}
    // The tiktoken patterns (gpt2, cl100k_base, o200k_base) must see this code point with
    // other classes (tiktoken's Unicode tables are older): use tiktoken_flags().
    kTiktokenAlt = 1u << {ALT_BIT},
}};

extern const char kUnicodeVersion[];  // of the regex module the tables come from
extern const uint8_t kAsciiFlags[128];
extern const {stage1_type} kStage1[{len(stage1)}];
extern const uint8_t kStage2[{len(stage2)}][{BLOCK}];

struct FlagRange {{
    uint32_t lo, hi;  // inclusive
    uint8_t flags;
}};
extern const FlagRange kTiktokenRanges[];
extern const size_t kTiktokenRangeCount;

// Non-ASCII code points that match an ASCII contraction letter under (?i) (simple case
// folding), e.g. U+017F LONG S for 's'. The ASCII upper/lower pairs are not listed.
struct ContractionFold {{
    uint32_t cp;
    char letter;  // lowercase ASCII
}};
extern const ContractionFold kContractionFolds[];
extern const size_t kContractionFoldCount;

// Flags as the regex module sees the code point (cp <= 0x10FFFF).
inline uint8_t flags(uint32_t cp) {{
    if (cp < 128) return kAsciiFlags[cp];
    if (cp > 0x10FFFF) return 0;
    return kStage2[kStage1[cp >> 8]][cp & 0xFF];
}}

uint8_t tiktoken_flags_slow(uint32_t cp);

// Flags as tiktoken's Rust regex sees the code point.
inline uint8_t tiktoken_flags(uint32_t cp) {{
    uint8_t f = flags(cp);
    return (f & kTiktokenAlt) ? tiktoken_flags_slow(cp) : f;
}}

}}  // namespace unicode
}}  // namespace ciyuan
"""

    stage2_txt = ",\n".join(
        "    {  // block %d\n%s\n    }" % (i, c_array(b, per_line=32)) for i, b in enumerate(stage2)
    )
    ranges_txt = "\n".join(f"    {{0x{lo:05X}, 0x{hi:05X}, {f}}}," for lo, hi, f in alt_ranges)
    if not alt_ranges:
        ranges_txt = "    {0, 0, 0},  // unused"
    folds_txt = "\n".join(f"    {{0x{cp:04X}, '{letter}'}}," for cp, letter in folds) or "    {0, 0},"
    cc = f"""{header_note}
#include "ciyuan/unicode_tables.h"

namespace ciyuan {{
namespace unicode {{

const char kUnicodeVersion[] = "{uni_ver}";

const uint8_t kAsciiFlags[128] = {{
{c_array(flags[:128])}
}};

const {stage1_type} kStage1[{len(stage1)}] = {{
{c_array(stage1, per_line=24)}
}};

const uint8_t kStage2[{len(stage2)}][{BLOCK}] = {{
{stage2_txt}
}};

// Code points whose classes differ for tiktoken; sorted, disjoint.
const FlagRange kTiktokenRanges[] = {{
{ranges_txt}
}};
const size_t kTiktokenRangeCount = {len(alt_ranges)};

const ContractionFold kContractionFolds[] = {{
{folds_txt}
}};
const size_t kContractionFoldCount = {len(folds)};

uint8_t tiktoken_flags_slow(uint32_t cp) {{
    size_t lo = 0, hi = kTiktokenRangeCount;
    while (lo < hi) {{
        size_t mid = (lo + hi) / 2;
        if (kTiktokenRanges[mid].hi < cp) lo = mid + 1;
        else hi = mid;
    }}
    if (lo < kTiktokenRangeCount && kTiktokenRanges[lo].lo <= cp) return kTiktokenRanges[lo].flags;
    return static_cast<uint8_t>(flags(cp) & ~kTiktokenAlt);
}}

}}  // namespace unicode
}}  // namespace ciyuan
"""
    out_h.parent.mkdir(parents=True, exist_ok=True)
    out_cc.parent.mkdir(parents=True, exist_ok=True)
    out_h.write_text(h, encoding="utf-8")
    out_cc.write_text(cc, encoding="utf-8")
    print(f"wrote {out_cc} ({len(stage2)} blocks, {len(alt_ranges)} tiktoken ranges, "
          f"{len(folds)} folds) and {out_h}")
    print(f"regex {rx_ver} (Unicode {uni_ver}); {tk_note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
