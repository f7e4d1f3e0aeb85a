# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate playbook's rollout controls and the role's cordon ownership, as pure functions."""

from __future__ import annotations

import calendar

import pytest

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _cordon, _remediate, _rollout

NOW = float(calendar.timegm((2026, 12, 3, 10, 0, 0)))  # a Thursday, 10:00 UTC


def lease(holder, renewed, duration=60):
    spec = {"holderIdentity": holder, "leaseDurationSeconds": duration, "renewTime": _rollout.micro_time(renewed)}
    return {"metadata": {"resourceVersion": "7"}, "spec": spec}


def test_lease_decisions_follow_leader_election():
    assert _rollout.lease_decision(None, "me", NOW)[0] == "create"
    assert _rollout.lease_decision(lease("me", NOW - 1000), "me", NOW)[0] == "renew"
    assert _rollout.lease_decision(lease(None, NOW), "me", NOW)[0] == "take"
    action, why = _rollout.lease_decision(lease("other", NOW - 30), "me", NOW)
    assert action == "wait" and "other" in why
    assert _rollout.lease_decision(lease("other", NOW - 61), "me", NOW)[0] == "take"


def test_lease_body_carries_the_resource_version_and_counts_transitions():
    taken = _rollout.lease_body(lease("other", NOW - 100), "l", "ns", "me", 90, NOW)
    assert taken["metadata"]["resourceVersion"] == "7"
    assert taken["spec"]["holderIdentity"] == "me" and taken["spec"]["leaseDurationSeconds"] == 90
    assert taken["spec"]["leaseTransitions"] == 1 and _rollout.parse_time(taken["spec"]["acquireTime"]) == NOW
    released = _rollout.lease_body(taken, "l", "ns", "me", 90, NOW, release=True)
    assert released["spec"]["holderIdentity"] is None


@pytest.mark.parametrize("value, expected", [("true", "paused"), ("false", None), ("", None), ("deploy freeze", "paused: deploy freeze")])
def test_pause_key(value, expected):
    assert _rollout.paused({"data": {"paused": value}}, "paused") == expected
    assert _rollout.paused(None, "paused") is None


def node(name, ready, marked=False):
    annotations = {"numa-drift.nodeops.io/cordoned-by": "nodeops.numa_drift"} if marked else {}
    return {"metadata": {"name": name, "annotations": annotations},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def test_health_gate_ignores_the_rollouts_own_nodes():
    nodes = [node("a", False), node("b", False, marked=True), node("c", False), node("d", True)]
    assert _rollout.unhealthy_others(nodes, ["a"], "numa-drift.nodeops.io") == ["c"]
    assert _rollout.threshold("25%", 8) == (2, "25% of 8 Nodes")
    assert _rollout.threshold(3, 8)[0] == 3


def test_firing_alerts_match_the_filter():
    document = {"data": {"alerts": [{"labels": {"alertname": "KubeNodeNotReady"}, "state": "firing"},
                                    {"labels": {"alertname": "KubeNodeUnreachable"}, "state": "pending"},
                                    {"labels": {"alertname": "Watchdog"}, "state": "firing"}]}}
    assert _rollout.firing_alerts(document, "^KubeNode") == ["KubeNodeNotReady"]
    assert _rollout.firing_alerts(document, ".*") == ["KubeNodeNotReady", "Watchdog"]


def test_window_open_closed_and_across_midnight():
    assert _rollout.window_state(NOW, None, "09:00-11:00")["open"]
    closed = _rollout.window_state(NOW, None, "22:00-06:00")
    assert not closed["open"] and closed["opens"].startswith("2026-12-03T22:00")
    assert _rollout.window_state(NOW - 6 * 3600, None, "22:00-06:00")["open"]  # 04:00, in Wednesday's night window
    weekend = _rollout.window_state(NOW, ["sat", "sun"], None)
    assert not weekend["open"] and weekend["opens"].startswith("2026-12-05T00:00")
    assert _rollout.window_state(NOW, None, "10:30-11:30", "Europe/Berlin")["open"]  # 11:00 in Berlin
    with pytest.raises(ValueError):
        _rollout.window_state(NOW, ["someday"], None)


def test_cordon_ownership_and_patches():
    schedulable = {"metadata": {"resourceVersion": "5", "annotations": {}}, "spec": {}}
    patch = _cordon.cordon_patch(schedulable, "p", "why")
    assert patch == {"metadata": {"resourceVersion": "5", "annotations": {"p/cordoned-by": "nodeops.numa_drift", "p/reason": "why"}},
                     "spec": {"unschedulable": True}}
    theirs = {"metadata": {"annotations": {"ops/cordoned-by": "x"}}, "spec": {"unschedulable": True}}
    assert _cordon.cordon_patch(theirs, "p", None) is None
    assert _cordon.ownership(theirs, "p") == {"cordoned_before": True, "cordoned_by_us": False}
    assert "spec" not in _cordon.uncordon_patch(theirs, "p", False, "repaired")
    assert _cordon.uncordon_patch(theirs, "p", True, "repaired")["spec"] == {"unschedulable": False}


def options(**extra):
    base = dict(node_name="n1", host="n1", api=True, dry=False, cordon_unrepairable=False, service_mode="systemd", service_name=None,
                service_commands={}, settle_seconds=20, ready_timeout=300, ready_poll=5, loop_max_repairs=2, loop_window_hours=24,
                history_file="/h.json", backup_path="/b", annotation_prefix="p")
    base.update(extra)
    return base


def test_plan_branches_and_the_service_name():
    drift = {"verdict": "drift_within_bound", "repairable": True, "summary": "s", "kubelet": {"service": "k3s-agent"}}
    decided = _remediate.plan(drift, options(), [], NOW)
    assert decided["branch"] == "repair" and decided["service_name"] == "k3s-agent"
    assert "systemctl reset-failed k3s-agent" in decided["service_commands"]["start"]
    assert _remediate.plan(drift, options(service_name="kubelet"), [], NOW)["service_name"] == "kubelet"
    assert _remediate.plan({"verdict": "drift_within_bound", "repairable": True}, options(), [], NOW)["service_name"] == "kubelet"
    history = [{"time": NOW - 60, "action": "repaired"}, {"time": NOW - 30, "action": "rolled_back"}]
    tripped = _remediate.plan(drift, options(), history, NOW)
    assert tripped["branch"] == "loop_guard" and "/h.json" in tripped["outcome"]["message"]
    # A dry run is decided with the plan: what a repair would write, from the probe's view of the checkpoint.
    checkpoint = {"path": "/var/lib/kubelet/memory_manager_state", "write_layout": "v3"}
    dry = _remediate.plan(dict(drift, checkpoint=checkpoint), options(dry=True, api=False), [], NOW)
    assert dry["branch"] == "dry_run" and dry["outcome"]["action"] == "dry_run"
    assert dry["outcome"]["message"] == (
        "dry run, nothing changed: would stop kubelet, rewrite /var/lib/kubelet/memory_manager_state (v3 layout, every assignment"
        " kept, backup in /b), start kubelet, wait 20s for it to stay up: s")
    assert _remediate.plan(drift, options(dry=True), history, NOW)["branch"] == "loop_guard"
    refused = _remediate.plan({"verdict": "hugepages_changed", "repairable": False, "causes": [], "advice": "a"}, options(), [], NOW)
    assert refused["branch"] == "refused" and refused["outcome"]["event"] == "NumaDriftRefused"
    nothing = _remediate.plan({"verdict": "in_sync", "repairable": False}, options(), [], NOW)
    assert nothing["branch"] == "nothing" and nothing["finish_earlier_run"]


def test_recovery_puts_the_checkpoint_back_only_after_a_write():
    wait = _remediate.recovery("Wait for the Node to report Ready", {"resources": [{}]}, {"checkpoint_written": True, "cordoned_by_us": True},
                               options())
    assert wait["restore"] and wait["annotate"] and not wait["api_lost"]
    lost = _remediate.recovery("Wait for the Node to report Ready", {"msg": "connection refused"}, {"checkpoint_written": True}, options())
    assert lost["api_lost"] and not lost["restore"]
    stop = _remediate.recovery("Stop kubelet", {"msg": "x"}, {}, options())
    assert stop["restart"] and not stop["restore"]


@pytest.mark.parametrize("restored", [True, False])
def test_a_rollback_after_a_repair_of_both_files_names_both_backups(restored):
    """kubelet did not come back after a repair that wrote cpu_manager_state too: the message names both backups, the
    CPU one first (put back first), whether the restore completed or is left to the operator."""
    rec = _remediate.recovery("Wait for kubelet to become active", {"msg": "exited"}, {"checkpoint_written": True, "cordoned_by_us": True},
                              options())
    assert rec["restore"]
    outcome = {"backup_file": "/b/memory_manager_state.x.before-repair", "cpu_backup_file": "/b/cpu_manager_state.x.before-repair"}
    message = _remediate.failed_message(rec, {"cordoned_by_us": True}, restored, [], outcome, options())
    both = "/b/cpu_manager_state.x.before-repair and /b/memory_manager_state.x.before-repair"
    assert (("put back from " + both) if restored else ("restore " + both + " to ")) in message, message
    only_cpu = _remediate.failed_message(rec, {"cordoned_by_us": True}, True, [], dict(outcome, backup_file=None), options())
    assert "put back from /b/cpu_manager_state.x.before-repair and kubelet" in only_cpu, only_cpu


def test_drain_wait_restores_nothing_and_says_the_node_is_repaired_but_cordoned():
    result = {"warnings": ["timeout reached while pods were still running."]}
    rec = _remediate.recovery("Wait for the evicted pods to end", result, {"checkpoint_written": True, "cordoned_by_us": True},
                              options(drain_timeout=30))
    assert rec["phase"] == "drain_wait" and not rec["restore"] and not rec["restart"] and rec["annotate"] and not rec["api_lost"]
    assert "timeout reached while pods were still running" in rec["failure"]
    message = _remediate.failed_message(rec, {"cordoned_by_us": True}, False, [], {}, options(drain_timeout=30))
    assert message.startswith("the checkpoint was repaired and the Node is Ready, but the pods the drain evicted did not end"
                              " within 30s"), message
    assert "so the node stays cordoned" in message and "kubectl uncordon n1 && kubectl annotate node n1 p/cordoned-by-" in message
    assert "put back" not in message


@pytest.mark.parametrize("task, phase", [("Drain the Node", "drain"), ("Wait for the evicted pods to end", "drain_wait")])
def test_a_forbidden_drain_step_names_the_drain_cluster_role(task, phase):
    rec = _remediate.recovery(task, {"msg": "Failed to delete pod default/web: Exception raised: Forbidden"},
                              {"checkpoint_written": phase == "drain_wait", "cordoned_by_us": True}, options(drain_timeout=30))
    assert rec["phase"] == phase
    message = _remediate.failed_message(rec, {"cordoned_by_us": True}, False, [], {}, options(drain_timeout=30))
    assert message.endswith(_remediate.DRAIN_RBAC_HINT) and "nodeops-numa-drift-drain.yml" in message, message
    other = _remediate.recovery(task, {"msg": "Cannot evict pod as it would violate the pod's disruption budget."},
                                {"cordoned_by_us": True}, options(drain_timeout=30))
    refused = _remediate.failed_message(other, {"cordoned_by_us": True}, False, [], {}, options(drain_timeout=30))
    assert "nodeops-numa-drift-drain.yml" not in refused, refused
