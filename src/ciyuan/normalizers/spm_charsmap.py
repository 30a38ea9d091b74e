"""SentencePiece's precompiled character maps: the rules of the named normalizations built from
the Unicode Character Database of sentencepiece's rules (Unicode 17.0.0), written in the
darts-clone double-array layout sentencepiece reads (``normalizer_spec.precompiled_charsmap``),
and read back.

A charsmap is ``uint32 LE size of the double array`` + the double array (32-bit units) + the
NUL-terminated normalized strings. The double array maps a UTF-8 key (one or more characters)
to the offset of its replacement; the normalizer replaces the longest key at each position.

The rules (as sentencepiece builds them):

- ``nfkc``: each code point whose NFKC differs maps to its NFKC; and every sequence that NFKC
  composes (the NFKD of a character, each part spelled by any character with that NFKD) maps to
  the composed form, unless shorter rules already give it;
- ``nfkc_cf``: the same with NFKC then simple case folding (``ẞ`` -> ``ß``, not ``ss``);
- ``nmt_nfkc`` / ``nmt_nfkc_cf``: plus control characters removed and some spaces, marks and
  U+FFFD made a space, and the full-width tilde kept;
- ``identity``: no rules (an empty charsmap).

The Unicode version is sentencepiece's, not the running Python's: sentencepiece (0.2.x) compiles
its named rules from Unicode 17.0.0 whatever Python runs it, so ciyuan's maps are built from that
version's database, the ``unicodedata2`` package pinned to it (``UNICODE_VERSION``). Python's
``unicodedata`` is a different version (14.0 in 3.11, 15.1 in 3.13), and maps built from it
differ from sentencepiece's for every character added or changed in between.

Simple case folding comes from Python's ``str`` (``unicodedata2`` has no case mappings) for the
characters both Python's Unicode and Unicode 17.0 assign: Unicode's case-pair stability keeps an
assigned character's folding the same in later versions. A capital letter newer than Python's
Unicode folds to the small letter of the same name (``GARAY CAPITAL LETTER A`` -> ``GARAY SMALL
LETTER A``); building fails if a newer capital has no such partner. A character unassigned in
Unicode 17.0 has no rule, even where a newer Python folds it.

Building costs a few seconds per rule (a pass over every code point) and needs ``unicodedata2``
at that version, so the package ships the four maps (``charsmaps/``, written by
scripts/gen_spm_charsmaps.py) and reads them whatever Python's Unicode version; results are
cached.

Example:
    >>> from ciyuan.normalizers.spm_charsmap import named_charsmap, read_charsmap
    >>> read_charsmap(named_charsmap("nfkc"))["Ａ".encode()]   # doctest: +SKIP
    b'A'
"""

from __future__ import annotations

import itertools
import json
import lzma
import struct
import unicodedata
from collections import defaultdict, deque
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Callable, Dict, List, Mapping, Optional, Set, Tuple

from ciyuan.errors import ModelError

__all__ = ["RULES", "UNICODE_VERSION", "UNICODEDATA2", "unicode_database", "rule_map", "build_charsmap",
           "read_charsmap", "split_charsmap", "unit_offset", "named_charsmap"]

#: The named normalization rules.
RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")

#: The Unicode version of sentencepiece's named rules, and so of the maps ciyuan ships and builds
#: (found by comparing sentencepiece 0.2.3's maps with maps built from each ``unicodedata2``
#: version: 17.0 gives equal keys and values for all four rules, 16.0 and 18.0 do not).
UNICODE_VERSION = "17.0.0"

#: The ``unicodedata2`` release that holds that database (17.0.1 only fixes CJK names of 17.0.0).
UNICODEDATA2 = "17.0.1"

# The NMT additions (found by probing sentencepiece one code point at a time).
_NMT_SPACES = (0x09, 0x0A, 0x0C, 0x0D, 0x061C, 0x1680, 0x200B, 0x200C, 0x200E, 0x200F, 0x2028, 0x2029, 0x2581,
               0xFEFF, 0xFFFD)
_NMT_REMOVED = (*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F)
_NMT_KEPT = (0xFF5E,)  # FULLWIDTH TILDE: used apart from "~" in Japanese


def unicode_database() -> ModuleType:
    """The Unicode Character Database of the named rules: Python's ``unicodedata`` if it is
    ``UNICODE_VERSION``, else ``unicodedata2`` at that version.

    Raises:
        ModelError: neither is that version (install ``unicodedata2==UNICODEDATA2``).
    """
    if unicodedata.unidata_version == UNICODE_VERSION:
        return unicodedata
    try:
        import unicodedata2
    except ImportError:
        unicodedata2 = None
    if unicodedata2 is not None and unicodedata2.unidata_version == UNICODE_VERSION:
        return unicodedata2
    have = f"unicodedata2 has Unicode {unicodedata2.unidata_version}" if unicodedata2 else "no unicodedata2"
    raise ModelError(f"building SentencePiece's named rules needs the Unicode {UNICODE_VERSION} database "
                     f"(Python has {unicodedata.unidata_version}, {have}): pip install unicodedata2=={UNICODEDATA2}")


def _is_unicode_char(cp: int) -> bool:
    """Not a surrogate and not a noncharacter (ICU's U_IS_UNICODE_CHAR)."""
    return not (0xD800 <= cp <= 0xDFFF or 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE)


def _simple_fold(ch: str, db: ModuleType) -> str:
    """Simple (one-to-one) case folding of one character in `db`'s Unicode (module docstring)."""
    if db.category(ch) == "Cn":
        return ch
    if unicodedata.category(ch) != "Cn":  # Python knows it: its case mappings
        folded = ch.casefold()
        if len(folded) != 1:
            lower = ch.lower()
            folded = lower if len(lower) == 1 else ch
        if db.category(folded) == "Cn":
            raise ModelError(f"U+{ord(ch):04X} folds to U+{ord(folded):04X}, which Unicode "
                             f"{db.unidata_version} does not assign")
        return folded
    if db.category(ch) not in ("Lu", "Lt"):
        return ch
    name = db.name(ch, "")
    if "CAPITAL LETTER" in name:
        try:
            return str(db.lookup(name.replace("CAPITAL LETTER", "SMALL LETTER", 1)))
        except KeyError:
            pass
    raise ModelError(f"no case folding for U+{ord(ch):04X} {name} (newer than Python's Unicode "
                     f"{unicodedata.unidata_version} and without a small letter of the same name)")


def _nfkc(text: str, db: ModuleType) -> str:
    return str(db.normalize("NFKC", text))


def _nfkc_cf(text: str, db: ModuleType) -> str:
    """NFKC, simple case folding, NFKC again, until nothing changes."""
    out = _nfkc(text, db)
    for _ in range(4):
        nxt = _nfkc("".join(_simple_fold(c, db) for c in out), db)
        if nxt == out:
            break
        out = nxt
    return out


def _apply(rules: Mapping[str, str], text: str, max_len: int) -> str:
    """Longest-match rewriting of `text` with the keys of `rules` up to max_len characters."""
    out: List[str] = []
    i = 0
    while i < len(text):
        for n in range(min(max_len, len(text) - i), 0, -1):
            rep = rules.get(text[i:i + n])
            if rep is not None:
                out.append(rep)
                i += n
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _remove_redundant(rules: Dict[str, str]) -> Dict[str, str]:
    """Keep one-character rules, and a longer rule only where the shorter ones give otherwise."""
    by_length: Dict[int, List[Tuple[str, str]]] = defaultdict(list)
    for k, v in rules.items():
        by_length[len(k)].append((k, v))
    kept = dict(by_length[1])
    for n in range(2, max(by_length, default=0) + 1):
        for k, v in by_length[n]:
            if _apply(kept, k, n - 1) != v:
                kept[k] = v
    return kept


@lru_cache(maxsize=None)
def _composition_rules(norm: Callable[[str, ModuleType], str], db: ModuleType) -> Dict[str, str]:
    """One-character rules plus the sequences that `norm` composes (Unicode of `db`); cached, as
    two named rules share each (nfkc and nmt_nfkc; the _cf pair). Callers copy before changing."""
    rules: Dict[str, str] = {}
    spellings: Dict[str, List[str]] = defaultdict(list)  # NFKD character -> characters with that NFKD
    decomposed: Set[str] = set()
    for cp in range(1, 0x110000):
        if not _is_unicode_char(cp):
            continue
        ch = chr(cp)
        # Unassigned and private-use characters (five sixths of the code points) normalize and
        # fold to themselves and are their own NFKD: no rule, and no spelling but their own.
        if db.category(ch) in ("Cn", "Co"):
            continue
        out = norm(ch, db)
        if out != ch:
            rules[ch] = out
        nfkd = db.normalize("NFKD", ch)
        if len(nfkd) == 1:
            spellings[nfkd].append(ch)
        else:
            decomposed.add(nfkd)
    for nfkd in sorted(decomposed):
        composed = norm(nfkd, db)
        if composed == nfkd:
            continue
        for parts in itertools.product(*(spellings.get(c) or [c] for c in nfkd)):
            key = "".join(parts)
            if key != composed:
                rules[key] = composed
    return rules


@lru_cache(maxsize=None)
def rule_map(rule: str, db: Optional[ModuleType] = None) -> Dict[str, str]:
    """The rules of a named normalization: key text -> replacement (see the module docstring),
    from the Unicode database `db` (default: ``unicode_database()``, sentencepiece's version).

    Raises:
        ModelError: an unknown rule, or no database of sentencepiece's Unicode version.
    """
    if rule not in RULES:
        raise ModelError(f"unknown SentencePiece normalization rule {rule!r}; use one of {', '.join(RULES)}")
    if rule == "identity":
        return {}
    rules = dict(_composition_rules(_nfkc_cf if rule.endswith("_cf") else _nfkc, db or unicode_database()))
    if rule.startswith("nmt_"):
        for cp in _NMT_SPACES:
            rules[chr(cp)] = " "
        for cp in _NMT_REMOVED:
            rules[chr(cp)] = ""
        for cp in _NMT_KEPT:
            rules.pop(chr(cp), None)
    return _remove_redundant(rules)


# -- darts-clone's double array -------------------------------------------------------------------

_LEAF_BIT = 1 << 31


def _offset_bits(offset: int) -> int:
    """A unit's offset field (bits 10-31, or scaled by 256 with bit 9)."""
    if offset < 1 << 21:
        return offset << 10
    if offset % 256 or offset >= 1 << 29:
        raise ModelError("the character map is too large for a darts-clone double array")
    return (offset << 2) | (1 << 9)


def _double_array(keys: List[Tuple[bytes, int]]) -> List[int]:
    """darts-clone units for sorted (key, value) pairs; identical subtrees are shared."""
    # The byte trie: node -> (value or -1, {label: child}).
    values: List[int] = [-1]
    children: List[Dict[int, int]] = [{}]
    for key, value in keys:
        node = 0
        for c in key:
            nxt = children[node].get(c)
            if nxt is None:
                nxt = len(values)
                values.append(-1)
                children.append({})
                children[node][c] = nxt
            node = nxt
        values[node] = value
    # Share identical subtrees (bottom-up signatures): node -> canonical node.
    canon: Dict[Tuple[int, Tuple[Tuple[int, int], ...]], int] = {}
    rep = [0] * len(values)
    order: List[int] = []
    stack = [(0, False)]
    while stack:  # post-order
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in children[node].values())
    for node in order:
        sig = (values[node], tuple(sorted((c, rep[ch]) for c, ch in children[node].items())))
        rep[node] = canon.setdefault(sig, node)
    # Place each canonical node's base: its children at base ^ label, its value at base.
    used = bytearray(256)
    used[0] = 1  # the root unit
    bases: Dict[int, int] = {}
    used_bases: Set[int] = set()
    queue = deque([0])
    search_from = 1
    while queue:
        node = queue.popleft()
        if node in bases:
            continue
        labels = sorted(children[node])
        slots = ([0] if values[node] >= 0 else []) + labels
        first, rest = slots[0], slots[1:]
        q = search_from
        while True:
            q = used.find(0, q)
            if q < 0:
                q = len(used)
            base = q ^ first  # the first slot lands on q, free; the others are checked
            while base + 256 > len(used):
                used.extend(bytes(256))
            if base and base not in used_bases:
                for c in rest:
                    if used[base ^ c]:
                        break
                else:
                    break
            q += 1
        for c in slots:
            used[base ^ c] = 1
        used_bases.add(base)
        bases[node] = base
        while search_from < len(used) and used[search_from]:
            search_from += 1
        search_from = max(search_from, len(used) - 16 * 256)
        queue.extend(rep[ch] for _, ch in sorted(children[node].items()) if rep[ch] not in bases)
    units = [0] * len(used)
    units[0] = _offset_bits(bases[0])
    for node, base in bases.items():
        if values[node] >= 0:
            units[base] = values[node] | _LEAF_BIT
        for c, child in children[node].items():
            child = rep[child]
            pos = base ^ c
            unit = _offset_bits(pos ^ bases[child]) | c
            if values[child] >= 0:
                unit |= 1 << 8
            units[pos] = unit
    return units


def build_charsmap(rules: Mapping[str, str]) -> bytes:
    """The precompiled charsmap of `rules` (key text -> replacement), as sentencepiece reads it;
    ``b""`` for no rules."""
    if not rules:
        return b""
    strings = bytearray()
    offsets: Dict[bytes, int] = {}
    keys: List[Tuple[bytes, int]] = []
    for key in sorted(rules, key=lambda k: k.encode("utf-8")):
        value = rules[key].encode("utf-8")
        if not key or "\0" in key or b"\0" in value:
            raise ModelError(f"a charsmap rule cannot have an empty key or hold NUL: {key!r} -> {rules[key]!r}")
        if value not in offsets:
            offsets[value] = len(strings)
            strings += value + b"\0"
        keys.append((key.encode("utf-8"), offsets[value]))
    units = _double_array(keys)
    return struct.pack("<I", 4 * len(units)) + struct.pack(f"<{len(units)}I", *units) + bytes(strings)


def unit_offset(unit: int) -> int:
    """The offset a darts-clone unit holds (to its children, or to its value)."""
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def split_charsmap(blob: bytes) -> Tuple[Tuple[int, ...], bytes]:
    """The double array's units and the strings of a precompiled charsmap (darts-clone, as
    SentencePiece writes it: a little-endian u32 size, the units, then NUL-terminated
    replacements); ``((), b"")`` for ``b""``.

    Raises:
        ModelError: the blob is truncated or its size field is inconsistent.
    """
    if not blob:
        return (), b""
    if len(blob) <= 4:
        raise ModelError(f"the precompiled charsmap is corrupt: it is {len(blob)} bytes long")
    size = struct.unpack_from("<I", blob)[0]
    if size % 4 or size == 0 or size > len(blob) - 4:
        raise ModelError(f"the precompiled charsmap is corrupt: its double array claims {size} bytes "
                         f"of {len(blob) - 4}")
    return struct.unpack_from(f"<{size // 4}I", blob, 4), blob[4 + size:]


# read_charsmap finds a node's children 256 labels at once: the children of a node whose units
# start at `base` are the units base ^ c (c = 1..255) whose label is c, all in base's block of 256
# units. As 2048-bit integers, the block's labels XOR (j ^ (base & 255) for each byte j) has a zero
# byte exactly at each child; _LOW7 / _HIGH find those bytes without a Python loop over 255 labels
# (a loop that took 10 s for a named map).
_LOW7 = int.from_bytes(b"\x7f" * 256, "little")
_HIGH = int.from_bytes(b"\x80" * 256, "little")


@lru_cache(maxsize=256)
def _xor_labels(low: int) -> int:
    """The labels j ^ low of the bytes j = 0..255 of a block, as one 2048-bit integer."""
    return int.from_bytes(bytes(j ^ low for j in range(256)), "little")


def read_charsmap(blob: bytes) -> Dict[bytes, bytes]:
    """Every (key -> replacement) of a precompiled charsmap (``{}`` for ``b""``).

    Raises:
        ModelError: the blob is truncated or inconsistent.
    """
    units, strings = split_charsmap(blob)
    if not units:
        return {}
    # Each unit's label (0 for a value unit, whose leaf bit no label matches), padded to whole
    # blocks of 256.
    labels = bytes((u & 0xFF) if not u & _LEAF_BIT else 0 for u in units)
    labels += bytes(-len(labels) % 256)
    out: Dict[bytes, bytes] = {}
    offset = unit_offset
    stack: List[Tuple[int, bytes]] = [(0, b"")]
    seen = 0
    while stack:
        pos, key = stack.pop()
        seen += 1
        if seen > len(units) * 256 or len(key) > 256:
            raise ModelError("the precompiled charsmap is corrupt: its double array has a cycle")
        u = units[pos]
        base = pos ^ offset(u)
        if key and (u >> 8) & 1:
            if base >= len(units):
                raise ModelError("the precompiled charsmap is corrupt: a value lies outside the double array")
            value = units[base] & (_LEAF_BIT - 1)
            end = strings.find(b"\0", value)
            if value >= len(strings) or end < 0:
                raise ModelError("the precompiled charsmap is corrupt: a rule points outside its strings")
            out[key] = strings[value:end]
        block = (base >> 8) << 8
        if block >= len(labels):
            continue  # no unit there: no children
        low = base & 255
        diff = int.from_bytes(labels[block:block + 256], "little") ^ _xor_labels(low)
        zero = _HIGH & ~(((diff & _LOW7) + _LOW7) | diff)  # 0x80 at each zero byte of diff
        zero &= ~(0x80 << (8 * low))  # byte `low` is label 0, the value unit, not a child
        while zero:
            bit = zero & -zero
            zero ^= bit
            c = ((bit.bit_length() - 1) >> 3) ^ low
            stack.append((base ^ c, key + bytes([c])))
    return out


# The maps of the named rules as scripts/gen_spm_charsmaps.py wrote them (xz), for
# UNICODE_VERSION: building one takes seconds (and unicodedata2), reading it milliseconds.
_SHIPPED = Path(__file__).with_name("charsmaps")


def _shipped_charsmap(rule: str) -> Optional[bytes]:
    try:
        index = json.loads((_SHIPPED / "index.json").read_text(encoding="utf-8"))
        if index.get("unicode_version") != UNICODE_VERSION:
            return None  # stale (written for another version of the rules): build it
        return lzma.decompress((_SHIPPED / f"{rule}.xz").read_bytes())
    except (OSError, ValueError, lzma.LZMAError):
        return None  # missing or damaged: building gives the same map


@lru_cache(maxsize=None)
def named_charsmap(rule: str) -> bytes:
    """The precompiled charsmap of a named rule (cached; ``b""`` for ``identity``): the shipped
    copy, whatever Python's Unicode version; built now (``unicodedata2`` needed) only if the
    shipped copy is missing, damaged or stale.

    Raises:
        ModelError: an unknown rule, or no shipped copy and no Unicode 17.0 database to build it.
    """
    if rule != "identity" and rule in RULES:
        shipped = _shipped_charsmap(rule)
        if shipped is not None:
            return shipped
    return build_charsmap(rule_map(rule))
