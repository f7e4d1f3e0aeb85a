# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPU manager's checkpoint (issue 38), judged by kubelet's own CPU-manager start at every release.

Each case is a node tree: a machine of 2 sockets x 4 cores x 2 threads (CPUs 0-15, ``cpuN`` and
``cpuN+8`` siblings, one NUMA node per socket) with some CPUs offline, kubelet's configuration
(``cpuManagerPolicy: static``, one CPU of kube-reserved unless said) and a ``cpu_manager_state``
in the layout the release writes (v2 up to v1.36, v4 at v1.37) unless the case says otherwise.
The judge (``judge.judge_cpu``) runs ``cpumanager.NewManager`` + ``Start`` on a copy of the file.

What each test asserts is the claim of docs/dev/kubelet-versions.md ("The CPU manager") and of
issue 38, in kubelet's words (its error texts, formed from the case's CPU sets and the reserved
CPUs kubelet itself picked on the tree): kubelet's code has to give exactly that, release by release.
The repaired file of each repairable class (``defaultCpuSet`` re-derived, entries verbatim) must
start at every release and come out of Start byte-identical.
"""

from __future__ import annotations

import json
from typing import Dict, List, Mapping, Optional, Sequence

import pytest

from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build, matrix
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.judge import CpuJudgement, judge_cpu
from ansible_collections.nodeops.numa_drift.tests.support import cputree
from ansible_collections.nodeops.numa_drift.tests.support.cputree import cpu_list, parse_cpu_list

CPUS = cputree.machine(sockets=2, cores_per_socket=4, threads_per_core=2)
ALL = sorted(CPUS)
STATIC = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}}
STRICT = dict(STATIC, cpuManagerPolicyOptions={"strict-cpu-reservation": "true"})
# One Guaranteed pod holding a full core (core 2 of socket 0: CPUs 2 and 10).
POD = {"pod-a": {"app": "2,10"}}
PREFIX = "start cpu manager error: "
RESTORE = PREFIX + ("could not restore state from checkpoint: %s, please drain this node and delete the CPU manager checkpoint "
                    'file "/var/lib/kubelet/cpu_manager_state" before restarting Kubelet')


def minor(release: str) -> int:
    return int(release.split(".")[1])


def corrupted(release: str, with_entries: bool) -> str:
    """What a v2 file whose checksum fails gets: ``checkpoint is corrupted``, except at v1.36, whose
    restore falls back v3 -> v2 -> v1 and returns the v1 attempt's error (state_checkpoint.go
    loadAndMigrateCheckpointV2: "Return the last error we got"): a file with entries does not
    unmarshal as v1 (entries there map a container id to a string)."""
    if minor(release) == 36 and with_entries:
        return "json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of type string"
    return "checkpoint is corrupted"


def layout_of(release: str) -> str:
    """The layout the release writes: v4 (``data`` + ``dataChecksum``) from v1.37, v2 before."""
    return "v4" if minor(release) >= 37 else "v2"


def content(layout: str, default: str, entries: Mapping[str, Mapping[str, str]], policy: str = "static", **override) -> bytes:
    if layout == "v4":
        return cputree.cpu_checkpoint_v4(policy, default, entries, **override)
    return cputree.cpu_checkpoint_v2(policy, default, entries, **override)


def run(judges, release: str, root: str, online: Sequence[int], config: Mapping[str, object], checkpoint: Optional[bytes],
        cpus: Optional[Mapping[int, cputree.Cpu]] = None) -> CpuJudgement:
    cputree.build_cpu_node(root, CPUS if cpus is None else cpus, online, config, checkpoint)
    return judge_cpu(judges[release], root)


def releases() -> Sequence[str]:
    return build.selected_releases()


def b3(online: Sequence[int], default: str, entries: Mapping[str, Mapping[str, str]], reserved: Sequence[int] = ()) -> str:
    """validateState's check 3: default ∪ entries must equal the online CPUs (minus reserved when strict)."""
    available = cpu_list(sorted(set(online) - set(reserved)))
    union = cpu_list(sorted(set(parse_cpu_list(default)) | set(cputree.assigned(entries))))
    return PREFIX + "current set of available CPUs \"%s\" doesn't match with CPUs in state \"%s\"" % (available, union)


def b1a(reserved: str, default: str) -> str:
    return PREFIX + 'not all reserved cpus: "%s" are present in defaultCpuSet: "%s"' % (reserved, default)


def b1b(reserved: Sequence[int], default: str) -> str:
    inside = cpu_list(sorted(set(reserved) & set(parse_cpu_list(default))))
    return PREFIX + 'some of strictly reserved cpus: "%s" are present in defaultCpuSet: "%s"' % (inside, default)


def refusal(online: Sequence[int], default: str, entries: Mapping[str, Mapping[str, str]], reserved: Sequence[int], strict: bool) -> str:
    """What validateState says of a file whose entries do not overlap its default set, in its order:
    the reserved check first (reserved ⊆ default; strict: reserved ∩ default = ∅), then check 3."""
    in_default = set(reserved) & set(parse_cpu_list(default))
    if strict and in_default:
        return b1b(reserved, default)
    if not strict and in_default != set(reserved):
        return b1a(cpu_list(reserved), default)
    return b3(online, default, entries, reserved if strict else ())


def said(judgement: CpuJudgement) -> str:
    """What kubelet did, for the matrix: ``starts``, or the stage and kubelet's error."""
    if judgement.started:
        return "starts" + (", file rewritten" if judgement.changed else "")
    return "%s: `%s`" % (judgement.stage, judgement.error[len(PREFIX):] if judgement.error.startswith(PREFIX) else judgement.error)


def note(case: str, *judgements: CpuJudgement, labels: Sequence[str] = ()) -> None:
    parts = [("%s: %s" % (label, said(j)) if label else said(j)) for label, j in zip(list(labels) + [""] * len(judgements), judgements)]
    matrix.record_cpu(case, judgements[0].release, "; ".join(parts))


def show(judgement: CpuJudgement) -> str:
    return "%s: %s (online %s, reserved %s)" % (judgement.release, judgement.brief(), judgement.online, judgement.reserved)


def assert_starts_unchanged(judgement: CpuJudgement) -> None:
    assert judgement.started and judgement.stage == "started", show(judgement)
    assert judgement.after == judgement.before, "kubelet rewrote the file: %s -> %s" % (judgement.before, judgement.after)


# --- Writers against kubelet's own cpumanager unit-test vectors -----------------------------------


def test_v2_checksum_is_kubelets_test_vector():
    # v1.34.4 state/state_checkpoint_test.go TestCheckpointStateRestore "Restore valid checkpoint".
    assert cputree.cpu_v2_checksum("none", "1-3", {"pod": {"container1": "4-6", "container2": "1-3"}}) == 3610638499


@pytest.mark.parametrize("data, expected", [
    # v1.37.2 state/state_checkpoint_test.go TestCheckpointStateRestore "Restore default CPU set".
    ('{"policyName":"none","defaultCPUSet":"4-6"}', 657950972),
    # ... "Restore valid checkpoint with InPlacePodVerticalScalingExclusiveCPUs disabled".
    ('{"policyName":"static","defaultCPUSet":"7-9","entries":{"pod":{"container1":"4-6","container2":"1-3"}}}', 1420829534),
])
def test_data_checksum_is_kubelets_test_vector(data, expected):
    assert cputree.cpu_data_checksum(data) == expected


def test_v4_writer_keeps_both_halves_consistent():
    raw = cputree.cpu_checkpoint_v4("static", "0-1,3-9,11-15", POD)
    document = json.loads(raw)
    assert json.loads(document["data"]) == {"policyName": "static", "defaultCpuSet": "0-1,3-9,11-15", "entries": POD}
    assert document["checksum"] == cputree.cpu_v2_checksum("static", "0-1,3-9,11-15", POD)
    assert document["dataChecksum"] == cputree.cpu_data_checksum(document["data"])
    assert raw.startswith(cputree.cpu_checkpoint_v2("static", "0-1,3-9,11-15", POD)[:-1] + b",")


@pytest.mark.parametrize("release", releases())
def test_a_file_kubelet_writes_is_what_the_writer_writes(judges, release, tmp_path):
    """No file: kubelet's Start initialises one (defaultCpuSet = every online CPU); our writer must
    give the same bytes for the same state, in the release's layout."""
    online = [cpu for cpu in ALL if cpu not in (7, 15)]
    judgement = run(judges, release, str(tmp_path), online, STATIC, None)
    note("no file (7,15 offline): kubelet writes one", judgement)
    assert judgement.started and judgement.before is None and judgement.after is not None, show(judgement)
    assert judgement.after == content(layout_of(release), cpu_list(online), {}), judgement.after


# --- Kubelet's own TestCheckpointStateRestore rows, as files on a node --------------------------

NONE = {"cpuManagerPolicy": "none"}
V2_VALID = ('{"policyName":"none","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"1-3"}},'
            '"checksum":3610638499}').encode()
V2_BAD_SUM = V2_VALID.replace(b"3610638499", b"1337")
V4_BAD_V2_PART = ('{"policyName":"other","defaultCPUSet":"1-9","checksum":1234,'
                  '"data":"{\\"policyName\\":\\"none\\",\\"defaultCPUSet\\":\\"4-6\\"}","dataChecksum":657950972}').encode()


@pytest.mark.parametrize("release", releases())
@pytest.mark.parametrize("row, raw, started_from", [
    ("v1.34 Restore valid checkpoint", V2_VALID, 34),
    ("v1.34 Restore checkpoint with invalid checksum", V2_BAD_SUM, 99),
    # v1.37's row: the v2 part is corrupted on purpose; only v1.37 reads the data part.
    ("v1.37 Restore default CPU set", V4_BAD_V2_PART, 37),
])
def test_kubelet_unit_rows_at_every_release(judges, release, tmp_path, row, raw, started_from):
    judgement = run(judges, release, str(tmp_path), ALL, NONE, raw)
    note("TestCheckpointStateRestore %s (policy none)" % row, judgement)
    if minor(release) >= started_from:
        assert judgement.started, "%s: %s" % (row, show(judgement))
    else:
        expected = RESTORE % corrupted(release, b'"entries"' in raw.split(b'"data"')[0])
        assert (judgement.stage, judgement.error) == ("restore", expected), "%s: %s" % (row, show(judgement))


# --- The drift classes of issue 38 --------------------------------------------------------------


@pytest.mark.parametrize("release", releases())
def test_in_sync_starts_and_keeps_the_file(judges, release, tmp_path):
    raw = content(layout_of(release), cputree.rederive_default(ALL, POD), POD)
    judgement = run(judges, release, str(tmp_path), ALL, STATIC, raw)
    note("in sync", judgement)
    assert_starts_unchanged(judgement)


def _repairable(judges, release, tmp_path, case: str, online: Sequence[int], default: str, strict: bool = False) -> None:
    """A repairable class: kubelet refuses the file as it is (validateState's check 3, with the
    reserved CPUs kubelet picks on this boot still in the shared pool), and starts on the file
    re-derived (default = online - assigned, or - reserved too when strict), entries verbatim."""
    layout = layout_of(release)
    config = STRICT if strict else STATIC
    before = run(judges, release, str(tmp_path / "before"), online, config, content(layout, default, POD))
    reserved = parse_cpu_list(before.reserved)
    assert reserved and not set(reserved) & set(cputree.assigned(POD)), show(before)
    assert (before.stage, before.error) == ("validate", refusal(online, default, POD, reserved, strict)), show(before)
    assert before.after == before.before, "a refused file must not be rewritten"
    repaired = cputree.rederive_default(online, POD, reserved if strict else ())
    after = run(judges, release, str(tmp_path / "after"), online, config, content(layout, repaired, POD))
    note(case, before, after, labels=("as found", "after repair"))
    assert_starts_unchanged(after)
    assert cputree.read_cpu_checkpoint(after.after)[2] == POD


@pytest.mark.parametrize("release", releases())
def test_online_set_grew(judges, release, tmp_path):
    # Recorded with CPUs 6,7,14,15 offline (a VM given 4 more vCPUs, maxcpus= removed).
    recorded = [cpu for cpu in ALL if cpu not in (6, 7, 14, 15)]
    _repairable(judges, release, tmp_path, "online set grew (6,7,14,15 onlined)", ALL, cputree.rederive_default(recorded, POD))


@pytest.mark.parametrize("release", releases())
def test_online_set_grew_strict_cpu_reservation(judges, release, tmp_path):
    """Under strict-cpu-reservation the file's default set leaves out the reserved CPUs of the
    recorded boot: kubelet's own pick there (the socket with fewer online CPUs), which moves when
    the set grows; kubelet then names the moved reserved CPU (some of strictly reserved cpus ...)."""
    recorded = [cpu for cpu in ALL if cpu not in (6, 7, 14, 15)]
    probe = run(judges, release, str(tmp_path / "probe"), recorded, STRICT, None)
    reserved = parse_cpu_list(probe.reserved)
    assert reserved, show(probe)
    _repairable(judges, release, tmp_path, "online set grew, strict-cpu-reservation", ALL, cputree.rederive_default(recorded, POD, reserved),
                strict=True)


@pytest.mark.parametrize("release", releases())
def test_shared_only_cpus_removed(judges, release, tmp_path):
    # CPUs 7 and 15 (a shared core of socket 1) went offline; the pod's core is untouched.
    online = [cpu for cpu in ALL if cpu not in (7, 15)]
    _repairable(judges, release, tmp_path, "shared-only CPUs removed (7,15 offline)", online, cputree.rederive_default(ALL, POD))


@pytest.mark.parametrize("release", releases())
def test_torn_two_step_write_leak(judges, release, tmp_path):
    # Killed between SetDefaultCPUSet(D - new) and SetCPUSet(new): CPU 5 in neither half.
    leaked = cpu_list(sorted(set(parse_cpu_list(cputree.rederive_default(ALL, POD))) - {5}))
    _repairable(judges, release, tmp_path, "torn two-step write (CPU 5 leaked)", ALL, leaked)


@pytest.mark.parametrize("release", releases())
def test_assigned_cpu_offline_refuses(judges, release, tmp_path):
    # CPU 10 (the pod's second thread) offline: SMT turned off for a core, hot-unplug.
    online = [cpu for cpu in ALL if cpu != 10]
    default = cputree.rederive_default(ALL, POD)
    judgement = run(judges, release, str(tmp_path), online, STATIC, content(layout_of(release), default, POD))
    repaired = cputree.rederive_default(online, POD)
    again = run(judges, release, str(tmp_path / "repaired"), online, STATIC, content(layout_of(release), repaired, POD))
    note("assigned CPU offline (10)", judgement, again, labels=("as found", "default re-derived"))
    expected = refusal(online, default, POD, parse_cpu_list(judgement.reserved), False)
    assert (judgement.stage, judgement.error) == ("validate", expected), show(judgement)
    # No re-derived defaultCpuSet helps: the entry names an offline CPU.
    assert not again.started and again.stage == "validate", show(again)


@pytest.mark.parametrize("release", releases())
def test_reserved_overlapping_an_assignment_refuses(judges, release, tmp_path):
    config = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}
    entries = {"pod-a": {"app": "0,8"}}
    default = cputree.rederive_default(ALL, entries)
    judgement = run(judges, release, str(tmp_path), ALL, config, content(layout_of(release), default, entries))
    note("reservedSystemCPUs 0 overlapping an assignment (0,8)", judgement)
    assert judgement.reserved == "0", show(judgement)
    assert (judgement.stage, judgement.error) == ("validate", b1a("0", default)), show(judgement)


@pytest.mark.parametrize("release", releases())
def test_reserved_cpus_not_online_refuse_before_the_manager(judges, release, tmp_path):
    config = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,15"}
    online = [cpu for cpu in ALL if cpu != 15]
    judgement = run(judges, release, str(tmp_path), online, config, None)
    note("reservedSystemCPUs 0,15 with 15 offline", judgement)
    assert judgement.stage == "construct", show(judgement)
    assert judgement.error == "reserved-cpus: 0,15 is not a subset of online-cpus: %s" % cpu_list(online), show(judgement)


@pytest.mark.parametrize("release", releases())
def test_policy_changed_refuses(judges, release, tmp_path):
    raw = content(layout_of(release), cpu_list(ALL), {}, policy="none")
    judgement = run(judges, release, str(tmp_path), ALL, STATIC, raw)
    note("policy changed (file none, config static)", judgement)
    assert (judgement.stage, judgement.error) == ("restore", RESTORE % 'configured policy "static" differs from state checkpoint policy "none"'), \
        show(judgement)


@pytest.mark.parametrize("release", releases())
def test_checksum_bad_refuses(judges, release, tmp_path):
    default = cputree.rederive_default(ALL, POD)
    if layout_of(release) == "v4":
        raw = content("v4", default, POD, data_checksum=cputree.cpu_data_checksum(cputree.cpu_data("static", default, POD)) ^ 1)
        expected = RESTORE % "could not load v4 checkpoint: checkpoint is corrupted"
    else:
        raw = content("v2", default, POD, checksum=cputree.cpu_v2_checksum("static", default, POD) ^ 1)
        expected = RESTORE % corrupted(release, True)
    judgement = run(judges, release, str(tmp_path), ALL, STATIC, raw)
    note("checksum bad (v2 checksum; v4: dataChecksum)", judgement)
    assert (judgement.stage, judgement.error) == ("restore", expected), show(judgement)


@pytest.mark.parametrize("release", releases())
def test_checksum_zero_starts_unverified(judges, release, tmp_path):
    """``"checksum": 0`` is taken without a check ("compat with old file backend") at every release:
    kubelet starts on it, so nothing but our own probe can refuse it."""
    raw = content("v2", cputree.rederive_default(ALL, POD), POD, checksum=0)
    judgement = run(judges, release, str(tmp_path), ALL, STATIC, raw)
    note("`checksum: 0` (v2 layout)", judgement)
    assert_starts_unchanged(judgement)


@pytest.mark.parametrize("release", releases())
def test_v4_with_a_broken_data_part(judges, release, tmp_path):
    """The v2 half intact, ``data`` changed (a CPU moved from the shared pool to nowhere) under its
    old ``dataChecksum``: the releases before v1.37 read the v2 half only and start; v1.37 refuses."""
    default = cputree.rederive_default(ALL, POD)
    good = cputree.cpu_data("static", default, POD)
    broken = good.replace(default, cpu_list(sorted(set(parse_cpu_list(default)) - {5})))
    raw = cputree.cpu_checkpoint_v4("static", default, POD, data=broken, data_checksum=cputree.cpu_data_checksum(good))
    judgement = run(judges, release, str(tmp_path), ALL, STATIC, raw)
    note("v4 with a broken `data` part", judgement)
    if minor(release) >= 37:
        assert (judgement.stage, judgement.error) == ("restore", RESTORE % "could not load v4 checkpoint: checkpoint is corrupted"), show(judgement)
    else:
        assert_starts_unchanged(judgement)


def _auto_reserved(judges, release, root, online) -> List[int]:
    return parse_cpu_list(run(judges, release, root, online, STATIC, None).reserved)


@pytest.mark.parametrize("release", releases())
def test_auto_reserved_cpu_moves_onto_an_assigned_cpu(judges, release, tmp_path):
    """reservedSystemCPUs unset: kubelet picks the reserved CPU itself (takeByTopology) and the pick
    follows the online set. Recorded: every CPU online, the pod on socket 1's first core (4,12).
    Socket 0's CPUs go offline (all in the shared pool): kubelet's new pick lands on the pod's CPU,
    and the file re-derived as for a shared-only removal is refused all the same."""
    entries = {"pod-b": {"app": "4,12"}}
    recorded_reserved = _auto_reserved(judges, release, str(tmp_path / "recorded"), ALL)
    assert recorded_reserved and not set(recorded_reserved) & {4, 12}
    online = [cpu for cpu in ALL if CPUS[cpu][1] == 1]
    moved = _auto_reserved(judges, release, str(tmp_path / "moved"), online)
    assert set(moved) & {4, 12}, "kubelet's pick on %s: %s" % (cpu_list(online), moved)
    repaired = cputree.rederive_default(online, entries)
    judgement = run(judges, release, str(tmp_path / "judged"), online, STATIC, content(layout_of(release), repaired, entries))
    note("auto-reserved CPU moves (socket 0 offline, pod on 4,12), default re-derived", judgement)
    assert (judgement.stage, judgement.error) == ("validate", b1a(cpu_list(moved), repaired)), show(judgement)


@pytest.mark.parametrize("release", releases())
def test_offline_cpus_are_left_out_of_the_topology(judges, release, tmp_path):
    """cAdvisor's GetTopology skips offline CPUs (their sysfs directories stay): the judge's machine."""
    online = [cpu for cpu in ALL if cpu not in (3, 11, 14)]
    judgement = run(judges, release, str(tmp_path), online, STATIC, None)
    assert judgement.online == cpu_list(online), show(judgement)
    threads: Dict[int, List[int]] = {}
    for node in judgement.machine:
        for core in node["cores"]:
            threads.setdefault(node["node_id"], []).extend(core["thread_ids"])
    assert {node: sorted(ids) for node, ids in threads.items()} == {
        0: [cpu for cpu in online if CPUS[cpu][2] == 0], 1: [cpu for cpu in online if CPUS[cpu][2] == 1]}


@pytest.mark.parametrize("release", releases())
def test_two_pods_claiming_one_cpu_start(judges, release, tmp_path):
    """validateState never compares entries with each other (an app container may reuse its init
    container's CPUs): two pods holding CPU 3 start at every release, so only our probe can refuse it."""
    entries = {"pod-a": {"app": "2,10"}, "pod-b": {"app": "3,11"}, "pod-c": {"app": "3"}}
    raw = content(layout_of(release), cputree.rederive_default(ALL, entries), entries)
    judgement = run(judges, release, str(tmp_path), ALL, STATIC, raw)
    note("two pods claiming CPU 3", judgement)
    assert_starts_unchanged(judgement)


@pytest.mark.parametrize("release", releases())
def test_renumbered_topology_with_the_same_cpu_ids_starts(judges, release, tmp_path):
    """kubelet compares CPU ids only: the pod's CPUs 2 and 10 moved to another core and socket
    (firmware renumbering, SNC/NPS toggled) with the same online ids, and kubelet starts."""
    renumbered = dict(CPUS)
    renumbered[2], renumbered[6] = CPUS[6], CPUS[2]
    renumbered[10], renumbered[14] = CPUS[14], CPUS[10]
    raw = content(layout_of(release), cputree.rederive_default(ALL, POD), POD)
    judgement = run(judges, release, str(tmp_path), ALL, STATIC, raw, cpus=renumbered)
    note("pod's CPUs moved to socket 1, same ids", judgement)
    assert_starts_unchanged(judgement)
    placed = {thread: node["node_id"] for node in judgement.machine for core in node["cores"] for thread in core["thread_ids"]}
    assert (placed[2], placed[10]) == (1, 1), placed
