# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet is the judge of the reserved CPUs the static policy picks itself (no ``reservedSystemCPUs``).

``NewStaticPolicy`` reserves ``takeByTopology(allCPUs, n)``: packed, spread (``distribute-cpus-across-cores``) or
NUMA-distributed (``distribute-cpus-across-numa``, with ``full-pcpus-only`` in groups of a core's CPUs, with
``align-by-socket`` from v1.37) or by uncore (L3) cache (``prefer-align-cpus-by-uncorecache``, alone or with
``full-pcpus-only``). On a fixed, seeded set of machines (1-4 sockets, one NUMA node per socket, two per socket or one
over two sockets, 1 or 2 threads a core, some CPUs offline, reservations from 1 CPU to more than a NUMA node or than
the machine has; L3 caches: none readable, one per socket, one per NUMA node, two per socket or per NUMA node, one per
two cores, ids repeated on every socket), kubelet's own NewManager + Start (``judge_cpu``, cAdvisor reading the tree's
cache directories) and the probe (``cpu_manager_start`` through the node's files) must give the same reserved CPUs, the
same stage and the same error, for each option set at every release. Where the probe says kubelet's pick never
returns, kubelet's judge must not answer either (``ENDLESS``).
"""

from __future__ import annotations

import random
import subprocess
import tempfile
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu import reserved
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import CpuInfo, CpuTopology, read_cpu_topology
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.judge import judge_cpu
from ansible_collections.nodeops.numa_drift.tests.support import cputree
from ansible_collections.nodeops.numa_drift.tests.support.cputree import cpu_list

# Seed 11 is one whose 40 machines reach the two quirks the port keeps (test_the_machines_reach_kubelets_quirks).
SEED = 11
COUNT = 40
ALPHA = {"CPUManagerPolicyAlphaOptions": True}
# name -> (cpuManagerPolicyOptions, featureGates)
OPTIONS: Mapping[str, tuple] = {
    "packed (no option)": ({}, {}),
    "distribute-cpus-across-cores": ({"distribute-cpus-across-cores": "true"}, ALPHA),
    "distribute-cpus-across-numa": ({"distribute-cpus-across-numa": "true"}, {}),
    "distribute-cpus-across-numa + full-pcpus-only": ({"distribute-cpus-across-numa": "true", "full-pcpus-only": "true"}, {}),
    "distribute-cpus-across-numa + align-by-socket": ({"distribute-cpus-across-numa": "true", "align-by-socket": "true"}, ALPHA),
    "distribute-cpus-across-numa + full-pcpus-only + align-by-socket": (
        {"distribute-cpus-across-numa": "true", "full-pcpus-only": "true", "align-by-socket": "true"}, ALPHA),
    "prefer-align-cpus-by-uncorecache": ({"prefer-align-cpus-by-uncorecache": "true"}, {}),
    "prefer-align-cpus-by-uncorecache + full-pcpus-only": ({"prefer-align-cpus-by-uncorecache": "true", "full-pcpus-only": "true"}, {}),
}
UNCORE_OPTIONS = ("prefer-align-cpus-by-uncorecache", "prefer-align-cpus-by-uncorecache + full-pcpus-only")
# L3 layouts: name -> (socket, core index in the socket, NUMA node, cores a socket) -> L3 id; None: no cache directory.
L3_LAYOUTS = {
    "none": None,
    "socket": lambda socket, core, node, cores: socket,
    "node": lambda socket, core, node, cores: 10 + node,  # the whole NUMA node (or its part of a socket)
    "2/socket": lambda socket, core, node, cores: 2 * socket + (2 * core) // cores,
    "2/node": lambda socket, core, node, cores: 100 + 4 * node + 2 * socket + (core % 2),
    "2 cores": lambda socket, core, node, cores: 1000 * socket + core // 2,
    "2/socket, ids per socket": lambda socket, core, node, cores: (2 * core) // cores,
}


class Machine(NamedTuple):
    name: str
    cpus: Dict[int, cputree.Cpu]
    online: List[int]
    reserve: int
    l3: Optional[Dict[int, int]] = None
    around_l3: bool = False  # judged under the uncore options only


def _l3(cpus: Mapping[int, cputree.Cpu], layout: str) -> Optional[Dict[int, int]]:
    rule = L3_LAYOUTS[layout]
    if rule is None:
        return None
    per_socket = len({spec[0] for spec in cpus.values()})
    return {cpu: rule(socket, core, node, per_socket) for cpu, (core, socket, node) in cpus.items()}


def _machine(sockets: int, cores: int, threads: int, layout: str) -> Dict[int, cputree.Cpu]:
    """CPU ids as Linux numbers x86 (first threads socket after socket, then the siblings); ``layout``: one NUMA node
    per socket (``1``), two per socket (``2``, cores split in halves) or one node over two sockets (``1/2``)."""
    out: Dict[int, cputree.Cpu] = {}
    for thread in range(threads):
        for index in range(sockets * cores):
            socket, core = divmod(index, cores)
            node = socket * 2 + (core * 2) // cores if layout == "2" else socket // 2 if layout == "1/2" else socket
            out[thread * sockets * cores + index] = (core, socket, node)
    return out


def machines(count: int = COUNT, seed: int = SEED) -> List[Machine]:
    """``count`` machines from a seeded generator (the same list on every run); their L3 layouts come from a second
    generator (the machines stay those the first one made); each one with L3 caches comes again, reserving around an
    L3's size (judged under the uncore options only)."""
    rng = random.Random(seed)
    caches = random.Random(seed + 1)
    out = []
    for index in range(count):
        layout = rng.choice(["1", "1", "2", "2", "1/2"])
        sockets = rng.choice([2, 4]) if layout == "1/2" else rng.choice([1, 2, 2, 4])
        cores = rng.choice([2, 3, 4, 6]) if layout != "2" else rng.choice([2, 4, 6])
        threads = rng.choice([1, 2, 2])
        cpus = _machine(sockets, cores, threads, layout)
        offline = set(rng.sample(sorted(cpus)[1:], rng.choice([0, 0, 1, 2, 3]))) if len(cpus) > 4 else set()
        online = [cpu for cpu in sorted(cpus) if cpu not in offline]
        per_node = len(online) // len({spec[2] for spec in cpus.values()})
        reserve = rng.choice([1, 2, 3, 4, per_node, per_node + 1, per_node + threads, 2 * per_node + 1, len(online) // 2 + 1, len(online) + 1])
        l3_layout = caches.choice(sorted(L3_LAYOUTS))
        l3 = _l3(cpus, l3_layout)
        name = "%02d: %d socket(s) x %d cores x %d threads, NUMA %s, offline %s, L3 %s, reserve %d" % (
            index, sockets, cores, threads, layout, cpu_list(sorted(offline)) or "-", l3_layout, max(1, reserve))
        out.append(Machine(name, cpus, online, max(1, reserve), l3))
        if l3 is not None:  # the same machine, reserving around one of its L3 caches
            per_l3 = max(len([cpu for cpu in online if l3[cpu] == l3_id]) for l3_id in set(l3.values()))
            reserve = caches.choice([per_l3 - 1, per_l3, per_l3 + 1, per_l3 + threads, 2 * per_l3 - 1, 2 * per_l3 + 1, threads + 1])
            name = "%02d': the same, reserve %d" % (index, max(1, reserve))
            out.append(Machine(name, cpus, online, max(1, reserve), l3, True))
    return out


MACHINES = machines()


def releases() -> Sequence[str]:
    return build.selected_releases()


@pytest.mark.parametrize("option", list(OPTIONS))
@pytest.mark.parametrize("release", releases())
def test_probe_picks_the_reserved_cpus_kubelet_picks(judges, release, option, tmp_path):
    options, gates = OPTIONS[option]
    disagreements = []
    judged = started = 0
    chosen = [machine for machine in MACHINES if option in UNCORE_OPTIONS or not machine.around_l3]
    for index, machine in enumerate(chosen):
        config: dict = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": str(machine.reserve)}}
        if options:
            config["cpuManagerPolicyOptions"] = dict(options)
        if gates:
            config["featureGates"] = dict(gates)
        root = cputree.build_cpu_node(str(tmp_path / str(index)), machine.cpus, machine.online, config, None, machine.l3)
        ours = probe(HostFiles(root), kubelet_release=release.lstrip("v")).cpu.start
        assert ours is not None, machine.name
        # kubelet's takeByTopologyNUMADistributed never returns there (the probe says so): not run, it would hang.
        assert ours.stage != "unknown" or "never returns" in (ours.error or ""), (machine.name, ours.error)
        if ours.stage == "unknown":
            continue
        kubelet = judge_cpu(judges[release], root)
        judged += 1
        started += kubelet.started
        said = (ours.stage, ours.error or "", cpu_list(sorted(ours.reserved)) if kubelet.reserved else "")
        wanted = (kubelet.stage, kubelet.error or "", kubelet.reserved)
        if said != wanted:
            disagreements.append("%s\n    kubelet %s\n    probe   %s" % (machine.name, wanted, said))
    assert not disagreements, "%s, %s: %d of %d machines differ:\n%s" % (release, option, len(disagreements), judged, "\n".join(disagreements))
    # The generator must keep exercising both outcomes.
    assert judged >= len(chosen) - 2 and 0 < started < judged, (judged, started)


# A machine on which kubelet's takeByTopologyNUMADistributed never returns: 4 sockets x 2 cores x 4 threads (SMT4, as
# POWER), one NUMA node a socket, CPU 19 offline (CPUsPerCore 31 / 8 = 3), 21 CPUs reserved under
# distribute-cpus-across-numa + full-pcpus-only: 7 CPUs a node on 3 nodes, the remainder of 3 in groups of 3 over nodes
# with fewer than 3 CPUs left makes no progress.
ENDLESS = Machine("4 sockets x 2 cores x 4 threads, CPU 19 offline, reserve 21", _machine(4, 2, 4, "1"),
                  [cpu for cpu in range(32) if cpu != 19], 21)
ENDLESS_SECONDS = 15  # kubelet's judge answers any other machine of this size in well under a second


@pytest.mark.parametrize("release", releases())
def test_where_the_probe_says_kubelet_never_returns_kubelet_does_not_return(judges, release, tmp_path):
    options, gates = OPTIONS["distribute-cpus-across-numa + full-pcpus-only"]
    config = {"cpuManagerPolicy": "static", "cpuManagerPolicyOptions": dict(options), "featureGates": dict(gates)}
    answers = {}
    for reserve in (ENDLESS.reserve, ENDLESS.reserve + 3):  # 24: the same machine, a pick kubelet finishes
        root = cputree.build_cpu_node(str(tmp_path / str(reserve)), ENDLESS.cpus, ENDLESS.online,
                                      dict(config, kubeReserved={"cpu": str(reserve)}), None)
        ours = probe(HostFiles(root), kubelet_release=release.lstrip("v")).cpu
        try:
            kubelet = judge_cpu(judges[release], root, timeout=ENDLESS_SECONDS)
            answers[reserve] = (ours.start.stage, kubelet.stage, kubelet.reserved == cpu_list(sorted(ours.start.reserved)))
        except subprocess.TimeoutExpired:
            answers[reserve] = (ours.start.stage, "no answer", "never returns" in (ours.start.error or ""), ours.verdict)
    assert answers == {21: ("unknown", "no answer", True, "cpu_manager_unknown"), 24: ("started", "started", True)}, answers


def _topology(machine: Machine) -> Dict[int, CpuInfo]:
    """The machine as the probe reads it (its cache directories through read_cpu_topology)."""
    return probe_topology(machine).cpus


_READ: Dict[str, CpuTopology] = {}  # machine name -> its topology as the probe read it


def probe_topology(machine: Machine) -> CpuTopology:
    if machine.name not in _READ:
        with tempfile.TemporaryDirectory() as scratch:
            root = cputree.build_cpu_node(scratch, machine.cpus, machine.online, {}, None, machine.l3)
            _READ[machine.name] = read_cpu_topology(HostFiles(root), with_uncore_caches=True)
    return _READ[machine.name]


def _picks(machines: Sequence[Machine], **options) -> List[object]:
    picks: List[object] = []
    for machine in machines:
        cpus = _topology(machine)
        sockets, cores = len({info.socket for info in cpus.values()}), len({info.core for info in cpus.values()})
        picks.append(reserved.take_by_topology(cpus, sockets, cores, machine.reserve, **options))
    return picks


def _distributed_picks(**options) -> List[object]:
    return _picks([machine for machine in MACHINES if not machine.around_l3], numa_distributed=True, **options)


def test_the_machines_reach_kubelets_quirks(monkeypatch):
    """The judged machines are not all easy ones: on some, v1.37's align-by-socket moves the NUMA-distributed pick, and
    on some the pick depends on iterateCombinations' shared Go slices (a fresh slice per combination picks otherwise)."""
    assert _distributed_picks(align_by_socket=True, minor=37) != _distributed_picks(align_by_socket=True, minor=36)
    shared = _distributed_picks() + _distributed_picks(full_pcpus_only=True)
    monkeypatch.setattr(reserved._GoSlice, "append", lambda self, value: reserved._GoSlice(self.items() + [value], self.length + 1))
    assert shared != _distributed_picks() + _distributed_picks(full_pcpus_only=True)


def test_the_machines_reach_the_uncore_paths(monkeypatch):
    """Under prefer-align-cpus-by-uncorecache the judged machines take whole L3 caches, claim part of one
    (takePartialUncore, an odd need on SMT among them) and fall through to whole cores; the option moves the pick on
    some, and some read no uncore cache at all (no cache directory, or an L3 over the whole NUMA node: the socket)."""
    taken = {"full": 0, "partial": 0, "odd partial": 0, "fell through": 0}
    full, partial, uncore_path = reserved._Accumulator.take_full, reserved._Accumulator.take_partial_uncore, reserved._Accumulator.take_uncore_cache

    def counting_full(self, attribute):
        before = self.needed
        full(self, attribute)
        taken["full"] += attribute == "uncore" and self.needed < before

    def counting_partial(self, uncore):
        before = self.needed
        partial(self, uncore)
        if self.needed < before:
            taken["partial"] += 1
            taken["odd partial"] += before % 2 == 1 and self.topo.cpus_per_core > 1

    def counting_uncore(self):
        uncore_path(self)
        taken["fell through"] += not self.satisfied()

    monkeypatch.setattr(reserved._Accumulator, "take_full", counting_full)
    monkeypatch.setattr(reserved._Accumulator, "take_partial_uncore", counting_partial)
    monkeypatch.setattr(reserved._Accumulator, "take_uncore_cache", counting_uncore)
    uncore = _picks(MACHINES, align_by_uncore_cache=True)
    assert all(taken.values()), taken
    monkeypatch.undo()
    assert uncore != _picks(MACHINES)
    read = [probe_topology(machine) for machine in MACHINES]
    assert any(all(info.uncore_cache is None for info in topology.cpus.values()) for topology in read)
    assert any(machine.l3 is not None and all(info.uncore_cache is None for info in topology.cpus.values()) for machine, topology in zip(MACHINES, read))
