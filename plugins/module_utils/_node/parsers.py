# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parsers of the node's sysfs and /proc texts (text in, values out).

``parse_meminfo_total(text) -> Optional[int]``
``parse_node_list(text) -> Tuple[int, ...]`` (raises ``ValueError`` on malformed lists)
``parse_block_size(text) -> int`` (raises ``ValueError``)
``parse_hugepage_pool(page_size_kib, nr_hugepages_text) -> Tuple[HugepagePool, Optional[str]]``
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import UINT64_MAX as _UINT64_MAX, shown as _shown, bounded_int
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import hugepage_resource_name
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import HugepagePool

__all__ = [
    "parse_meminfo_total",
    "parse_node_list",
    "parse_block_size",
    "parse_hugepage_pool",
]


_MAX_LIST_ENTRIES = 65536
# cadvisor utils/sysinfo: memoryCapacityRegexp, applied to the trimmed file (``getNodeMemInfo``).
_MEMTOTAL = re.compile(r"MemTotal:\s*([0-9]+) kB")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_DECIMAL = re.compile(r"^[0-9]+$")


# --------------------------------------------------------------------------- pure parsers


def _meminfo_total(text: str) -> Tuple[Optional[int], Optional[str]]:
    """MemTotal in bytes, or why not (cadvisor ``getNodeMemInfo``: trimmed, first match, unsigned, x 1024)."""
    match = _MEMTOTAL.search(text.strip())
    if not match:
        return None, "no 'MemTotal: <number> kB' line"
    total_kib = bounded_int(match.group(1))
    if total_kib is None or total_kib * 1024 > _UINT64_MAX:
        return None, "MemTotal %s kB does not fit in 64 bits" % _shown(match.group(1))
    return total_kib * 1024, None


def parse_meminfo_total(text: str) -> Optional[int]:
    """Bytes of the first ``MemTotal: <n> kB`` of a (per-node) meminfo text, else ``None``."""
    return _meminfo_total(text)[0]


def parse_node_list(text: str) -> Tuple[int, ...]:
    """Expand a kernel list (``"0-3,5"``, ``""``) into sorted unique ids; ``ValueError`` if malformed."""
    ids = set()
    stripped = text.strip()
    if not stripped:
        return ()
    for part in stripped.split(","):
        first, dash, last = part.strip().partition("-")
        if not _DECIMAL.match(first) or (dash and not _DECIMAL.match(last)):
            raise ValueError("%r is not a list like 0-3,5" % stripped[:80])
        low, high = bounded_int(first), bounded_int(last) if dash else bounded_int(first)
        if low is None or high is None:
            raise ValueError("%r names an id beyond 64 bits" % part.strip()[:80])
        if high < low:
            raise ValueError("range %r runs backwards" % part.strip())
        if high - low + 1 + len(ids) > _MAX_LIST_ENTRIES:
            raise ValueError("list %r names more than %d entries" % (stripped[:80], _MAX_LIST_ENTRIES))
        ids.update(range(low, high + 1))
    return tuple(sorted(ids))


def parse_block_size(text: str) -> int:
    """``block_size_bytes``: hexadecimal without ``0x`` (the kernel's memory block sysfs); ``ValueError`` if not."""
    stripped = text.strip()
    if stripped[:2].lower() == "0x":
        stripped = stripped[2:]
    if not _HEX.match(stripped) or len(stripped) > 16:
        raise ValueError("%r is not a hexadecimal block size" % text.strip()[:40])
    value = bounded_int(stripped, 16)
    if not value:
        raise ValueError("block size is 0")
    return value


def _parse_hex_u64(text: str) -> Optional[int]:
    """Go ``strconv.ParseUint(s, 16, 64)``: hex digits only, no prefix, at most 2^64-1."""
    stripped = text.strip()
    if not _HEX.match(stripped):
        return None
    return bounded_int(stripped, 16)


def parse_hugepage_pool(page_size_kib: int, nr_text: Optional[str]) -> Tuple[HugepagePool, Optional[str]]:
    """A pool from a size and the text of its ``nr_hugepages`` (total pages, not free: cadvisor ``GetHugePagesInfo``)."""
    name = hugepage_resource_name(page_size_kib)
    if nr_text is None:
        return HugepagePool(page_size_kib, None, name, None), "nr_hugepages unreadable"
    stripped = nr_text.strip()
    if not _DECIMAL.match(stripped):
        return HugepagePool(page_size_kib, None, name, None), "nr_hugepages %r is not a page count" % stripped[:40]
    nr_pages = bounded_int(stripped)
    if nr_pages is None:
        return HugepagePool(page_size_kib, None, name, None), "nr_hugepages %s does not fit in 64 bits" % _shown(stripped)
    total = nr_pages * page_size_kib * 1024
    if total > _UINT64_MAX:
        return HugepagePool(page_size_kib, nr_pages, name, None), "%d pages of %d kB do not fit in 64 bits" % (
            nr_pages,
            page_size_kib,
        )
    return HugepagePool(page_size_kib, nr_pages, name, total), None
