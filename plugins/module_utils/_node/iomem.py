# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kernel image from ``/proc/iomem`` and the bound derived from it (pure: text in, values out).

``parse_kernel_image_range(iomem_text) -> Tuple[Optional[Tuple[int, int]], Optional[str]]``
``kernel_span_bound(span_bytes, margin=KERNEL_SPAN_MARGIN_BYTES) -> Optional[int]``
``auto_bound_bytes(kernel_image) -> Optional[int]``
``memory_block_index(address, block_size_bytes) -> int``
``kernel_code_start(iomem_text) -> Optional[int]``
``locate_kernel_image(start, end, block_size_bytes, blocks_by_node) -> Tuple[blocks, nodes, reason]``
``kernel_image_from_iomem(iomem_text, unreadable_reason, block_size_bytes, block_size_reason, blocks_by_node) -> KernelImage``

Deliberate differences from kubelet/PR #140473, both on the safe side: a ``00000000-00000000``
kernel line among non-zero ones is ignored instead of pulling the start to 0, and a span above
``MAX_PLAUSIBLE_KERNEL_SPAN_BYTES`` (1 GiB) is reported as unknown instead of yielding a bound
that would tolerate real capacity changes.
"""

from __future__ import annotations

from typing import FrozenSet, List, Mapping, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import describe_bytes
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import KernelImage
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.parsers import _parse_hex_u64

__all__ = [
    "KERNEL_SPAN_MARGIN_BYTES",
    "MAX_PLAUSIBLE_KERNEL_SPAN_BYTES",
    "parse_kernel_image_range",
    "kernel_span_bound",
    "auto_bound_bytes",
    "memory_block_index",
    "kernel_code_start",
    "locate_kernel_image",
    "kernel_image_from_iomem",
]


# KEP-6232 / PR #140473: bound = kernel image span + 64 MiB (memory_drift.go).
KERNEL_SPAN_MARGIN_BYTES = 64 * 1024 * 1024
# A resident x86/arm64 kernel image is tens of MiB, "up to about 130 MiB" (KEP-6232). A span
# above this comes from a malformed or hostile /proc/iomem and would make the bound tolerate
# real capacity changes, so it is treated as unknown (a safety rule of this tool, not kubelet's).
MAX_PLAUSIBLE_KERNEL_SPAN_BYTES = 1024 * 1024 * 1024
_MAX_BLOCKS_TO_LOCATE = 4096
_KERNEL_RESOURCE_NAMES = ("Kernel code", "Kernel data", "Kernel bss")


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
