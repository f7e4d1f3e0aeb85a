# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build fake node trees (sysfs, procfs, kubelet files) under a directory, for tests and sandboxes.

A tree built here is what ``read_node_facts(HostFiles(root))`` and ``load_kubelet_settings(HostFiles(root))`` read.
Defaults look like a real x86 node; every file can be overridden with verbatim (hostile)
text or left out with ``OMIT``.

Usage::

    from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import (
        OMIT, build_node_tree, iomem_text,
    )

    root = build_node_tree(
        tmp_path,
        nodes={
            0: {"mem_total_kb": 131452848, "hugepages": {2048: 0, 1048576: 4}},
            1: {"mem_total_kb": 132106924, "hugepages": {2048: 0, 1048576: 4}},
        },
        kubelet_config={"memoryManagerPolicy": "Static", "reservedMemory": [...]},
    )

``nodes`` maps a NUMA node id to a spec; every key is optional:

``mem_total_kb`` (int, default 4 GiB)
    written as ``Node <id> MemTotal: <n> kB`` in a realistic per-node ``meminfo``.
``meminfo_text`` (str or ``OMIT``)
    the whole ``meminfo`` file verbatim, or no file at all.
``hugepages`` (mapping or ``OMIT``, default ``{2048: 0, 1048576: 0}``)
    page size in kB -> ``nr_hugepages``: an int, a str written verbatim, or ``OMIT`` for a
    size directory without ``nr_hugepages``; ``OMIT`` for no ``hugepages`` directory.
``memory_blocks`` (iterable of int)
    the ``memory<index>`` entries of the node directory (symlinks to
    ``../../memory/memory<index>``, as on a real node). Default: consecutive blocks,
    node after node in id order, enough to hold ``mem_total_kb`` — so physical address
    ``a`` is on the node owning block ``a // block_size_bytes``.
``cpulist`` (str or ``OMIT``, default two CPUs per node)
    ``""`` makes a memory-only node.
``node_dir`` (bool, default True)
    ``False`` writes nothing for this node (it still counts for the default lists).

Everything else is a keyword of ``build_node_tree``; see its docstring.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = [
    "OMIT",
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_KERNEL_START",
    "DEFAULT_KERNEL_SECTIONS",
    "build_node_tree",
    "default_memory_blocks",
    "iomem_text",
    "node_list_text",
    "node_meminfo_text",
    "PR_140473_IOMEM",
]


class _Omit(object):
    """Marker: leave this file or directory out of the tree."""

    def __repr__(self) -> str:
        return "OMIT"


OMIT = _Omit()

DEFAULT_BLOCK_SIZE = 0x8000000  # 128 MiB, x86_64
DEFAULT_MEM_TOTAL_KB = 4 * 1024 * 1024
DEFAULT_HUGEPAGES = {2048: 0, 1048576: 0}
# Where the default iomem puts the kernel: 16 MiB, inside node 0's first block.
DEFAULT_KERNEL_START = 0x1000000
# (name, size in bytes) in address order; rodata does not count for the span (spec 7.2).
DEFAULT_KERNEL_SECTIONS = (
    ("Kernel code", 14 * 1024 * 1024),
    ("Kernel rodata", 8 * 1024 * 1024),
    ("Kernel data", 4 * 1024 * 1024),
    ("Kernel bss", 6 * 1024 * 1024),
)

# The fixture of PR #140473 quoted in spec 7.2 (span 54525952, bound 121634816).
PR_140473_IOMEM = (
    "  00100000-b7ffffff : System RAM\n"
    "    aff800000-b00dfffff : Kernel code\n"
    "    b01e00000-b0225523f : Kernel data\n"
    "    b02752000-b02bfffff : Kernel bss\n"
)

PathLike = Union[str, "os.PathLike[str]"]


def _write(root: str, relative: str, text: str) -> str:
    path = os.path.join(root, relative.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    return path


def node_list_text(ids: Iterable[int]) -> str:
    """The kernel's compact list form: ``[0, 1, 2, 5]`` -> ``"0-2,5\\n"``."""
    ordered = sorted(set(ids))
    parts: List[str] = []
    index = 0
    while index < len(ordered):
        first = last = ordered[index]
        while index + 1 < len(ordered) and ordered[index + 1] == last + 1:
            index += 1
            last = ordered[index]
        parts.append("%d" % first if first == last else "%d-%d" % (first, last))
        index += 1
    return ",".join(parts) + "\n"


def node_meminfo_text(node_id: int, mem_total_kb: int, hugepages_total: int = 0) -> str:
    """A per-node meminfo as Linux writes it (``Node <id> <Field>: <value> kB``)."""
    free = mem_total_kb // 2
    lines = [
        ("MemTotal", mem_total_kb),
        ("MemFree", free),
        ("MemUsed", mem_total_kb - free),
        ("Active", mem_total_kb // 8),
        ("Inactive", mem_total_kb // 8),
        ("FilePages", mem_total_kb // 16),
        ("Slab", mem_total_kb // 64),
    ]
    text = "".join("Node %d %-15s %8d kB\n" % (node_id, name + ":", value) for name, value in lines)
    text += "Node %d HugePages_Total: %5d\n" % (node_id, hugepages_total)
    text += "Node %d HugePages_Free:  %5d\n" % (node_id, hugepages_total)
    text += "Node %d HugePages_Surp:  %5d\n" % (node_id, 0)
    return text


def _blocks_needed(mem_total_kb: int, block_size: int) -> int:
    return max(1, -(-(mem_total_kb * 1024) // block_size))


def default_memory_blocks(
    nodes: Mapping[int, Mapping[str, Any]], block_size: int = DEFAULT_BLOCK_SIZE
) -> Dict[int, Tuple[int, ...]]:
    """Consecutive memory blocks per node, in id order, each node's enough for its MemTotal."""
    result = {}
    next_block = 0
    for node_id in sorted(nodes):
        mem_total_kb = nodes[node_id].get("mem_total_kb", DEFAULT_MEM_TOTAL_KB)
        count = _blocks_needed(mem_total_kb if isinstance(mem_total_kb, int) else DEFAULT_MEM_TOTAL_KB, block_size)
        result[node_id] = tuple(range(next_block, next_block + count))
        next_block += count
    return result


def iomem_text(
    kernel_start: int = DEFAULT_KERNEL_START,
    sections: Sequence[Tuple[str, int]] = DEFAULT_KERNEL_SECTIONS,
    ram_end: Optional[int] = None,
    zeroed: bool = False,
) -> str:
    """A realistic ``/proc/iomem`` with the kernel image at ``kernel_start``.

    The sections are laid out back to back from ``kernel_start``, nested under one
    ``System RAM`` range. ``zeroed=True`` renders every range ``00000000-00000000``, as a
    reader without CAP_SYS_ADMIN sees it. The span of the default sections is 32 MiB.
    """
    image_end = kernel_start + sum(section[1] for section in sections)
    ram_end = max(ram_end or 0, image_end + 0x100000, 0x100000 + 1)

    def line(depth: int, start: int, end: int, name: str) -> str:
        if zeroed:
            start = end = 0
        return "%s%08x-%08x : %s\n" % ("  " * depth, start, end, name)

    text = line(0, 0x0, 0xFFF, "Reserved")
    text += line(0, 0x1000, 0x9FBFF, "System RAM")
    text += line(0, 0x9FC00, 0x9FFFF, "Reserved")
    text += line(0, 0xA0000, 0xBFFFF, "PCI Bus 0000:00")
    text += line(0, 0x100000, ram_end - 1, "System RAM")
    address = kernel_start
    for name, size in sections:
        text += line(1, address, address + size - 1, name)
        address += size
    text += line(0, 0xFEC00000, 0xFEC003FF, "IOAPIC 0")
    text += line(0, 0xFEE00000, 0xFEE00FFF, "Local APIC")
    return text


def _write_node(root: str, node_id: int, spec: Mapping[str, Any], blocks: Iterable[int]) -> None:
    node_dir = "sys/devices/system/node/node%d" % node_id
    os.makedirs(os.path.join(root, node_dir), exist_ok=True)
    hugepages = spec.get("hugepages", DEFAULT_HUGEPAGES)
    mem_total_kb = spec.get("mem_total_kb", DEFAULT_MEM_TOTAL_KB)

    meminfo = spec.get("meminfo_text")
    if meminfo is None:
        huge_total = 0
        if hugepages is not OMIT and 2048 in hugepages and isinstance(hugepages[2048], int):
            huge_total = hugepages[2048]
        meminfo = node_meminfo_text(node_id, mem_total_kb, huge_total)
    if meminfo is not OMIT:
        _write(root, node_dir + "/meminfo", meminfo)

    cpulist = spec.get("cpulist", "%d-%d\n" % (2 * node_id, 2 * node_id + 1))
    if cpulist is not OMIT:
        _write(root, node_dir + "/cpulist", cpulist)

    if hugepages is not OMIT:
        os.makedirs(os.path.join(root, node_dir, "hugepages"), exist_ok=True)
        for size_kb, nr in hugepages.items():
            size_dir = "%s/hugepages/hugepages-%skB" % (node_dir, size_kb)
            os.makedirs(os.path.join(root, size_dir), exist_ok=True)
            if nr is OMIT:
                continue
            _write(root, size_dir + "/nr_hugepages", "%d\n" % nr if isinstance(nr, int) else nr)
            if isinstance(nr, int):
                _write(root, size_dir + "/free_hugepages", "%d\n" % nr)
                _write(root, size_dir + "/surplus_hugepages", "0\n")

    for block in blocks:
        target = os.path.join(root, "sys/devices/system/memory/memory%d" % block)
        os.makedirs(target, exist_ok=True)
        link = os.path.join(root, node_dir, "memory%d" % block)
        if not os.path.lexists(link):
            os.symlink("../../memory/memory%d" % block, link)


def _has_cpus(spec: Mapping[str, Any]) -> bool:
    cpulist = spec.get("cpulist")
    return cpulist is None or (isinstance(cpulist, str) and bool(cpulist.strip()))


def _kubelet_config_text(config: Union[str, Mapping[str, Any]]) -> str:
    if isinstance(config, str):
        return config
    document = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
    document.update(config)
    return json.dumps(document, indent=2) + "\n"


def build_node_tree(
    root: PathLike,
    nodes: Optional[Mapping[int, Mapping[str, Any]]] = None,
    iomem: Any = None,
    block_size_bytes: Any = DEFAULT_BLOCK_SIZE,
    online: Any = None,
    possible: Any = None,
    proc_meminfo_kb: Any = None,
    node_sysfs_dir: bool = True,
    kubelet_config: Any = OMIT,
    kubelet_config_path: str = "/var/lib/kubelet/config.yaml",
    kubeadm_flags: Any = OMIT,
    extra_args: Any = OMIT,
    extra_args_file: str = "/etc/default/kubelet",
    checkpoint: Any = OMIT,
    kubelet_root_dir: str = "/var/lib/kubelet",
    extra_files: Optional[Mapping[str, str]] = None,
) -> str:
    """Write a fake node under ``root`` and return ``root`` as a string.

    - ``nodes``: ``{id: spec}`` (see the module docstring); default one node ``{0: {}}``;
      ``{}`` for a machine with no NUMA node directory.
    - ``iomem``: ``/proc/iomem`` text; ``None`` = ``iomem_text()`` sized to the machine
      (kernel at 16 MiB, on node 0); ``OMIT`` = no file.
    - ``block_size_bytes``: int (written as hex, no ``0x``), str verbatim, or ``OMIT``.
    - ``online`` / ``possible``: str verbatim, ``None`` = the node ids, ``OMIT`` = no file.
    - ``proc_meminfo_kb``: ``/proc/meminfo`` ``MemTotal``: int, str (whole file verbatim),
      ``None`` = sum of the nodes' ``mem_total_kb``, ``OMIT`` = no file.
    - ``node_sysfs_dir``: ``False`` leaves ``sys/devices/system/node`` out entirely.
    - ``kubelet_config``: mapping (written as JSON with apiVersion/kind added) or str
      verbatim, at ``kubelet_config_path``; ``OMIT`` = no file.
    - ``kubeadm_flags``: kubelet args (str or list) written as
      ``KUBELET_KUBEADM_ARGS="..."`` in ``/var/lib/kubelet/kubeadm-flags.env``.
    - ``extra_args``: kubelet args written as ``KUBELET_EXTRA_ARGS=...`` in ``extra_args_file``.
    - ``checkpoint``: str or bytes written verbatim to ``<kubelet_root_dir>/memory_manager_state``.
    - ``extra_files``: ``{node path: text}`` written verbatim, last (may overwrite anything).
    """
    root = os.fspath(root)
    nodes = {0: {}} if nodes is None else dict(nodes)
    block_size = block_size_bytes if isinstance(block_size_bytes, int) else DEFAULT_BLOCK_SIZE
    node_ids = sorted(nodes)
    blocks = default_memory_blocks(nodes, block_size)

    if node_sysfs_dir:
        os.makedirs(os.path.join(root, "sys/devices/system/node"), exist_ok=True)
        for node_id in node_ids:
            spec = nodes[node_id]
            if spec.get("node_dir", True):
                _write_node(root, node_id, spec, spec.get("memory_blocks", blocks[node_id]))
        for name, value in (("online", online), ("possible", possible)):
            if value is not OMIT:
                _write(root, "sys/devices/system/node/" + name, node_list_text(node_ids) if value is None else value)
        with_cpus = [node_id for node_id in node_ids if _has_cpus(nodes[node_id])]
        _write(root, "sys/devices/system/node/has_cpu", node_list_text(with_cpus))

    if block_size_bytes is not OMIT:
        text = "%x\n" % block_size_bytes if isinstance(block_size_bytes, int) else block_size_bytes
        _write(root, "sys/devices/system/memory/block_size_bytes", text)

    total_kb = sum(
        nodes[node_id].get("mem_total_kb", DEFAULT_MEM_TOTAL_KB)
        for node_id in node_ids
        if isinstance(nodes[node_id].get("mem_total_kb", DEFAULT_MEM_TOTAL_KB), int)
    )
    if iomem is None:
        iomem = iomem_text(ram_end=total_kb * 1024)
    if iomem is not OMIT:
        _write(root, "proc/iomem", iomem)
    if proc_meminfo_kb is None:
        proc_meminfo_kb = total_kb
    if proc_meminfo_kb is not OMIT:
        text = proc_meminfo_kb if isinstance(proc_meminfo_kb, str) else (
            "MemTotal:       %8d kB\nMemFree:        %8d kB\nMemAvailable:   %8d kB\n"
            % (proc_meminfo_kb, proc_meminfo_kb // 2, proc_meminfo_kb // 2)
        )
        _write(root, "proc/meminfo", text)

    if kubelet_config is not OMIT:
        _write(root, kubelet_config_path, _kubelet_config_text(kubelet_config))
    if kubeadm_flags is not OMIT:
        args = kubeadm_flags if isinstance(kubeadm_flags, str) else " ".join(kubeadm_flags)
        _write(root, "/var/lib/kubelet/kubeadm-flags.env", 'KUBELET_KUBEADM_ARGS="%s"\n' % args)
    if extra_args is not OMIT:
        args = extra_args if isinstance(extra_args, str) else " ".join(extra_args)
        _write(root, extra_args_file, "KUBELET_EXTRA_ARGS=%s\n" % args)
    if checkpoint is not OMIT:
        path = os.path.join(root, kubelet_root_dir.lstrip("/"), "memory_manager_state")
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(checkpoint if isinstance(checkpoint, bytes) else checkpoint.encode("utf-8"))
    for relative, text in (extra_files or {}).items():
        _write(root, relative, text)
    return root
