# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node's online CPUs and each one's core, socket and NUMA node, as cAdvisor builds them for kubelet.

cAdvisor's ``GetNodesInfo`` / ``getCoresInfo`` (utils/sysinfo/sysinfo.go, cadvisor v0.52 and lib v0.60): per
``node<N>`` directory, its CPUs that are online (``/sys/devices/system/cpu/online``; an offline CPU is skipped),
each one's ``topology/core_id`` and ``topology/physical_package_id`` (a CPU without them is skipped); threads with
the same core id and package on one node form a core. Kubelet's ``topology.Discover`` numbers a core by its lowest
thread. A node's CPUs are read from its ``cpulist`` (the kernel's list of the node's online CPUs), which the memory
reader reads already. Everything goes through the node's :class:`NodeFiles`; :data:`READS` declares it.
"""

from __future__ import annotations

import posixpath
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import bounded_int
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import NodeFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import CpuSetError, format_cpuset, parse_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import NODE_SYSFS_DIR, _numa_node_dirs, _read_text

__all__ = ["CPU_SYSFS_DIR", "READS", "CpuInfo", "CpuTopology", "read_cpu_topology"]

CPU_SYSFS_DIR = "/sys/devices/system/cpu"
READS: Tuple[Dict[str, Any], ...] = (
    {"read": CPU_SYSFS_DIR + "/online", "raw": True},
    {"read": CPU_SYSFS_DIR + "/cpu[0-9]*/topology/{core_id,physical_package_id}", "raw": True},
)
MAX_TOPOLOGY_ID = 2 ** 31 - 1  # strconv.Atoi on the node's int


class CpuInfo(Record, frozen=True):
    """One online CPU as kubelet's ``CPUDetails`` holds it: its core (the lowest thread of the core), socket, NUMA node."""

    core: int
    socket: int
    numa_node: int


class CpuTopology(Record, frozen=True):
    """The online CPUs kubelet's CPU manager sees (``cpus``: id -> :class:`CpuInfo`), or why they cannot be known."""

    cpus: Dict[int, CpuInfo]
    problems: Tuple[str, ...] = ()
    # cAdvisor's MachineInfo.Topology: one entry per NUMA node directory, CPUs or not (0: not read, count the CPUs' nodes).
    numa_node_dirs: int = 0
    # A NUMA node directory without a readable ``distance`` file: cAdvisor's getDistances leaves that node's Distances nil.
    distances_missing: bool = False

    @property
    def online(self) -> frozenset:
        return frozenset(self.cpus)

    @property
    def known(self) -> bool:
        return not self.problems and bool(self.cpus)

    def describe(self) -> str:
        return format_cpuset(self.cpus)

    def count(self, attribute: str) -> int:
        """How many sockets, NUMA nodes or cores (``socket``, ``numa_node``, ``core``): kubelet's ``CPUTopology`` counts."""
        return len({getattr(info, attribute) for info in self.cpus.values()})

    def machine_numa_nodes(self) -> int:
        """The NUMA nodes the topology manager counts (``NewNUMAInfo``: every node of cAdvisor's topology)."""
        return self.numa_node_dirs or self.count("numa_node")


def _read_cpu_list(files: NodeFiles, node_path: str) -> Tuple[Optional[frozenset], Optional[str]]:
    text, problem = _read_text(files, node_path)
    if text is None:
        return None, problem
    try:
        return parse_cpuset(text.strip()), None
    except CpuSetError as error:
        return None, "%s: %s" % (files.host_path(node_path), error)


def _topology_id(files: NodeFiles, cpu: int, name: str) -> Tuple[Optional[int], Optional[str]]:
    """``topology/core_id`` or ``physical_package_id`` of ``cpu``: ``(None, None)`` when the file is not there (cAdvisor
    skips the CPU), ``(None, problem)`` when it holds no number (cAdvisor's ``strconv.Atoi`` fails: kubelet does not
    start)."""
    path = posixpath.join(CPU_SYSFS_DIR, "cpu%d" % cpu, "topology", name)
    if not files.isfile(path):
        return None, None
    text, problem = _read_text(files, path)
    if text is None:
        return None, problem
    value = bounded_int(text.strip())
    if value is None or value > MAX_TOPOLOGY_ID:
        return None, "%s: %r is not a number" % (files.host_path(path), text.strip()[:40])
    return value, None


def _cores(files: NodeFiles, numa_node: int, cpus: List[int]) -> Tuple[Dict[Tuple[int, int], List[int]], List[str]]:
    """getCoresInfo for one NUMA node: ``{(core id, package): threads}``."""
    cores: Dict[Tuple[int, int], List[int]] = {}
    problems: List[str] = []
    for cpu in cpus:
        core, core_problem = _topology_id(files, cpu, "core_id")
        package, package_problem = _topology_id(files, cpu, "physical_package_id")
        problems.extend(problem for problem in (core_problem, package_problem) if problem)
        if core is not None and package is not None:
            cores.setdefault((core, package), []).append(cpu)
    return cores, problems


def read_cpu_topology(files: NodeFiles) -> CpuTopology:
    """The online CPUs with their core, socket and NUMA node, as cAdvisor gives them to kubelet."""
    online, problem = _read_cpu_list(files, CPU_SYSFS_DIR + "/online")
    if online is None:
        return CpuTopology({}, (problem or "%s does not exist" % files.host_path(CPU_SYSFS_DIR + "/online"),))
    node_dirs, problems = _numa_node_dirs(files, NODE_SYSFS_DIR)
    cpus: Dict[int, CpuInfo] = {}
    for numa_node, node_dir in sorted(node_dirs.items()):
        listed, list_problem = _read_cpu_list(files, posixpath.join(node_dir, "cpulist"))
        if listed is None:
            problems.append(list_problem or "cannot read %s" % files.host_path(posixpath.join(node_dir, "cpulist")))
            continue
        cores, core_problems = _cores(files, numa_node, sorted(listed & online))
        problems.extend(core_problems)
        for (_core, package), threads in cores.items():
            cpus.update((cpu, CpuInfo(min(threads), package, numa_node)) for cpu in threads)
    if not cpus and not problems:
        problems.append("no online CPU under %s: kubelet's CPU manager could not detect the number of cpus" % files.host_path(CPU_SYSFS_DIR))
    missing = any(_read_text(files, posixpath.join(node_dir, "distance"))[0] is None for node_dir in node_dirs.values())
    return CpuTopology(cpus, tuple(problems), len(node_dirs), missing)
