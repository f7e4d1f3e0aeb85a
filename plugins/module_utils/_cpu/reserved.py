# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPUs the static policy reserves when ``reservedSystemCPUs`` is not set: kubelet's own pick.

``NewStaticPolicy`` (pkg/kubelet/cm/cpumanager/policy_static.go) reserves ``takeByTopology(allCPUs, n)`` and ignores
its error (an empty set, then ``unable to reserve the required amount of CPUs``). ``staticPolicy.takeByTopology``:
``distribute-cpus-across-cores`` sorts the accumulator's CPUs spread (CPUSortingStrategySpread: no whole cores, CPUs
socket by socket), ``distribute-cpus-across-numa`` runs ``takeByTopologyNUMADistributed`` (CPU groups of one CPU, of
``CPUsPerCore`` with ``full-pcpus-only``; from v1.37 ``align-by-socket`` prefers NUMA nodes of one socket), otherwise
``takeByTopologyNUMAPacked``: whole NUMA nodes and sockets when the request covers one, then whole cores, then single
threads, each level sorted by its free CPUs, fewest first, ties by id (cpu_assignment.go, the same at v1.34-v1.37 but
for ``align-by-socket``). ``prefer-align-cpus-by-uncorecache`` (only on the packed path: kubelet refuses it beside
either distribute option, and takeByTopologyNUMADistributed passes false) adds ``takeUncoreCache`` between the whole
NUMA nodes / sockets and the whole cores: over the uncore caches sorted NUMA node by NUMA node (fewest free CPUs first,
then by id), whole free caches while the need covers ``CPUsPerUncore``, else the first free cores of one cache (by
core id) when exactly the need fits them (an odd need on SMT drops the last CPU). The same code at v1.34-v1.37.

A port of kubelet's code, quirks included: a unit that appears twice in a sort (a NUMA node over two sockets) is
taken twice and counted twice, and ``iterateCombinations`` hands out Go slices that share their backing array (a
remembered combination of 4 or more NUMA nodes changes as the walk goes on). Pure, stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import math
from typing import Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import CpuInfo

__all__ = ["KubeletLoops", "take_by_topology", "take_packed"]


class KubeletLoops(Exception):
    """takeByTopologyNUMADistributed would never return on this topology (its remainder loops make no progress)."""


class _Topology(object):
    """topology.CPUTopology: every online CPU, the counts kubelet divides by (``CPUsPerCore``, ``CPUsPerSocket``)."""

    def __init__(self, cpus: Mapping[int, CpuInfo], num_sockets: int, num_cores: int) -> None:
        self.cpus = dict(cpus)
        self.num_sockets = num_sockets
        self.num_cores = num_cores
        self.num_numa = len({info.numa_node for info in cpus.values()})
        self.cpus_per_core = len(cpus) // num_cores if num_cores else 0
        self.cpus_per_socket = len(cpus) // num_sockets if num_sockets else 0
        self.num_uncore = len({info.uncore for info in cpus.values()})
        self.cpus_per_uncore = len(cpus) // self.num_uncore if self.num_uncore else 0  # CPUsPerUncore

    def cpus_in(self, attribute: str, *values: int) -> Set[int]:
        """CPUDetails.CPUsInNUMANodes / CPUsInSockets / CPUsInCores over the whole topology."""
        return _cpus_in(self.cpus, attribute, values)


def _cpus_in(cpus: Mapping[int, CpuInfo], attribute: str, values: Sequence[int]) -> Set[int]:
    return {cpu for cpu, info in cpus.items() if getattr(info, attribute) in values}


class _Accumulator(object):
    """cpu_assignment.go ``cpuAccumulator`` (``newCPUAccumulator``): ``details`` holds the free CPUs."""

    def __init__(self, topo: _Topology, available: Set[int], needed: int, spread: bool) -> None:
        self.topo = topo
        self.details = {cpu: info for cpu, info in topo.cpus.items() if cpu in available}
        self.needed = needed
        self.result: Set[int] = set()
        self.spread = spread
        # NUMA nodes first when sockets >= NUMA nodes (numaFirst), else sockets first (socketsFirst).
        self.numa_first = topo.num_sockets >= topo.num_numa

    def cpus_in(self, attribute: str, *values: int) -> Set[int]:
        return _cpus_in(self.details, attribute, values)

    def _values(self, attribute: str, within: Optional[str] = None, value: Optional[int] = None) -> Set[int]:
        """CPUDetails.NUMANodes / SocketsInNUMANodes / CoresInSockets ... over the free CPUs."""
        return {getattr(info, attribute) for info in self.details.values() if within is None or getattr(info, within) == value}

    def _sort(self, ids: Set[int], attribute: str) -> List[int]:
        """cpuAccumulator.sort: by free CPUs inside, fewest first, then by id."""
        return sorted(ids, key=lambda value: (len(self.cpus_in(attribute, value)), value))

    def sort_numa_nodes(self) -> List[int]:
        """numaFirst / socketsFirst ``sortAvailableNUMANodes`` (sockets first: per socket, a node may come twice)."""
        if self.numa_first:
            return self._sort(self._values("numa_node"), "numa_node")
        return [numa for socket in self.sort_sockets() for numa in self._sort(self._values("numa_node", "socket", socket), "numa_node")]

    def sort_sockets(self) -> List[int]:
        """numaFirst / socketsFirst ``sortAvailableSockets``."""
        if not self.numa_first:
            return self._sort(self._values("socket"), "socket")
        return [socket for numa in self.sort_numa_nodes() for socket in self._sort(self._values("socket", "numa_node", numa), "socket")]

    def sort_cores(self) -> List[int]:
        """numaFirst / socketsFirst ``sortAvailableCores``."""
        if self.numa_first:
            return [core for socket in self.sort_sockets() for core in self._sort(self._values("core", "socket", socket), "core")]
        return [core for numa in self.sort_numa_nodes() for core in self._sort(self._values("core", "numa_node", numa), "core")]

    def sort_uncore_caches(self) -> List[int]:
        """sortAvailableUncoreCaches: NUMA node by NUMA node (sorted), each one's uncore caches by their free CPUs (a cache
        over two NUMA nodes comes twice)."""
        return [uncore for numa in self.sort_numa_nodes() for uncore in self._sort(self._values("uncore", "numa_node", numa), "uncore")]

    def sort_cpus(self) -> List[int]:
        """availableCPUSorter: ``sortAvailableCPUsPacked`` (core by core) or ``sortAvailableCPUsSpread`` (socket by socket),
        each unit's CPUs by id."""
        if self.spread:
            return [cpu for socket in self.sort_sockets() for cpu in sorted(self.cpus_in("socket", socket))]
        return [cpu for core in self.sort_cores() for cpu in sorted(self.cpus_in("core", core))]

    def is_free(self, attribute: str, value: int) -> bool:
        """isNUMANodeFree / isUncoreCacheFree (every CPU of the unit), isSocketFree (CPUsPerSocket), isCoreFree (CPUsPerCore)."""
        free = len(self.cpus_in(attribute, value))
        if attribute in ("numa_node", "uncore"):
            return free == len(self.topo.cpus_in(attribute, value))
        return free == (self.topo.cpus_per_socket if attribute == "socket" else self.topo.cpus_per_core)

    def take(self, cpus: Set[int]) -> None:
        """cpuAccumulator.take: the result grows by the set, the need shrinks by its size (even if taken before)."""
        self.result |= cpus
        for cpu in self.result:
            self.details.pop(cpu, None)
        self.needed -= len(cpus)

    def take_full(self, attribute: str) -> None:
        """takeFullNUMANodes / takeFullSockets / takeFullUncore / takeFullCores: each free unit (sorted once) the need still
        covers."""
        order = {"numa_node": self.sort_numa_nodes, "socket": self.sort_sockets, "uncore": self.sort_uncore_caches, "core": self.sort_cores}[attribute]()
        for value in [value for value in order if self.is_free(attribute, value)]:
            unit = self.topo.cpus_in(attribute, value)
            if self.needed >= len(unit):
                self.take(unit)

    def take_partial_uncore(self, uncore: int) -> None:
        """takePartialUncore: the cache's first free cores (by core id) the need asks for, taken only when their free
        CPUs are exactly the need (an odd need on SMT drops the highest CPU first)."""
        per_core = self.topo.cpus_per_core
        cores_needed = (self.needed + per_core - 1) // per_core
        cores = sorted({info.core for info in self.details.values() if info.uncore == uncore})[:cores_needed]  # CoresNeededInUncoreCache
        free = sorted(self.cpus_in("core", *cores))
        if self.needed % 2 != 0 and per_core > 1 and len(free) > self.needed:
            free = free[:-1]
        if self.needed == len(free):
            self.take(set(free))

    def take_uncore_cache(self) -> None:
        """takeUncoreCache: for each uncore cache (sorted once), whole free caches while the need covers CPUsPerUncore,
        then this cache in part."""
        for uncore in self.sort_uncore_caches():
            if self.needed >= self.topo.cpus_per_uncore:
                self.take_full("uncore")
            if self.satisfied():
                return
            self.take_partial_uncore(uncore)
            if self.satisfied():
                return

    def take_remaining(self) -> None:
        """takeRemainingCPUs: the sorted free CPUs (sorted once), one at a time."""
        for cpu in self.sort_cpus():
            self.take({cpu})
            if self.satisfied():
                return

    def satisfied(self) -> bool:
        return self.needed < 1

    def failed(self) -> bool:
        return self.needed > len(self.details)

    def numa_range(self, group: int) -> Tuple[int, int]:
        """rangeNUMANodesNeededToSatisfy: the fewest and most NUMA nodes the request can take, in groups of ``group``."""
        groups = (len(self.topo.cpus) - 1) // group + 1
        groups_per_numa = (groups - 1) // self.topo.num_numa + 1
        groups_needed = (self.needed - 1) // group + 1
        return (groups_needed - 1) // groups_per_numa + 1, min(groups_needed, len(self._values("numa_node")))


def _packed(topo: _Topology, available: Set[int], needed: int, spread: bool, uncore: bool = False) -> Optional[Set[int]]:
    """takeByTopologyNUMAPacked(..., preferAlignByUncoreCache=uncore); None where it returns an error."""
    acc = _Accumulator(topo, available, needed, spread)
    if acc.satisfied():
        return acc.result
    if acc.failed():
        return None
    levels = ["numa_node", "socket"] if acc.numa_first else ["socket", "numa_node"]  # takeFullFirstLevel, ...SecondLevel
    for attribute in levels:
        acc.take_full(attribute)
        if acc.satisfied():
            return acc.result
    if uncore:
        acc.take_uncore_cache()
        if acc.satisfied():
            return acc.result
    if not spread:  # CPUSortingStrategySpread skips whole cores
        acc.take_full("core")
        if acc.satisfied():
            return acc.result
    acc.take_remaining()
    return acc.result if acc.satisfied() else None


# ----------------------------------------------------------------- takeByTopologyNUMADistributed


class _GoSlice(object):
    """A Go ``[]int`` (backing array, length, capacity): ``append`` writes into a shared array while it has room."""

    # runtime growslice for 8-byte elements: double below 256, then round up to a malloc size class (8..256 bytes).
    _CLASSES = (1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32)

    def __init__(self, backing: List[int], length: int) -> None:
        self.backing = backing
        self.length = length

    def append(self, value: int) -> "_GoSlice":
        if self.length < len(self.backing):
            self.backing[self.length] = value
            return _GoSlice(self.backing, self.length + 1)
        wanted = max(self.length + 1, 2 * len(self.backing))
        capacity = next((size for size in self._CLASSES if size >= wanted), wanted)
        backing = self.backing[:self.length] + [value] + [0] * (capacity - self.length - 1)
        return _GoSlice(backing, self.length + 1)

    def items(self) -> List[int]:
        return self.backing[:self.length]


def _combinations(ids: Sequence[int], k: int) -> Iterator[_GoSlice]:
    """cpuAccumulator.iterateCombinations: every k-subset in index order, as the Go slices its helper appends."""
    def helper(k: int, start: int, accum: _GoSlice) -> Iterator[_GoSlice]:
        if k == 0:
            yield accum
            return
        for index in range(start, len(ids) - k + 1):
            yield from helper(k - 1, index + 1, accum.append(ids[index]))
    if k >= 1:
        yield from helper(k, 0, _GoSlice([], 0))


def _go_round(value: float) -> float:
    """Go's math.Round: half away from zero."""
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += math.copysign(1, value)
    return float(whole)


def _standard_deviation(values: Sequence[int]) -> float:
    """cpu_assignment.go ``standardDeviation`` (mean and result rounded to 3 decimals)."""
    mean = _go_round(sum(float(value) for value in values) / len(values) * 1000) / 1000
    total = 0.0
    for value in values:
        total += (float(value) - mean) * (float(value) - mean)
    return _go_round(math.sqrt(total / len(values)) * 1000) / 1000


class _Best(object):
    """The best combination of one k: its balance, remainder subset and whether its NUMA nodes share a socket."""

    def __init__(self) -> None:
        self.balance = float("inf")  # math.MaxFloat64: nothing compares below it but a real score
        self.remainder: Optional[_GoSlice] = None
        self.combo: Optional[_GoSlice] = None
        self.in_one_socket = False


def _remainder_balance(after: Dict[int, int], remainder_combo: List[int], remainder: int, group: int) -> Tuple[float, Optional[_GoSlice]]:
    """The best balance of handing the remainder out over a subset of ``remainder_combo`` (largest subsets first)."""
    best, best_subset = float("inf"), None
    k = len(remainder_combo)
    while remainder > 0 and k >= 1:
        for subset in _combinations(remainder_combo, k):
            local = dict(after)
            if sum(local[numa] for numa in subset.items()) < remainder:
                continue
            left = remainder
            while left > 0:
                before = left
                for numa in subset.items():
                    if left == 0:
                        break
                    if local[numa] < group:
                        continue
                    local[numa] -= group
                    left -= group
                if left == before:
                    raise KubeletLoops("the remainder of %d CPUs does not fit NUMA nodes %s in groups of %d" % (left, subset.items(), group))
            balance = _standard_deviation(list(local.values()))
            if balance < best:
                best, best_subset = balance, subset
        k -= 1
    return best, best_subset


def _score(acc: _Accumulator, numas: List[int], combo: List[int], needed: int, group: int, align_by_socket: bool) -> Optional[Tuple[float, Optional[_GoSlice]]]:
    """One combination's balance score and remainder subset (the closure over each combo), None where it cannot serve."""
    if len(acc.cpus_in("numa_node", *combo)) < needed:
        return None
    if sum(len(acc.cpus_in("numa_node", numa)) // group for numa in combo) * group < needed:
        return None
    distribution = needed // len(combo) // group * group
    if align_by_socket:  # v1.37
        for numa in combo:
            distribution = min(distribution, len(acc.cpus_in("numa_node", numa)) // group * group)
    if any(len(acc.cpus_in("numa_node", numa)) < distribution for numa in combo):
        return None
    after = {numa: len(acc.cpus_in("numa_node", numa)) for numa in numas}
    for numa in combo:
        after[numa] -= distribution
    remainder = needed - distribution * len(combo)
    remainder_combo = [numa for numa in combo if after[numa] >= group]
    if remainder == 0:
        return _standard_deviation(list(after.values())), None
    return _remainder_balance(after, remainder_combo, remainder, group)


def _best_combo(acc: _Accumulator, topo: _Topology, numas: List[int], k: int, needed: int, group: int, align_by_socket: bool) -> _Best:
    best = _Best()
    for combo in _combinations(numas, k):
        if best.balance == 0 and (not align_by_socket or best.in_one_socket):
            break
        scored = _score(acc, numas, combo.items(), needed, group, align_by_socket)
        if scored is None:
            continue
        balance, remainder = scored
        # v1.37 align-by-socket: NUMA nodes of one socket beat any cross-socket combination (AreNUMANodesInSameSocket).
        in_one_socket = align_by_socket and len({topo.cpus[cpu].socket for cpu in topo.cpus_in("numa_node", *combo.items())}) <= 1
        better = balance < best.balance
        if align_by_socket and in_one_socket != best.in_one_socket:
            better = in_one_socket
        if better:
            best.balance, best.remainder, best.combo = balance, remainder, combo
            if align_by_socket:
                best.in_one_socket = in_one_socket
    return best


def _distributed(topo: _Topology, available: Set[int], needed: int, group: int, spread: bool, align_by_socket: bool,
                 cap: bool) -> Optional[Set[int]]:
    """takeByTopologyNUMADistributed (``align_by_socket``: its v1.37 argument; ``cap``: v1.37 caps the distribution at what
    each chosen node holds); None where it returns an error."""
    if needed % group != 0:
        return _packed(topo, available, needed, spread)
    acc = _Accumulator(topo, available, needed, spread)
    if acc.satisfied():
        return acc.result
    if acc.failed():
        return None
    numas = acc.sort_numa_nodes()
    low, high = acc.numa_range(group)
    for k in range(low, high + 1):
        best = _best_combo(acc, topo, numas, k, needed, group, align_by_socket)
        if best.combo is None:
            continue
        combo = best.combo.items()
        distribution = needed // len(combo) // group * group
        if cap:  # v1.37: never more than a chosen node can give
            for numa in combo:
                distribution = min(distribution, len(acc.cpus_in("numa_node", numa)) // group * group)
        for numa in combo:
            acc.take(_packed(topo, acc.cpus_in("numa_node", numa), distribution, spread) or set())
        remainder = needed - distribution * len(combo)
        subset = best.remainder.items() if best.remainder is not None else []
        while remainder > 0:
            before = remainder
            for numa in subset:
                if remainder == 0:
                    break
                if len(acc.cpus_in("numa_node", numa)) < group:
                    continue
                acc.take(_packed(topo, acc.cpus_in("numa_node", numa), group, spread) or set())
                remainder -= group
            if remainder == before:
                raise KubeletLoops("the remainder of %d CPUs cannot be taken from NUMA nodes %s" % (remainder, subset))
        return acc.result if acc.needed == 0 else None  # "accounting error"
    return _packed(topo, available, needed, spread)


def take_by_topology(cpus: Mapping[int, CpuInfo], num_sockets: int, num_cores: int, needed: int, minor: int = 37, spread: bool = False,
                     numa_distributed: bool = False, full_pcpus_only: bool = False, align_by_socket: bool = False,
                     align_by_uncore_cache: bool = False) -> FrozenSet[int]:
    """``staticPolicy.takeByTopology(allCPUs, needed)`` of release 1.<minor> under the options (policy_static.go):
    ``spread`` for distribute-cpus-across-cores, ``numa_distributed`` for distribute-cpus-across-numa (``full_pcpus_only``:
    groups of CPUsPerCore; ``align_by_socket`` passed from v1.37), ``align_by_uncore_cache`` for
    prefer-align-cpus-by-uncorecache (the packed path only). The empty set where kubelet's pick fails;
    :class:`KubeletLoops` where it never returns."""
    topo = _Topology(cpus, num_sockets, num_cores)
    if numa_distributed:
        group = topo.cpus_per_core if full_pcpus_only else 1
        picked = _distributed(topo, set(cpus), needed, group, spread, align_by_socket and minor >= 37, minor >= 37)
    else:
        picked = _packed(topo, set(cpus), needed, spread, align_by_uncore_cache)
    return frozenset(picked or ())


def take_packed(cpus: Dict[int, CpuInfo], num_sockets: int, num_cores: int, needed: int) -> FrozenSet[int]:
    """``takeByTopologyNUMAPacked(topo, allCPUs, needed, packed, false)``; the empty set where it fails (kubelet then
    says ``unable to reserve the required amount of CPUs``)."""
    return take_by_topology(cpus, num_sockets, num_cores, needed)
