# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPUs the static policy reserves when ``reservedSystemCPUs`` is not set: kubelet's own pick.

``NewStaticPolicy`` (pkg/kubelet/cm/cpumanager/policy_static.go) reserves ``takeByTopology(allCPUs, n)``; without
the ``distribute-cpus-across-numa`` / ``distribute-cpus-across-cores`` / ``prefer-align-cpus-by-uncorecache`` options
that is ``takeByTopologyNUMAPacked`` (cpu_assignment.go, the same at v1.34-v1.37): whole NUMA nodes and sockets when
the request covers one, then whole cores, then single threads, each level sorted by its free CPUs, fewest first, ties
by id. The pick packs into the socket or NUMA node with the fewest online CPUs, so it moves when the online set
changes. Pure, stdlib only, Python >= 3.9.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Iterable, List, Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import CpuInfo

__all__ = ["take_packed"]


class _Accumulator(object):
    """cpu_assignment.go ``cpuAccumulator`` over ``details`` (the free CPUs), packed sorting."""

    def __init__(self, cpus: Dict[int, CpuInfo], num_sockets: int, num_cores: int, needed: int) -> None:
        self.topology = cpus
        self.details = dict(cpus)
        self.needed = needed
        self.result: List[int] = []
        self.cpus_per_core = len(cpus) // num_cores if num_cores else 0
        self.cpus_per_socket = len(cpus) // num_sockets if num_sockets else 0
        numa_nodes = {info.numa_node for info in cpus.values()}
        # newCPUAccumulator: NUMA nodes first when sockets >= NUMA nodes, else sockets first.
        self.numa_first = num_sockets >= len(numa_nodes)

    # CPUDetails' selectors over the free CPUs (``details``) or the whole topology
    @staticmethod
    def _in(cpus: Dict[int, CpuInfo], attribute: str, value: int) -> List[int]:
        return [cpu for cpu, info in cpus.items() if getattr(info, attribute) == value]

    def _free_in(self, attribute: str) -> Callable[[int], List[int]]:
        return lambda value: self._in(self.details, attribute, value)

    def _sorted(self, ids: Iterable[int], attribute: str) -> List[int]:
        """cpuAccumulator.sort: by free CPUs inside, fewest first, then by id."""
        free = self._free_in(attribute)
        return sorted(set(ids), key=lambda value: (len(free(value)), value))

    def _values(self, attribute: str, within: Optional[str] = None, value: Optional[int] = None) -> List[int]:
        return [getattr(info, attribute) for info in self.details.values() if within is None or getattr(info, within) == value]

    def numa_nodes(self) -> List[int]:
        if self.numa_first:
            return self._sorted(self._values("numa_node"), "numa_node")
        return [numa for socket in self.sockets() for numa in self._sorted(self._values("numa_node", "socket", socket), "numa_node")]

    def sockets(self) -> List[int]:
        if not self.numa_first:
            return self._sorted(self._values("socket"), "socket")
        return [socket for numa in self.numa_nodes() for socket in self._sorted(self._values("socket", "numa_node", numa), "socket")]

    def cores(self) -> List[int]:
        if self.numa_first:
            return [core for socket in self.sockets() for core in self._sorted(self._values("core", "socket", socket), "core")]
        return [core for numa in self.numa_nodes() for core in self._sorted(self._values("core", "numa_node", numa), "core")]

    def take(self, cpus: Iterable[int]) -> None:
        taken = set(cpus) - set(self.result)
        self.result.extend(sorted(taken))
        for cpu in taken:
            self.details.pop(cpu, None)
        self.needed -= len(taken)

    def take_full(self, attribute: str, order: List[int], whole_size: Callable[[int], int]) -> None:
        """takeFullNUMANodes / takeFullSockets / takeFullCores: every free unit the request still covers whole."""
        for value in [value for value in order if len(self._in(self.details, attribute, value)) == whole_size(value)]:
            unit = self._in(self.topology, attribute, value)
            if self.needed >= len(unit):
                self.take(unit)

    def take_remaining(self) -> None:
        """takeRemainingCPUs with sortAvailableCPUsPacked: cores in order, each core's threads by id."""
        for core in self.cores():
            for cpu in sorted(self._in(self.details, "core", core)):
                self.take([cpu])
                if self.needed < 1:
                    return


def take_packed(cpus: Dict[int, CpuInfo], num_sockets: int, num_cores: int, needed: int) -> FrozenSet[int]:
    """``takeByTopologyNUMAPacked(topo, allCPUs, needed, packed, false)``; the empty set where it fails (kubelet then
    says ``unable to reserve the required amount of CPUs``)."""
    acc = _Accumulator(cpus, num_sockets, num_cores, needed)
    if acc.needed < 1:
        return frozenset()
    if acc.needed > len(acc.details):
        return frozenset()

    def numa_whole(numa: int) -> int:  # isNUMANodeFree: every CPU of the node free
        return len(_Accumulator._in(cpus, "numa_node", numa))

    def socket_whole(_socket: int) -> int:  # isSocketFree: CPUsPerSocket free
        return acc.cpus_per_socket

    def core_whole(_core: int) -> int:  # isCoreFree: CPUsPerCore free
        return acc.cpus_per_core

    levels = [("numa_node", acc.numa_nodes, numa_whole), ("socket", acc.sockets, socket_whole)]
    for attribute, order, whole in levels if acc.numa_first else reversed(levels):
        acc.take_full(attribute, order(), whole)
        if acc.needed < 1:
            return frozenset(acc.result)
    acc.take_full("core", acc.cores(), core_whole)
    if acc.needed >= 1:
        acc.take_remaining()
    return frozenset(acc.result) if acc.needed < 1 else frozenset()
