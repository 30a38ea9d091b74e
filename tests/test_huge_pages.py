"""The big lookup tables are mapped for huge pages (cpp/include/ciyuan/huge_pages.h).

Encoding looks up a random slot of a table of megabytes for nearly every piece; with 4 KB pages
that is a TLB miss each. The tables ask Linux for transparent huge pages (madvise). The test runs
where the kernel's mode is "madvise": there only memory that asked is eligible (with "always"
everything is, and the check would say nothing; with "never" nothing is).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def _thp_mode() -> str:
    if not sys.platform.startswith("linux") or not THP.exists():
        return "never"
    found = re.search(r"\[(\w+)\]", THP.read_text())
    return found.group(1) if found else "never"


def _huge_page_mappings() -> int:
    """Bytes of this process's mappings that the kernel may back with huge pages, counting only
    mappings of a whole number of 2 MB pages that start on a 2 MB boundary."""
    total, span = 0, (0, 0)
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
        if head:
            span = (int(head.group(1), 16), int(head.group(2), 16))
        elif line.startswith("THPeligible:") and line.split()[1] == "1":
            start, end = span
            if start % (2 << 20) == 0 and (end - start) % (2 << 20) == 0:
                total += end - start
    return total


@pytest.mark.skipif(_thp_mode() != "madvise", reason="transparent huge pages are not in madvise mode here")
@pytest.mark.skipif(os.environ.get("CIYUAN_SANITIZED") == "1",
                    reason="under AddressSanitizer the tables stay on its heap, where it checks their bounds")
def test_a_loaded_tokenizer_maps_its_tables_for_huge_pages(ciyuan_tokenizers):
    # With "madvise", only memory that asked for them is eligible: the vocabulary maps, the
    # short-token table, the per-thread caches (over 10 MB for cl100k_base).
    tok = ciyuan_tokenizers["cl100k_base"]
    assert tok.encode_ids("huge pages for the lookup tables " * 100)
    assert _huge_page_mappings() >= 8 << 20
