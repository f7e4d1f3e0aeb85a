# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's own pick of the reserved CPUs (``_cpu.reserved``, cpu_assignment.go) under the policy options, on small
machines worked by hand; tests/kubelet_judge/test_kubelet_judge_cpu_pick.py has kubelet's code judge many more."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu import reserved
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.reserved import KubeletLoops, take_by_topology
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import CpuInfo
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.support import cputree

S = frozenset
# 2 sockets x 4 cores x 2 threads, a NUMA node per socket: socket 0 holds 0-3 and their siblings 8-11.
SMT = cputree.machine(sockets=2, cores_per_socket=4, threads_per_core=2)
# 2 sockets x 4 cores, no SMT, two NUMA nodes per socket: {0,1} {2,3} on socket 0, {4,5} {6,7} on socket 1.
SPLIT = cputree.machine(sockets=2, cores_per_socket=4, threads_per_core=1, numa_per_socket=2)


def _info(machine, online=None):
    online = sorted(machine) if online is None else online
    return {cpu: CpuInfo(min(other for other in online if machine[other][:2] == machine[cpu][:2]), machine[cpu][1], machine[cpu][2])
            for cpu in online}


def _take(machine, needed, online=None, **options):
    cpus = _info(machine, online)
    return take_by_topology(cpus, len({info.socket for info in cpus.values()}), len({info.core for info in cpus.values()}), needed, **options)


def test_spread_takes_threads_of_different_cores_socket_by_socket():
    assert _take(SMT, 2) == S([0, 8])  # packed: a whole core
    assert _take(SMT, 2, spread=True) == S([0, 1])  # distribute-cpus-across-cores: no whole cores, socket 0's CPUs by id
    assert _take(SMT, 3, spread=True) == S([0, 1, 2])
    # Whole NUMA nodes (sockets) are still taken first: 9 CPUs = socket 0 + the first CPU of socket 1.
    assert _take(SMT, 9, spread=True) == S([0, 1, 2, 3, 8, 9, 10, 11, 4])


def test_spread_starts_in_the_socket_with_fewest_free_cpus():
    online = [cpu for cpu in sorted(SMT) if cpu not in (4, 12)]  # socket 1 has 6 CPUs online
    assert _take(SMT, 2, online, spread=True) == S([5, 6])


def test_numa_distributed_fits_one_node_when_it_can():
    assert _take(SMT, 2, numa_distributed=True) == S([0, 8])


def test_numa_distributed_splits_evenly_over_two_nodes():
    # 10 CPUs: packed fills NUMA node 0 and takes a core of node 1; distributed takes 5 + 5.
    assert _take(SMT, 10) == S([0, 1, 2, 3, 8, 9, 10, 11, 4, 12])
    assert _take(SMT, 10, numa_distributed=True) == S([0, 8, 1, 9, 2, 4, 12, 5, 13, 6])


def test_numa_distributed_in_whole_cores_with_full_pcpus_only():
    # Groups of 2 (CPUsPerCore): 4 + 4, the remainder core from the first node of the best remainder subset (node 0).
    assert _take(SMT, 10, numa_distributed=True, full_pcpus_only=True) == S([0, 8, 1, 9, 2, 10, 4, 12, 5, 13])
    # An odd request cannot go in groups of 2: takeByTopologyNUMAPacked instead.
    assert _take(SMT, 9, numa_distributed=True, full_pcpus_only=True) == _take(SMT, 9)


def test_align_by_socket_prefers_nodes_of_one_socket_from_v1_37():
    online = [cpu for cpu in sorted(SPLIT) if cpu != 3]  # node 1 holds only CPU 2
    # The best balance (0.829) is first found over nodes 0 and 2, across the sockets; v1.37's align-by-socket takes
    # nodes 2 and 3 (socket 1) instead; before v1.37 kubelet does not pass the option down.
    assert _take(SPLIT, 4, online, numa_distributed=True) == S([0, 1, 4, 5])
    assert _take(SPLIT, 4, online, numa_distributed=True, align_by_socket=True, minor=36) == S([0, 1, 4, 5])
    assert _take(SPLIT, 4, online, numa_distributed=True, align_by_socket=True, minor=37) == S([4, 5, 6, 7])
    # Packed: socket 0 counts as free (3 CPUs online = CPUsPerSocket, 7 // 2), so it is taken whole, then CPU 4.
    assert _take(SPLIT, 4, online) == S([0, 1, 2, 4])


def test_a_failed_pick_is_empty():
    assert _take(SMT, 17, numa_distributed=True) == S()
    assert _take(SMT, 17, spread=True) == S()


def test_standard_deviation_rounds_as_go():
    assert reserved._standard_deviation([6, 8]) == 1.0
    assert reserved._standard_deviation([1, 0, 0, 2]) == 0.829
    assert reserved._go_round(2.5) == 3.0 and reserved._go_round(-2.5) == -3.0 and reserved._go_round(0.4999) == 0.0


def test_combinations_share_go_slices():
    # iterateCombinations' helper appends into one backing array once its capacity (4) has room: a 4-subset kept aside
    # ends with the last id its prefix was combined with.
    walk = reserved._combinations([0, 1, 2, 3, 4], 4)
    first = next(walk)
    assert first.items() == [0, 1, 2, 3]
    rest = [combo.items() for combo in walk]
    assert rest == [[0, 1, 2, 4], [0, 1, 3, 4], [0, 2, 3, 4], [1, 2, 3, 4]]
    assert first.items() == [0, 1, 2, 4]
    # Up to 3 ids every append copies: nothing shared.
    walk = reserved._combinations([0, 1, 2, 3], 3)
    first = next(walk)
    list(walk)
    assert first.items() == [0, 1, 2]


def test_a_remainder_that_never_fits_is_kubelets_endless_loop():
    # Two nodes with 3 CPUs left each cannot hand out 6 CPUs in groups of 2: kubelet's loop never ends.
    with pytest.raises(KubeletLoops):
        reserved._remainder_balance({0: 3, 1: 3}, [0, 1], 6, 2)


@pytest.mark.parametrize("options, gates, reserved_cpus", [
    ({"distribute-cpus-across-cores": "true"}, {"CPUManagerPolicyAlphaOptions": True}, "0-1"),
    ({"distribute-cpus-across-numa": "true"}, {}, "0,8"),
])
def test_the_probe_judges_kubelets_pick_under_the_options(tmp_path, options, gates, reserved_cpus):
    config = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "2"}, "cpuManagerPolicyOptions": options, "featureGates": gates}
    root = cputree.build_cpu_node(str(tmp_path), SMT, sorted(SMT), config, None)
    start = probe(HostFiles(root), kubelet_release="1.37.2").cpu.start
    assert start.stage == "started" and start.reserved == S(cputree.parse_cpu_list(reserved_cpus)), (start.stage, start.error)


# L3 caches of SMT: two a socket (cores 0-1, cores 2-3), or over every other core (cores 0 and 2, cores 1 and 3).
L3_HALVES = {cpu: 2 * socket + core // 2 for cpu, (core, socket, _node) in SMT.items()}
L3_EVERY_OTHER = {cpu: 2 * socket + core % 2 for cpu, (core, socket, _node) in SMT.items()}


def _take_uncore(l3, needed, online=None):
    cpus = {cpu: CpuInfo(info.core, info.socket, info.numa_node, l3[cpu]) for cpu, info in _info(SMT, online).items()}
    return take_by_topology(cpus, 2, len({info.core for info in cpus.values()}), needed, align_by_uncore_cache=True)


@pytest.mark.parametrize("l3, needed, online, picked, packed", [
    # Part of the first cache: its first 2 cores, an odd need drops the highest CPU (9), as packed would pick.
    (L3_HALVES, 3, None, [0, 1, 8], [0, 1, 8]),
    # A whole cache (CPUsPerUncore = 16 / 4 = 4): cores 0 and 2 with their siblings, where packed takes cores 0 and 1.
    (L3_EVERY_OTHER, 4, None, [0, 2, 8, 10], [0, 1, 8, 9]),
    (L3_EVERY_OTHER, 3, None, [0, 2, 8], [0, 1, 8]),
    # A whole cache, then part of the next: 1 CPU (odd: core 1's sibling 9 dropped), or core 1 whole.
    (L3_EVERY_OTHER, 5, None, [0, 1, 2, 8, 10], [0, 1, 2, 8, 9]),
    (L3_EVERY_OTHER, 6, None, [0, 1, 2, 8, 9, 10], [0, 1, 2, 8, 9, 10]),
    # CPU 8 offline: CPUsPerCore = 15 // 8 = 1, so 2 cores' worth is 2 cores, whose free CPUs (0,1,9 or 2,3,10,11) are
    # never exactly 2: no cache is taken, the pick falls through to whole cores (core 0, the one with CPUsPerCore free
    # CPUs) and single CPUs, as packed.
    (L3_HALVES, 2, [cpu for cpu in sorted(SMT) if cpu != 8], [0, 1], [0, 1]),
    # More than a socket (NUMA node): the whole node first, then the uncore path on what is left.
    (L3_EVERY_OTHER, 12, None, [0, 1, 2, 3, 4, 6, 8, 9, 10, 11, 12, 14], [0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13]),
])
def test_prefer_align_by_uncore_cache_takes_whole_caches_then_part_of_one(l3, needed, online, picked, packed):
    assert _take_uncore(l3, needed, online) == S(picked)
    assert _take(SMT, needed, online) == S(packed)


def test_without_an_uncore_cache_kubelet_aligns_by_socket():
    # No cache read (uncore_cache None): getUncoreCacheID's fallback, the socket: CPUsPerUncore = 8, a socket.
    assert CpuInfo(0, 1, 1).uncore == 1 and CpuInfo(0, 1, 1, 7).uncore == 7
    cpus = _info(SMT)
    assert take_by_topology(cpus, 2, 8, 3, align_by_uncore_cache=True) == S([0, 1, 8])


@pytest.mark.parametrize("l3, options, reserved_cpus", [
    (None, {}, "0,8"),
    (L3_EVERY_OTHER, {}, "0,2,8,10"),
    (L3_EVERY_OTHER, {"full-pcpus-only": "true"}, "0,2,8,10"),
])
def test_the_probe_judges_kubelets_pick_by_uncore_cache(tmp_path, l3, options, reserved_cpus):
    wanted = len(cputree.parse_cpu_list(reserved_cpus))
    config = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": str(wanted)},
              "cpuManagerPolicyOptions": dict(options, **{"prefer-align-cpus-by-uncorecache": "true"})}
    root = cputree.build_cpu_node(str(tmp_path), SMT, sorted(SMT), config, None, l3)
    result = probe(HostFiles(root), kubelet_release="1.37.2")
    assert result.cpu.start.stage == "started" and result.cpu.start.reserved == S(cputree.parse_cpu_list(reserved_cpus)), result.cpu.start.error
    assert result.cpu.verdict != "cpu_manager_unknown"
