# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_write/states.py: the checkpoint module's state machine, on real node trees."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import states
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    KIB,
    MIB,
    guaranteed_pods,
    tree_snapshot,
    two_node_boot,
    write_kubelet_node,
)


def node(tmp_path, name, drift_kib=40 * MIB // KIB, checkpoint=True):
    recorded = two_node_boot()
    current = recorded.moved(node0=-drift_kib, node1=drift_kib)
    return write_kubelet_node(str(tmp_path / name), recorded, current, pods=guaranteed_pods(2, (0,)),
                              checkpoint_bytes=None if checkpoint else b"")


@pytest.fixture
def results(tmp_path):
    return {
        "repairable": probe(HostFiles(node(tmp_path, "repairable"))),
        "in_sync": probe(HostFiles(node(tmp_path, "in_sync", drift_kib=0))),
        "beyond_bound": probe(HostFiles(node(tmp_path, "beyond", drift_kib=4 * GIB // KIB))),
        "no_checkpoint": probe(HostFiles(node(tmp_path, "none", checkpoint=False))),
    }


def test_the_probed_nodes_are_what_their_names_say(results):
    assert {name: result.assessment.verdict for name, result in results.items()} == {
        "repairable": "drift_within_bound", "in_sync": "in_sync", "beyond_bound": "drift_exceeds_bound", "no_checkpoint": "no_checkpoint"}


@pytest.mark.parametrize("state, name, step", [
    ("restored", "repairable", states.RESTORE),
    ("restored", "no_checkpoint", states.RESTORE),
    ("repaired", "no_checkpoint", states.CLEANUP),
    ("absent", "no_checkpoint", states.CLEANUP),
    ("repaired", "in_sync", states.CHECK),
    ("repaired", "beyond_bound", states.CHECK),
    ("repaired", "repairable", states.REPAIR),
    ("absent", "repairable", states.SIDELINE),
    ("absent", "beyond_bound", states.SIDELINE),  # absent sidelines whatever the verdict
])
def test_step_for_each_state_and_node(results, state, name, step):
    assert states.step_for(state, results[name]) == step


def test_an_unknown_state_is_an_error_naming_the_states(results):
    with pytest.raises(ValueError, match="repaired, absent, restored"):
        states.step_for("present", results["repairable"])


def fake_proc(tmp_path, programs):
    proc = tmp_path / "proc"
    for pid, argv in programs.items():
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "cmdline").write_bytes(b"\0".join(word.encode() for word in argv) + b"\0")
    return str(proc)


def test_kubelet_refusal_only_for_writes_at_root_slash_without_force(tmp_path):
    proc = fake_proc(tmp_path, {7: ["/usr/bin/kubelet", "--config=x"], 9: ["/usr/sbin/sshd"], 12: ["/usr/local/bin/k3s agent"]})
    message = states.kubelet_refusal(states.REPAIR, "/", False, "/var/lib/kubelet/memory_manager_state", proc)
    assert message == ("kubelet is running (7:kubelet, 12:k3s): stop it before touching /var/lib/kubelet/memory_manager_state, "
                       "or set force=true")
    for step in (states.RESTORE, states.SIDELINE):
        assert states.kubelet_refusal(step, "//", False, "p", proc) is not None
    for step in (states.CLEANUP, states.CHECK):  # they leave the checkpoint as it is
        assert states.kubelet_refusal(step, "/", False, "p", proc) is None
    assert states.kubelet_refusal(states.REPAIR, "/", True, "p", proc) is None
    assert states.kubelet_refusal(states.REPAIR, str(tmp_path), False, "p", proc) is None  # not this machine's kubelet
    assert states.kubelet_refusal(states.REPAIR, "/", False, "p", fake_proc(tmp_path / "quiet", {9: ["sshd"]})) is None


OPTIONS = dict(backup_dir=None, history_file=None, by="module", dry_run=False, lock_timeout=5, loop_window_hours=24)


def test_run_step_repairs_checks_and_sidelines_through_the_writes(tmp_path):
    repairable = probe(HostFiles(node(tmp_path, "repairable")))
    outcome = states.run_step(states.REPAIR, repairable, OPTIONS)
    assert (outcome.action, outcome.changed, outcome.after.verdict) == ("repaired", True, "in_sync")
    refused_root = node(tmp_path, "beyond", drift_kib=4 * GIB // KIB)
    before = tree_snapshot(refused_root)
    outcome = states.run_step(states.CHECK, probe(HostFiles(refused_root)), OPTIONS)
    assert (outcome.action, outcome.changed) == ("refused", False) and tree_snapshot(refused_root) == before
    sidelined = probe(HostFiles(node(tmp_path, "sideline")))
    outcome = states.run_step(states.SIDELINE, sidelined, OPTIONS)
    assert outcome.action == "sidelined" and outcome.changed
    assert probe(HostFiles(sidelined.node.root)).assessment.verdict == "no_checkpoint"


def test_run_step_refuses_an_unknown_step(tmp_path):
    with pytest.raises(ValueError, match="unknown step"):
        states.run_step("rewrite", probe(HostFiles(node(tmp_path, "x"))), OPTIONS)
