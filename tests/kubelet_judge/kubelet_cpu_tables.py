# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's own CPU-manager unit-test tables, translated into node trees (issue 38, item 5).

Each entry names the Go test and the case (its ``description``) in
``k8s.io/kubernetes/pkg/kubelet/cm/cpumanager`` at the releases whose test file holds it, and says the
same thing as a node: the test's ``topology.CPUTopology`` as sysfs CPUs (core id, physical package,
NUMA node: ``cputree.add_cpu_topology``), its ``numReservedCPUs`` / reserved set / policy options /
feature gates as a KubeletConfiguration, its state (``stAssignments`` + ``stDefaultCPUSet``) or its
checkpoint content (verbatim, whitespace aside) as ``/var/lib/kubelet/cpu_manager_state``. ``expect``
is what kubelet must do with the tree (``None``: start; else a piece of its error), from the Go test's
own expectation, or, where the translation changes it, why (``note``). ``held`` is the state the test
expects kubelet to hold (``defaultCpuSet``, entries), read back from the file after kubelet's Start.
No verdict is written here: the probe gives it and kubelet's code at every release judges it.

Translated (cases per test and release):

- ``policy_static_test.go`` ``TestStaticPolicyStart``: 8 cases at v1.34.4, v1.35.4, v1.36.3, v1.37.2
  (the same table at each; topoDualSocketHT), each state written by us in the v2 layout and in v1.37's
  v4 layout (kubelet checks the checksums); ``TestStaticPolicyStartWithResvList``, the same start with a
  reserved CPU list: 5 cases at each release, in both layouts.
- ``cpu_manager_test.go`` ``TestCPUManagerAdd``: 1 case at each release, as far as it is about state:
  the state the test hands its manager, as the checkpoint kubelet would start with (both layouts).
- ``state/state_checkpoint_test.go`` ``TestCheckpointStateRestore``: the content verbatim: 10 cases at
  v1.34.4 and v1.35.4, 17 at v1.36.3, 24 at v1.37.2 ("Restore non-existing checkpoint" is one tree for
  every release; v1.37 runs its gate-free cases under every combination of PodLevelResourceManagers and
  InPlacePodVerticalScalingExclusiveCPUs: the tree runs them once, at the default gates; a case that
  requires a combination has it in ``featureGates``). ``TestCPUManagerCheckpointV3_VerifyChecksum_Compatibility``
  (v1.37.2): its 2 checksums, as the v3 file of the restore table carrying each. The checksum vectors of
  these tables (``vectors``: which checksums of a content the Go test holds valid, and of what) are
  checked against the collection's checksum functions (v2, v4, and ``accepted_checksums`` for v3: v1.37's
  table gives v2-shaped files v3 checksums, under either struct name).

What a node tree cannot say, and how it is said instead:

- kubelet's static policy needs a CPU reservation (``systemReserved.cpu + kubeReserved.cpu > 0``, or
  ``reservedSystemCPUs``); the Go tests call ``NewStaticPolicy`` with ``numReservedCPUs: 0``. Such a case
  reserves one CPU by ``reservedSystemCPUs``, chosen where the check the case is about still decides it
  (in the default set; outside it under strict-cpu-reservation).
- ``numReservedCPUs: n`` alone is ``kubeReserved.cpu: n`` (kubelet picks the CPUs, ``takeByTopology``, as
  the test's ``NewStaticPolicy`` does); a reserved list is ``reservedSystemCPUs`` (kubelet then takes the
  count from the list: ``TestStaticPolicyStartWithResvList``'s "inconsistency between numReservedCPUs and
  reserved" cannot happen on a node, and kubelet starts).
- The state tests call ``NewCheckpointState`` with a policy name and nothing else. A ``none`` case is a
  node with ``cpuManagerPolicy: none`` (its Start checks nothing after the restore). A ``static`` case is a
  node with ``cpuManagerPolicy: static`` whose validateState must then pass: the machine has CPU 0 (strictly
  reserved: ``reservedSystemCPUs: "0"`` and ``strict-cpu-reservation``) and exactly the CPUs the restored
  state counts (defaultCpuSet, entries, and podEntries when PodLevelResourceManagers is on).
- The state tests' v1 migration passes the runtime's containers (``initialContainers``); kubelet at a
  node's start passes the containers its runtime still has, which after a reboot are none (the judge: an
  empty map). A v1 file with entries is then refused (the note says so).
- The restored state itself (``expectedState``) is not observable on a node; ``held`` reads it back from
  the file kubelet leaves (its own rewrite where it writes one, v1.37's ``data`` part where it reads that).

Not translated (not start-up state of a node):
``TestStaticPolicyAdd*``/``Remove``/``ReuseCPUs``/``DoNotReuseCPUs``/``TopologyAwareAllocateCPUs``/
``AllocatePod``/``Lifecycle*``/``Options`` and the other ``policy_static_test.go`` tables (allocation on a
running manager); ``TestCPUManagerAdd``'s second case (a mock policy: no kubelet code to run) and every
assertion of ``TestCPUManagerAdd`` after the state is handed over (``Allocate``/``AddContainer`` of a pod on a
manager that never ran ``Start``: admission, not start-up; the state it is handed is one kubelet's Start
refuses, which is what the tree checks); ``TestCPUManagerAddWithInitContainers``, ``TestCPUManagerRemove``,
``TestReconcileState``, ``TestCPUManagerAddWithResvList``, ``TestCPUManagerGetAllocatableCPUs``,
``TestCPUManagerHandlePolicyOptions``/``TestCPUManagerGenerate`` (NewManager's construction from a policy
name, options and a reservation: no state); ``TestCheckpointStateStore``/``Helpers``/``Clear`` and the
``MarshalCheckpoint`` round-trip / forward-compatibility tests (what kubelet writes, with checksums computed,
not stated: covered by the files each release writes); ``TestCPUManagerRestoreState``
(policy_static_restore_test.go, v1.36+: not translated yet).
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, NamedTuple, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.tests.support import cputree

ALL = ("v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2")
R34 = ("v1.34.4", "v1.35.4", "v1.36.3")  # v1.34/v1.35's restore table, which v1.36's file holds too
R36 = ("v1.36.3",)
R37 = ("v1.37.2",)

Entries = Mapping[str, Mapping[str, str]]


class CpuTableCase(NamedTuple):
    test: str  # the Go test function
    case: str  # the case's description in its table
    releases: Tuple[str, ...]  # the releases whose test file holds the case
    cpus: Mapping[int, cputree.Cpu]  # cpu id -> (core id, physical package, NUMA node); every CPU online
    config: Mapping[str, Any]  # KubeletConfiguration fields (cpuManagerPolicy, reservation, options, featureGates)
    state: Optional[Tuple[str, Entries]] = None  # (defaultCpuSet, entries): a checkpoint we write (v2 and v4)
    content: Optional[str] = None  # a checkpoint verbatim ("" or None with state None: no file)
    expect: Optional[str] = None  # None: kubelet starts; else a piece of kubelet's error on this tree
    held: Optional[Tuple[str, Entries]] = None  # (defaultCpuSet, entries) kubelet holds after Start, from the test
    note: str = ""
    # The checksums the Go test holds valid: "v2": ``checksum`` is the v2 one (legacy name); "v3" / "v3-current": it is the v3
    # struct's (PodEntries empty) under the legacy name / under CPUManagerCheckpointV3; "v4": ``dataChecksum`` is its data's.
    vectors: Tuple[str, ...] = ()


def _topology(*spec: Tuple[int, int, int]) -> Dict[int, cputree.Cpu]:
    return dict(enumerate(spec))


# policy_test.go topoDualSocketHT: 12 CPUs, even ids on socket 0 / NUMA 0, odd on socket 1 / NUMA 1, core ids 0-5
# (cpu n and n+6 are siblings).
TOPO_DUAL_SOCKET_HT = {cpu: (cpu % 6, cpu % 2, cpu % 2) for cpu in range(12)}
# TestCPUManagerAdd's topology: 4 CPUs, one socket, 4 cores, no NUMA node id (0).
TOPO_ADD = _topology((0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0))


def flat(count: int) -> Dict[int, cputree.Cpu]:
    """The state tests' machine: ``count`` CPUs, one core each, one socket, one NUMA node."""
    return {cpu: (cpu, 0, 0) for cpu in range(count)}


STATIC = "static"
STRICT = {"strict-cpu-reservation": "true"}


def _static(**config: Any) -> Dict[str, Any]:
    return dict({"cpuManagerPolicy": STATIC}, **config)


# --- TestStaticPolicyStart, TestStaticPolicyStartWithResvList (policy_static_test.go) ----------------------

START = "TestStaticPolicyStart"
START_RESV = "TestStaticPolicyStartWithResvList"
NO_RESERVATION = "the test reserves no CPU, which kubelet refuses: the tree reserves CPU %s (reservedSystemCPUs), %s"


def _start_cases() -> Sequence[CpuTableCase]:
    topo = TOPO_DUAL_SOCKET_HT
    pod_0_2_3_4 = {"fakePod": {"0": "0-2", "1": "3-4"}}
    return [
        CpuTableCase(START, "non-corrupted state", ALL, topo, _static(reservedSystemCPUs="1"),
                     state=("1-11", {"fakePod": {"0": "0"}}), held=("1-11", {"fakePod": {"0": "0"}}),
                     note=NO_RESERVATION % ("1", "one of the default set")),
        CpuTableCase(START, "empty cpuset", ALL, topo, _static(kubeReserved={"cpu": "1"}), state=("", {}), held=("0-11", {})),
        CpuTableCase(START, "reserved cores 0 & 6 are not present in available cpuset", ALL, topo, _static(kubeReserved={"cpu": "2"}),
                     state=("0-1", {}), expect='not all reserved cpus: "0,6" are present in defaultCpuSet: "0-1"'),
        CpuTableCase(START, "some of reserved cores are present in available cpuset (StrictCPUReservationOption)", ALL, topo,
                     _static(kubeReserved={"cpu": "2"}, cpuManagerPolicyOptions=STRICT), state=("0-1", {}),
                     expect='some of strictly reserved cpus: "0" are present in defaultCpuSet: "0-1"'),
        CpuTableCase(START, "assigned core 2 is still present in available cpuset", ALL, topo, _static(reservedSystemCPUs="3"),
                     state=("2-11", {"fakePod": {"0": "0-2"}}),
                     expect='pod: fakePod, container: 0 cpuset: "0-2" overlaps with default cpuset "2-11"',
                     note=NO_RESERVATION % ("3", "one of the default set")),
        CpuTableCase(START, "assigned core 2 is still present in available cpuset (StrictCPUReservationOption)", ALL, topo,
                     _static(reservedSystemCPUs="0", cpuManagerPolicyOptions=STRICT), state=("2-11", {"fakePod": {"0": "0-2"}}),
                     expect='pod: fakePod, container: 0 cpuset: "0-2" overlaps with default cpuset "2-11"',
                     note=NO_RESERVATION % ("0", "outside the default set as strict-cpu-reservation wants it (the test's assignment holds "
                                                 "it: kubelet does not compare reserved CPUs with entries)")),
        CpuTableCase(START, "core 12 is not present in topology but is in state cpuset", ALL, topo, _static(reservedSystemCPUs="5"),
                     state=("5-12", pod_0_2_3_4), expect='current set of available CPUs "0-11" doesn\'t match with CPUs in state "0-12"',
                     note=NO_RESERVATION % ("5", "one of the default set")),
        CpuTableCase(START, "core 11 is present in topology but is not in state cpuset", ALL, topo, _static(reservedSystemCPUs="5"),
                     state=("5-10", pod_0_2_3_4), expect='current set of available CPUs "0-11" doesn\'t match with CPUs in state "0-10"',
                     note=NO_RESERVATION % ("5", "one of the default set")),
        CpuTableCase(START_RESV, "empty cpuset", ALL, topo, _static(reservedSystemCPUs="0-1"), state=("", {}), held=("0-11", {})),
        CpuTableCase(START_RESV, "empty cpuset with StrictCPUReservationOption enabled", ALL, topo,
                     _static(reservedSystemCPUs="0-1", cpuManagerPolicyOptions=STRICT), state=("", {}), held=("2-11", {})),
        CpuTableCase(START_RESV, "reserved cores 0 & 1 are not present in available cpuset", ALL, topo, _static(reservedSystemCPUs="0-1"),
                     state=("2-5", {}), expect='not all reserved cpus: "0-1" are present in defaultCpuSet: "2-5"'),
        CpuTableCase(START_RESV, "reserved cores 0 & 1 are present in available cpuset with StrictCPUReservationOption enabled", ALL, topo,
                     _static(reservedSystemCPUs="0-1", cpuManagerPolicyOptions=STRICT), state=("0-5", {}),
                     expect='some of strictly reserved cpus: "0-1" are present in defaultCpuSet: "0-5"'),
        CpuTableCase(START_RESV, "inconsistency between numReservedCPUs and reserved", ALL, topo,
                     _static(reservedSystemCPUs="0-1", kubeReserved={"cpu": "1"}), state=("0-11", {}), held=("0-11", {}),
                     note="the test expects NewStaticPolicy to refuse 1 reserved CPU against the list 0-1; on a node kubelet (cmd/kubelet/app) "
                          "replaces kube-reserved and system-reserved cpu with the list's size, so the two never disagree: kubelet starts"),
    ]


# --- TestCPUManagerAdd (cpu_manager_test.go) ----------------------------------------------------------------

ADD = "TestCPUManagerAdd"


def _add_cases() -> Sequence[CpuTableCase]:
    return [
        CpuTableCase(ADD, "cpu manager add - no error", ALL, TOPO_ADD, _static(reservedSystemCPUs="1"), state=("1-4", {}),
                     expect='current set of available CPUs "0-3" doesn\'t match with CPUs in state "1-4"',
                     note="the test hands its manager this state (defaultCPUSet 1-4 on CPUs 0-3) without Start and checks Allocate; at a "
                          "node's start kubelet's validateState refuses it (CPU 4 is not in the topology, CPU 0 is in no set), so no pod "
                          "is ever admitted on it. The test reserves no CPU: the tree reserves CPU 1 (reservedSystemCPUs)"),
    ]


# --- TestCheckpointStateRestore (state/state_checkpoint_test.go) ----------------------------------------------

RESTORE = "TestCheckpointStateRestore"
V3_COMPAT = "TestCPUManagerCheckpointV3_VerifyChecksum_Compatibility"
NONE = {"cpuManagerPolicy": "none"}
# A static case: CPU 0 strictly reserved, so the content's CPUs are exactly the ones kubelet hands out.
STATIC_STATE = _static(reservedSystemCPUs="0", cpuManagerPolicyOptions=STRICT)
CORRUPT = "checkpoint is corrupted"
NOT_FOUND = "not found in initial containers list"
V1_NOTE = ("the test passes the runtime's containers (containerID1, containerID2) to the migration; kubelet at a node's start has "
           "the containers its runtime still holds, none after a reboot: the migration refuses the file")
PLRM = "PodLevelResourceManagers"
IPVS = "InPlacePodVerticalScalingExclusiveCPUs"
# v1.36's test turns PodLevelResources on with PodLevelResourceManagers.
GATES_36_ON = {"PodLevelResources": True, PLRM: True}


def _doc(*parts: str) -> str:
    return "{%s}" % ",".join(parts)


POD_4_6_1_3 = '"entries":{"pod":{"container1":"4-6","container2":"1-3"}}'
V2_DEFAULT_4_6 = _doc('"policyName":"none"', '"defaultCPUSet":"4-6"', '"entries":{}', '"checksum":354655845')
V2_VALID = _doc('"policyName":"none"', '"defaultCPUSet":"1-3"', POD_4_6_1_3, '"checksum":3610638499')
V1_MIGRATION = _doc('"policyName":"none"', '"defaultCPUSet":"1-3"', '"entries":{"containerID1":"4-6","containerID2":"1-3"}',
                    '"checksum":3680390589')
V1_DEFAULT_ONLY = _doc('"policyName":"none"', '"defaultCPUSet":"1-3"', '"checksum":1694838852')
V3_36 = _doc('"policyName":"none"', '"defaultCPUSet":"1-3"', POD_4_6_1_3, '"podEntries":{"pod":{"cpuSet":"4-6"}}', '"checksum":2649431787')
HELD_1_3 = ("1-3", {"pod": {"container1": "4-6", "container2": "1-3"}})

# v1.37's contents.
STATIC_7_9 = '"policyName":"static","defaultCPUSet":"7-9",' + POD_4_6_1_3
DATA_7_9 = json.dumps('{"policyName":"static","defaultCPUSet":"7-9","entries":{"pod":{"container1":"4-6","container2":"1-3"}}}')
OTHER_V2 = '"policyName":"other","defaultCPUSet":"1-9","checksum":1234'  # the v2 part the test damages on purpose
V3_37 = _doc('"policyName":"static"', '"defaultCPUSet":"1-2"', '"entries":{"pod1":{"container1":"5-6","container2":"3-4"}}',
             '"podEntries":{"pod2":{"cpuSet":"7-9"}}', '"checksum":766259872')
V4_37 = _doc(OTHER_V2, '"data":' + json.dumps(
    '{"policyName":"static","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"7-9"}},'
    '"podEntries":{"pod":{"cpuSet":"4-10"}},"baselines":{"pod":{"container1":{"baseline":"4-5"},"container2":{"baseline":"7-8"}}}}'),
    '"dataChecksum":1032795074')
# v1.37's table writes v2-shaped files (no podEntries, no data) with a v3 checksum: 1942532442 is go-spew's dump of
# *state.CPUManagerCheckpointV3 (PodEntries map[]) under that name, which v1.37's v3 reader accepts (and v1.34-v1.36 do not).
V3_SUM_NOTE = ("policy static: CPU 0 strictly reserved, the state's CPUs are the rest; the file's checksum is a v3 one (the "
               "CPUManagerCheckpointV3 struct under its own name), which v1.37 reads through its v3 fallback")
HELD_7_9 = ("7-9", {"pod": {"container1": "4-6", "container2": "1-3"}})
HELD_V3 = ("1-2", {"pod1": {"container1": "5-6", "container2": "3-4"}})
HELD_V4 = ("1-3", {"pod": {"container1": "4-6", "container2": "7-9"}})


def _gates(plrm: Optional[bool] = None, ipvs: Optional[bool] = None) -> Dict[str, Any]:
    gates = {name: value for name, value in ((PLRM, plrm), (IPVS, ipvs)) if value is not None}
    return {"featureGates": gates} if gates else {}


def _restore_cases() -> Sequence[CpuTableCase]:
    none8, none10 = flat(8), flat(10)
    r34, r36, r37 = R34, R36, R37

    def none(releases, case, content, expect=None, held=None, note="", vectors=(), config=None, cpus=none8):
        return CpuTableCase(RESTORE, case, releases, cpus, NONE if config is None else config, content=content, expect=expect, held=held,
                            note=note, vectors=vectors)

    def static(releases, case, content, cpus, gates, expect=None, held=None, note="", vectors=(), test=RESTORE):
        return CpuTableCase(test, case, releases, cpus, dict(STATIC_STATE, **gates), content=content, expect=expect, held=held,
                            note=note or "policy static: CPU 0 strictly reserved, the state's CPUs are the rest", vectors=vectors)

    cases = [
        none(ALL, "Restore non-existing checkpoint", None, held=("", {})),
        # v1.34.4, v1.35.4 and v1.36.3 (policy none).
        none(r34, "Restore default cpu set", V2_DEFAULT_4_6, held=("4-6", {}), vectors=("v2",)),
        none(r34, "Restore valid checkpoint", V2_VALID, held=HELD_1_3, vectors=("v2",)),
        none(r34, "Restore checkpoint with invalid checksum", _doc('"policyName":"none"', '"defaultCPUSet":"4-6"', '"entries":{}',
                                                                   '"checksum":1337'), expect=CORRUPT),
        none(r34, "Restore checkpoint with invalid JSON", "{", expect="unexpected end of JSON input"),
        none(r34, "Restore checkpoint with invalid policy name", _doc('"policyName":"other"', '"defaultCPUSet":"1-3"', '"entries":{}',
                                                                      '"checksum":1394507217'),
             expect='configured policy "none" differs from state checkpoint policy "other"', vectors=("v2",)),
        none(r34, "Restore checkpoint with unparsable default cpu set", _doc('"policyName":"none"', '"defaultCPUSet":"1.3"', '"entries":{}',
                                                                             '"checksum":3021697696'),
             expect='could not parse default cpu set "1.3": strconv.Atoi: parsing "1.3": invalid syntax', vectors=("v2",)),
        none(r34, "Restore checkpoint with unparsable assignment entry",
             _doc('"policyName":"none"', '"defaultCPUSet":"1-3"', '"entries":{"pod":{"container1":"4-6","container2":"asd"}}',
                  '"checksum":962272150'),
             expect='could not parse cpuset "asd" for container "container2" in pod "pod": strconv.Atoi: parsing "asd": invalid syntax',
             vectors=("v2",)),
        none(r34, "Restore checkpoint from checkpoint with v1 checksum", V1_DEFAULT_ONLY, held=("1-3", {})),
        none(r34, "Restore checkpoint with migration", V1_MIGRATION, expect=NOT_FOUND, note=V1_NOTE),
        # v1.36.3 only.
        none(r36, "Restore checkpoint from v1 (migration) with PodLevelResourceManagers enabled", V1_MIGRATION, expect=NOT_FOUND,
             note=V1_NOTE, config=dict(NONE, featureGates=GATES_36_ON)),
        none(r36, "Restore checkpoint from v2 (migration) with PodLevelResourceManagers enabled", V2_VALID, held=HELD_1_3,
             config=dict(NONE, featureGates=GATES_36_ON), vectors=("v2",)),
        none(r36, "Restore checkpoint from v2 (migration) with PodLevelResourceManagers disabled", V2_VALID, held=HELD_1_3, vectors=("v2",)),
        none(r36, "Restore valid v3 checkpoint with PodLevelResourceManagers enabled", V3_36, held=HELD_1_3,
             config=dict(NONE, featureGates=GATES_36_ON)),
        none(r36, "Restore valid v3 checkpoint with PodLevelResourceManagers disabled", V3_36, expect="could not restore state from checkpoint"),
        none(r36, "Restore non-existing checkpoint with PodLevelResourceManagers enabled", None, held=("", {}),
             config=dict(NONE, featureGates=GATES_36_ON)),
        none(r36, "Restore corrupt checkpoint with PodLevelResourceManagers enabled",
             _doc('"policyName":"none"', '"defaultCPUSet":"1-3"', '"entries":{}', '"podEntries":{}', '"checksum":12345'), expect=CORRUPT,
             config=dict(NONE, featureGates=GATES_36_ON)),
        # v1.37.2 (its gate-free cases once, at the default gates).
        none(r37, "Fail to restore checkpoint without data section", _doc(STATIC_7_9, '"checksum":1942532442', '"dataChecksum":1234'),
             expect="could not load v4 checkpoint: failed to deserialize cpu manager checkpoint data: unexpected end of JSON input",
             vectors=("v3-current",)),
        none(r37, "Fail to restore checkpoint without dataChecksum section", _doc(STATIC_7_9, '"checksum":1942532442', '"data":' + DATA_7_9),
             expect="could not load v4 checkpoint: checkpoint is corrupted", vectors=("v3-current",)),
        none(r37, "Restore default CPU set", _doc(OTHER_V2, '"data":' + json.dumps('{"policyName":"none","defaultCPUSet":"4-6"}'),
                                                  '"dataChecksum":657950972'), held=("4-6", {}), vectors=("v4",)),
        static(r37, "Restore valid checkpoint with InPlacePodVerticalScalingExclusiveCPUs disabled",
               _doc(OTHER_V2, '"data":' + DATA_7_9, '"dataChecksum":1420829534'), none10, _gates(ipvs=False), held=HELD_7_9, vectors=("v4",)),
        static(r37, "Restore valid checkpoint with InPlacePodVerticalScalingExclusiveCPUs enabled",
               _doc(OTHER_V2, '"data":' + DATA_7_9, '"dataChecksum":1420829534'), none10, _gates(ipvs=True), held=HELD_7_9, vectors=("v4",)),
        static(r37, "Fail to restore checkpoint with invalid checksum",
               _doc(STATIC_7_9, '"checksum":1942532442', '"data":' + DATA_7_9, '"dataChecksum":1234'), none10, {}, expect=CORRUPT,
               vectors=("v3-current",)),
        none(r37, "Fail to restore checkpoint with invalid JSON", "{", expect="unexpected end of JSON input"),
        none(r37, "Fail to restore checkpoint with invalid policy name",
             _doc(STATIC_7_9, '"checksum":1942532442', '"data":' + json.dumps(
                 '{"policyName":"other","defaultCPUSet":"7-9","entries":{"pod":{"container1":"4-6","container2":"1-3"}}}'),
                 '"dataChecksum":1432271708'),
             expect='configured policy "none" differs from state checkpoint policy "other"', vectors=("v3-current", "v4")),
        none(r37, "Fail to restore checkpoint with unparsable default CPU set",
             _doc('"policyName":"none"', '"defaultCPUSet":"7-9"', '"checksum":98002435',
                  '"data":' + json.dumps('{"policyName":"none","defaultCPUSet":"1.3"}'), '"dataChecksum":3033143655'),
             expect='could not parse default CPU set "1.3": strconv.Atoi: parsing "1.3": invalid syntax', vectors=("v3", "v4")),
        static(r37, "Fail to restore checkpoint with unparsable assignment entry",
               _doc('"policyName":"static"', '"defaultCPUSet":"1-3"', '"entries":{"pod":{"container1":"4-6","container2":"7-9"}}',
                    '"checksum":1659543133', '"data":' + json.dumps(
                        '{"policyName":"static","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"asd"}}}'),
                    '"dataChecksum":3794806925'), none10, {},
               expect='could not parse cpuset "asd" for container "container2" in pod "pod": strconv.Atoi: parsing "asd": invalid syntax',
               vectors=("v3", "v4")),
        none(r37, "Restore checkpoint ignoring unknown fields in data section",
             _doc(OTHER_V2, '"data":' + json.dumps('{"policyName":"none","defaultCPUSet":"4-6","unknownField":"value"}'),
                  '"dataChecksum":3492408555'), held=("4-6", {}), vectors=("v4",)),
        none(r37, "Fail to restore checkpoint from checkpoint with v1 checksum", V1_DEFAULT_ONLY, expect=CORRUPT),
        static(r37, "Fail to restore checkpoint from v1 (migration)",
               _doc('"policyName":"static"', '"defaultCPUSet":"7-9"', '"entries":{"containerID1":"4-6","containerID2":"1-3"}',
                    '"checksum":2026311253'), none10, {}, expect="cannot unmarshal string into Go struct field CPUManagerCheckpointV2.entries"),
        static(r37, "Restore checkpoint from v2 (migration) with InPlacePodVerticalScalingExclusiveCPUs disabled",
               _doc(STATIC_7_9, '"checksum":1942532442'), none10, _gates(ipvs=False), held=HELD_7_9, vectors=("v3-current",),
               note=V3_SUM_NOTE),
        static(r37, "Restore checkpoint from v2 (migration) with InPlacePodVerticalScalingExclusiveCPUs enabled",
               _doc(STATIC_7_9, '"checksum":1942532442'), none10, _gates(ipvs=True), held=HELD_7_9, vectors=("v3-current",),
               note=V3_SUM_NOTE),
    ]
    v3_note = "policy static: CPU 0 strictly reserved, the state's CPUs are the rest (podEntries count only with PodLevelResourceManagers on)"
    for plrm in (False, True):
        for ipvs in (False, True):
            said = "PodLevelResourceManagers %s and InPlacePodVerticalScalingExclusiveCPUs %s" % (
                "enabled" if plrm else "disabled", "enabled" if ipvs else "disabled")
            cases.append(static(r37, "Restore checkpoint from v3 (migration) with " + said, V3_37, flat(10 if plrm else 7),
                                _gates(plrm=plrm, ipvs=ipvs), held=HELD_V3, note=v3_note))
    for plrm in (False, True):
        for ipvs in (False, True):
            said = "PodLevelResourceManagers %s and InPlacePodVerticalScalingExclusiveCPUs %s" % (
                "enabled" if plrm else "disabled", "enabled" if ipvs else "disabled")
            cases.append(static(r37, "Restore valid v4 checkpoint with " + said, V4_37, flat(11 if plrm else 10), _gates(plrm=plrm, ipvs=ipvs),
                                held=HELD_V4, note=v3_note, vectors=("v4",)))
    # TestCPUManagerCheckpointV3_VerifyChecksum_Compatibility: the restore table's v3 state with each checksum the test accepts.
    for name, number in (("accepts legacy v3 checksum", 766259872), ("accepts current v3 checksum", 2284712151)):
        cases.append(static(r37, name, V3_37.replace('"checksum":766259872', '"checksum":%d' % number), flat(10), _gates(plrm=True),
                            held=HELD_V3, test=V3_COMPAT,
                            note="the test verifies the checksum of this v3 state alone; the tree is the restore table's v3 file with it, "
                                 "PodLevelResourceManagers on (podEntries 7-9 count)"))
    return cases


# --- the corpus -----------------------------------------------------------------------------------------------


def table_cases() -> Dict[str, CpuTableCase]:
    """``{id: case}``; the id names the test, the releases holding the case (when not all), and the case."""
    cases: Dict[str, CpuTableCase] = {}
    for case in list(_start_cases()) + list(_add_cases()) + list(_restore_cases()):
        span = "" if case.releases == ALL else "[%s]" % ",".join(case.releases)
        name = "%s%s/%s" % (case.test, span, case.case)
        if name in cases:
            raise ValueError("two cases named %s" % name)
        cases[name] = case
    return cases


def layouts(case: CpuTableCase) -> Tuple[str, ...]:
    """The layouts a case's checkpoint is written in: v2 and v4 when we write it, else the case's own."""
    return ("v2", "v4") if case.state is not None else ("as-is",)


def checkpoint_bytes(case: CpuTableCase, layout: str) -> Optional[bytes]:
    """The file at the node's checkpoint path (``None``: no file)."""
    if case.state is not None:
        default, entries = case.state
        writer = cputree.cpu_checkpoint_v4 if layout == "v4" else cputree.cpu_checkpoint_v2
        return writer(case.config["cpuManagerPolicy"], default, entries)
    return case.content.encode("utf-8") if case.content else None


def build(root: str, case: CpuTableCase, layout: str) -> str:
    return cputree.build_cpu_node(root, case.cpus, None, case.config, checkpoint_bytes(case, layout))


def _field(document: Mapping[str, Any], name: str) -> Any:
    """A struct field as Go's encoding/json fills it (keys match case-insensitively: the tests write ``defaultCPUSet``)."""
    found = [value for key, value in document.items() if key.lower() == name.lower()]
    return found[-1] if found else None


def held_state(raw: bytes, minor: int) -> Tuple[str, Dict[str, Dict[str, str]]]:
    """(defaultCpuSet, entries) a file holds as a release reads it: v1.37 its ``data`` part when there is one."""
    document = json.loads(raw)
    data = _field(document, "data")
    if minor >= 37 and isinstance(data, str) and data:
        document = json.loads(data)
    return _field(document, "defaultCpuSet") or "", dict(_field(document, "entries") or {})
