# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate playbook's first pass: only the nodes that need the procedure go through it."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.action import __rollout_triage as rollout_triage
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _cordon, _remediate, _triage

PREFIX = "numa-drift.nodeops.io"
OPTIONS = {"node_name": "n", "api": True, "dry": False, "service_mode": "systemd", "cordon_unrepairable": False,
           "loop_max_repairs": 3, "loop_window_hours": 24.0, "history_file": "/var/lib/nodeops-numa-drift/history.json"}


def triage(verdict: str, repairable: bool = False, node: str = "n", api: bool = True, dry: bool = False):
    """The registered result of the first pass's plan for a node whose probe says ``verdict``."""
    facts = {"verdict": verdict, "repairable": repairable, "summary": verdict + "; details", "causes": [], "advice": "do this"}
    decided = _remediate.plan(facts, dict(OPTIONS, node_name=node, api=api, dry=dry), [], 0.0)
    outcome = decided.pop("outcome")
    return {"changed": False, "plan": decided, "outcome": outcome}


def node(name: str, ours: bool = False, cordoned: bool = False):
    annotations = {PREFIX + "/cordoned-by": _cordon.MARKER} if ours else {}
    return {"metadata": {"name": name, "annotations": annotations}, "spec": {"unschedulable": cordoned}}


def test_a_node_that_needs_nothing_is_settled_with_the_outcome_its_procedure_records() -> None:
    hosts = ["a", "b", "c", "d"]
    triages = [triage("in_sync", node="a"), triage("drift_within_bound", True, node="b"), {"skipped": True},
               triage("drift_exceeds_bound", node="d")]
    nodes = {name: node(name) for name in ("a", "b", "d")}
    work, settled = _triage.split(hosts, triages, reached(4), nodes, "", PREFIX)
    # Work to do, a probe that failed (nothing to decide from), a refusal (its Event, its cordon): the procedure, in order.
    assert work == ["b", "c", "d"]
    assert settled == {"a": triages[0]["outcome"]}
    assert settled["a"]["action"] == "none" and settled["a"]["message"] == "nothing to do (in_sync): in_sync; details"


def reached(count: int, unreachable: int = -1):
    """The first pass's registered probe results: every node reached but the one at ``unreachable``."""
    return [{"unreachable": True, "msg": "Task failed: Failed to connect to the host via ssh: timed out."} if index == unreachable
            else {"changed": False, "numa_drift": {}} for index in range(count)]


def test_a_node_the_probe_did_not_reach_is_left_out_so_the_canary_is_the_first_reachable_node_with_work() -> None:
    hosts = ["gone", "b", "c"]
    triages = [{"skipped": True}, triage("drift_within_bound", True, node="b"), triage("drift_within_bound", True, node="c")]
    work, settled = _triage.split(hosts, triages, reached(3, unreachable=0), {}, "", PREFIX)
    assert work == ["b", "c"]
    assert settled == {"gone": {"action": "unreachable", "message": (
        "unreachable: Failed to connect to the host via ssh: timed out. Nothing was done on this node: the rollout went on without it.")}}
    assert _triage.unreached(settled) == ["gone"]
    assert _triage.summary(hosts, work, settled) == (
        "0 of 3 nodes need nothing; 1 could not be reached and are left out (reported as unreachable): gone;"
        " 2 go through the procedure: b, c")


def test_an_unfinished_earlier_run_of_ours_sends_the_node_through_the_procedure() -> None:
    triages = [triage("in_sync", node="a"), triage("in_sync", node="b"), triage("no_checkpoint", node="c")]
    nodes = {"a": node("a", ours=True, cordoned=True), "b": node("b", ours=True), "c": node("c", cordoned=True)}
    work, settled = _triage.split(["a", "b", "c"], triages, reached(3), nodes, "", PREFIX)
    # Cordoned by us, or only our stale mark left: the procedure finishes it. Cordoned by someone else: not ours.
    assert work == ["a", "b"] and list(settled) == ["c"]


def test_a_node_list_that_failed_leaves_the_nodes_settled_with_the_procedures_note() -> None:
    triages = [triage("in_sync", node="a"), triage("in_sync", node="b")]
    work, settled = _triage.split(["a", "b"], triages, reached(2), None, "Forbidden (HTTP 403)", PREFIX)
    assert work == []
    assert settled["a"]["message"] == "nothing to do (in_sync): in_sync; details; could not check the Node for an unfinished earlier run: Forbidden (HTTP 403)"
    missing, settled = _triage.split(["a"], triages[:1], reached(1), {}, "", PREFIX)
    assert missing == [] and settled["a"]["message"].endswith("; could not check the Node for an unfinished earlier run: no such Node")


def test_without_the_api_or_in_a_dry_run_there_is_no_earlier_run_to_look_for() -> None:
    triages = [triage("in_sync", node="a", api=False), triage("in_sync", node="b", dry=True)]
    assert not _triage.needs_earlier_run_check(triages)
    assert _triage.needs_earlier_run_check(triages + [triage("in_sync", node="c")])
    work, settled = _triage.split(["a", "b"], triages, reached(2), {}, "", PREFIX)
    assert work == [] and "could not check" not in settled["a"]["message"]


def test_the_summary_counts_the_settled_nodes_by_verdict_and_names_the_others() -> None:
    settled = {"a": {"verdict_before": "in_sync"}, "b": {"verdict_before": "in_sync"}, "c": {"verdict_before": "no_checkpoint"}}
    assert _triage.summary(["a", "b", "c", "d"], ["d"], settled) == (
        "3 of 4 nodes need nothing (in_sync 2, no_checkpoint 1); 1 go through the procedure: d")
    assert _triage.summary(["a"], [], {"a": {"verdict_before": "in_sync"}}) == "1 of 1 nodes need nothing (in_sync 1); no node needs the procedure"
    many = ["n%02d" % index for index in range(25)]
    assert _triage.summary(many, many, {}).endswith("n19, and 5 more")


def test_a_node_list_the_api_client_cannot_make_is_a_reason_not_a_crash(tmp_path) -> None:
    pytest.importorskip("kubernetes")
    options = {"kubeconfig": str(tmp_path / "absent"), "context": "nowhere"}
    nodes, failure = rollout_triage.ActionModule._nodes(options)  # pylint: disable=protected-access
    assert nodes is None and "absent (remediate_kubeconfig)" in failure and "does not exist" in failure, failure


def test_the_probe_playbooks_row_is_the_plans_record_probed() -> None:
    facts = {"verdict": "drift_within_bound", "repairable": True, "summary": "drift_within_bound; s", "kubelet": {"service": "k3s"}}
    row = _remediate.probe_outcome("h", {"result": {"numa_drift": facts}, "node": "n", "api": False, "service": ""})
    planned = _remediate.plan(facts, dict(OPTIONS, api=False), [], 0.0)["outcome"]
    assert row == dict(planned, action="probed", message="drift_within_bound; s")
    assert row["service"] == "k3s" and row["api_managed"] is False
    assert _remediate.probe_outcome("h", {"result": {"unreachable": True, "msg": "ssh: timeout"}, "node": ""}) == {
        "node": "h", "action": "unreachable", "message": "unreachable: ssh: timeout. The node was not probed."}
    assert _remediate.probe_outcome("h", {"result": {"failed": False, "msg": "bad option"}, "node": "n"}) == {
        "node": "n", "action": "failed", "message": "probe failed: bad option"}
