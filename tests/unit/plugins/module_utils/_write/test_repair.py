# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_write/repair.py: the checkpoint write path called directly (no module around it).

Each case builds a node tree, probes it, calls the engine's write and then checks the files: the checkpoint's
bytes, the backup, the history, and that a refusal leaves every file byte-identical.
"""

from __future__ import annotations

import json
import os
import stat

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import procedure, repair
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import history_path
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    KIB,
    MIB,
    checkpoint_file,
    guaranteed_pods,
    tree_snapshot,
    two_node_boot,
    write_kubelet_node,
)


def drifted(tmp_path, drift_kib=40 * MIB // KIB, name="node"):
    recorded = two_node_boot()
    return write_kubelet_node(str(tmp_path / name), recorded, recorded.moved(node0=-drift_kib, node1=drift_kib),
                              pods=guaranteed_pods(3, (0,)))


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def test_repair_writes_the_plan_keeps_a_private_backup_and_records_it(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    assert result.assessment.verdict == "drift_within_bound"
    original = read(checkpoint_file(root))
    outcome = repair.repair_node(result, by="role")
    assert (outcome.changed, outcome.action, outcome.verdict_before, outcome.after.verdict) == (True, "repaired", "drift_within_bound", "in_sync")
    assert read(checkpoint_file(root)) == result.assessment.plan.content
    assert probe(HostFiles(root)).assessment.verdict == "in_sync"
    # The original bytes, mode 0600 in a 0700 directory under <root>/var/lib/nodeops-numa-drift/backups.
    assert os.path.dirname(outcome.backup_file) == procedure.default_backup_dir(root)
    assert read(outcome.backup_file) == original
    assert stat.S_IMODE(os.stat(outcome.backup_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(outcome.backup_file)).st_mode) == 0o700
    [entry] = json.loads(read(history_path(root)))["repairs"]
    assert (entry["action"], entry["by"], entry["verdict_before"], entry["backup_file"]) == ("repaired", "role", "drift_within_bound", outcome.backup_file)
    assert "pending" not in entry  # settled once the checkpoint was written


def test_dry_run_touches_nothing_and_says_what_it_would_write(tmp_path):
    root = drifted(tmp_path)
    before = tree_snapshot(root)
    outcome = repair.repair_node(probe(HostFiles(root)), dry_run=True)
    assert (outcome.changed, outcome.action, outcome.verdict_after) == (True, "dry_run", "in_sync")
    assert outcome.message.startswith("dry run: would repair: ")
    assert tree_snapshot(root) == before


def test_a_drift_beyond_the_bound_is_refused_and_every_file_stays_byte_identical(tmp_path):
    root = drifted(tmp_path, drift_kib=4 * GIB // KIB)
    result = probe(HostFiles(root))
    assert result.assessment.verdict == "drift_exceeds_bound"
    before = tree_snapshot(root)
    outcome = repair.repair_node(result)
    assert (outcome.changed, outcome.action) == (False, "refused")
    assert outcome.message.startswith("refusing to repair %s: verdict drift_exceeds_bound: " % result.path)
    assert tree_snapshot(root) == before


def test_a_checkpoint_rewritten_after_the_probe_is_not_overwritten(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    other = drifted(tmp_path, drift_kib=80 * MIB // KIB, name="other")
    foreign = read(checkpoint_file(other))[:-1] + b" "  # kubelet (or someone) wrote the file meanwhile
    with open(checkpoint_file(root), "wb") as handle:
        handle.write(foreign)
    with pytest.raises(procedure.RepairError) as raised:
        repair.repair_node(result)
    assert "changed while it was being assessed" in raised.value.message and "Nothing was touched" in raised.value.message
    assert read(checkpoint_file(root)) == foreign
    assert not os.path.exists(procedure.default_backup_dir(root))


def test_a_second_run_on_the_old_probe_finds_the_file_already_in_sync(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    repair.repair_node(result)
    repaired = read(checkpoint_file(root))
    outcome = repair.repair_node(result)  # the same (stale) probe: another run repaired it meanwhile
    assert (outcome.changed, outcome.verdict_after) == (False, "in_sync")
    assert "already in sync" in outcome.message
    assert read(checkpoint_file(root)) == repaired


def test_the_loop_guard_stops_a_repair_too_many_times_in_the_window(tmp_path):
    root = drifted(tmp_path)
    assert repair.repair_node(probe(HostFiles(root))).action == "repaired"
    # The node drifts again after the next boot; one repair allowed per window.
    again = drifted(tmp_path, name="again")
    os.replace(checkpoint_file(again), checkpoint_file(root))
    result = probe(HostFiles(root))
    assert result.assessment.verdict == "drift_within_bound"
    before = tree_snapshot(root)
    outcome = repair.repair_node(result, loop_max_repairs=1)
    assert (outcome.changed, outcome.action, outcome.loop_tripped) == (False, "loop_guard", True)
    assert tree_snapshot(root) == before


def test_backup_false_writes_no_backup(tmp_path):
    root = drifted(tmp_path)
    outcome = repair.repair_node(probe(HostFiles(root)), backup=False)
    assert outcome.action == "repaired" and outcome.backup_file is None
    assert "backup none (backup=false)" in outcome.message
    assert not os.path.exists(procedure.default_backup_dir(root))


def test_an_in_sync_node_is_left_as_it_is(tmp_path):
    root = drifted(tmp_path, drift_kib=0)
    before = tree_snapshot(root)
    outcome = repair.repair_node(probe(HostFiles(root)))
    assert (outcome.changed, outcome.action, outcome.verdict_after) == (False, "none", "in_sync")
    assert tree_snapshot(root) == before


def _with_cpu_manager(root, online, default, entries):
    """A static CPU manager beside the memory drift: 2 sockets x 4 cores x 2 threads, one NUMA node per socket."""
    from ansible_collections.nodeops.numa_drift.tests.support import cputree  # pylint: disable=import-outside-toplevel

    config_path = os.path.join(root, "var/lib/kubelet/config.yaml")
    config = json.loads(read(config_path))
    config.update(cpuManagerPolicy="static", kubeReserved=dict(config.get("kubeReserved") or {}, cpu="1"))
    with open(config_path, "w", encoding="utf-8") as handle:
        json.dump(config, handle)
    cputree.add_cpu_topology(root, cputree.machine(sockets=2, cores_per_socket=4, threads_per_core=2), online)
    cputree.write_cpu_checkpoint(root, cputree.cpu_checkpoint_v2("static", default, entries))


@pytest.mark.parametrize("online, default, verdict", [
    ([cpu for cpu in range(16) if cpu != 10], "0-1,3-9,11-15", "cpu_manager_refuses"),  # the pod's CPU 10 went offline
    (list(range(16)), "0-1,3-5,8-9,11-13", "cpu_default_set_stale"),  # CPUs 6,7,14,15 recorded nowhere
])
def test_a_memory_repair_is_refused_while_the_cpu_manager_would_refuse_and_both_files_stay(tmp_path, online, default, verdict):
    """kubelet starts the CPU manager first: a memory-only repair would not bring kubelet back, so nothing is written."""
    root = drifted(tmp_path)
    _with_cpu_manager(root, online, default, {"pod-a": {"app": "2,10"}})
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert result.assessment.verdict == verdict and not result.assessment.repairable and result.assessment.plan is None
    assert "drift_within_bound" in [cause.verdict for cause in result.assessment.causes]  # the memory drift is still listed
    before = tree_snapshot(root)
    outcome = repair.repair_node(result)
    assert (outcome.changed, outcome.action) == (False, "refused")
    assert outcome.message.startswith("refusing to repair %s: verdict %s: " % (result.path, verdict))
    assert tree_snapshot(root) == before


def test_a_memory_repair_goes_ahead_when_the_cpu_manager_starts(tmp_path):
    root = drifted(tmp_path)
    _with_cpu_manager(root, list(range(16)), "0-1,3-9,11-15", {"pod-a": {"app": "2,10"}})
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert (result.cpu.cls, result.assessment.verdict) == ("in_sync", "drift_within_bound")
    assert repair.repair_node(result).after.verdict == "in_sync"
