# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's own memory-manager unit-test tables, translated into node trees.

Each entry names the Go test and the case (its ``description``) in
``k8s.io/kubernetes/pkg/kubelet/cm/memorymanager`` at the releases whose test file holds it, and
says the same thing as a node: the test's machine info as per-NUMA ``MemTotal`` and hugepage pools
in sysfs (cadvisor reads a node's memory as ``MemTotal`` x 1024), its ``reservedMemory`` and
Node Allocatable reservation as a KubeletConfiguration, its state (machine state and memory
assignments) as the checkpoint kubelet restores at start-up, its policy name as
``memoryManagerPolicy``. ``expect`` is what kubelet must do with the tree (start, or a piece of
its error): the Go test's own expectation, or where the translation changes it, why (``note``).
The verdict is never written here: the probe gives it and kubelet's code at every release judges it.

Translated (cases per test; the same tables at v1.34.4, v1.35.4, v1.36.3 and v1.37.2 unless said):

- ``policy_static_test.go`` ``TestStaticPolicyStart``: 15 cases, each checkpoint in the legacy
  layout and in v1.37's ``data`` layout (our writer, kubelet checks the checksums); the two it
  starts with (a cross-NUMA group with 1 GiB pages, a group whose free and reserved memory kubelet
  compares as sums) also after a reboot that moved the kernel image (45260 kB) from node 0 to node 1.
- ``memory_manager_test.go`` ``TestNewManager`` (5), ``TestGetSystemReservedMemory`` (3),
  ``TestValidateReservedMemory`` (8), ``TestConvertPreReserved`` (3): no checkpoint (kubelet's first
  start), the reservation in the configuration.
- ``state/state_checkpoint_test.go`` ``TestCheckpointStateRestore``: the checkpoint content
  verbatim: 4 cases at v1.34.4/v1.35.4, 10 at v1.36.3, 18 at v1.37.2 (a case several releases' files
  hold alike is one tree; v1.37 runs its gate-free cases with ``PodLevelResourceManagers`` off and on,
  the tree once at the default; a case that needs the gate on has it in ``featureGates``), on a
  machine sized from the content's own machine state (2048 bytes: ``MemTotal: 2 kB``, 512 bytes
  reserved).

What a node tree cannot say, and how it is said instead:

- The Node Allocatable reservation is kubelet's sum of ``systemReserved``, ``kubeReserved`` and the
  hard eviction thresholds; it cannot hold hugepages (kubelet refuses ``systemReserved`` of a
  hugepage resource: "cannot reserve"). A table's hugepage reservation is written into
  ``systemReserved`` as a person would try it; kubelet refuses the configuration.
- A reservation below the default eviction threshold (100Mi) is said as ``evictionHard``
  ``memory.available`` alone; a zero reservation as ``evictionHard: {}`` (no hard threshold).
- ``TestValidateReservedMemory`` and ``TestConvertPreReserved`` use machines whose NUMA nodes have
  no memory (only ids): the trees give each node 4 GiB (a node of 0 kB cannot hold the
  reservations the cases are about). ``TestStaticPolicyStart``'s first case has no machine info
  at all: one node of 2 GiB.
- The state tests pass lower-case policy names (``static``, ``none``) to ``NewCheckpointState``
  directly; kubelet's configuration only knows ``Static`` and ``None``, and its ``Static`` policy
  compares that name with the file's ``static``: every such file is refused on a node at restore
  (a policy mismatch), the content is kept verbatim all the same (its checksums are the point).
- The state tests' machine states (``numberOfAssignments: 0`` and ``cells: []`` beside an
  assignment) are never what the Static policy computes; the releases that get past the restore
  refuse them in ``validateState``.

Not expressible as a node tree (left out): ``TestStaticPolicyNew``/``TestStaticPolicyName`` (the
policy object alone: covered by ``TestNewManager``'s trees), ``TestRemoveStaleState``,
``TestAddContainer``, ``TestRemoveContainer``, ``TestGetTopologyHints``,
``TestStaticPolicyAllocate*``/``RemoveContainer``/``GetTopologyHints``/``Lifecycle*`` (pod admission
and container lifecycle on a running manager: Go object mutations after start-up, the judge's
``--admit-pods`` covers admission in test_kubelet_judge_written.py), ``TestCheckpointStateStore*``,
``TestCheckpointStateHelpers``, ``TestCheckpointStateClear`` and the ``MarshalCheckpoint``
hash/round-trip tests (what kubelet writes, covered by the checkpoints each release writes in
test_kubelet_judge_written.py).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_legacy, marshal_v3
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import Block, CheckpointFields, MemoryTable, NodeState
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import OMIT, build_node_tree

MB = 1024 * 1024  # the Go tests' "mb" and "gb" are binary units
GB = 1024 * MB
PAGE_1G_KB = 1048576
PAGE_2M_KB = 2048
EVICTION_DEFAULT = 100 * MB  # kubelet's default evictionHard memory.available
KASLR_MOVE_KB = 45260  # the kernel image moving to another NUMA node (the molecule guests)
ALL = ("v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2")
NOT_EQUAL = "is not equal to the value"
NO_RESERVED = "you should specify the system reserved memory"
DIFFERENT_STATE = "the expected machine state is different from the real one"
CANNOT_RESERVE = "cannot reserve"


class TableCase(NamedTuple):
    test: str  # the Go test function
    case: str  # the case's description in its table
    releases: Tuple[str, ...]  # the releases whose test file holds the case
    machine: Mapping[int, Tuple[int, Mapping[int, int]]]  # NUMA node -> (memory bytes, {page size kB: pages})
    reserved: Sequence[Tuple[int, Mapping[str, int]]] = ()  # reservedMemory entries (bytes)
    allocatable: Mapping[str, int] = {}  # the Node Allocatable reservation the test gives (bytes)
    policy: str = "Static"
    state: Optional[Mapping[str, Any]] = None  # {"machineState": ..., "entries": ...}: a checkpoint we write
    content: Optional[str] = None  # a checkpoint verbatim
    feature_gates: Mapping[str, bool] = {}
    expect: Optional[str] = None  # None: kubelet starts; else a piece of kubelet's error on this tree
    held: Optional[Mapping[str, Any]] = None  # the machine state kubelet then holds (the test's expectedMachineState)
    note: str = ""
    moved_kb: int = 0  # a derived case: the next boot moved this much memory (kB) from NUMA node 0 to node 1


def table(total: int, system_reserved: int, allocatable: int, reserved: int, free: int) -> Dict[str, int]:
    return {"total": total, "systemReserved": system_reserved, "allocatable": allocatable, "reserved": reserved, "free": free}


def numa(memory_map: Mapping[str, Mapping[str, int]], cells: Sequence[int], assignments: int = 0) -> Dict[str, Any]:
    return {"numberOfAssignments": assignments, "memoryMap": dict(memory_map), "cells": list(cells)}


def block(affinity: Sequence[int], kind: str, size: int) -> Dict[str, Any]:
    return {"numaAffinity": list(affinity), "type": kind, "size": size}


# --- TestStaticPolicyStart (policy_static_test.go) -------------------------------------------

START = "TestStaticPolicyStart"
HP1G = "hugepages-1Gi"
ONE_2G_NODE_1G_PAGE = {0: (2 * GB, {PAGE_1G_KB: 1})}
MEM_1536 = table(2 * GB, 512 * MB, 1536 * MB, 0, 1536 * MB)
HP_ONE = table(GB, 0, GB, 0, GB)
RESERVED_512 = ((0, {"memory": 512 * MB}),)


def _start_cases() -> List[TableCase]:
    cross_numa_state = {
        n: numa({"memory": table(2176 * MB, 512 * MB, 640 * MB, 640 * MB if n == 0 else 384 * MB, 0 if n == 0 else 256 * MB),
                 HP1G: table(GB, 0, GB, GB, 0)}, [0, 1], 4)
        for n in (0, 1)
    }
    group_state = {
        0: numa({"memory": table(240 * MB, 20 * MB, 220 * MB, 210 * MB, 10 * MB)}, [0, 1], 2),
        1: numa({"memory": table(240 * MB, 20 * MB, 220 * MB, 40 * MB, 180 * MB)}, [0, 1], 2),
    }
    return [
        TableCase(START, "should fail, if machine state is empty, but it has memory assignments", ALL,
                  {0: (2 * GB, {})}, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {}, "entries": {"pod": {"container1": [block([0], "memory", 512 * MB)]}}},
                  expect="machine state can not be empty when it has memory assignments",
                  note="the test has no machine info: a node of 2 GiB"),
        TableCase(START, "should fill the state with default values, when the state is empty", ALL,
                  {0: (3 * GB, {PAGE_1G_KB: 1})}, RESERVED_512, {"memory": 512 * MB},
                  held={"0": numa({"memory": table(3 * GB, 512 * MB, 1536 * MB, 0, 1536 * MB), HP1G: HP_ONE}, [0])},
                  note="an empty state is a node without a checkpoint (kubelet's first start)"),
        TableCase(START, "should fail when machine state does not have all NUMA nodes", ALL,
                  {0: (2 * GB, {PAGE_1G_KB: 1}), 1: (2 * GB, {PAGE_1G_KB: 1})}, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({"memory": MEM_1536, HP1G: HP_ONE}, [0])}, "entries": {}},
                  expect=DIFFERENT_STATE),
        TableCase(START, "should fail when machine state does not have memory resource", ALL,
                  ONE_2G_NODE_1G_PAGE, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({HP1G: HP_ONE}, [0])}, "entries": {}}, expect=DIFFERENT_STATE),
        TableCase(START, "should fail when machine state has wrong size of total memory", ALL,
                  ONE_2G_NODE_1G_PAGE, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({"memory": table(1536 * MB, 512 * MB, 1536 * MB, 0, 1536 * MB)}, [0])}, "entries": {}},
                  expect=DIFFERENT_STATE),
        TableCase(START, "should fail when machine state has wrong size of system reserved memory", ALL,
                  ONE_2G_NODE_1G_PAGE, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({"memory": table(2 * GB, 1024, 1536 * MB, 0, 1536 * MB)}, [0])}, "entries": {}},
                  expect=DIFFERENT_STATE),
        TableCase(START, "should fail when machine state reserved memory is different from the memory of all containers memory assignments",
                  ALL, ONE_2G_NODE_1G_PAGE, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({"memory": MEM_1536}, [0], 1)},
                         "entries": {"pod": {"container1": [block([0], "memory", 512 * MB)]}}},
                  expect=DIFFERENT_STATE),
        TableCase(START, "should fail when machine state has wrong size of hugepages", ALL,
                  {0: (2 * GB, {PAGE_1G_KB: 2})}, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({"memory": MEM_1536, HP1G: HP_ONE}, [0])}, "entries": {}}, expect=DIFFERENT_STATE),
        TableCase(START, "should fail when machine state has wrong size of system reserved hugepages", ALL,
                  {0: (2 * GB, {PAGE_1G_KB: 2})}, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({"memory": MEM_1536, HP1G: table(2 * GB, GB, GB, 0, GB)}, [0])}, "entries": {}},
                  expect=DIFFERENT_STATE),
        TableCase(START, "should fail when the hugepages reserved machine state is different from the hugepages of all containers "
                  "memory assignments", ALL,
                  {0: (2 * GB, {PAGE_1G_KB: 4})}, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({"memory": MEM_1536, HP1G: table(4 * GB, 0, 4 * GB, 3 * GB, GB)}, [0], 2)},
                         "entries": {"pod1": {"container1": [block([0], HP1G, GB)]}, "pod2": {"container2": [block([0], HP1G, GB)]}}},
                  expect=DIFFERENT_STATE),
        TableCase(START, "should fail when machine state does not have NUMA node that used under the memory assignment", ALL,
                  ONE_2G_NODE_1G_PAGE, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({"memory": MEM_1536, HP1G: HP_ONE}, [0])},
                         "entries": {"pod1": {"container1": [block([1], "memory", GB)]}}},
                  expect="(pod: pod1, container: container1) the memory assignment uses the NUMA that does not exist"),
        TableCase(START, "should fail when machine state does not have resource that used under the memory assignment", ALL,
                  ONE_2G_NODE_1G_PAGE, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({"memory": MEM_1536, HP1G: HP_ONE}, [0], 2)},
                         "entries": {"pod1": {"container1": [block([0], "memory", GB), block([0], "hugepages-2Mi", GB)]}}},
                  expect="(pod: pod1, container: container1) the memory assignment uses memory resource that does not exist"),
        TableCase(START, "should fail when machine state number of assignments is different from the expected one", ALL,
                  ONE_2G_NODE_1G_PAGE, RESERVED_512, {"memory": 512 * MB},
                  state={"machineState": {"0": numa({"memory": MEM_1536, HP1G: HP_ONE}, [0], 1)},
                         "entries": {"pod1": {"container1": [block([0], "memory", GB), block([0], HP1G, GB)]}}},
                  expect=DIFFERENT_STATE),
        TableCase(START, "should validate cross NUMA reserved memory vs container assignments", ALL,
                  {0: (2176 * MB, {PAGE_1G_KB: 1}), 1: (2176 * MB, {PAGE_1G_KB: 1})},
                  ((0, {"memory": 512 * MB}), (1, {"memory": 512 * MB})), {"memory": GB},
                  state={"machineState": {str(n): s for n, s in cross_numa_state.items()},
                         "entries": {"pod1": {"container1": [block([0, 1], "memory", 768 * MB), block([0, 1], HP1G, GB)]},
                                     "pod2": {"container2": [block([0, 1], "memory", 256 * MB), block([0, 1], HP1G, GB)]}}},
                  held={str(n): s for n, s in cross_numa_state.items()}),
        TableCase(START, "should validate the totalFree and totalReserved size for a resource within a group", ALL,
                  {0: (240 * MB, {}), 1: (240 * MB, {})}, ((0, {"memory": 20 * MB}), (1, {"memory": 20 * MB})), {"memory": 40 * MB},
                  state={"machineState": {str(n): s for n, s in group_state.items()},
                         "entries": {"pod1": {"container1": [block([0, 1], "memory", 240 * MB)]},
                                     "pod2": {"container2": [block([0, 1], "memory", 10 * MB)]}}},
                  held={str(n): s for n, s in group_state.items()},
                  note="the test's expectedMachineState splits the group's reserved memory differently (190/60 MiB): "
                       "kubelet compares a group's free and reserved memory as sums, and holds the file's split"),
    ]


# --- memory_manager_test.go: NewManager and the reservation tables ------------------------------

TEN_GB_NODES = {0: (10 * GB, {PAGE_1G_KB: 5}), 1: (10 * GB, {PAGE_1G_KB: 5})}  # returnMachineInfo()
FOUR_GB_NODES = {0: (4 * GB, {}), 1: (4 * GB, {})}
ONE_GIB_EACH = ((0, {"memory": GB}), (1, {"memory": GB}))


def _manager_cases() -> List[TableCase]:
    new, system, validate, convert = "TestNewManager", "TestGetSystemReservedMemory", "TestValidateReservedMemory", "TestConvertPreReserved"
    hugepage_reservation = ((0, {"memory": 12, "hugepages-2Mi": 70, "hugepages-1Gi": 13}), (1, {"memory": 5, "hugepages-2Mi": 7}))
    return [
        TableCase(new, "Successful creation of Memory Manager instance", ALL, TEN_GB_NODES, ONE_GIB_EACH, {"memory": 2 * GB}),
        TableCase(new, "Should return an error when systemReservedMemory (configured with kubelet flag) does not comply with Node "
                  "Allocatable feature values", ALL, TEN_GB_NODES, ((0, {"memory": GB}), (1, {"memory": 2 * GB})), {"memory": 2 * GB},
                  expect=NOT_EQUAL),
        TableCase(new, "Should return an error when memory reserved for system is empty (systemReservedMemory)", ALL, TEN_GB_NODES,
                  expect=NO_RESERVED),
        TableCase(new, "Should return an error when policy name is not correct", ALL, TEN_GB_NODES, policy="fake", expect="fake"),
        TableCase(new, "Should create manager with \"none\" policy", ALL, TEN_GB_NODES, policy="None"),
        TableCase(system, "Should return empty map when reservation is not done", ALL, TEN_GB_NODES, expect=NO_RESERVED,
                  note="getSystemReservedMemory returns the empty map; the Static policy kubelet then creates refuses it"),
        TableCase(system, "Should return error when Allocatable reservation is not equal to the reserved memory", ALL, TEN_GB_NODES,
                  ((0, {"memory": GB}),), expect=NOT_EQUAL),
        TableCase(system, "Reserved should be equal to systemReservedMemory", ALL, TEN_GB_NODES, ONE_GIB_EACH, {"memory": 2 * GB}),
        TableCase(validate, "Node Allocatable not set, reserved not set", ALL, FOUR_GB_NODES, expect=NO_RESERVED,
                  note="validateReservedMemory accepts it; the Static policy then refuses no reservation at all"),
        TableCase(validate, "Node Allocatable set to zero, reserved set to zero", ALL, FOUR_GB_NODES, ((0, {"memory": 0}),),
                  expect="reserved memory may not be zero",
                  note="validateReservedMemory accepts it; kubelet's configuration validation refuses a zero reservedMemory limit first"),
        TableCase(validate, "Node Allocatable not set (equal zero), reserved set", ALL, FOUR_GB_NODES, ((0, {"memory": 12}),),
                  expect=NOT_EQUAL),
        TableCase(validate, "Node Allocatable set, reserved not set", ALL, FOUR_GB_NODES, (), {"hugepages-2Mi": 5},
                  expect=CANNOT_RESERVE, note="a hugepage Node Allocatable reservation cannot be configured"),
        TableCase(validate, "Reserved not equal to Node Allocatable", ALL, FOUR_GB_NODES, ((0, {"memory": 12}),), {"memory": 5},
                  expect=NOT_EQUAL),
        TableCase(validate, "Reserved contains the NUMA node that does not exist under the machine", ALL, FOUR_GB_NODES,
                  ((0, {"memory": 12}), (2, {"memory": 5})), {"memory": 17}, expect="NUMA node 2"),
        TableCase(validate, "Reserved total equal to Node Allocatable", ALL, FOUR_GB_NODES, hugepage_reservation,
                  {"memory": 17, "hugepages-2Mi": 77, "hugepages-1Gi": 13}, expect=CANNOT_RESERVE,
                  note="a hugepage Node Allocatable reservation cannot be configured"),
        TableCase(validate, "Reserved total hugapages-2M not equal to Node Allocatable", ALL, FOUR_GB_NODES, hugepage_reservation,
                  {"memory": 17, "hugepages-2Mi": 14, "hugepages-1Gi": 13}, expect=CANNOT_RESERVE,
                  note="a hugepage Node Allocatable reservation cannot be configured"),
        TableCase(convert, "Empty", ALL, FOUR_GB_NODES, expect=NO_RESERVED,
                  note="convertReserved gives empty maps; the Static policy refuses no reservation"),
        TableCase(convert, "Single NUMA node is reserved", ALL, FOUR_GB_NODES,
                  ((0, {"memory": 12, "hugepages-2Mi": 70, "hugepages-1Gi": 13}),), {"memory": 12}, expect=NOT_EQUAL,
                  note="the test has no Node Allocatable reservation; the tree reserves the memory part, the only part that can be: "
                       "kubelet refuses the hugepage reservations, which no configuration can match"),
        TableCase(convert, "Both NUMA nodes are reserved", ALL, FOUR_GB_NODES, hugepage_reservation, {"memory": 17}, expect=NOT_EQUAL,
                  note="as the case above"),
    ]


# --- TestCheckpointStateRestore (state/state_checkpoint_test.go) --------------------------------

RESTORE = "TestCheckpointStateRestore"
_STATE = ('"machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,"systemReserved":512,'
          '"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}}')
_ENTRIES = '"entries":{"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}}'
_POD_ENTRIES = '"podEntries":{"pod":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":512}]}}'
# The V2 part the v1.37 test damages on purpose (its data part must win).
_OTHER = ('"policyName":"other","machineState":{"0":{"numberOfAssignments":5,"memoryMap":{"memory":{"total":1024,'
          '"systemReserved":256,"allocatable":768,"reserved":256,"free":512}},"cells":[]}},'
          '"entries":{"pod":{"containerX":[{"numaAffinity":[0],"type":"memory","size":128}]}}')
_DATA = json.dumps('{"policyName":"static",%s,%s}' % (_STATE, _ENTRIES))
_DATA_POD = json.dumps('{"policyName":"static",%s,%s,%s}' % (_STATE, _ENTRIES, _POD_ENTRIES))
_DATA_UNKNOWN = json.dumps('{"unknownField":"value","policyName":"static",%s,%s}' % (_STATE, _ENTRIES))


def _doc(*parts: str) -> str:
    return "{%s}" % ",".join(parts)


def _legacy(checksum: int, affinity_key: str = "numaAffinity") -> str:
    return _doc('"policyName":"static"', _STATE, _ENTRIES.replace("numaAffinity", affinity_key), '"checksum":%d' % checksum)


def _v1_and(*parts: str) -> str:
    """A valid legacy checkpoint with V3 parts added."""
    return _doc('"policyName":"static"', _STATE, _ENTRIES, '"checksum":4215593881', *parts)


def _v3(data: str, data_checksum: int) -> str:
    """A V3 checkpoint whose inline (V2) part is the damaged one (its data part must win)."""
    return _doc(_OTHER, '"checksum":1234', '"data":' + data, '"dataChecksum":%d' % data_checksum)


def _v2(checksum: int) -> str:
    return _doc('"policyName":"static"', _STATE, _ENTRIES, _POD_ENTRIES, '"checksum":%d' % checksum)


# The gate the state tests turn on (v1.36's test turns PodLevelResources on with it); off is the default at
# v1.36 and v1.37, said by leaving it out (v1.34 and v1.35 do not know the gate and refuse its name).
ON = {"PodLevelResources": True, "PodLevelResourceManagers": True}
OFF: Mapping[str, bool] = {}
POLICY_MISMATCH = "differs from state checkpoint policy"
CORRUPT = "checkpoint is corrupted"


def _restore_cases() -> List[TableCase]:
    r34 = ("v1.34.4", "v1.35.4")
    r36 = ("v1.36.3",)
    r37 = ("v1.37.2",)
    cases: List[Tuple[Tuple[str, ...], str, str, str, Mapping[str, bool], Optional[str]]] = [
        # (releases, case, content, test's policy name, feature gates, kubelet's error on the tree)
        (r34 + r36, "Restore non-existing checkpoint", "", "static", {}, None),
        (r34 + r36, "Restore valid checkpoint", _legacy(4215593881), "static", {}, POLICY_MISMATCH),
        (r34 + r36, "Restore checkpoint with invalid checksum", _legacy(101010, "affinity"), "static", {}, CORRUPT),
        (r34 + r36, "Restore checkpoint with invalid JSON", "{", "static", {}, "unexpected end of JSON input"),
        (r36, "Restore checkpoint from v1 (migration) with PodLevelResourceManagers enabled", _legacy(4215593881), "static", ON,
         POLICY_MISMATCH),
        (r36, "Restore checkpoint from v1 (migration) with PodLevelResourceManagers disabled", _legacy(4215593881), "static", OFF,
         POLICY_MISMATCH),
        (r36 + r37, "Restore checkpoint from v2 with PodLevelResourceManagers enabled", _v2(1278640530), "static", ON,
         POLICY_MISMATCH),
        (r36, "Restore checkpoint from v2 with PodLevelResourceManagers disabled", _v2(1278640530), "static", OFF, CORRUPT),
        (r36, "Restore non-existing checkpoint with PodLevelResourceManagers enabled", "", "static", ON, None),
        (r36, "Restore corrupt checkpoint with PodLevelResourceManagers enabled",
         _doc('"policyName":"static"', _STATE, '"entries":{}', '"podEntries":{}', '"checksum":12345'), "static", ON, CORRUPT),
        (r37, "Restore non-existing checkpoint", "", "none", {}, None),
        (r37, "Fail to restore checkpoint with invalid JSON", "{", "none", {}, "unexpected end of JSON input"),
        (r37, "Fail to restore checkpoint without data section", _v1_and('"dataChecksum":1234'), "none", {},
         "unexpected end of JSON input"),
        (r37, "Fail to restore checkpoint without dataChecksum section", _v1_and('"data":' + _DATA), "none", {}, CORRUPT),
        (r37, "Restore valid checkpoint", _v3(_DATA, 1849615440), "static", {}, POLICY_MISMATCH),
        (r37, "Fail to restore checkpoint with invalid dataChecksum", _v1_and('"data":' + _DATA, '"dataChecksum":1234'), "none", {},
         CORRUPT),
        (r37, "Fail to restore checkpoint with invalid data JSON", _v1_and('"data":"{"', '"dataChecksum":1234'), "none", {},
         "unexpected end of JSON input"),
        (r37, "Fail to restore checkpoint with invalid policy name", _v3(_DATA, 1849615440), "none", {}, POLICY_MISMATCH),
        (r37, "Restore checkpoint ignoring unknown fields in data section", _v3(_DATA_UNKNOWN, 2100279793), "static", {},
         POLICY_MISMATCH),
        (r37, "Restore checkpoint from v1 (migration)", _legacy(4215593881), "static", {}, POLICY_MISMATCH),
        (r37, "Restore checkpoint from v1 (migration) with checksum zeroed", _legacy(0), "static", {}, POLICY_MISMATCH),
        (r37, "Fail to restore checkpoint from v1 with invalid checksum", _legacy(101010, "affinity"), "static", {}, CORRUPT),
        (r37, "Restore checkpoint from v2 with PodLevelResourceManagers disabled", _v2(1278640530), "static", OFF, POLICY_MISMATCH),
        (r37, "Restore checkpoint from v2 with zeroed checksum and with PodLevelResourceManagers disabled", _v2(0), "static", OFF,
         POLICY_MISMATCH),
        (r37, "Fail to restore checkpoint from v2 with invalid checksum", _v2(101010), "static", {}, CORRUPT),
        (r37, "Restore checkpoint from v3 with PodLevelResourceManagers enabled",
         _doc(_OTHER, '"podEntries":{"podY":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":64}]}}', '"checksum":1234',
              '"data":' + _DATA_POD, '"dataChecksum":637296054'), "static", ON, POLICY_MISMATCH),
        (r37, "Restore checkpoint from v3 with PodLevelResourceManagers disabled",
         _doc(_OTHER, '"podEntries":{"podY":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":64}]}}', '"checksum":1234',
              '"data":' + _DATA_POD, '"dataChecksum":637296054'), "static", OFF, POLICY_MISMATCH),
    ]
    out = []
    for releases, case, content, policy, gates, expect in cases:
        # v1.37's test runs its gate-free cases under both gate settings: once here, at the default.
        note = "the test's policy name is %r" % policy
        out.append(TableCase(RESTORE, case, releases, {}, policy={"static": "Static", "none": "None"}[policy], content=content,
                             feature_gates=gates, expect=expect, note=note))
    return out


# --- the corpus --------------------------------------------------------------------------------


def table_cases() -> Dict[str, TableCase]:
    """``{id: case}``; the id names the test, the releases holding the case, and the case."""
    cases: Dict[str, TableCase] = {}
    for case in _start_cases() + _manager_cases() + _restore_cases():
        span = "" if case.releases == ALL else "[%s]" % ",".join(case.releases)
        cases["%s%s/%s" % (case.test, span, case.case)] = case
        if case.test == START and case.state is not None and case.expect is None:
            # Derived: the same node after a reboot that moved the kernel image (45260 kB) from node 0 to node 1.
            cases["%s/%s, then a KASLR reboot" % (case.test, case.case)] = case._replace(moved_kb=KASLR_MOVE_KB, held=None)
    return cases


def layouts(case: TableCase) -> Tuple[str, ...]:
    """The layouts a case's checkpoint is written in: both when we write it, else the case's own."""
    return ("legacy", "v3") if case.state is not None else ("as-is",)


def reservation_config(allocatable: Mapping[str, int]) -> Dict[str, Any]:
    """KubeletConfiguration fields whose Node Allocatable reservation is ``allocatable``."""
    memory = allocatable.get("memory", 0)
    config: Dict[str, Any] = {}
    system = {name: str(size) for name, size in allocatable.items() if name != "memory"}
    if memory >= EVICTION_DEFAULT:
        system["memory"] = str(memory - EVICTION_DEFAULT)  # + the default evictionHard memory.available=100Mi
    else:
        config["evictionHard"] = {"memory.available": str(memory)} if memory else {}
    if system:
        config["systemReserved"] = system
    return config


def _machine_state_of(content: str) -> Dict[str, Any]:
    """The content's machine state (the V3 data part when it parses), {} when there is none."""
    try:
        document = json.loads(content)
        data = document.get("data") if isinstance(document, dict) else None
        part = json.loads(data) if isinstance(data, str) and data.startswith("{\"") and data.endswith("}") else document
        return part.get("machineState") or {}
    except (ValueError, AttributeError):
        return {}


def _machine_from_content(content: str) -> Dict[int, Tuple[int, Mapping[int, int]]]:
    """The state tests' machine: each NUMA node of the content's machine state (the V3 data part when
    it parses), memory = its ``memory`` total; one node of 2 KiB when the content has none."""
    state = _machine_state_of(content)
    machine = {int(n): (int(node["memoryMap"]["memory"]["total"]), {}) for n, node in state.items()}
    return machine or {0: (2048, {})}


def _reserved_from_content(content: str) -> Tuple[Sequence[Tuple[int, Mapping[str, int]]], Dict[str, int]]:
    """reservedMemory = the content's systemReserved per node (512 bytes when there is none)."""
    state = _machine_state_of(content)
    reserved = [(int(n), {"memory": int(node["memoryMap"]["memory"]["systemReserved"])}) for n, node in sorted(state.items())]
    reserved = reserved or [(0, {"memory": 512})]
    return reserved, {"memory": sum(limits["memory"] for _n, limits in reserved)}


def checkpoint_fields(policy: str, state: Mapping[str, Any]) -> CheckpointFields:
    """A table's state (the checkpoint's JSON shape) as the fields our writer marshals."""
    def memory_table(values: Mapping[str, int]) -> MemoryTable:
        return MemoryTable(total=values["total"], system_reserved=values["systemReserved"], allocatable=values["allocatable"],
                           reserved=values["reserved"], free=values["free"])

    machine = {int(n): NodeState(number_of_assignments=node["numberOfAssignments"], cells=list(node["cells"]),
                                 memory_map={name: memory_table(values) for name, values in node["memoryMap"].items()})
               for n, node in state["machineState"].items()}
    entries = {pod: {name: [Block(numa_affinity=list(b["numaAffinity"]), type=b["type"], size=b["size"]) for b in blocks]
                     for name, blocks in containers.items()}
               for pod, containers in state["entries"].items()}
    return CheckpointFields(policy_name=policy, machine_state=machine, entries=entries)


def checkpoint_bytes(case: TableCase, layout: str) -> Optional[bytes]:
    """The file at the node's checkpoint path (``None``: no file)."""
    if case.state is not None:
        fields = checkpoint_fields(case.policy, case.state)
        return marshal_legacy(fields) if layout == "legacy" else marshal_v3(fields)
    if case.content:
        return case.content.encode()
    return None


def build(root: str, case: TableCase, layout: str) -> str:
    machine, reserved, allocatable = case.machine, case.reserved, case.allocatable
    if case.test == RESTORE:
        machine = _machine_from_content(case.content or "")
        reserved, allocatable = _reserved_from_content(case.content or "")
    config: Dict[str, Any] = {"memoryManagerPolicy": case.policy}
    if case.test == RESTORE and case.policy != "Static":
        reserved, allocatable = (), {}  # the state tests' "none" policy reserves nothing
    if reserved:
        config["reservedMemory"] = [{"numaNode": n, "limits": {name: str(size) for name, size in limits.items()}} for n, limits in reserved]
    config.update(reservation_config(allocatable))
    if case.feature_gates:
        config["featureGates"] = dict(case.feature_gates)
    moved = {0: -case.moved_kb, 1: case.moved_kb} if case.moved_kb else {}
    nodes = {n: {"mem_total_kb": memory // 1024 + moved.get(n, 0), "hugepages": dict(pages)} for n, (memory, pages) in machine.items()}
    content = checkpoint_bytes(case, layout)
    return build_node_tree(root, nodes=nodes, kubelet_config=config, checkpoint=OMIT if content is None else content)
