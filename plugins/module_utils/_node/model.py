# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node's NUMA memory facts as records (all frozen); :mod:`.sysfs` reads them.

``HugepagePool(page_size_kib, nr_pages, resource_name, total_bytes)``
    One ``hugepages-<K>kB`` directory of a NUMA node (cadvisor ``GetHugePagesInfo``). ``nr_pages`` and
    ``total_bytes`` are ``None`` when ``nr_hugepages`` cannot be read or parsed.

``NumaNode(id, mem_total_bytes, hugepages, memory_blocks, has_cpus, problems)``
    One ``node<N>`` directory: ``MemTotal`` in bytes (cadvisor ``getNodeMemInfo``) or ``None``; hugepage
    pools sorted by resource name; the ``memory<index>`` block entries of the directory
    (``/sys/devices/system/memory``); whether ``cpulist`` names any CPU (``None`` when there is no readable
    ``cpulist``); problems found while reading this node.

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
    Helpers: ``node_ids()``, ``hugepage_resource_names()``.
"""

from __future__ import annotations

from typing import FrozenSet, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record

__all__ = [
    "HugepagePool",
    "NumaNode",
    "KernelImage",
    "NodeFacts",
]


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

    def hugepage_resource_names(self) -> Tuple[str, ...]:
        """Every hugepage resource of any node (kubelet's capacity has one per size)."""
        return tuple(sorted({pool.resource_name for node in self.numa_nodes for pool in node.hugepages}))
