# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet is the judge of the probe's CPU manager (issue 38): on every CPU case of the corpus, alone and with a
memory drift beside it, the probe's own model of kubelet's CPU-manager start (``numa_drift.cpu``) must say what
kubelet's code says at every release: it starts where kubelet starts; where kubelet refuses, the same stage and, for
the stages whose words the probe models (construction, checksum and policy at restore, validateState), the same
error text. The node's verdict is then never repairable where kubelet's CPU manager refuses.
"""

from __future__ import annotations

import copy
import json
import os
import re
from typing import Callable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.lock import TOPOLOGY_RECORD_FILE
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.repair import repair_node
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.topology import record_topology
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.judge import judge, judge_cpu
from ansible_collections.nodeops.numa_drift.tests.support import cputree, scenario
from ansible_collections.nodeops.numa_drift.tests.support.cputree import cpu_list, parse_cpu_list
from ansible_collections.nodeops.numa_drift.tests.support.scenario import tree_snapshot

CPUS = cputree.machine(sockets=2, cores_per_socket=4, threads_per_core=2)
ALL = sorted(CPUS)
STATIC = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}}
STRICT = dict(STATIC, cpuManagerPolicyOptions={"strict-cpu-reservation": "true"})
EXPLICIT = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}
NONE = {"cpuManagerPolicy": "none"}
DROPIN_DIR = "/etc/kubernetes/kubelet.conf.d"
DROPIN_FLAGS = ("--config=/var/lib/kubelet/config.yaml", "--config-dir=" + DROPIN_DIR)
POD = {"pod-a": {"app": "2,10"}}
RECORDED_SMALLER = [cpu for cpu in ALL if cpu not in (6, 7, 14, 15)]
L3_HALVES = {cpu: 2 * socket + core // 2 for cpu, (core, socket, _node) in CPUS.items()}
L3_EVERY_OTHER = {cpu: 2 * socket + core % 2 for cpu, (core, socket, _node) in CPUS.items()}
L3_SOCKET = {cpu: socket for cpu, (core, socket, _node) in CPUS.items()}


def minor(release: str) -> int:
    return int(release.split(".")[1])


def in_layout(release: str, default: str, entries: Mapping[str, Mapping[str, str]], policy: str = "static", **override) -> bytes:
    if minor(release) >= 37 and "checksum" not in override:
        return cputree.cpu_checkpoint_v4(policy, default, entries, **override)
    return cputree.cpu_checkpoint_v2(policy, default, entries, **override)


def without(cpus: Sequence[int], *gone: int) -> str:
    return cpu_list(sorted(set(cpus) - set(gone)))


def broken_data(release: str) -> bytes:
    default = cputree.rederive_default(ALL, POD)
    good = cputree.cpu_data("static", default, POD)
    broken = good.replace(default, without(parse_cpu_list(default), 5))
    return cputree.cpu_checkpoint_v4("static", default, POD, data=broken, data_checksum=cputree.cpu_data_checksum(good))


class Case(NamedTuple):
    name: str
    online: Sequence[int]
    config: Mapping[str, object]
    checkpoint: Callable[[str], Optional[bytes]]
    cpus: Optional[Mapping[int, cputree.Cpu]] = None
    flags: Sequence[str] = ()
    distances: bool = False  # each NUMA node directory has its ``distance`` file
    l3: Optional[Mapping[int, int]] = None  # the L3 cache id of each CPU (cputree.add_cpu_caches); None: no cache directory
    dropins: Mapping[str, str] = {}  # --config-dir drop-ins (DROPIN_DIR): name -> YAML after apiVersion/kind


def with_options(options: Mapping[str, str], **gates: bool) -> Mapping[str, object]:
    config: dict = dict(STATIC, cpuManagerPolicyOptions=dict(options))
    if gates:
        config["featureGates"] = dict(gates)
    return config


def IN_SYNC(release: str) -> bytes:  # noqa: N802 (a checkpoint maker among lambdas)
    return in_layout(release, cputree.rederive_default(ALL, POD), POD)


BASELINES = "InPlacePodVerticalScalingExclusiveCPUs"


def with_baseline(release: str, baseline: str, recorded: Sequence[int] = ALL) -> bytes:
    """The pod's file with a ``baselines`` entry for its container in v1.37's data part (earlier releases: the v2 file)."""
    default = cputree.rederive_default(recorded, POD)
    if minor(release) < 37:
        return cputree.cpu_checkpoint_v2("static", default, POD)
    data = cputree.cpu_data("static", default, POD)[:-1] + ',"baselines":{"pod-a":{"app":{"baseline":"%s"}}}}' % baseline
    return cputree.cpu_checkpoint_v4("static", default, POD, data=data)


# Two sockets on one NUMA node: align-by-socket refuses such a machine.
ONE_NUMA_NODE = {cpu: (core, socket, 0) for cpu, (core, socket, _node) in CPUS.items()}
RENUMBERED = dict(CPUS)
RENUMBERED[2], RENUMBERED[6], RENUMBERED[10], RENUMBERED[14] = CPUS[6], CPUS[2], CPUS[14], CPUS[10]
# Nine NUMA nodes (three sockets of three): more than the topology manager's default maxAllowableNUMANodes (8).
NINE_NODES = cputree.machine(sockets=3, cores_per_socket=3, threads_per_core=2, numa_per_socket=3)
V2_VALID = ('{"policyName":"none","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"1-3"}},'
            '"checksum":3610638499}').encode()
V4_BAD_V2_PART = ('{"policyName":"other","defaultCPUSet":"1-9","checksum":1234,'
                  '"data":"{\\"policyName\\":\\"none\\",\\"defaultCPUSet\\":\\"4-6\\"}","dataChecksum":657950972}').encode()
TWO_PODS = {"pod-a": {"app": "2,10"}, "pod-b": {"app": "3,11"}, "pod-c": {"app": "3"}}

# PodLevelResourceManagers (v1.36+): a pod-level pod whose CPU "bubble" is 3-4,11-12, its containers' CPUs inside it
# (policy_static.go allocatePodForAdd); in APP_ONLY, CPUs 4 and 12 are held by the pod-level entry alone.
PLRM = "PodLevelResourceManagers"
POD_LEVEL_ON = dict(STATIC, featureGates={PLRM: True})
BUBBLE = {"pod-p": "3-4,11-12"}
POD_LEVEL_ENTRIES = dict(POD, **{"pod-p": {"app": "3,11", "side": "4,12"}})
APP_ONLY = dict(POD, **{"pod-p": {"app": "3,11"}})


def with_pod_level(release: str, entries: Optional[Mapping] = None, recorded: Sequence[int] = ALL, bubble: Optional[Mapping[str, str]] = None) -> bytes:
    """The file kubelet writes with the gate on: v1.37's v4 with podEntries in its data part, else v1.36's v3 (v1.34 and
    v1.35 do not know the gate: the same v3 file); defaultCpuSet is what the recorded CPUs leave."""
    entries, bubble = entries or POD_LEVEL_ENTRIES, bubble or BUBBLE
    parses = all("x" not in cpus for cpus in bubble.values())
    pinned = set(cputree.assigned(entries)).union(*(parse_cpu_list(cpus) for cpus in bubble.values() if parses))
    default = cpu_list(sorted(set(recorded) - pinned))
    if minor(release) >= 37:
        return cputree.cpu_checkpoint_v4("static", default, entries, data=cputree.cpu_data("static", default, entries, bubble))
    return cputree.cpu_checkpoint_v3("static", default, entries, bubble, checksum=None if parses else 1)  # a v3 decoder stops at it first


ON_SOCKET_1 = {"pod-b": {"app": "4,12"}}

CASES = (
    Case("no file", [c for c in ALL if c not in (7, 15)], STATIC, lambda r: None),
    Case("in sync", ALL, STATIC, lambda r: in_layout(r, cputree.rederive_default(ALL, POD), POD)),
    Case("online set grew", ALL, STATIC, lambda r: in_layout(r, cputree.rederive_default(RECORDED_SMALLER, POD), POD)),
    Case("online set grew, strict", ALL, STRICT,
         lambda r: in_layout(r, cputree.rederive_default(RECORDED_SMALLER, POD, [4]), POD)),
    Case("shared-only CPUs offline", [c for c in ALL if c not in (7, 15)], STATIC, lambda r: in_layout(r, cputree.rederive_default(ALL, POD), POD)),
    Case("torn write leaked CPU 5", ALL, STATIC, lambda r: in_layout(r, without(parse_cpu_list(cputree.rederive_default(ALL, POD)), 5), POD)),
    Case("assigned CPU offline", [c for c in ALL if c != 10], STATIC, lambda r: in_layout(r, cputree.rederive_default(ALL, POD), POD)),
    Case("reserved overlaps an assignment", ALL, EXPLICIT, lambda r: in_layout(r, cputree.rederive_default(ALL, {"pod-a": {"app": "0,8"}}),
                                                                               {"pod-a": {"app": "0,8"}})),
    Case("reservedSystemCPUs offline", [c for c in ALL if c != 15], dict(EXPLICIT, reservedSystemCPUs="0,15"), lambda r: None),
    Case("policy changed", ALL, STATIC, lambda r: in_layout(r, cpu_list(ALL), {}, policy="none")),
    Case("checksum bad", ALL, STATIC, lambda r: in_layout(r, cputree.rederive_default(ALL, POD), POD, **(
        {"data_checksum": 1} if minor(r) >= 37 else {"checksum": cputree.cpu_v2_checksum("static", cputree.rederive_default(ALL, POD), POD) ^ 1}))),
    Case("checksum 0", ALL, STATIC, lambda r: cputree.cpu_checkpoint_v2("static", cputree.rederive_default(ALL, POD), POD, checksum=0)),
    Case("v4 with a broken data part", ALL, STATIC, broken_data),
    Case("auto-reserved CPU moves onto a pod", [c for c in ALL if CPUS[c][1] == 1], STATIC,
         lambda r: in_layout(r, cputree.rederive_default([c for c in ALL if CPUS[c][1] == 1], ON_SOCKET_1), ON_SOCKET_1)),
    Case("two pods claim CPU 3", ALL, STATIC, lambda r: in_layout(r, cputree.rederive_default(ALL, TWO_PODS), TWO_PODS)),
    Case("renumbered, same ids", ALL, STATIC, lambda r: in_layout(r, cputree.rederive_default(ALL, POD), POD), RENUMBERED),
    Case("kubelet's row: v2 valid (policy none)", ALL, NONE, lambda r: V2_VALID),
    Case("kubelet's row: v2 bad checksum (policy none)", ALL, NONE, lambda r: V2_VALID.replace(b"3610638499", b"1337")),
    Case("kubelet's row: v4 with a bad v2 part (policy none)", ALL, NONE, lambda r: V4_BAD_V2_PART),
    Case("no reservation", ALL, {"cpuManagerPolicy": "static"}, lambda r: None),
    Case("truncated JSON", ALL, STATIC, lambda r: in_layout(r, cputree.rederive_default(ALL, POD), POD)[:40]),
    Case("default set empty with an entry", ALL, STATIC, lambda r: in_layout(r, "", POD)),
    # cpuManagerPolicyOptions (policy_options.go): maturity by release and gate, values, pairs, align-by-socket's checks.
    Case("align-by-socket, alpha options off", ALL, with_options({"align-by-socket": "true"}), lambda r: None),
    Case("align-by-socket, alpha options on", ALL, with_options({"align-by-socket": "true"}, CPUManagerPolicyAlphaOptions=True), IN_SYNC),
    Case("align-by-socket under single-numa-node", ALL, dict(with_options({"align-by-socket": "true"}, CPUManagerPolicyAlphaOptions=True),
                                                             topologyManagerPolicy="single-numa-node"), IN_SYNC),
    Case("align-by-socket, more sockets than NUMA nodes", ALL, with_options({"align-by-socket": "true"}, CPUManagerPolicyAlphaOptions=True),
         IN_SYNC, ONE_NUMA_NODE),
    Case("strict-cpu-reservation, beta options off", ALL, dict(with_options({"strict-cpu-reservation": "true"}, CPUManagerPolicyBetaOptions=False)),
         lambda r: None),
    Case("full-pcpus-only with a bad value", ALL, with_options({"full-pcpus-only": "yes"}), lambda r: None),
    Case("an option kubelet does not know", ALL, with_options({"pack-cpus-tightly": "true"}), lambda r: None),
    Case("full-pcpus-only with distribute-cpus-across-cores", ALL,
         with_options({"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"}, CPUManagerPolicyAlphaOptions=True), lambda r: None),
    Case("distribute-cpus-across-numa, reservedSystemCPUs set", ALL, dict(EXPLICIT, cpuManagerPolicyOptions={"distribute-cpus-across-numa": "true"}),
         IN_SYNC),
    Case("prefer-align-cpus-by-uncorecache, reservedSystemCPUs set, online set grew", ALL,
         dict(EXPLICIT, cpuManagerPolicyOptions={"prefer-align-cpus-by-uncorecache": "true"}),
         lambda r: in_layout(r, cputree.rederive_default(RECORDED_SMALLER, POD), POD)),
    Case("distribute-cpus-across-numa, kubelet picks the reserved CPUs", ALL, with_options({"distribute-cpus-across-numa": "true"}), IN_SYNC),
    Case("distribute-cpus-across-cores, kubelet picks the reserved CPUs", ALL,
         with_options({"distribute-cpus-across-cores": "true"}, CPUManagerPolicyAlphaOptions=True), IN_SYNC),
    Case("prefer-align-cpus-by-uncorecache, kubelet picks the reserved CPUs", ALL, with_options({"prefer-align-cpus-by-uncorecache": "true"}), IN_SYNC),
    # The uncore (L3) caches cAdvisor reads: two a socket (cores 0-1, 2-3), over every other core (the pick takes CPU 2,
    # pod-a's), one a socket (a node-level cache: kubelet's uncore cache is then the socket).
    Case("prefer-align-cpus-by-uncorecache, two L3 a socket, kubelet picks 3 CPUs", ALL,
         dict(with_options({"prefer-align-cpus-by-uncorecache": "true"}), kubeReserved={"cpu": "3"}), IN_SYNC, l3=L3_HALVES),
    Case("prefer-align-cpus-by-uncorecache, L3 over every other core, kubelet picks 4 CPUs", ALL,
         dict(with_options({"prefer-align-cpus-by-uncorecache": "true", "full-pcpus-only": "true"}), kubeReserved={"cpu": "4"}), IN_SYNC,
         l3=L3_EVERY_OTHER),
    Case("prefer-align-cpus-by-uncorecache, one L3 a socket, kubelet picks 3 CPUs", ALL,
         dict(with_options({"prefer-align-cpus-by-uncorecache": "true"}), kubeReserved={"cpu": "3"}), IN_SYNC, l3=L3_SOCKET),
    Case("policy none with an option", ALL, dict(NONE, cpuManagerPolicyOptions={"full-pcpus-only": "true"}), lambda r: None),
    Case("AllBeta off, distribute-cpus-across-numa", ALL, dict(EXPLICIT, cpuManagerPolicyOptions={"distribute-cpus-across-numa": "true"},
                                                               featureGates={"AllBeta": False}), IN_SYNC),
    Case("policy none, reservedSystemCPUs offline, no file", [c for c in ALL if c != 15], dict(NONE, reservedSystemCPUs="15"), lambda r: None),
    # InPlacePodVerticalScalingExclusiveCPUs: nothing at start up to v1.36; v1.37 parses each baseline of the data part.
    Case("exclusive-CPU resize gate on, in sync", ALL, dict(STATIC, featureGates={BASELINES: True}), IN_SYNC),
    Case("exclusive-CPU resize gate on, a baseline that is no CPU list", ALL, dict(STATIC, featureGates={BASELINES: True}),
         lambda r: with_baseline(r, "2,x")),
    Case("exclusive-CPU resize gate off, a baseline that is no CPU list", ALL, STATIC, lambda r: with_baseline(r, "2,x")),
    Case("exclusive-CPU resize gate on, online set grew, baselines kept", ALL, dict(STATIC, featureGates={BASELINES: True}),
         lambda r: with_baseline(r, "2,10", RECORDED_SMALLER)),
    # PodLevelResourceManagers: v1.36 reads the v3 layout first, v1.36 and v1.37 restore podEntries and count their CPUs.
    Case("pod-level entries, gate on, in sync", ALL, POD_LEVEL_ON, with_pod_level),
    Case("pod-level entries, gate on, online set grew", ALL, POD_LEVEL_ON, lambda r: with_pod_level(r, recorded=RECORDED_SMALLER)),
    Case("pod-level entries, gate on, a pod-level CPU offline", [c for c in ALL if c != 4], POD_LEVEL_ON, with_pod_level),
    Case("CPUs held at pod level only, gate on", ALL, POD_LEVEL_ON, lambda r: with_pod_level(r, APP_ONLY)),
    Case("CPUs held at pod level only, gate on, online set grew", ALL, POD_LEVEL_ON, lambda r: with_pod_level(r, APP_ONLY, RECORDED_SMALLER)),
    Case("CPUs held at pod level only, gate off", ALL, STATIC, lambda r: with_pod_level(r, APP_ONLY)),
    Case("CPUs held at pod level only, gate off, online set grew", ALL, STATIC, lambda r: with_pod_level(r, APP_ONLY, RECORDED_SMALLER)),
    Case("pod-level entries, gate off, in sync", ALL, STATIC, with_pod_level),
    Case("a pod-level cpuSet that is no CPU list, gate on", ALL, POD_LEVEL_ON, lambda r: with_pod_level(r, bubble={"pod-p": "3-x"})),
    Case("a pod-level cpuSet that is no CPU list, gate off", ALL, STATIC, lambda r: with_pod_level(r, bubble={"pod-p": "3-x"})),
    # Values of the wrong JSON type (a YAML true or 1 is JSON's bool or number): kubelet's codec refuses the file.
    Case("cpuManagerPolicyOptions value a bool", ALL, with_options({"full-pcpus-only": True}), IN_SYNC),  # type: ignore[dict-item]
    Case("cpuManagerPolicyOptions value a number", ALL, with_options({"full-pcpus-only": 1}), lambda r: None),  # type: ignore[dict-item]
    Case("reservedSystemCPUs a number", ALL, dict(EXPLICIT, reservedSystemCPUs=0), lambda r: None),
    # The same in --config-dir drop-ins: kubelet merge-patches them over the configuration, then decodes the result.
    Case("a drop-in's cpuManagerPolicyOptions value a bool", ALL, STATIC, IN_SYNC, flags=DROPIN_FLAGS,
         dropins={"50-cpu.conf": "cpuManagerPolicyOptions:\n  full-pcpus-only: true\n"}),
    Case("a drop-in's reservedSystemCPUs a number, a later one's topologyManagerScope a list", ALL, STATIC, lambda r: None, flags=DROPIN_FLAGS,
         dropins={"10-a.conf": "reservedSystemCPUs: 0\n", "20-b.conf": "topologyManagerScope: [pod]\n"}),
    Case("a drop-in's bool replaced by a later drop-in's string", ALL, STATIC, IN_SYNC, flags=DROPIN_FLAGS,
         dropins={"10-a.conf": "cpuManagerPolicyOptions:\n  full-pcpus-only: true\n",
                  "20-b.conf": "cpuManagerPolicyOptions:\n  full-pcpus-only: \"true\"\n"}),
    Case("a drop-in's number removed by a later drop-in's null", ALL, STATIC, IN_SYNC, flags=DROPIN_FLAGS,
         dropins={"10-a.conf": "cpuManagerPolicyOptions: 5\n", "20-b.conf": "cpuManagerPolicyOptions: null\n"}),
    # The topology manager, built before the CPU manager: validation, then its NewManager.
    Case("topologyManagerPolicy unknown", ALL, dict(STATIC, topologyManagerPolicy="numa-aware"), IN_SYNC),
    Case("topologyManagerScope unknown", ALL, dict(STATIC, topologyManagerPolicy="best-effort", topologyManagerScope="node"), lambda r: None),
    Case("9 NUMA nodes, best-effort", sorted(NINE_NODES), dict(STATIC, topologyManagerPolicy="best-effort"), lambda r: None, NINE_NODES),
    Case("9 NUMA nodes, topology policy none", sorted(NINE_NODES), STATIC, lambda r: None, NINE_NODES),
    Case("9 NUMA nodes, max-allowable-numa-nodes 9", sorted(NINE_NODES), dict(STATIC, topologyManagerPolicy="restricted",
                                                                              topologyManagerPolicyOptions={"max-allowable-numa-nodes": "9"}),
         lambda r: None, NINE_NODES),
    Case("max-allowable-numa-nodes below 8", ALL, dict(STATIC, topologyManagerPolicy="restricted",
                                                       topologyManagerPolicyOptions={"max-allowable-numa-nodes": "4"}), IN_SYNC),
    Case("max-allowable-numa-nodes not a number", ALL, dict(STATIC, topologyManagerPolicy="single-numa-node",
                                                            topologyManagerPolicyOptions={"max-allowable-numa-nodes": "eight"}), lambda r: None),
    Case("max-allowable-numa-nodes, topology beta options off", ALL, dict(
        STATIC, topologyManagerPolicy="restricted", topologyManagerPolicyOptions={"max-allowable-numa-nodes": "9"},
        featureGates={"TopologyManagerPolicyBetaOptions": False}), IN_SYNC),
    Case("a topology manager option kubelet does not know", ALL, dict(STATIC, topologyManagerPolicy="restricted",
                                                                      topologyManagerPolicyOptions={"pack-numa": "true"}), lambda r: None),
    Case("prefer-closest-numa-nodes with a bad value", ALL, dict(STATIC, topologyManagerPolicy="best-effort",
                                                                 topologyManagerPolicyOptions={"prefer-closest-numa-nodes": "yes"}), lambda r: None),
    Case("prefer-closest-numa-nodes, no distance files", ALL, dict(STATIC, topologyManagerPolicy="best-effort",
                                                                   topologyManagerPolicyOptions={"prefer-closest-numa-nodes": "true"}), IN_SYNC),
    Case("prefer-closest-numa-nodes, distances read", ALL, dict(STATIC, topologyManagerPolicy="best-effort",
                                                                topologyManagerPolicyOptions={"prefer-closest-numa-nodes": "true"}), IN_SYNC,
         distances=True),
    Case("topology policy unknown, CPU policy none", ALL, dict(NONE, topologyManagerPolicy="numa-aware"), lambda r: None),
    Case("topology manager option under policy none", ALL, dict(STATIC, topologyManagerPolicyOptions={"pack-numa": "true"}), IN_SYNC),
    # Feature gate dependencies (component-base v0.35+).
    Case("AllAlpha on", ALL, dict(STATIC, featureGates={"AllAlpha": True}), IN_SYNC),
    Case("AllAlpha on, --feature-gates", ALL, STATIC, IN_SYNC, flags=("--feature-gates=AllAlpha=true",)),
    Case("PodLevelResourceManagers on, PodLevelResources off", ALL,
         dict(STATIC, featureGates={"PodLevelResourceManagers": True, "PodLevelResources": False}), IN_SYNC),
    Case("exclusive-CPU resize gate on, InPlacePodVerticalScaling off", ALL,
         dict(STATIC, featureGates={BASELINES: True, "InPlacePodVerticalScaling": False}), IN_SYNC),
    Case("AllBeta off, topology policy restricted", ALL, dict(STATIC, topologyManagerPolicy="restricted", featureGates={"AllBeta": False}),
         lambda r: None),
)
MEMORY_DRIFT = {"recorded": scenario.two_node_boot(), "current": scenario.two_node_boot(node0_kb=64 * scenario.GIB // scenario.KIB - 2048)}


def releases() -> Sequence[str]:
    return build.selected_releases()


def version(release: str) -> str:
    return release.lstrip("v")


def _tree(root: str, case: Case, release: str, with_memory_drift: bool) -> str:
    root = _tree_of(root, case, release, with_memory_drift)
    for name, text in case.dropins.items():
        path = os.path.join(root, DROPIN_DIR.lstrip("/"), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" + text)
    if case.distances:
        nodes = sorted({node for _core, _socket, node in (case.cpus or CPUS).values()})
        for node in nodes:
            with open(os.path.join(root, "sys/devices/system/node/node%d/distance" % node), "w", encoding="ascii") as handle:
                handle.write(" ".join("10" if other == node else "20" for other in nodes) + "\n")
    return root


def _tree_of(root: str, case: Case, release: str, with_memory_drift: bool) -> str:
    config = dict(case.config)
    if with_memory_drift:
        config = dict(copy.deepcopy(scenario.kubelet_config(scenario.uniform_reserved([0, 1]))), **config)
        scenario.write_kubelet_node(root, MEMORY_DRIFT["recorded"], MEMORY_DRIFT["current"], pods=scenario.guaranteed_pods(2), config=config)
        cputree.add_cpu_topology(root, case.cpus or CPUS, case.online, case.l3)
        raw = case.checkpoint(release)
        if raw is not None:
            cputree.write_cpu_checkpoint(root, raw)
        return root
    return cputree.build_cpu_node(root, case.cpus or CPUS, case.online, config, case.checkpoint(release), case.l3)


# Where the probe's words are kubelet's: what kubelet says about JSON it cannot read is Go's encoding/json, not modelled.
WORDS_NOT_MODELLED = ("truncated JSON",)
_DEPENDENCY = "is enabled, but depends on features that are disabled"


def same_words(ours: Optional[str], kubelet: str) -> bool:
    """Kubelet's words: equal; where kubelet aggregates feature gate dependency errors (component-base walks its
    dependency table, a Go map, in random order; the probe sorts them by gate), the same prefix and the same errors."""
    if ours == kubelet or ours is None or _DEPENDENCY not in kubelet:
        return ours == kubelet

    def parts(text: str) -> Tuple[str, List[str]]:
        head, bracket, rest = text.partition(": [")  # kubelet's prefix ends "config: " or "error: "
        if not bracket or not rest.endswith("]"):  # one error: no brackets
            return text, []
        return head, sorted(re.split(r"(?<=\]), ", rest[:-1]))

    return parts(ours) == parts(kubelet) and len(parts(kubelet)[1]) > 1


COMBINED = ("in sync", "online set grew", "assigned CPU offline", "checksum bad", "auto-reserved CPU moves onto a pod",
            "pod-level entries, gate on, online set grew")
PAIRS = [(case, False) for case in CASES] + [(case, True) for case in CASES if case.name in COMBINED]


@pytest.mark.parametrize("case, with_memory_drift", PAIRS, ids=["%s%s" % (case.name, ", with memory drift" if drift else "") for case, drift in PAIRS])
@pytest.mark.parametrize("release", releases())
def test_probe_says_what_kubelets_cpu_manager_does(judges, release, case, with_memory_drift, tmp_path):
    root = _tree(str(tmp_path), case, release, with_memory_drift)
    kubelet = judge_cpu(judges[release], root, list(case.flags) if case.flags else None)
    result = probe(HostFiles(root), kubelet_release=version(release), kubelet_flags=list(case.flags) if case.flags else None)
    ours = result.cpu.start
    assert ours is not None, result.cpu.message
    assert ours.started == kubelet.started, "kubelet %s: %s; probe: %s (%s)" % (release, kubelet.brief(), ours.stage, result.cpu.message)
    if not kubelet.started:
        assert ours.stage == kubelet.stage, (kubelet.brief(), ours.error)
        if case.name not in WORDS_NOT_MODELLED:
            assert same_words(ours.error, kubelet.error), (kubelet.brief(), ours.error)
    if kubelet.online and case.config["cpuManagerPolicy"] == "static":  # policy none: the probe reads no CPU topology
        assert cpu_list(ours.online) == kubelet.online
    if kubelet.reserved:
        assert cpu_list(ours.reserved) == kubelet.reserved
    if not kubelet.started:
        # Kubelet refuses: never "nothing to do", and repairable only as the stale default set (the repair's own test below
        # has kubelet start with what it writes); a memory plan only beside that CPU repair.
        # (kubelet refusing its configuration: the node's own configuration check may speak first)
        refusing = ("kubelet_config_rejected", "cpu_manager_refuses") if kubelet.stage == "config" else ("cpu_manager_refuses", "cpu_default_set_stale")
        assert result.assessment.verdict in refusing, result.assessment.verdict
        stale = result.assessment.verdict == "cpu_default_set_stale"
        assert result.assessment.repairable is stale and (result.cpu.rewrite is not None) is stale
        assert result.assessment.plan is None or stale
    elif result.cpu.verdict is None and with_memory_drift:
        assert result.assessment.verdict == "drift_within_bound", result.assessment.causes


REPAIRABLE_CASES = ("online set grew", "online set grew, strict", "shared-only CPUs offline", "torn write leaked CPU 5",
                    "prefer-align-cpus-by-uncorecache, reservedSystemCPUs set, online set grew")
REPAIR_PAIRS = [(case, drift) for case in CASES if case.name in REPAIRABLE_CASES for drift in (False, True)]


@pytest.mark.parametrize("case, with_memory_drift", REPAIR_PAIRS,
                         ids=["%s%s" % (case.name, ", with memory drift" if drift else "") for case, drift in REPAIR_PAIRS])
@pytest.mark.parametrize("release", releases())
def test_the_repair_of_a_stale_default_cpu_set_is_one_kubelet_starts_with(judges, release, case, with_memory_drift, tmp_path):
    """The repairable class, repaired by the collection (``repair_node``, as the module, the role and the guard do):
    kubelet refuses the files as found; after the repair its CPU manager starts at that release, leaves the file as
    written (it holds exactly that state), keeps every entry; with a memory drift beside it, the memory manager
    starts too."""
    root = _tree(str(tmp_path / "node"), case, release, with_memory_drift)
    assert not judge_cpu(judges[release], root).started
    result = probe(HostFiles(root), kubelet_release=version(release))
    assert result.assessment.verdict == "cpu_default_set_stale" and result.assessment.repairable, result.assessment.causes
    assert (result.assessment.plan is not None) is with_memory_drift
    outcome = repair_node(result, backup_dir=str(tmp_path / "backups"), history_file=str(tmp_path / "history.json"))
    assert outcome.action == "repaired" and outcome.after.cpu.cls == "in_sync", outcome.message
    assert outcome.after.verdict == ("in_sync" if with_memory_drift else "no_checkpoint")  # no memory_manager_state: kubelet writes one
    kubelet = judge_cpu(judges[release], root)
    assert kubelet.started and kubelet.after == kubelet.before, kubelet.brief()
    _policy, _default, entries = cputree.read_cpu_checkpoint(kubelet.after)
    assert entries == cputree.read_cpu_checkpoint(case.checkpoint(release))[2]
    if with_memory_drift:
        memory = judge(judges[release], root)
        assert memory.started, memory.brief()


POD_LEVEL_REPAIRED = ("pod-level entries, gate on, online set grew", "CPUs held at pod level only, gate on, online set grew")
POD_LEVEL_REPAIRS = [(case, drift) for case in CASES if case.name in POD_LEVEL_REPAIRED for drift in (False, True)]


@pytest.mark.parametrize("case, with_memory_drift", POD_LEVEL_REPAIRS,
                         ids=["%s%s" % (case.name, ", with memory drift" if drift else "") for case, drift in POD_LEVEL_REPAIRS])
@pytest.mark.parametrize("release", [release for release in releases() if minor(release) >= 36])
def test_a_pod_level_repair_keeps_every_pod_level_entry_and_kubelet_starts_with_it(judges, release, case, with_memory_drift, tmp_path):
    """PodLevelResourceManagers on (v1.36: a v3 file, v1.37: podEntries in the data part): the stale default set is
    re-derived without the pod-level CPUs, the file keeps its layout and every entry, pod-level ones included; kubelet's
    CPU manager starts with it and leaves it as written."""
    root = _tree(str(tmp_path / "node"), case, release, with_memory_drift)
    assert not judge_cpu(judges[release], root).started
    result = probe(HostFiles(root), kubelet_release=version(release))
    assert result.assessment.verdict == "cpu_default_set_stale" and result.assessment.repairable, result.cpu.message
    outcome = repair_node(result, backup_dir=str(tmp_path / "backups"), history_file=str(tmp_path / "history.json"))
    assert outcome.action == "repaired" and outcome.after.cpu.cls == "in_sync", outcome.message
    assert outcome.cpu_written_layout == ("v4" if minor(release) >= 37 else "v3")
    kubelet = judge_cpu(judges[release], root)
    assert kubelet.started and kubelet.after == kubelet.before, kubelet.brief()
    written = json.loads(kubelet.after)
    written = json.loads(written["data"]) if "data" in written else written
    original = json.loads(case.checkpoint(release))
    original = json.loads(original["data"]) if "data" in original else original
    assert (written["entries"], written["podEntries"]) == (original["entries"], original["podEntries"])
    assert not set(parse_cpu_list(written["defaultCpuSet"])) & {3, 4, 11, 12}  # the bubble stays the pod's
    if with_memory_drift:
        assert judge(judges[release], root).started


@pytest.mark.parametrize("case", [case for case in CASES if case.name in REPAIRABLE_CASES], ids=lambda case: case.name)
@pytest.mark.parametrize("layout_of", ["v1.34.4", "v1.37.2"], ids=["a v2 file", "a v4 file"])
def test_a_repair_with_the_release_unknown_starts_every_release(judges, layout_of, case, tmp_path):
    """With no release known, the probe judges at every supported release: the file it writes (in its own layout,
    both halves of a v4 file consistent) starts every release's CPU manager and is left as written."""
    root = cputree.build_cpu_node(str(tmp_path / "node"), case.cpus or CPUS, case.online, case.config, case.checkpoint(layout_of))
    result = probe(HostFiles(root))
    assert not result.settings.release.known and result.assessment.verdict == "cpu_default_set_stale", result.assessment.causes
    outcome = repair_node(result, backup_dir=str(tmp_path / "backups"), history_file=str(tmp_path / "history.json"))
    assert outcome.action == "repaired" and outcome.cpu_written_layout == ("v4" if minor(layout_of) >= 37 else "v2"), outcome.message
    for release in releases():
        kubelet = judge_cpu(judges[release], root)
        assert kubelet.started and kubelet.after == kubelet.before, (release, kubelet.brief())


def _recorded(root: str) -> bytes:
    """The topology record the boot guard writes at a boot whose CPU manager starts as it is (``record_topology``)."""
    result = probe(HostFiles(root))
    assert result.cpu.cls == "in_sync", result.cpu.message
    with open(record_topology(result) or "", "rb") as handle:
        return handle.read()


@pytest.mark.parametrize("stale", [False, True], ids=["kubelet starts", "kubelet refuses: the online set grew"])
@pytest.mark.parametrize("release", releases())
def test_a_renumbering_that_keeps_the_ids_is_refused_by_the_topology_record_whatever_kubelet_does(judges, release, stale, tmp_path):
    """CPUs 2 and 10 (pod-a's) keep their ids but now sit on socket 1 (``RENUMBERED``). Kubelet's own CPU manager decides
    as if nothing moved: it starts with the file, or refuses only the stale default set. The record taken when the node
    was last good says the pinning would be false: the collection refuses (``assigned_cpu_moved``), names the pod, and
    the repair touches no file."""
    recorded = RECORDED_SMALLER if stale else ALL
    before = cputree.build_cpu_node(str(tmp_path / "before"), CPUS, recorded, STATIC, in_layout(release, cputree.rederive_default(recorded, POD), POD))
    record = _recorded(before)
    root = cputree.build_cpu_node(str(tmp_path / "after"), RENUMBERED, ALL, STATIC, in_layout(release, cputree.rederive_default(recorded, POD), POD))
    kubelet = judge_cpu(judges[release], root)
    assert kubelet.started is not stale, kubelet.brief()
    path = os.path.join(root, TOPOLOGY_RECORD_FILE)
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as handle:
        handle.write(record)
    result = probe(HostFiles(root), kubelet_release=version(release))
    assert (result.cpu.cls, result.cpu.pods) == ("assigned_cpu_moved", ("pod-a",)), result.cpu.message
    assert result.assessment.verdict == ("cpu_manager_refuses" if stale else "cpu_checkpoint_untrusted")
    assert result.cpu.start.started == kubelet.started and not result.assessment.repairable
    found = tree_snapshot(root)
    assert repair_node(result, backup_dir=str(tmp_path / "backups"), history_file=str(tmp_path / "history.json")).action == "refused"
    assert tree_snapshot(root) == found


V1_WITH_ENTRIES = b'{"policyName":"static","defaultCpuSet":"0-1,3-9,11-15","entries":{"containerID1":"2,10"},"checksum":0}'


@pytest.mark.parametrize("release", releases())
def test_a_v1_file_with_entries_is_refused_where_kubelet_refuses_and_never_repaired(judges, release, tmp_path):
    """Entries keyed by container id (pre-1.18): up to v1.36 kubelet migrates them through the runtime's containers (the
    judge's runtime has none, as after a reboot: refused), which this collection does not judge; v1.37 has no v1 reader
    and its v2 reader refuses the strings. Either way the node is not repairable and the repair touches nothing."""
    root = cputree.build_cpu_node(str(tmp_path / "node"), CPUS, ALL, STATIC, V1_WITH_ENTRIES)
    kubelet = judge_cpu(judges[release], root)
    assert not kubelet.started and kubelet.stage == "restore", kubelet.brief()
    result = probe(HostFiles(root), kubelet_release=version(release))
    if minor(release) >= 37:
        assert (result.cpu.start.stage, result.cpu.cls) == ("restore", "corrupt"), result.cpu.message
        assert "json: cannot unmarshal string into Go struct field CPUManagerCheckpointV2.entries" in result.cpu.start.error
    else:
        assert (result.cpu.start.stage, result.cpu.cls) == ("unknown", "unsupported_layout"), result.cpu.message
    assert result.assessment.verdict == "cpu_manager_refuses" and not result.assessment.repairable
    found = tree_snapshot(root)
    assert repair_node(result, backup_dir=str(tmp_path / "backups"), history_file=str(tmp_path / "history.json")).action == "refused"
    assert tree_snapshot(root) == found
