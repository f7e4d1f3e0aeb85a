# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPU topology record: written at a good state, compared on the next probe, a moved pinned CPU refused."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.topology_record import (
    MAX_RECORD_BYTES,
    RecordError,
    moved_cpus,
    parse_record,
    record_bytes,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._guard import program as _guard
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import read_cpu_topology
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.lock import TOPOLOGY_RECORD_FILE
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.repair import repair_node
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.topology import record_topology
from ansible_collections.nodeops.numa_drift.tests.support import cputree
from ansible_collections.nodeops.numa_drift.tests.support.scenario import tree_snapshot

STATIC = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}}
POD = {"pod-a": {"app": "2,10"}}
ALL = list(range(16))
IN_SYNC = "0-1,3-9,11-15"


def siblings_paired(sockets: int = 2, cores_per_socket: int = 4):
    """The same 16 CPU ids numbered the other way firmware does it: a core's threads are ``2k`` and ``2k+1``."""
    out = {}
    for index in range(sockets * cores_per_socket):
        socket, core = divmod(index, cores_per_socket)
        for thread in range(2):
            out[2 * index + thread] = (core, socket, socket)
    return out


def tree(tmp_path, name, cpus, default, entries=None, online=None, config=None):
    return cputree.build_cpu_node(str(tmp_path / name), cpus, ALL if online is None else online, config or STATIC,
                                  cputree.cpu_checkpoint_v2("static", default, POD if entries is None else entries))


def recorded_at(root):
    """Record the node as it is (it must be in sync), as the boot guard does on a boot that needs nothing."""
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert result.cpu.cls == "in_sync", result.cpu.message
    path = record_topology(result)
    assert path == os.path.join(root, TOPOLOGY_RECORD_FILE)
    with open(path, "rb") as handle:
        return handle.read()


def carry_record(record, root):
    path = os.path.join(root, TOPOLOGY_RECORD_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(record)


def test_the_record_round_trips_each_online_cpus_placement(tmp_path):
    root = tree(tmp_path, "a", cputree.machine(sockets=2), IN_SYNC)
    record = parse_record(recorded_at(root))
    # CPU 2 and its sibling 10: socket 0, NUMA node 0, one core; every online CPU is recorded.
    assert record.placement[2] == record.placement[10] == (0, 0, frozenset({2, 10}))
    assert sorted(record.placement) == ALL and record.online == frozenset(ALL)
    topology = read_cpu_topology(HostFiles(root))
    assert moved_cpus(record, topology, frozenset({2, 10})) == frozenset()


def test_a_renumbering_that_keeps_the_ids_is_refused_although_kubelet_starts(tmp_path):
    """Firmware now numbers a core's threads 2k, 2k+1: CPUs 2 and 10 keep their ids but sit on other cores (10 on the
    other socket). Kubelet starts (it compares ids only); the collection refuses, names the pod, touches nothing."""
    record = recorded_at(tree(tmp_path, "before", cputree.machine(sockets=2), IN_SYNC))
    root = tree(tmp_path, "after", siblings_paired(), IN_SYNC)
    assert probe(HostFiles(root), kubelet_release="1.35.4").cpu.cls == "in_sync"  # without a record: kubelet's view
    carry_record(record, root)
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert (result.cpu.cls, result.cpu.verdict, result.cpu.pods) == ("assigned_cpu_moved", "cpu_checkpoint_untrusted", ("pod-a",))
    assert result.cpu.start.started  # kubelet's own start passes
    record_file = os.path.join(root, TOPOLOGY_RECORD_FILE)
    assert result.cpu.message == (
        "CPUs 2,10 of pods pod-a are on another core, socket or NUMA node than when this collection recorded them: kubelet never "
        "compares that, and would keep the pods pinned to other hardware (if the new placement is meant, drain the node, then "
        "remove %s and this collection's record %s)" % (os.path.join(root, "var/lib/kubelet/cpu_manager_state"), record_file))
    assert result.assessment.verdict == "cpu_checkpoint_untrusted" and not result.assessment.repairable
    before = tree_snapshot(root)
    outcome = repair_node(result)
    assert outcome.action == "refused" and "cpu_checkpoint_untrusted" in outcome.message
    assert tree_snapshot(root) == before


def test_a_moved_cpu_is_refused_where_only_the_default_set_would_be_stale(tmp_path):
    """CPUs recorded nowhere (repairable alone) beside a renumbering: no repair, kubelet's refusal stands."""
    record = recorded_at(tree(tmp_path, "before", cputree.machine(sockets=2), IN_SYNC))
    root = tree(tmp_path, "after", siblings_paired(), "0-1,3-5,8-9,11-13")
    carry_record(record, root)
    result = probe(HostFiles(root), kubelet_release="1.37.2")
    assert (result.cpu.cls, result.cpu.verdict) == ("assigned_cpu_moved", "cpu_manager_refuses"), result.cpu.message
    assert "doesn't match with CPUs in state" in result.cpu.message  # kubelet's own refusal is said too
    before = tree_snapshot(root)
    assert repair_node(result).action == "refused"
    assert tree_snapshot(root) == before


def test_a_pod_pinned_after_the_record_is_compared_too(tmp_path):
    """The record is the topology of the boot the pods were pinned on: a pod pinned later in that uptime is not in the
    record's past, and its CPUs are compared as well."""
    record = recorded_at(tree(tmp_path, "before", cputree.machine(sockets=2), "0-15", entries={}))
    root = tree(tmp_path, "after", siblings_paired(), IN_SYNC, entries={"pod-b": {"app": "2,10"}})
    carry_record(record, root)
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert (result.cpu.cls, result.cpu.pods) == ("assigned_cpu_moved", ("pod-b",)), result.cpu.message


@pytest.mark.parametrize("now_online, recorded_online", [
    (ALL, [cpu for cpu in ALL if cpu < 8]),  # SMT turned on: the pinned CPUs' siblings appear
    ([cpu for cpu in ALL if cpu != 11], ALL),  # an unpinned sibling (of CPU 3) offline
])
def test_siblings_that_come_or_go_are_not_a_move(tmp_path, now_online, recorded_online):
    cpus = cputree.machine(sockets=2)
    pod = {"pod-a": {"app": "2-3"}}
    reserved = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}  # kubelet's own pick would move with the online set
    before = tree(tmp_path, "before", cpus, cputree.rederive_default(recorded_online, pod), entries=pod, online=recorded_online, config=reserved)
    record = recorded_at(before)
    root = tree(tmp_path, "after", cpus, cputree.rederive_default(recorded_online, pod), entries=pod, online=now_online, config=reserved)
    carry_record(record, root)
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert result.cpu.cls in ("cpus_unrecorded", "shared_cpus_offline"), result.cpu.message


def test_an_unpinned_cpu_that_moved_is_not_a_refusal(tmp_path):
    cpus = cputree.machine(sockets=2)
    record = recorded_at(tree(tmp_path, "before", cpus, IN_SYNC))
    moved = dict(cpus)
    moved[7], moved[15] = (0, 1, 1), (0, 1, 1)  # an unpinned core's threads now counted with socket 1's core 0
    root = tree(tmp_path, "after", moved, IN_SYNC)
    carry_record(record, root)
    assert probe(HostFiles(root), kubelet_release="1.35.4").cpu.cls == "in_sync"


@pytest.mark.parametrize("online, said", [
    (ALL, "they were online when this collection last recorded the CPUs: a torn write leaked them"),
    (list(range(12)), "CPUs 12-15 were not online when this collection last recorded the CPUs: the online set grew"),
])
def test_cpus_recorded_nowhere_say_whether_the_set_grew_or_a_write_was_torn(tmp_path, online, said):
    cpus = cputree.machine(sockets=2)
    record = recorded_at(tree(tmp_path, "before", cpus, "0-1,3-9,11" if online != ALL else IN_SYNC, online=online))
    root = tree(tmp_path, "after", cpus, "0-1,3-5,8-9,11")
    carry_record(record, root)
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert result.cpu.cls == "cpus_unrecorded" and said in result.cpu.message, result.cpu.message


def test_a_repair_records_the_topology_it_kept(tmp_path):
    root = tree(tmp_path, "a", cputree.machine(sockets=2), "0-1,3-5,8-9,11-13")
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert result.cpu.cls == "cpus_unrecorded"
    assert repair_node(result).action == "repaired"
    with open(os.path.join(root, TOPOLOGY_RECORD_FILE), "rb") as handle:
        record = parse_record(handle.read())
    assert record.online == frozenset(ALL) and record.placement[2] == (0, 0, frozenset({2, 10}))


def test_the_guard_records_a_boot_that_needs_nothing_and_not_a_refused_one(tmp_path):
    cpus = cputree.machine(sockets=2)
    good = tree(tmp_path, "good", cpus, IN_SYNC)
    assert _guard.main(["--root", good]) == 0
    assert os.path.exists(os.path.join(good, TOPOLOGY_RECORD_FILE))
    fresh = cputree.build_cpu_node(str(tmp_path / "fresh"), cpus, ALL, STATIC)  # no cpu_manager_state: nothing pinned
    assert _guard.main(["--root", fresh]) == 0
    assert parse_record(open(os.path.join(fresh, TOPOLOGY_RECORD_FILE), "rb").read()).online == frozenset(ALL)
    refused = tree(tmp_path, "refused", cpus, IN_SYNC, online=[cpu for cpu in ALL if cpu != 10])  # a pinned CPU offline
    assert _guard.main(["--root", refused]) == 0
    assert not os.path.exists(os.path.join(refused, TOPOLOGY_RECORD_FILE))


ONE_CPU = '"online": "0", "cpus": {"0": {"socket": 0, "numa_node": 0, "threads": "0"}}'


@pytest.mark.parametrize("content, said", [
    (b"{", "not JSON"),
    (b'{"version": 2}', "not a version-1 record"),
    (('{"version": 1, %s}' % ONE_CPU.replace('"socket": 0', '"socket": true')).encode(), "cpus[0].socket is not a topology id"),
    (('{"version": 1, %s}' % ONE_CPU.replace('"threads": "0"', '"threads": "0-8191"')).encode(), "cpus[0].threads: more than 64 CPUs"),
    (('{"version": 1, %s}' % ONE_CPU.replace('"threads": "0"', '"threads": "1"')).encode(), "cpus[0] is not consistent"),
    (('{"version": 1, %s}' % ONE_CPU.replace('"online": "0"', '"online": "0-1"')).encode(), "one placement for each online CPU"),
    (('{"version": 1, %s}' % ONE_CPU.replace('"0": {', '"\u00b2": {')).encode(), "is not a CPU id"),
    (('{"version": 1, "boot_id": "%s", %s}' % ("x" * 65, ONE_CPU)).encode(), "boot_id is not a boot id"),
    (b'{"version": 1, "online": "0-8191", "cpus": {}}', "one placement for each online CPU"),
    (b" " * (MAX_RECORD_BYTES + 1), "larger than"),
])
def test_a_hostile_record_is_an_error_naming_what_is_wrong(content, said):
    with pytest.raises(RecordError) as raised:
        parse_record(content)
    assert said in str(raised.value)


def test_an_unreadable_record_makes_the_cpu_manager_unknown_only_where_it_would_be_compared(tmp_path):
    root = tree(tmp_path, "a", cputree.machine(sockets=2), IN_SYNC)
    carry_record(b"{", root)
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert (result.cpu.cls, result.cpu.verdict) == ("unknown", "cpu_manager_unknown")
    assert "CPU topology record %s cannot be read (not JSON" % os.path.join(root, TOPOLOGY_RECORD_FILE) in result.cpu.message
    assert "remove it once the pinned CPUs' placement is known good" in result.cpu.message
    # No pinned CPU: nothing to compare, the record is not read for a verdict.
    empty = tree(tmp_path, "b", cputree.machine(sockets=2), "0-15", entries={})
    carry_record(b"{", empty)
    assert probe(HostFiles(empty), kubelet_release="1.35.4").cpu.cls == "in_sync"


def test_the_record_holds_no_more_than_placements(tmp_path):
    """What the node keeps (and the probe reads back): versions, ids, CPU lists; nothing from kubelet's keys or config."""
    root = tree(tmp_path, "a", cputree.machine(sockets=2), IN_SYNC)
    document = json.loads(recorded_at(root))
    assert sorted(document) == ["boot_id", "cpus", "online", "time", "version"]
    assert document["cpus"]["2"] == {"socket": 0, "numa_node": 0, "threads": "2,10"}
    shutil.rmtree(root)
    assert parse_record(record_bytes(read_cpu_topology(HostFiles(str(tmp_path))), None, 0.0)).placement == {}
