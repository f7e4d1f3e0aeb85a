# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each CPU's uncore (L3) cache as cAdvisor's addCacheInfo reads it and kubelet's topology.Discover names it
(``_node.cpus``): the first core's thread, cores in the node's glob order, the node-level cache, the fallback to the
socket, and what Go's ``fmt.Sscanf`` / ``strconv.ParseUint`` refuse. tests/kubelet_judge/test_kubelet_judge_cpu_pick.py
has cAdvisor itself read such trees."""

from __future__ import annotations

import errno
import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node import cpus as cpus_module
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import read_cpu_topology
from ansible_collections.nodeops.numa_drift.tests.support import cputree

# 1 socket x 4 cores x 2 threads, one NUMA node: core c holds CPUs c and c + 4.
SMT = cputree.machine(sockets=1, cores_per_socket=4, threads_per_core=2)
HALVES = {cpu: 20 + core // 2 for cpu, (core, _socket, _node) in SMT.items()}  # two L3 caches: cores 0-1 and 2-3
# 1 socket x 6 cores x 2 threads: CPUs 0-5 and their siblings 6-11. cAdvisor globs cpu0, cpu1, cpu10, cpu11, cpu2, ...:
# core 4's first thread is cpu10, core 5's cpu11.
SIX = cputree.machine(sockets=1, cores_per_socket=6, threads_per_core=2)
SIX_L3 = {cpu: 30 + core // 2 for cpu, (core, _socket, _node) in SIX.items()}


def _tree(tmp_path, machine, l3, online=None) -> str:
    return cputree.build_cpu_node(str(tmp_path), machine, online, {}, None, l3)


def _uncore(root):
    topology = read_cpu_topology(HostFiles(root), with_uncore_caches=True)
    assert not topology.problems, topology.problems
    return {cpu: info.uncore_cache for cpu, info in sorted(topology.cpus.items())}


def _write(root, cpu, index, name, text):
    path = os.path.join(root, "sys/devices/system/cpu/cpu%d/cache/index%s/%s" % (cpu, index, name))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def test_each_cpu_has_its_l3_id(tmp_path):
    assert _uncore(_tree(tmp_path, SMT, HALVES)) == HALVES


def test_no_cache_directory_is_no_uncore_cache_and_kubelet_uses_the_socket(tmp_path):
    topology = read_cpu_topology(HostFiles(_tree(tmp_path, SMT, None)), with_uncore_caches=True)
    assert not topology.problems
    assert all(info.uncore_cache is None and info.uncore == info.socket == 0 for info in topology.cpus.values())


def test_an_l3_over_the_whole_node_is_a_node_cache_not_an_uncore_cache(tmp_path):
    assert set(_uncore(_tree(tmp_path, SMT, {cpu: 9 for cpu in SMT})).values()) == {None}


def test_a_node_cache_counts_with_each_cores_threads(tmp_path):
    # CPU 7 offline: core 3 has one thread, so its node holds "4 cores x 1 thread" = 4 CPUs for it, not the L3's 7:
    # core 3's L3 is an uncore cache, the other cores' (4 x 2 = 8 CPUs... 7 share it) too; none equals its count.
    online = [cpu for cpu in sorted(SMT) if cpu != 7]
    assert _uncore(_tree(tmp_path, SMT, {cpu: 9 for cpu in SMT}, online)) == {cpu: 9 for cpu in online}
    # CPUs 4-7 offline: every core has one thread, the node 4 CPUs, the L3 shared by the 4: a node cache.
    assert set(_uncore(_tree(tmp_path / "b", SMT, {cpu: 9 for cpu in SMT}, [0, 1, 2, 3])).values()) == {None}


def test_a_core_is_read_through_its_first_thread_in_cadvisors_glob_order(tmp_path):
    root = _tree(tmp_path, SIX, SIX_L3)
    _write(root, 4, 3, "size", "32768\n")  # cpu4 is not core 4's first thread (cpu10 is): never read
    assert _uncore(root) == SIX_L3
    # No "K": Sscanf("%dK") fails on cpu10: core 4 and every core after it in the glob's order (5, then 2 and 3) have none.
    _write(root, 10, 3, "size", "32768\n")
    assert _uncore(root) == {cpu: None if SIX[cpu][0] in (4, 5, 2, 3) else SIX_L3[cpu] for cpu in SIX}


def test_a_core_without_caches_ends_its_nodes_reading(tmp_path):
    root = _tree(tmp_path, SIX, SIX_L3)
    for index in range(4):
        for name in os.listdir(os.path.join(root, "sys/devices/system/cpu/cpu1/cache/index%d" % index)):
            os.remove(os.path.join(root, "sys/devices/system/cpu/cpu1/cache/index%d" % index, name))
        os.rmdir(os.path.join(root, "sys/devices/system/cpu/cpu1/cache/index%d" % index))
    os.rmdir(os.path.join(root, "sys/devices/system/cpu/cpu1/cache"))
    assert _uncore(root) == {cpu: SIX_L3[cpu] if SIX[cpu][0] == 0 else None for cpu in SIX}


@pytest.mark.parametrize("name, text, core0, kept", [
    ("id", " 7\n", 7, True),  # Sscanf skips spaces
    ("id", "+7 and more", 7, True),  # what follows the number is not read
    ("id", "0000000000000000000000000000007\n", 7, True),
    ("id", "-3\n", -3, True),
    ("id", "1_0\n", 1, True),  # %d reads decimal digits only
    ("id", "0" * 5000 + "5\n", 5, True),
    ("id", "\n7\n", None, False),  # a newline before the number: "unexpected newline"
    ("id", "\r\n7", None, False),
    ("id", "", None, False),
    ("id", "seven\n", None, False),
    ("id", "9223372036854775808\n", None, False),  # over int64
    ("level", "2\n", None, True),  # read, but not above level 2: no uncore cache for core 0
    ("level", "x\n", None, False),
    ("size", "32768 K\n", None, False),
    ("size", "-1K\n", None, False),  # unsigned: no sign
    ("size", "18446744073709551616K\n", None, False),  # over uint64
    ("size", "18446744073709551615K\n", 20, True),  # size * 1024 wraps in Go: read all the same
    ("shared_cpu_map", "00000000,0000000f\n", 20, True),
    ("shared_cpu_map", "00000000000000000000000f\n", 20, True),
    ("shared_cpu_map", "0x0f\n", None, False),  # ParseUint base 16: no prefix
    ("shared_cpu_map", "0000000f,\n", None, False),  # an empty word
    ("shared_cpu_map", "1ffffffffffffffff\n", None, False),  # over 64 bits
    ("shared_cpu_map", "000000ff\n", None, True),  # 8 CPUs share it, the node's 4 cores x 2 threads: a node cache
    ("type", "", 20, True),  # any type: trimmed, never checked
])
def test_go_parsing_of_the_cache_files(tmp_path, name, text, core0, kept):
    """Core 0 (cpu0, the first in cAdvisor's order) with one L3 file rewritten; the other cores keep their L3 when its
    reading did not fail."""
    root = _tree(tmp_path, SMT, HALVES)
    _write(root, 0, 3, name, text)
    wanted = {cpu: core0 if SMT[cpu][0] == 0 else HALVES[cpu] if kept else None for cpu in SMT}
    assert _uncore(root) == wanted


def test_an_index_entry_that_is_not_a_cache_fails_the_core(tmp_path):
    root = _tree(tmp_path, SMT, HALVES)
    with open(os.path.join(root, "sys/devices/system/cpu/cpu0/cache/index9"), "w", encoding="utf-8") as handle:
        handle.write("not a directory\n")
    assert set(_uncore(root).values()) == {None}
    os.remove(os.path.join(root, "sys/devices/system/cpu/cpu0/cache/index9"))
    with open(os.path.join(root, "sys/devices/system/cpu/cpu0/cache/uevent"), "w", encoding="utf-8") as handle:
        handle.write("")  # not index*: not read
    assert _uncore(root) == HALVES


def test_a_cache_file_too_large_to_read_is_a_problem(tmp_path, monkeypatch):
    root = _tree(tmp_path, SMT, HALVES)
    monkeypatch.setattr(cpus_module, "MAX_READ_BYTES", 4)
    _write(root, 0, 3, "shared_cpu_map", "00000000,000000ff\n")
    topology = read_cpu_topology(HostFiles(root), with_uncore_caches=True)
    assert topology.problems and "larger than 4 bytes" in topology.problems[0] and not topology.known


def test_too_many_index_entries_are_a_problem(tmp_path, monkeypatch):
    root = _tree(tmp_path, SMT, HALVES)
    monkeypatch.setattr(cpus_module, "MAX_CACHE_ENTRIES", 3)
    topology = read_cpu_topology(HostFiles(root), with_uncore_caches=True)
    assert topology.problems and "more than 3 index entries" in topology.problems[0]


def test_without_the_option_no_cache_file_is_read_and_a_broken_one_is_no_problem(tmp_path):
    root = _tree(tmp_path, SMT, HALVES)
    _write(root, 0, 3, "level", "three\n")  # cAdvisor could not parse it: the node's reading would end at core 0
    files = _Counting(root)
    topology = read_cpu_topology(files)
    assert not topology.problems and set(info.uncore_cache for info in topology.cpus.values()) == {None}
    assert not [path for path in files.asked if "/cache" in path]
    assert read_cpu_topology(_Counting(root), with_uncore_caches=True).cpus[0].uncore_cache is None


class _Counting(HostFiles):
    """HostFiles that keeps every node path the engine asked about."""

    def __init__(self, root):
        super().__init__(root)
        self.asked = []

    def stat(self, key):
        self.asked.append(key)
        return super().stat(key)

    def names(self, key):
        self.asked.append(key)
        return super().names(key)

    def content(self, key, text):
        self.asked.append(key)
        return super().content(key, text)


class _Spent(HostFiles):
    """The node reader's answer once its paths are spent, for every cache file."""

    def content(self, key, text):
        if "/cache/" in key:
            return {"errno": errno.EFBIG, "error": "not read: the node reader's 20000 paths were spent"}
        return super().content(key, text)


def test_a_cache_file_the_node_reader_did_not_read_is_a_problem_not_a_missing_cache(tmp_path):
    topology = read_cpu_topology(_Spent(_tree(tmp_path, SMT, HALVES)), with_uncore_caches=True)
    assert topology.problems and "paths were spent" in topology.problems[0] and not topology.known
