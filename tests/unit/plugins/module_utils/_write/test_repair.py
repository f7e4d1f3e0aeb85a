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


def _with_cpu_manager(root, online, default, entries, checksum=None, layout="v2"):
    """A static CPU manager beside the memory drift (``cputree.add_static_cpu_manager``)."""
    from ansible_collections.nodeops.numa_drift.tests.support import cputree  # pylint: disable=import-outside-toplevel

    return cputree.add_static_cpu_manager(root, online, default, entries, checksum=checksum, layout=layout)


@pytest.mark.parametrize("online, default, verdict", [
    ([cpu for cpu in range(16) if cpu != 10], "0-1,3-9,11-15", "cpu_manager_refuses"),  # the pod's CPU 10 went offline
    (list(range(16)), "0-1,3-9,11-15", "cpu_checkpoint_untrusted"),  # checksum 0 (below): kubelet would start, unverified
])
def test_a_memory_repair_is_refused_while_the_cpu_manager_would_refuse_and_both_files_stay(tmp_path, online, default, verdict):
    """kubelet starts the CPU manager first: a memory-only repair would not bring kubelet back, so nothing is written."""
    root = drifted(tmp_path)
    _with_cpu_manager(root, online, default, {"pod-a": {"app": "2,10"}}, checksum=0 if verdict == "cpu_checkpoint_untrusted" else None)
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


CPU_STATE = "var/lib/kubelet/cpu_manager_state"
POD_A = {"pod-a": {"app": "2,10"}}


def _cpu_state(root):
    from ansible_collections.nodeops.numa_drift.tests.support import cputree  # pylint: disable=import-outside-toplevel

    return cputree.read_cpu_checkpoint(read(os.path.join(root, CPU_STATE)))


@pytest.mark.parametrize("layout, release", [("v2", "1.35.4"), ("v4", "1.37.2")])
@pytest.mark.parametrize("memory_drift", [True, False], ids=["with memory drift", "cpu only"])
def test_a_stale_default_cpu_set_is_rederived_in_the_files_layout_with_every_entry_kept(tmp_path, layout, release, memory_drift):
    """CPUs 6,7,14,15 came online (recorded nowhere): defaultCpuSet becomes online - assigned, the entry stays, the
    file keeps its layout; with a memory drift beside it both files are written in one call, each backed up."""
    root = drifted(tmp_path) if memory_drift else drifted(tmp_path, drift_kib=0)
    _with_cpu_manager(root, list(range(16)), "0-1,3-5,8-9,11-13", POD_A, layout=layout)
    result = probe(HostFiles(root), kubelet_release=release)
    assert result.assessment.verdict == "cpu_default_set_stale" and result.assessment.repairable, result.assessment.causes
    assert (result.assessment.plan is not None) is memory_drift
    cpu_before = read(os.path.join(root, CPU_STATE))
    outcome = repair.repair_node(result)
    assert outcome.changed and outcome.action == "repaired", outcome.message
    assert outcome.after.verdict == "in_sync" and outcome.after.cpu.cls == "in_sync"
    assert outcome.cpu_written_layout == layout and outcome.written_layout == (result.assessment.plan.layout if memory_drift else None)
    policy, default, entries = _cpu_state(root)
    assert (policy, default, entries) == ("static", "0-1,3-9,11-15", POD_A)
    with open(outcome.cpu_backup_file, "rb") as handle:
        assert handle.read() == cpu_before
    written = read(os.path.join(root, CPU_STATE))
    assert (b'"data":' in written) is (layout == "v4")
    assert (outcome.backup_file is not None) is memory_drift  # the checkpoint's own backup, only when it was written
    again = probe(HostFiles(root), kubelet_release=release)
    assert again.assessment.verdict == "in_sync" and again.cpu.cls == "in_sync"


def test_a_stale_default_cpu_set_beside_a_memory_refusal_is_refused_and_both_files_stay(tmp_path):
    """The node is repairable only when every manager is: a memory drift beyond the bound refuses the whole node."""
    root = drifted(tmp_path, drift_kib=4 * 1024 * 1024)
    _with_cpu_manager(root, list(range(16)), "0-1,3-5,8-9,11-13", POD_A)
    result = probe(HostFiles(root), kubelet_release="1.35.4", drift_bound="64Mi")
    assert result.cpu.verdict == "cpu_default_set_stale"
    assert result.assessment.verdict == "drift_exceeds_bound" and not result.assessment.repairable
    assert result.assessment.causes[0].verdict == "cpu_default_set_stale"  # kubelet's first error is still shown first
    before = tree_snapshot(root)
    assert repair.repair_node(result).action == "refused"
    assert tree_snapshot(root) == before


def test_a_failed_memory_write_puts_the_cpu_manager_state_back(tmp_path, monkeypatch):
    """cpu_manager_state is written first; when memory_manager_state's write fails after it, both hold their original bytes."""
    root = drifted(tmp_path)
    _with_cpu_manager(root, list(range(16)), "0-1,3-5,8-9,11-13", POD_A)
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert result.assessment.plan is not None and result.cpu.rewrite is not None
    cpu_before, memory_before = read(os.path.join(root, CPU_STATE)), read(result.path)
    real = repair.atomic_write

    def failing(path, content):
        if path == result.path:
            raise OSError(28, "No space left on device")
        real(path, content)

    monkeypatch.setattr(repair, "atomic_write", failing)
    with pytest.raises(procedure.RepairError) as raised:
        repair.repair_node(result)
    assert "No space left on device" in raised.value.message and "was put back" in raised.value.message
    assert read(os.path.join(root, CPU_STATE)) == cpu_before and read(result.path) == memory_before


def test_a_cpu_manager_state_changed_since_the_probe_is_not_touched(tmp_path):
    root = drifted(tmp_path, drift_kib=0)
    _with_cpu_manager(root, list(range(16)), "0-1,3-5,8-9,11-13", POD_A)
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    _with_cpu_manager(root, list(range(16)), "0-1,3-5,8-9,11-14", POD_A)  # kubelet (or someone) wrote it meanwhile
    before = tree_snapshot(root)
    with pytest.raises(procedure.RepairError) as raised:
        repair.repair_node(result)
    assert "cpu_manager_state changed while it was being assessed" in raised.value.message
    assert tree_snapshot(root) == before


def test_a_repair_of_both_files_is_rolled_back_with_both_backups(tmp_path):
    """The remediate role's rollback (kubelet did not come back): both backups of the repair put back, cpu_manager_state
    first, each file it replaces kept; naming only the CPU backup restores only cpu_manager_state."""
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import sideline  # pylint: disable=import-outside-toplevel

    root = drifted(tmp_path)
    _with_cpu_manager(root, list(range(16)), "0-1,3-5,8-9,11-13", POD_A)
    cpu_path = os.path.join(root, CPU_STATE)
    cpu_before, memory_before = read(cpu_path), read(probe(HostFiles(root), kubelet_release="1.35.4").path)
    repaired = repair.repair_node(probe(HostFiles(root), kubelet_release="1.35.4"))
    assert repaired.backup_file and repaired.cpu_backup_file and repaired.backup_file != repaired.cpu_backup_file
    cpu_repaired = read(cpu_path)
    assert cpu_repaired != cpu_before

    only_cpu = sideline.restore_checkpoint(probe(HostFiles(root), kubelet_release="1.35.4"), cpu_backup_file=repaired.cpu_backup_file)
    assert only_cpu.action == "restored" and only_cpu.cpu_restored_from == repaired.cpu_backup_file and only_cpu.restored_from is None
    assert read(cpu_path) == cpu_before and read(os.path.join(root, "var/lib/kubelet/memory_manager_state")) != memory_before
    with open(only_cpu.cpu_backup_file, "rb") as handle:
        assert handle.read() == cpu_repaired  # the file it replaced is kept

    both = sideline.restore_checkpoint(probe(HostFiles(root), kubelet_release="1.35.4"), backup_file=repaired.backup_file,
                                       cpu_backup_file=repaired.cpu_backup_file)
    assert both.action == "restored" and both.verdict_after == "cpu_default_set_stale", both.message
    assert read(cpu_path) == cpu_before and read(os.path.join(root, "var/lib/kubelet/memory_manager_state")) == memory_before
    again = sideline.restore_checkpoint(probe(HostFiles(root), kubelet_release="1.35.4"), backup_file=repaired.backup_file,
                                        cpu_backup_file=repaired.cpu_backup_file)
    assert (again.changed, again.action) == (False, "none") and "already hold the bytes" in again.message


def test_a_cpu_only_repair_names_no_checkpoint_backup(tmp_path):
    """Only cpu_manager_state written: backup_file (the checkpoint's) stays empty, so no rollback can put a CPU backup
    over memory_manager_state."""
    root = drifted(tmp_path, drift_kib=0)
    _with_cpu_manager(root, list(range(16)), "0-1,3-5,8-9,11-13", POD_A)
    memory = probe(HostFiles(root), kubelet_release="1.35.4").path
    memory_before = read(memory)
    outcome = repair.repair_node(probe(HostFiles(root), kubelet_release="1.35.4"))
    assert outcome.action == "repaired" and outcome.backup_file is None and outcome.cpu_backup_file
    assert read(memory) == memory_before


def test_a_rollback_naming_no_backup_after_a_cpu_only_repair_puts_back_only_cpu_manager_state(tmp_path):
    """The rollback playbook names no backup: after a repair that wrote only cpu_manager_state, the checkpoint's newest
    backup is an older repair's, and must not be put over the current file. The history says what the last repair wrote."""
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import sideline  # pylint: disable=import-outside-toplevel

    root = drifted(tmp_path)
    memory = probe(HostFiles(root)).path
    older = repair.repair_node(probe(HostFiles(root)))  # an older memory repair: its backup is the newest of the checkpoint
    assert older.backup_file and older.cpu_backup_file is None
    cpu_path = _with_cpu_manager(root, list(range(16)), "0-1,3-5,8-9,11-13", POD_A)
    memory_now, cpu_before = read(memory), read(cpu_path)
    cpu_only = repair.repair_node(probe(HostFiles(root), kubelet_release="1.35.4"))
    assert cpu_only.action == "repaired" and cpu_only.backup_file is None and cpu_only.cpu_backup_file
    rolled = sideline.restore_checkpoint(probe(HostFiles(root), kubelet_release="1.35.4"))
    assert rolled.action == "restored" and rolled.restored_from is None and rolled.cpu_restored_from == cpu_only.cpu_backup_file
    assert read(cpu_path) == cpu_before and read(memory) == memory_now  # not the older repair's backup


def test_a_backup_of_one_file_is_never_put_over_the_other(tmp_path):
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import sideline  # pylint: disable=import-outside-toplevel

    root = drifted(tmp_path)
    _with_cpu_manager(root, list(range(16)), "0-1,3-5,8-9,11-13", POD_A)
    repaired = repair.repair_node(probe(HostFiles(root), kubelet_release="1.35.4"))
    before = tree_snapshot(root)
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    for backup_file, cpu_backup_file, wrong in ((repaired.cpu_backup_file, None, "memory_manager_state"),
                                                (None, repaired.backup_file, "cpu_manager_state")):
        with pytest.raises(procedure.RepairError) as raised:
            sideline.restore_checkpoint(result, backup_file=backup_file, cpu_backup_file=cpu_backup_file)
        assert "not a %s: it is not put over" % wrong in raised.value.message
    assert tree_snapshot(root) == before


def test_a_failed_cpu_write_keeps_no_backup_of_a_file_it_did_not_write(tmp_path, monkeypatch):
    """cpu_manager_state's write fails: memory_manager_state was never written, so its backup (a copy of bytes in place)
    is removed, and the error names the CPU backup as cpu_backup_file, never as the checkpoint's."""
    root = drifted(tmp_path)
    cpu_path = _with_cpu_manager(root, list(range(16)), "0-1,3-5,8-9,11-13", POD_A)
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    backups = os.path.join(root, "var/lib/nodeops-numa-drift/backups")
    real = repair.atomic_write

    def failing(path, content):
        if path == cpu_path:
            raise OSError(30, "Read-only file system")
        real(path, content)

    monkeypatch.setattr(repair, "atomic_write", failing)
    before = {path: data for path, data in tree_snapshot(root).items() if not path.startswith("var/lib/nodeops-numa-drift")}
    with pytest.raises(procedure.RepairError) as raised:
        repair.repair_node(result)
    assert raised.value.backup_file is None and raised.value.cpu_backup_file is None and not raised.value.touched
    assert not os.path.isdir(backups) or os.listdir(backups) == []
    assert {path: data for path, data in tree_snapshot(root).items() if not path.startswith("var/lib/nodeops-numa-drift")} == before


def test_repaired_refuses_a_cpu_manager_refusal_even_without_a_memory_checkpoint(tmp_path):
    """No memory_manager_state, and kubelet's CPU manager refuses its state: state=repaired fails naming the verdict
    (it used to pass as "nothing to do")."""
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import states  # pylint: disable=import-outside-toplevel

    root = drifted(tmp_path)
    os.unlink(probe(HostFiles(root)).path)
    _with_cpu_manager(root, [cpu for cpu in range(16) if cpu != 10], "0-1,3-9,11-15", POD_A)  # the pod's CPU 10 is gone
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert result.raw is None and result.assessment.verdict == "cpu_manager_refuses"
    assert states.step_for("repaired", result) == states.CHECK
    assert repair.repair_node(result).action == "refused"
