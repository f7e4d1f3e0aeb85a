# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read one node's NUMA memory facts the way kubelet (through cadvisor) reads them.

Stdlib only, Python >= 3.9, no Ansible imports. Every file is read through the node's
:class:`~_common.node_files.NodeFiles` (the real filesystem under a root on the node, the node's answer
on the controller). Nothing here raises on bad input: what cannot be read or parsed becomes ``None``
plus a problem string; messages name the path where it was read (``NodeFiles.shown``).

The reader (the only I/O of ``_node``): ``read_node_facts(files) -> NodeFacts`` (and
``read_numa_node(files, node_id, node_dir) -> NumaNode``); it parses with :mod:`.parsers` and :mod:`.iomem`.
:data:`READS` declares what it reads (the node reader's plan, ``_probe.read_plan``).
"""

from __future__ import annotations

import errno
import posixpath
import re
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import UINT64_MAX as _UINT64_MAX
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import (
    READ_LIMIT,
    FileTooLargeError,
    NodeFiles,
    NotRegularFileError,
    list_dir,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import replace
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.iomem import kernel_image_from_iomem
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import HugepagePool, KernelImage, NodeFacts, NumaNode
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.parsers import (
    _meminfo_total,
    parse_block_size,
    parse_hugepage_pool,
    parse_meminfo_total,
    parse_node_list,
)

__all__ = [
    "read_numa_node",
    "NodeReadError",
    "read_node_facts",
]


NODE_SYSFS_DIR = "/sys/devices/system/node"
MEMORY_BLOCK_SIZE_FILE = "/sys/devices/system/memory/block_size_bytes"
IOMEM_FILE = "/proc/iomem"
PROC_MEMINFO_FILE = "/proc/meminfo"
MAX_READ_BYTES = READ_LIMIT
# What read_node_facts reads (raw: no credential is ever in sysfs or procfs).
READS: Tuple[Dict[str, Any], ...] = (
    {"stat": NODE_SYSFS_DIR},
    {"list": NODE_SYSFS_DIR + "/node*"},  # a node's memory blocks, by name
    {"read": NODE_SYSFS_DIR + "/{online,possible}", "raw": True},
    {"read": NODE_SYSFS_DIR + "/node*/{meminfo,cpulist,distance}", "raw": True},
    {"stat": NODE_SYSFS_DIR + "/node*/hugepages"},
    {"read": NODE_SYSFS_DIR + "/node*/hugepages/hugepages-*/nr_hugepages", "raw": True},
    {"read": "{%s,%s,%s}" % (MEMORY_BLOCK_SIZE_FILE, IOMEM_FILE, PROC_MEMINFO_FILE), "raw": True},
)
_NODE_DIR = re.compile(r"node(\d+)$")
_HUGEPAGES_DIR = re.compile(r"^hugepages-(\d+)kB$")
_MEMORY_BLOCK = re.compile(r"^memory(\d+)$")


# --------------------------------------------------------------------------- the reader


def _read_text(files: NodeFiles, node_path: str) -> Tuple[Optional[str], Optional[str]]:
    """``(text, None)`` or ``(None, reason)``; never raises, never blocks (a FIFO is refused at once)."""
    try:
        data = files.read_bytes(node_path, MAX_READ_BYTES)
    except NotRegularFileError as error:
        return None, "cannot read %s: it is %s, not a regular file" % (error.path, error.kind)
    except FileTooLargeError as error:
        return None, "cannot read %s: larger than %d bytes" % (error.path, MAX_READ_BYTES)
    except OSError as error:
        return None, "cannot read %s: %s" % (error.filename or files.host_path(node_path), error.strerror or error)
    return data.decode("utf-8", errors="replace"), None


def _list_dir(files: NodeFiles, node_path: str) -> Tuple[List[str], Optional[str]]:
    """The entries of a sysfs directory; a missing one is a problem here (``_common.node_files.list_dir``)."""
    shown = files.host_path(node_path)
    entries, problem = list_dir(files, node_path, shown)
    if entries is None:
        return [], problem or "%s does not exist" % shown
    return entries, None


def _numa_node_dirs(files: NodeFiles, node_root: str) -> Tuple[Dict[int, str], List[str]]:
    """``{id: node path}`` of ``node[0-9]*`` entries (cadvisor ``GetNodesInfo``), and problems."""
    entries, reason = _list_dir(files, node_root)
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
            problems.append("%s and %s name the same NUMA node %d" % (files.host_path(dirs[node_id]), name, node_id))
            continue
        dirs[node_id] = posixpath.join(node_root, name)
    if not dirs:
        problems.append(
            "no node<N> directory under %s: kubelet would see no NUMA memory information" % files.host_path(node_root)
        )
    return dirs, problems


def _read_mem_total(files: NodeFiles, node_dir: str) -> Tuple[Optional[int], List[str]]:
    path = posixpath.join(node_dir, "meminfo")
    text, reason = _read_text(files, path)
    if text is None:
        return None, ["%s (kubelet would count this node's memory as 0)" % reason]
    total, parse_reason = _meminfo_total(text)
    if total is None:
        return None, ["%s: %s" % (files.host_path(path), parse_reason)]
    if total == 0:
        return 0, ["%s: MemTotal is 0" % files.host_path(path)]
    return total, []


def _read_hugepages(files: NodeFiles, node_dir: str) -> Tuple[Tuple[HugepagePool, ...], List[str]]:
    hugepages_dir = posixpath.join(node_dir, "hugepages")
    if not files.isdir(hugepages_dir):
        return (), []  # no hugepage support: no sizes, not an error (as cadvisor ``GetHugePagesInfo``)
    shown = files.host_path(hugepages_dir)
    entries, reason = _list_dir(files, hugepages_dir)
    if reason:
        return (), [reason]
    pools = []
    problems = []
    for name in entries:
        match = _HUGEPAGES_DIR.match(name)
        if not match:
            problems.append("%s: unexpected entry %r" % (shown, name))
            continue
        page_size_kib = int(match.group(1))
        if page_size_kib == 0 or page_size_kib * 1024 > _UINT64_MAX:
            problems.append("%s: page size %s kB is not usable" % (shown, match.group(1)))
            continue
        nr_path = posixpath.join(hugepages_dir, name, "nr_hugepages")
        nr_text, read_reason = _read_text(files, nr_path)
        pool, pool_reason = parse_hugepage_pool(page_size_kib, nr_text)
        pools.append(pool)
        if pool_reason:
            problems.append(read_reason if nr_text is None else "%s: %s" % (files.host_path(nr_path), pool_reason))
    return tuple(sorted(pools, key=lambda pool: pool.resource_name)), problems


def _read_memory_blocks(files: NodeFiles, node_dir: str) -> FrozenSet[int]:
    entries = _list_dir(files, node_dir)[0]
    return frozenset(int(match.group(1)) for match in map(_MEMORY_BLOCK.match, entries) if match)


def _read_has_cpus(files: NodeFiles, node_dir: str) -> Optional[bool]:
    text = _read_text(files, posixpath.join(node_dir, "cpulist"))[0]
    if text is None:
        return None
    try:
        return bool(parse_node_list(text))
    except ValueError:
        return None


def read_numa_node(files: NodeFiles, node_id: int, node_dir: str) -> NumaNode:
    """Read one ``node<N>`` directory (a node path)."""
    mem_total, mem_problems = _read_mem_total(files, node_dir)
    hugepages, hugepage_problems = _read_hugepages(files, node_dir)
    # cadvisor fails on a meminfo or hugepages entry it cannot parse, and so kubelet's start;
    # a MemTotal of 0 (a memoryless node) is a value, not an error.
    errors = (mem_problems if mem_total is None else []) + hugepage_problems
    return NumaNode(
        id=node_id,
        mem_total_bytes=mem_total,
        hugepages=hugepages,
        memory_blocks=_read_memory_blocks(files, node_dir),
        has_cpus=_read_has_cpus(files, node_dir),
        problems=tuple(mem_problems + hugepage_problems),
        read_errors=tuple(errors),
    )


def _read_node_list(files: NodeFiles, path: str) -> Tuple[Optional[Tuple[int, ...]], List[str]]:
    text, reason = _read_text(files, path)
    if text is None:
        return None, []  # optional file: absent on some kernels and in minimal trees
    try:
        return parse_node_list(text), []
    except ValueError as error:
        return None, ["%s: %s" % (files.host_path(path), error)]


def _read_block_size(files: NodeFiles) -> Tuple[Optional[int], Optional[str]]:
    text, reason = _read_text(files, MEMORY_BLOCK_SIZE_FILE)
    if text is None:
        return None, reason
    try:
        return parse_block_size(text), None
    except ValueError as error:
        return None, "%s: %s" % (files.host_path(MEMORY_BLOCK_SIZE_FILE), error)


def _read_machine_mem_total(files: NodeFiles) -> Optional[int]:
    text = _read_text(files, PROC_MEMINFO_FILE)[0]
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


def read_node_facts(files: NodeFiles, strict: bool = True) -> NodeFacts:
    """Read every NUMA fact kubelet's memory manager uses, plus the kernel image location.

    Raises :class:`NodeReadError` when a required file (the NUMA node directory, a node's
    ``meminfo``, its hugepage pools) is missing, not a regular file, unreadable or malformed;
    with ``strict=False`` those are returned in ``read_errors`` (and ``problems``) instead.
    An unusable ``/proc/iomem`` or block size is not an error: it leaves the ``auto`` bound
    unknown, which the drift engine reports as ``bound_unknown`` naming the file.
    """
    node_root = files.resolve(NODE_SYSFS_DIR)
    node_dirs, problems = _numa_node_dirs(files, node_root)
    errors = list(problems)
    numa_nodes = tuple(read_numa_node(files, node_id, node_dirs[node_id]) for node_id in sorted(node_dirs))
    for node in numa_nodes:
        problems.extend(node.problems)
        errors.extend(node.read_errors)
    if strict and errors:
        raise NodeReadError(tuple(errors))
    online, online_problems = _read_node_list(files, posixpath.join(node_root, "online"))
    possible, possible_problems = _read_node_list(files, posixpath.join(node_root, "possible"))
    block_size, block_size_reason = _read_block_size(files)
    iomem_path = files.host_path(IOMEM_FILE, follow=False)
    iomem_text, iomem_reason = _read_text(files, IOMEM_FILE)
    kernel_image = _naming_iomem(kernel_image_from_iomem(
        iomem_text,
        iomem_reason,
        block_size,
        block_size_reason,
        {node.id: node.memory_blocks for node in numa_nodes},
    ), iomem_path)
    return NodeFacts(
        root=files.root,
        numa_nodes=numa_nodes,
        online=online,
        possible=possible,
        block_size_bytes=block_size,
        machine_mem_total_bytes=_read_machine_mem_total(files),
        kernel_image=kernel_image,
        problems=tuple(problems + online_problems + possible_problems),
        read_errors=tuple(errors),
    )
