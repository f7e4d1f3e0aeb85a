# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet is the judge of the reserved CPUs the static policy picks itself (no ``reservedSystemCPUs``).

``NewStaticPolicy`` reserves ``takeByTopology(allCPUs, n)``: packed, spread (``distribute-cpus-across-cores``) or
NUMA-distributed (``distribute-cpus-across-numa``, with ``full-pcpus-only`` in groups of a core's CPUs, with
``align-by-socket`` from v1.37). On a fixed, seeded set of machines (1-4 sockets, one NUMA node per socket, two per
socket or one over two sockets, 1 or 2 threads a core, some CPUs offline, reservations from 1 CPU to more than a
NUMA node or than the machine has), kubelet's own NewManager + Start (``judge_cpu``) and the probe
(``cpu_manager_start`` through the node's files) must give the same reserved CPUs, the same stage and the same error,
for each option set at every release.
"""

from __future__ import annotations

import random
from typing import Dict, List, Mapping, NamedTuple, Sequence

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu import reserved
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import CpuInfo
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
}


class Machine(NamedTuple):
    name: str
    cpus: Dict[int, cputree.Cpu]
    online: List[int]
    reserve: int


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
    """``count`` machines from a seeded generator (the same list on every run)."""
    rng = random.Random(seed)
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
        name = "%02d: %d socket(s) x %d cores x %d threads, NUMA %s, offline %s, reserve %d" % (
            index, sockets, cores, threads, layout, cpu_list(sorted(offline)) or "-", max(1, reserve))
        out.append(Machine(name, cpus, online, max(1, reserve)))
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
    for index, machine in enumerate(MACHINES):
        config: dict = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": str(machine.reserve)}}
        if options:
            config["cpuManagerPolicyOptions"] = dict(options)
        if gates:
            config["featureGates"] = dict(gates)
        root = cputree.build_cpu_node(str(tmp_path / str(index)), machine.cpus, machine.online, config, None)
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
    assert judged >= COUNT - 2 and 0 < started < judged, (judged, started)


def _distributed_picks(**options) -> List[object]:
    picks: List[object] = []
    for machine in MACHINES:
        cpus = {cpu: CpuInfo(min(other for other in machine.online if machine.cpus[other][:2] == machine.cpus[cpu][:2]),
                             machine.cpus[cpu][1], machine.cpus[cpu][2]) for cpu in machine.online}
        sockets, cores = len({info.socket for info in cpus.values()}), len({info.core for info in cpus.values()})
        picks.append(reserved.take_by_topology(cpus, sockets, cores, machine.reserve, numa_distributed=True, **options))
    return picks


def test_the_machines_reach_kubelets_quirks(monkeypatch):
    """The judged machines are not all easy ones: on some, v1.37's align-by-socket moves the NUMA-distributed pick, and
    on some the pick depends on iterateCombinations' shared Go slices (a fresh slice per combination picks otherwise)."""
    assert _distributed_picks(align_by_socket=True, minor=37) != _distributed_picks(align_by_socket=True, minor=36)
    shared = _distributed_picks() + _distributed_picks(full_pcpus_only=True)
    monkeypatch.setattr(reserved._GoSlice, "append", lambda self, value: reserved._GoSlice(self.items() + [value], self.length + 1))
    assert shared != _distributed_picks() + _distributed_picks(full_pcpus_only=True)
