# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read one node's NUMA memory facts the way kubelet (through cadvisor) reads them.

Stdlib only, Python >= 3.9, no Ansible imports. Every path is read under one ``root``
prefix (default ``/``), so a node can be probed through a mounted host root and tests can
build fake node trees in a temporary directory. Nothing here raises on bad input: what
cannot be read or parsed becomes ``None`` plus a problem string.

Public API
----------

Dataclasses (all frozen):

``HugepagePool(page_size_kib, nr_pages, resource_name, total_bytes)``
    One ``hugepages-<K>kB`` directory of a NUMA node (cadvisor ``GetHugePagesInfo``). ``nr_pages`` and
    ``total_bytes`` are ``None`` when ``nr_hugepages`` cannot be read or parsed.

``NumaNode(id, mem_total_bytes, hugepages, memory_blocks, has_cpus, problems)``
    One ``node<N>`` directory: ``MemTotal`` in bytes (cadvisor ``getNodeMemInfo``) or ``None``; hugepage
    pools sorted by resource name; the ``memory<index>`` block entries of the directory
    (``/sys/devices/system/memory``); whether ``cpulist`` names any CPU (``None`` when there is no readable
    ``cpulist``); problems found while reading this node.
    Helpers: ``is_memory_only``, ``hugepage_pool(resource_name)``, ``is_complete``.

``KernelImage(start, end, span_bytes, memory_blocks, numa_nodes, unknown_reason, location_reason)``
    The kernel image from ``/proc/iomem`` (KEP-6232's memory_drift.go) and the NUMA node(s) that hold it
    (``/sys/devices/system/memory``). ``span_bytes`` is ``None`` with ``unknown_reason`` set when the span
    cannot be derived; ``numa_nodes`` is empty with ``location_reason`` set when the
    holder cannot be found.

``NodeFacts(root, numa_nodes, online, possible, block_size_bytes, machine_mem_total_bytes, kernel_image, problems)``
    Everything above for one node. ``numa_nodes`` sorted by id; ``online``/``possible``
    are the kernel's node lists (``None`` when the file is missing or unparsable);
    ``machine_mem_total_bytes`` is ``/proc/meminfo`` ``MemTotal`` (kubelet's memory
    capacity, used to resolve percentage eviction thresholds); ``problems`` holds every
    problem found, the per-node ones included.
    Helpers: ``node_ids()``, ``node(node_id)``, ``memory_only_node_ids()``,
    ``hugepage_resource_names()``.

Pure parsers (text in, values out):

``parse_meminfo_total(text) -> Optional[int]``
``parse_node_list(text) -> Tuple[int, ...]`` (raises ``ValueError`` on malformed lists)
``parse_block_size(text) -> int`` (raises ``ValueError``)
``parse_kernel_image_range(iomem_text) -> Tuple[Optional[Tuple[int, int]], Optional[str]]``
``kernel_span_bound(span_bytes, margin=KERNEL_SPAN_MARGIN_BYTES) -> Optional[int]``
``auto_bound_bytes(kernel_image) -> Optional[int]``
``memory_block_index(address, block_size_bytes) -> int``
``kernel_code_start(iomem_text) -> Optional[int]``
``parse_hugepage_pool(page_size_kib, nr_hugepages_text) -> Tuple[HugepagePool, Optional[str]]``
``locate_kernel_image(start, end, block_size_bytes, blocks_by_node) -> Tuple[blocks, nodes, reason]``
``kernel_image_from_iomem(iomem_text, unreadable_reason, block_size_bytes, block_size_reason, blocks_by_node) -> KernelImage``

Reader (the only function doing I/O):

``read_node_facts(root="/") -> NodeFacts`` (and ``read_numa_node(node_id, node_dir) -> NumaNode``)

Deliberate differences from kubelet/PR #140473, both on the safe side: a ``00000000-00000000``
kernel line among non-zero ones is ignored instead of pulling the start to 0, and a span above
``MAX_PLAUSIBLE_KERNEL_SPAN_BYTES`` (1 GiB) is reported as unknown instead of yielding a bound
that would tolerate real capacity changes.
"""

from __future__ import annotations

import errno
import os
import re
from typing import Dict, FrozenSet, List, Mapping, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.paths import under_root
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.reading import (
    FileTooLargeError,
    NotRegularFileError,
    read_regular_file,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import (
    describe_bytes,
    hugepage_resource_name,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import UINT64_MAX as _UINT64_MAX, bounded_int, shown as _shown
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, replace

__all__ = [
    "KERNEL_SPAN_MARGIN_BYTES",
    "MAX_PLAUSIBLE_KERNEL_SPAN_BYTES",
    "HugepagePool",
    "NumaNode",
    "KernelImage",
    "NodeFacts",
    "parse_meminfo_total",
    "parse_node_list",
    "parse_block_size",
    "parse_kernel_image_range",
    "kernel_span_bound",
    "auto_bound_bytes",
    "memory_block_index",
    "parse_hugepage_pool",
    "kernel_code_start",
    "locate_kernel_image",
    "kernel_image_from_iomem",
    "read_numa_node",
    "NodeReadError",
    "read_node_facts",
]

# KEP-6232 / PR #140473: bound = kernel image span + 64 MiB (memory_drift.go).
KERNEL_SPAN_MARGIN_BYTES = 64 * 1024 * 1024
# A resident x86/arm64 kernel image is tens of MiB, "up to about 130 MiB" (KEP-6232). A span
# above this comes from a malformed or hostile /proc/iomem and would make the bound tolerate
# real capacity changes, so it is treated as unknown (a safety rule of this tool, not kubelet's).
MAX_PLAUSIBLE_KERNEL_SPAN_BYTES = 1024 * 1024 * 1024

NODE_SYSFS_DIR = "sys/devices/system/node"
MEMORY_BLOCK_SIZE_FILE = "sys/devices/system/memory/block_size_bytes"
IOMEM_FILE = "proc/iomem"
PROC_MEMINFO_FILE = "proc/meminfo"

_MAX_READ_BYTES = 4 * 1024 * 1024
_MAX_LIST_ENTRIES = 65536
_MAX_BLOCKS_TO_LOCATE = 4096

# cadvisor utils/sysinfo: memoryCapacityRegexp, applied to the trimmed file (``getNodeMemInfo``).
_MEMTOTAL = re.compile(r"MemTotal:\s*([0-9]+) kB")
_NODE_DIR = re.compile(r"node(\d+)$")
_HUGEPAGES_DIR = re.compile(r"^hugepages-(\d+)kB$")
_MEMORY_BLOCK = re.compile(r"^memory(\d+)$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_DECIMAL = re.compile(r"^[0-9]+$")
_KERNEL_RESOURCE_NAMES = ("Kernel code", "Kernel data", "Kernel bss")


class HugepagePool(Record, frozen=True):
    """One hugepage size of one NUMA node (cadvisor ``GetHugePagesInfo``)."""

    page_size_kib: int
    nr_pages: Optional[int]
    resource_name: str
    total_bytes: Optional[int]


class NumaNode(Record, frozen=True):
    """One ``/sys/devices/system/node/node<N>`` directory."""

    id: int
    mem_total_bytes: Optional[int]
    hugepages: Tuple[HugepagePool, ...]
    memory_blocks: FrozenSet[int]
    has_cpus: Optional[bool]
    problems: Tuple[str, ...]
    read_errors: Tuple[str, ...] = ()  # the problems that leave a number kubelet needs unknown

    @property
    def is_memory_only(self) -> bool:
        """A node with memory but no CPUs (CXL, HBM, some VMs); kubelet still counts it."""
        return self.has_cpus is False and bool(self.mem_total_bytes)

    @property
    def is_complete(self) -> bool:
        """Every number kubelet derives from this node is known."""
        return self.mem_total_bytes is not None and all(pool.total_bytes is not None for pool in self.hugepages)

    def hugepage_pool(self, resource_name: str) -> Optional[HugepagePool]:
        for pool in self.hugepages:
            if pool.resource_name == resource_name:
                return pool
        return None


class KernelImage(Record, frozen=True):
    """The kernel image span from ``/proc/iomem`` and the NUMA node(s) holding it."""

    start: Optional[int]
    end: Optional[int]
    span_bytes: Optional[int]
    memory_blocks: Tuple[int, ...]
    numa_nodes: Tuple[int, ...]
    unknown_reason: Optional[str]
    location_reason: Optional[str]

    @property
    def known(self) -> bool:
        return self.span_bytes is not None


class NodeFacts(Record, frozen=True):
    """The NUMA memory facts of one node, read through ``root``."""

    root: str
    numa_nodes: Tuple[NumaNode, ...]
    online: Optional[Tuple[int, ...]]
    possible: Optional[Tuple[int, ...]]
    block_size_bytes: Optional[int]
    machine_mem_total_bytes: Optional[int]
    kernel_image: KernelImage
    problems: Tuple[str, ...]
    read_errors: Tuple[str, ...] = ()  # sysfs files that are required and unreadable or malformed

    def node_ids(self) -> Tuple[int, ...]:
        return tuple(node.id for node in self.numa_nodes)

    def node(self, node_id: int) -> Optional[NumaNode]:
        for node in self.numa_nodes:
            if node.id == node_id:
                return node
        return None

    def memory_only_node_ids(self) -> Tuple[int, ...]:
        return tuple(node.id for node in self.numa_nodes if node.is_memory_only)

    def hugepage_resource_names(self) -> Tuple[str, ...]:
        """Every hugepage resource of any node (kubelet's capacity has one per size)."""
        return tuple(sorted({pool.resource_name for node in self.numa_nodes for pool in node.hugepages}))


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


def _kernel_ranges(iomem_text: str) -> Tuple[List[Tuple[str, int, int]], int]:
    """Valid ``Kernel code/data/bss`` ranges of an iomem text, and the count of kernel lines seen."""
    ranges = []
    kernel_lines = 0
    for line in iomem_text.splitlines():
        # KEP-6232's memory_drift.go: split at the LAST ':' and keep only the three kernel names.
        range_text, colon, name = line.rpartition(":")
        if not colon or name.strip() not in _KERNEL_RESOURCE_NAMES:
            continue
        kernel_lines += 1
        # Step 2: split at the first '-', both ends 64-bit hex; skip malformed and end < start.
        start_text, dash, end_text = range_text.strip().partition("-")
        if not dash:
            continue
        start, end = _parse_hex_u64(start_text), _parse_hex_u64(end_text)
        if start is None or end is None or end < start:
            continue
        ranges.append((name.strip(), start, end))
    return ranges, kernel_lines


def parse_kernel_image_range(iomem_text: str) -> Tuple[Optional[Tuple[int, int]], Optional[str]]:
    """``((smallest start, largest end), None)`` of the kernel image, or ``(None, reason)`` (KEP-6232's memory_drift.go).

    Lines whose range is ``00000000-00000000`` (what a reader without CAP_SYS_ADMIN sees) do
    not take part; when every kernel line is zeroed the span is unknown (step 4).
    """
    ranges, kernel_lines = _kernel_ranges(iomem_text)
    if not kernel_lines:
        return None, "no 'Kernel code', 'Kernel data' or 'Kernel bss' line"
    if not ranges:
        return None, "no 'Kernel code', 'Kernel data' or 'Kernel bss' line has a valid 64-bit address range"
    nonzero = [span for span in (item[1:] for item in ranges) if span != (0, 0)]
    if not nonzero:
        return None, "kernel address ranges are all zero (read without CAP_SYS_ADMIN): read it as root"
    start = min(pair[0] for pair in nonzero)
    end = max(pair[1] for pair in nonzero)
    return (start, end), None


def kernel_code_start(iomem_text: str) -> Optional[int]:
    """Start of the first non-zero ``Kernel code`` range, if any."""
    for name, start, end in _kernel_ranges(iomem_text)[0]:
        if name == "Kernel code" and (start, end) != (0, 0):
            return start
    return None


def kernel_span_bound(span_bytes: Optional[int], margin: int = KERNEL_SPAN_MARGIN_BYTES) -> Optional[int]:
    """KEP-6232 bound: span + margin (memory_drift.go); ``None`` when the span is unknown."""
    if span_bytes is None:
        return None
    return span_bytes + margin


def auto_bound_bytes(kernel_image: KernelImage) -> Optional[int]:
    """The ``drift_bound: auto`` value: kernel image span + 64 MiB, or ``None`` (KEP-6232's memory_drift.go)."""
    return kernel_span_bound(kernel_image.span_bytes)


def memory_block_index(address: int, block_size_bytes: int) -> int:
    """The ``memory<index>`` block holding a physical address."""
    return address // block_size_bytes


def _blocks_to_locate(first: int, last: int) -> Tuple[int, ...]:
    """Every block from the start's to the end's; only the two ends for absurd ranges."""
    if last - first + 1 > _MAX_BLOCKS_TO_LOCATE:
        return (first, last)
    return tuple(range(first, last + 1))


def locate_kernel_image(
    start: int,
    end: int,
    block_size_bytes: Optional[int],
    blocks_by_node: Mapping[int, FrozenSet[int]],
) -> Tuple[Tuple[int, ...], Tuple[int, ...], Optional[str]]:
    """``(blocks, nodes, reason)``: which NUMA nodes hold ``[start, end]``."""
    if block_size_bytes is None:
        return (), (), "memory block size unknown"
    blocks = _blocks_to_locate(memory_block_index(start, block_size_bytes), memory_block_index(end, block_size_bytes))
    nodes = set()
    unowned = []
    for block in blocks:
        owners = [node_id for node_id, node_blocks in blocks_by_node.items() if block in node_blocks]
        nodes.update(owners)
        if not owners:
            unowned.append(block)
    reason = None
    if unowned:
        reason = "no NUMA node directory has %s" % ", ".join("memory%d" % block for block in unowned)
    return blocks, tuple(sorted(nodes)), reason


def kernel_image_from_iomem(
    iomem_text: Optional[str],
    unreadable_reason: Optional[str],
    block_size_bytes: Optional[int],
    block_size_reason: Optional[str],
    blocks_by_node: Mapping[int, FrozenSet[int]],
) -> KernelImage:
    """Assemble the ``KernelImage`` from already-read texts."""
    if iomem_text is None:
        return KernelImage(None, None, None, (), (), unreadable_reason or "proc/iomem not read", None)
    found, reason = parse_kernel_image_range(iomem_text)
    if found is None:
        return KernelImage(None, None, None, (), (), reason, None)
    start, end = found
    span = end - start + 1
    if span > MAX_PLAUSIBLE_KERNEL_SPAN_BYTES:
        reason = "kernel image span %d bytes (%s) is implausible (more than %s): refusing to derive a bound from it" % (
            span,
            describe_bytes(span),
            describe_bytes(MAX_PLAUSIBLE_KERNEL_SPAN_BYTES),
        )
        return KernelImage(start, end, None, (), (), reason, None)
    code_start = kernel_code_start(iomem_text)
    locate_from = start if code_start is None else code_start
    if block_size_bytes is None:
        return KernelImage(start, end, span, (), (), None, block_size_reason or "memory block size unknown")
    blocks, nodes, location_reason = locate_kernel_image(locate_from, end, block_size_bytes, blocks_by_node)
    return KernelImage(start, end, span, blocks, nodes, None, location_reason)


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


# --------------------------------------------------------------------------- the reader


def _read_text(path: str) -> Tuple[Optional[str], Optional[str]]:
    """``(text, None)`` or ``(None, reason)``; never raises, never blocks (a FIFO is refused at once)."""
    try:
        data = read_regular_file(path, _MAX_READ_BYTES)
    except NotRegularFileError as error:
        return None, "cannot read %s: it is %s, not a regular file" % (path, error.kind)
    except FileTooLargeError:
        return None, "cannot read %s: larger than %d bytes" % (path, _MAX_READ_BYTES)
    except OSError as error:
        return None, "cannot read %s: %s" % (path, error.strerror or error)
    return data.decode("utf-8", errors="replace"), None


def _list_dir(path: str) -> Tuple[List[str], Optional[str]]:
    try:
        return sorted(os.listdir(path)), None
    except OSError as error:
        return [], "cannot list %s: %s" % (path, error.strerror or error)


def _numa_node_dirs(node_root: str) -> Tuple[Dict[int, str], List[str]]:
    """``{id: path}`` of ``node[0-9]*`` entries (cadvisor ``GetNodesInfo``), and problems."""
    entries, reason = _list_dir(node_root)
    if reason:
        return {}, ["%s: kubelet would see no NUMA topology and no memory" % reason]
    dirs = {}
    problems = []
    for name in entries:
        match = _NODE_DIR.match(name)
        if not match:
            continue
        node_id = int(match.group(1))
        if node_id in dirs:
            problems.append("%s and %s name the same NUMA node %d" % (dirs[node_id], name, node_id))
            continue
        dirs[node_id] = os.path.join(node_root, name)
    if not dirs:
        problems.append(
            "no node<N> directory under %s: kubelet would see no NUMA memory information" % node_root
        )
    return dirs, problems


def _read_mem_total(node_dir: str) -> Tuple[Optional[int], List[str]]:
    path = os.path.join(node_dir, "meminfo")
    text, reason = _read_text(path)
    if text is None:
        return None, ["%s (kubelet would count this node's memory as 0)" % reason]
    total, parse_reason = _meminfo_total(text)
    if total is None:
        return None, ["%s: %s" % (path, parse_reason)]
    if total == 0:
        return 0, ["%s: MemTotal is 0" % path]
    return total, []


def _read_hugepages(node_dir: str) -> Tuple[Tuple[HugepagePool, ...], List[str]]:
    hugepages_dir = os.path.join(node_dir, "hugepages")
    if not os.path.isdir(hugepages_dir):
        return (), []  # no hugepage support: no sizes, not an error (as cadvisor ``GetHugePagesInfo``)
    entries, reason = _list_dir(hugepages_dir)
    if reason:
        return (), [reason]
    pools = []
    problems = []
    for name in entries:
        match = _HUGEPAGES_DIR.match(name)
        if not match:
            problems.append("%s: unexpected entry %r" % (hugepages_dir, name))
            continue
        page_size_kib = int(match.group(1))
        if page_size_kib == 0 or page_size_kib * 1024 > _UINT64_MAX:
            problems.append("%s: page size %s kB is not usable" % (hugepages_dir, match.group(1)))
            continue
        nr_path = os.path.join(hugepages_dir, name, "nr_hugepages")
        nr_text, read_reason = _read_text(nr_path)
        pool, pool_reason = parse_hugepage_pool(page_size_kib, nr_text)
        pools.append(pool)
        if pool_reason:
            problems.append(read_reason if nr_text is None else "%s: %s" % (nr_path, pool_reason))
    return tuple(sorted(pools, key=lambda pool: pool.resource_name)), problems


def _read_memory_blocks(node_dir: str) -> FrozenSet[int]:
    entries = _list_dir(node_dir)[0]
    return frozenset(int(match.group(1)) for match in map(_MEMORY_BLOCK.match, entries) if match)


def _read_has_cpus(node_dir: str) -> Optional[bool]:
    text = _read_text(os.path.join(node_dir, "cpulist"))[0]
    if text is None:
        return None
    try:
        return bool(parse_node_list(text))
    except ValueError:
        return None


def read_numa_node(node_id: int, node_dir: str) -> NumaNode:
    """Read one ``node<N>`` directory."""
    mem_total, mem_problems = _read_mem_total(node_dir)
    hugepages, hugepage_problems = _read_hugepages(node_dir)
    # cadvisor fails on a meminfo or hugepages entry it cannot parse, and so kubelet's start;
    # a MemTotal of 0 (a memoryless node) is a value, not an error.
    errors = (mem_problems if mem_total is None else []) + hugepage_problems
    return NumaNode(
        id=node_id,
        mem_total_bytes=mem_total,
        hugepages=hugepages,
        memory_blocks=_read_memory_blocks(node_dir),
        has_cpus=_read_has_cpus(node_dir),
        problems=tuple(mem_problems + hugepage_problems),
        read_errors=tuple(errors),
    )


def _read_node_list(path: str) -> Tuple[Optional[Tuple[int, ...]], List[str]]:
    text, reason = _read_text(path)
    if text is None:
        return None, []  # optional file: absent on some kernels and in minimal trees
    try:
        return parse_node_list(text), []
    except ValueError as error:
        return None, ["%s: %s" % (path, error)]


def _read_block_size(root: str) -> Tuple[Optional[int], Optional[str]]:
    path = under_root(root, MEMORY_BLOCK_SIZE_FILE, follow=False)
    text, reason = _read_text(path)
    if text is None:
        return None, reason
    try:
        return parse_block_size(text), None
    except ValueError as error:
        return None, "%s: %s" % (path, error)


def _read_machine_mem_total(root: str) -> Optional[int]:
    text = _read_text(under_root(root, PROC_MEMINFO_FILE, follow=False))[0]
    return None if text is None else parse_meminfo_total(text)


def _naming_iomem(kernel_image: KernelImage, iomem_path: str) -> KernelImage:
    """An unknown span's reason names the file it was read from (the bound_unknown refusal quotes it)."""
    reason = kernel_image.unknown_reason
    if reason is None or iomem_path in reason:
        return kernel_image
    return replace(kernel_image, unknown_reason="%s: %s" % (iomem_path, reason))


class NodeReadError(OSError):
    """Required node files could not be read or parsed: no verdict about the checkpoint can be given.

    ``problems`` names every file and what is wrong with it. An ``OSError``, so every caller
    that reports unreadable nodes (both modules, the guard) reports this one too.
    """

    def __init__(self, problems: Tuple[str, ...]) -> None:
        self.text = "the node's NUMA memory cannot be read: " + "; ".join(problems)
        super().__init__(errno.EIO, self.text)
        self.problems = problems

    def __str__(self) -> str:
        return self.text


def read_node_facts(root: str = "/", strict: bool = True) -> NodeFacts:
    """Read every NUMA fact kubelet's memory manager uses, plus the kernel image location.

    Raises :class:`NodeReadError` when a required file (the NUMA node directory, a node's
    ``meminfo``, its hugepage pools) is missing, not a regular file, unreadable or malformed;
    with ``strict=False`` those are returned in ``read_errors`` (and ``problems``) instead.
    An unusable ``/proc/iomem`` or block size is not an error: it leaves the ``auto`` bound
    unknown, which the drift engine reports as ``bound_unknown`` naming the file.
    """
    root = os.fspath(root) or "/"
    node_root = under_root(root, NODE_SYSFS_DIR)
    node_dirs, problems = _numa_node_dirs(node_root)
    errors = list(problems)
    numa_nodes = tuple(read_numa_node(node_id, node_dirs[node_id]) for node_id in sorted(node_dirs))
    for node in numa_nodes:
        problems.extend(node.problems)
        errors.extend(node.read_errors)
    if strict and errors:
        raise NodeReadError(tuple(errors))
    online, online_problems = _read_node_list(os.path.join(node_root, "online"))
    possible, possible_problems = _read_node_list(os.path.join(node_root, "possible"))
    block_size, block_size_reason = _read_block_size(root)
    iomem_path = under_root(root, IOMEM_FILE, follow=False)
    iomem_text, iomem_reason = _read_text(iomem_path)
    kernel_image = _naming_iomem(kernel_image_from_iomem(
        iomem_text,
        iomem_reason,
        block_size,
        block_size_reason,
        {node.id: node.memory_blocks for node in numa_nodes},
    ), iomem_path)
    return NodeFacts(
        root=root,
        numa_nodes=numa_nodes,
        online=online,
        possible=possible,
        block_size_bytes=block_size,
        machine_mem_total_bytes=_read_machine_mem_total(root),
        kernel_image=kernel_image,
        problems=tuple(problems + online_problems + possible_problems),
        read_errors=tuple(errors),
    )
