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

The uncore (L3) cache of each core is cAdvisor's ``addCacheInfo`` (sysinfo.go; the same in cadvisor v0.52.1, v0.53.0,
v0.56.2 and lib v0.60.5, which kubelet v1.34-v1.37 use): per NUMA node, core by core in its order (``cpu*[0-9]``
globbed in the node directory: by name, ``cpu10`` before ``cpu2``), the caches of the core's first thread
(``cpu<N>/cache/index*`` by name, each one's ``id``, ``size``, ``level``, ``type`` and ``shared_cpu_map`` as
``GetCacheInfo`` parses them). A cache above level 2 shared by fewer CPUs than the node holds (its cores times this
core's threads) is an uncore cache of the core; the first one names it. The first core whose caches cannot be read
(no ``cache`` directory, a value ``fmt.Sscanf`` or ``strconv.ParseUint`` refuses) ends the node's reading: the cores
before it keep theirs. Kubelet's ``topology.Discover`` (``getUncoreCacheID``) gives a core without an uncore cache
its socket id instead.
"""

from __future__ import annotations

import errno
import posixpath
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import bounded_int
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import FileTooLargeError, NodeFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import CpuSetError, format_cpuset, parse_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import MAX_READ_BYTES, NODE_SYSFS_DIR, _numa_node_dirs, _read_text

__all__ = ["CPU_SYSFS_DIR", "READS", "CACHE_READS", "CpuInfo", "CpuTopology", "read_cpu_topology"]

CPU_SYSFS_DIR = "/sys/devices/system/cpu"
READS: Tuple[Dict[str, Any], ...] = (
    {"read": CPU_SYSFS_DIR + "/online", "raw": True},
    {"read": CPU_SYSFS_DIR + "/cpu[0-9]*/topology/{core_id,physical_package_id}", "raw": True},
)
# The cache files: about 25 paths per CPU, read only where kubelet picks by them (read_cpu_topology's with_uncore_caches;
# the plan reads them when a text it read names the option: _probe.read_plan).
CACHE_READS: Tuple[Dict[str, Any], ...] = (
    {"list": CPU_SYSFS_DIR + "/cpu[0-9]*/cache"},
    {"read": CPU_SYSFS_DIR + "/cpu[0-9]*/cache/index*/{id,size,level,type,shared_cpu_map}", "raw": True},
)
MAX_TOPOLOGY_ID = 2 ** 31 - 1  # strconv.Atoi on the node's int


class CpuInfo(Record, frozen=True):
    """One online CPU as kubelet's ``CPUDetails`` holds it: its core (the lowest thread of the core), socket, NUMA node,
    and the id of its core's uncore (L3) cache (``uncore_cache``; None where cAdvisor gives the core none)."""

    core: int
    socket: int
    numa_node: int
    uncore_cache: Optional[int] = None

    @property
    def uncore(self) -> int:
        """``CPUInfo.UncoreCacheID``: the uncore cache's id, else the socket's (``getUncoreCacheID``'s fallback)."""
        return self.socket if self.uncore_cache is None else self.uncore_cache


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
    """getCoresInfo for one NUMA node: ``{(core id, package): threads}``, cores and threads in cAdvisor's order (the
    node's ``cpu*[0-9]`` glob: by name)."""
    cores: Dict[Tuple[int, int], List[int]] = {}
    problems: List[str] = []
    for cpu in sorted(cpus, key=lambda cpu: "cpu%d" % cpu):
        core, core_problem = _topology_id(files, cpu, "core_id")
        package, package_problem = _topology_id(files, cpu, "physical_package_id")
        problems.extend(problem for problem in (core_problem, package_problem) if problem)
        if core is not None and package is not None:
            cores.setdefault((core, package), []).append(cpu)
    return cores, problems


# unicode.White_Space, as fmt's scanner and strings.TrimSpace know it.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
MAX_CACHE_ENTRIES = 64  # index<N> entries of one CPU's cache directory read at most (a machine has 4 or 5)


def _scan_decimal(text: str, signed: bool) -> Optional[Tuple[int, int]]:
    """``fmt.Sscanf(text, "%d", &v)`` into an ``int`` (``signed``) or ``uint64``: ``(value, index after it)``, or None
    where Sscanf fails (a newline or nothing before the number, no digit, out of range). What follows is not read."""
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\n" or (char == "\r" and text[index + 1:index + 2] == "\n"):
            return None  # SkipSpace: "unexpected newline"
        if char not in _GO_SPACE:
            break
        index += 1
    start = index
    if signed and text[index:index + 1] in ("+", "-"):
        index += 1
    digits = index
    while index < len(text) and text[index] in "0123456789":
        index += 1
    if index == digits:
        return None
    magnitude = text[digits:index].lstrip("0") or "0"  # Go reads any number of leading zeros
    if len(magnitude) > 20:
        return None
    value = -int(magnitude) if text[start:digits] == "-" else int(magnitude)
    if not (-(2 ** 63) <= value < 2 ** 63 if signed else value < 2 ** 64):
        return None
    return value, index


def _shared_cpus(text: str) -> Optional[int]:
    """sysfs ``getCPUCount``: the bits set in ``shared_cpu_map`` (comma-separated hex words, each
    ``strconv.ParseUint(strings.TrimSpace(word), 16, 64)``), None where a word does not parse."""
    count = 0
    for word in text.split(","):
        word = word.strip(_GO_SPACE)
        if not word or any(char not in "0123456789abcdefABCDEF" for char in word):
            return None
        digits = word.lstrip("0") or "0"
        if len(digits) > 16:
            return None  # over 64 bits: ParseUint's range error
        count += bin(int(digits, 16)).count("1")
    return count


class _Cache(Record, frozen=True):
    """sysfs.CacheInfo: what addCacheInfo compares (``Id``, ``Size``, ``Level``, ``Type``) and ``Cpus``."""

    id: int
    size: int
    level: int
    type: str
    cpus: int


def _cache(files: NodeFiles, index_dir: str) -> Tuple[Optional[_Cache], Optional[str]]:
    """sysfs ``GetCacheInfo`` of one ``index<N>`` directory: ``(cache, None)``, ``(None, None)`` where cAdvisor's reading
    fails, ``(None, problem)`` where this reader cannot know (a file over its read limit)."""
    texts: Dict[str, str] = {}
    for name in ("id", "size", "level", "type", "shared_cpu_map"):
        path = posixpath.join(index_dir, name)
        try:
            texts[name] = files.read_bytes(path, MAX_READ_BYTES, follow=True).decode("utf-8", errors="replace")
        except FileTooLargeError:
            return None, "cannot read %s: larger than %d bytes" % (files.host_path(path), MAX_READ_BYTES)
        except OSError as error:
            return None, _not_read(error)  # else os.ReadFile fails too
    scanned_id, scanned_level = _scan_decimal(texts["id"], True), _scan_decimal(texts["level"], True)
    size = _scan_decimal(texts["size"], False)
    if scanned_id is None or scanned_level is None or size is None or texts["size"][size[1]:size[1] + 1] != "K":  # "%dK"
        return None, None
    cpus = _shared_cpus(texts["shared_cpu_map"])
    if cpus is None:
        return None, None
    return _Cache(scanned_id[0], (size[0] * 1024) % 2 ** 64, scanned_level[0], texts["type"].strip(_GO_SPACE), cpus), None


def _not_read(error: OSError) -> Optional[str]:
    """A problem where the node reader ran out of its budget (the file was not read at all), None for the node's own
    error (missing, not a file, not readable: cAdvisor's read fails too)."""
    if error.errno in (errno.EFBIG, errno.ETIME) and str(error.strerror or "").startswith("not read"):
        return "%s: %s" % (error.filename, error.strerror)
    return None


def _caches(files: NodeFiles, cpu: int) -> Tuple[Optional[List[_Cache]], Optional[str]]:
    """sysinfo ``GetCacheInfo(sysFs, cpu)``: the caches of every ``index*`` entry of ``cpu<N>/cache`` (by name), None
    where cAdvisor gets an error (the directory missing, an entry it cannot parse), or a problem this reader cannot judge."""
    cache_dir = posixpath.join(CPU_SYSFS_DIR, "cpu%d" % cpu, "cache")
    try:
        names = [name for name in files.listdir(cache_dir) if name.startswith("index")]
    except OSError as error:
        return None, _not_read(error)
    if len(names) > MAX_CACHE_ENTRIES:
        return None, "%s: more than %d index entries, not read" % (files.host_path(cache_dir), MAX_CACHE_ENTRIES)
    caches = []
    for name in names:
        cache, problem = _cache(files, posixpath.join(cache_dir, name))
        if cache is None:
            return None, problem
        caches.append(cache)
    return caches, None


def _uncore_caches(files: NodeFiles, cores: List[List[int]]) -> Tuple[Dict[int, int], Optional[str]]:
    """addCacheInfo for one NUMA node's cores (cAdvisor's order, threads in its order): ``{index of core: id of its first
    uncore cache}``; it stops at the first core whose caches cannot be read (cAdvisor ignores that error)."""
    out: Dict[int, int] = {}
    for index, threads in enumerate(cores):
        caches, problem = _caches(files, threads[0])
        if caches is None:
            return out, problem
        per_node = len(cores) * len(threads)
        uncore = [cache for cache in caches if cache.level > 2 and cache.cpus != per_node]  # else a node-level cache
        if uncore:
            out[index] = uncore[0].id
    return out, None


def read_cpu_topology(files: NodeFiles, with_uncore_caches: bool = False) -> CpuTopology:
    """The online CPUs with their core, socket and NUMA node, as cAdvisor gives them to kubelet; with
    ``with_uncore_caches`` (kubelet picks its reserved CPUs by them), each core's uncore cache too, and a cache this reader
    cannot read is a problem of the topology. Without it no cache file is read: every core's ``uncore_cache`` is None."""
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
        uncore, cache_problem = _uncore_caches(files, list(cores.values())) if with_uncore_caches else ({}, None)
        problems.extend([cache_problem] if cache_problem else [])
        for index, ((_core, package), threads) in enumerate(cores.items()):
            cpus.update((cpu, CpuInfo(min(threads), package, numa_node, uncore.get(index))) for cpu in threads)
    if not cpus and not problems:
        problems.append("no online CPU under %s: kubelet's CPU manager could not detect the number of cpus" % files.host_path(CPU_SYSFS_DIR))
    missing = any(_read_text(files, posixpath.join(node_dir, "distance"))[0] is None for node_dir in node_dirs.values())
    return CpuTopology(cpus, tuple(problems), len(node_dirs), missing)
