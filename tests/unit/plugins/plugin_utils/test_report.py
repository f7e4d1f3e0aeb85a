# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_report: the fleet report's rows from real probe facts (fake node trees), and the pinned pods in the facts."""

from __future__ import annotations

import json
import os

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy import drift as _drift
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy import verdicts as _verdicts
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import Block, CheckpointFields, PodEntry
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts, pinned_pods
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _cordon, _remediate, _report
from ansible_collections.nodeops.numa_drift.tests.support.programs import install_release
from ansible_collections.nodeops.numa_drift.tests.support.scenario import GIB, two_node_boot, write_kubelet_node

MIB = 1 << 20


def drifted_node(tmp_path, node1_kb=45260, hugepages_1g=0, current_hugepages=None):
    """Two 64 GiB nodes: node0 gave ``node1_kb`` to node1; two pinned pods, one on each."""
    recorded = two_node_boot(hugepages_1g=hugepages_1g)
    current = recorded.moved(node0=-node1_kb, node1=node1_kb) if current_hugepages is None else two_node_boot(hugepages_1g=current_hugepages)
    pods = {
        "pod-a": {"app": [([0], "memory", 2 * GIB)], "sidecar": [([0], "memory", 1 * GIB)]},
        "pod-b": {"db": [([1], "memory", 4 * GIB)]},
    }
    return write_kubelet_node(str(tmp_path), recorded, current, pods=pods, layout="legacy")


def facts_of(root, **options):
    return assessment_facts(_probe.probe(HostFiles(root), **options))


# --------------------------------------------------------------------------- the facts' pinned pods


def test_pinned_pods_come_from_the_checkpoint_entries(tmp_path):
    facts = facts_of(drifted_node(tmp_path))
    json.dumps(facts)
    pods = facts["checkpoint"]["pinned_pods"]
    assert [pod["uid"] for pod in pods] == ["pod-a", "pod-b"]
    assert pods[0]["containers"] == [
        {"name": "app", "numa_nodes": [0], "sizes": {"memory": 2 * GIB}},
        {"name": "sidecar", "numa_nodes": [0], "sizes": {"memory": 1 * GIB}},
    ]
    assert pods[0]["numa_nodes"] == [0] and pods[0]["sizes"] == {"memory": 3 * GIB} and pods[0]["pod_level"] is False
    assert pods[1]["numa_nodes"] == [1] and pods[1]["sizes"] == {"memory": 4 * GIB}
    assert facts["checkpoint"]["pods"] == len(pods)


def test_pod_level_entries_are_the_pods_allotment():
    content = CheckpointFields(
        entries={"pod-c": {"app": [Block([1], "memory", GIB)]}},
        pod_entries={"pod-c": PodEntry([Block([1], "memory", 3 * GIB)]), "pod-d": PodEntry([Block([0, 1], "hugepages-1Gi", 2 * GIB)])},
    )
    pods = {pod["uid"]: pod for pod in pinned_pods(content)}
    assert pods["pod-c"]["sizes"] == {"memory": 3 * GIB} and pods["pod-c"]["pod_level"] is True
    assert pods["pod-c"]["containers"] == [{"name": "app", "numa_nodes": [1], "sizes": {"memory": GIB}}]
    assert pods["pod-d"] == {"uid": "pod-d", "containers": [], "numa_nodes": [0, 1], "sizes": {"hugepages-1Gi": 2 * GIB}, "pod_level": True}
    assert pinned_pods(None) == []


def test_a_checkpoint_without_entries_pins_no_pod(tmp_path):
    root = write_kubelet_node(str(tmp_path), two_node_boot(), pods={}, layout="legacy")
    assert facts_of(root)["checkpoint"]["pinned_pods"] == []


# --------------------------------------------------------------------------- bars


def test_signed_sizes():
    assert _report.signed_size(-45260 * 1024) == "-44.2 MiB"
    assert _report.signed_size(45260 * 1024) == "+44.2 MiB"
    assert _report.signed_size(-GIB) == "-1.0 GiB"
    assert _report.signed_size(12 * 1024) == "+12 KiB"
    assert _report.signed_size(-12 * 1024) == "-12 KiB"
    assert _report.signed_size(0) == "0"
    assert _report.signed_size(None) == "?"
    assert _report.size(96 * MIB) == "96.0 MiB" and _report.size(None) == "unknown"


def test_bars_go_left_for_less_and_right_for_more_on_one_scale(tmp_path):
    facts = facts_of(drifted_node(tmp_path))
    bars = _report.drift_bars(facts["nodes"], facts["bound_bytes"])
    assert [(b["numa_node"], b["resource"], b["side"], b["text"]) for b in bars] == [
        (0, "memory", "left", "-44.2 MiB"), (1, "memory", "right", "+44.2 MiB")]
    left, right = bars
    assert left["delta"] == -45260 * 1024 and left["over"] is False and right["over"] is False
    assert left["width_pct"] == right["width_pct"] > 0
    # The bound line: the bound on the scale of the half-track; no drift is larger, so the bound sets the scale.
    assert left["bound_pct"] == round(50 / _report.BOUND_HEADROOM, 2)
    assert left["width_pct"] == round(45260 * 1024 * 50.0 / int(facts["bound_bytes"] * _report.BOUND_HEADROOM), 2)


def test_a_drift_beyond_the_bound_fills_the_half_track_and_is_over(tmp_path):
    facts = facts_of(drifted_node(tmp_path, node1_kb=1024 * 1024))
    assert facts["verdict"] == "drift_exceeds_bound"
    left, right = _report.drift_bars(facts["nodes"], facts["bound_bytes"])
    assert (left["side"], left["over"], left["width_pct"], left["text"]) == ("left", True, 50.0, "-1.0 GiB")
    assert right["side"] == "right" and right["over"] is True
    assert left["bound_pct"] == round(facts["bound_bytes"] * 50.0 / GIB, 2)


def test_hugepage_changes_are_beyond_any_bound(tmp_path):
    facts = facts_of(drifted_node(tmp_path, hugepages_1g=4, current_hugepages=2))
    bars = {(b["numa_node"], b["resource"]): b for b in _report.drift_bars(facts["nodes"], facts["bound_bytes"])}
    pages = bars[(0, "hugepages-1Gi")]
    assert pages["side"] == "left" and pages["over"] is True and pages["bound_pct"] is None and pages["bound"] == 0
    # Memory's own total did not move; its allocatable did (the pages came back to regular memory) and is shown.
    memory = bars[(0, "memory")]
    assert memory["side"] == "zero" and memory["width_pct"] == 0 and "(allocatable +" in memory["text"]


def test_no_numbers_no_bars():
    assert _report.drift_bars([], None) == []


# --------------------------------------------------------------------------- rows


def probed_outcome(facts, node="worker-1"):
    """The outcome the probe playbook records for a node (remediate_plan, then action probed)."""
    options = {"api": True, "dry": False, "node_name": node, "service_mode": "systemd", "loop_max_repairs": 3,
               "loop_window_hours": 24, "history_file": "/var/lib/nodeops-numa-drift/history.json"}
    outcome = _remediate.plan(facts, options, [], 0.0)["outcome"]
    return dict(outcome, action="probed", message=outcome["summary"])


def test_a_refused_node_says_what_to_do_once(tmp_path):
    facts = facts_of(drifted_node(tmp_path, node1_kb=1024 * 1024))
    options = {"api": True, "dry": False, "node_name": "worker-1", "service_mode": "systemd", "loop_max_repairs": 3,
               "loop_window_hours": 24, "history_file": "/h", "cordon_unrepairable": False}
    outcome = _remediate.plan(facts, options, [], 0.0)["outcome"]
    assert outcome["action"] == "refused" and facts["advice"] in outcome["message"]
    entry = _report.row("host-1", "", outcome, {})
    assert entry["what_happened"].startswith("left as it is: drift_exceeds_bound; node")
    assert "> bound 96.0 MiB" in entry["what_happened"]
    assert entry["what_to_do"] == facts["advice"]
    # The details do not repeat it: the causes are listed by the page, the message (which has the advice) is not.
    assert facts["advice"] not in entry["details"]
    assert entry["details"] == "The checkpoint was not touched."


def test_probe_rows(tmp_path):
    drifted = _report.row("h1", "", probed_outcome(facts_of(drifted_node(tmp_path / "a"))), {})
    assert drifted["what_happened"] == "repairable (drift_within_bound); node0 memory -44.2 MiB within bound 96.0 MiB"
    assert drifted["details"] == "" and drifted["what_to_do"]
    synced = _report.row("h2", "", probed_outcome(facts_of(write_kubelet_node(str(tmp_path / "b"), two_node_boot(), layout="v3"))), {})
    assert synced["what_happened"] == "nothing to do (in_sync)" and synced["what_to_do"] == ""
    assert synced["kubelet"]["service"] == "kubelet" and synced["guard"]["installed"] is False


def test_short_lines_per_action():
    bars = [{"numa_node": 1, "resource": "memory", "text": "-1.0 GiB", "delta": -GIB, "over": True}]
    assert _report.what_happened("repaired", "drift_within_bound", "in_sync", [], 1, "") == "repaired: drift_within_bound -> in_sync"
    assert _report.what_happened("refused", "drift_exceeds_bound", "drift_exceeds_bound", bars, 96 * MIB, "") == (
        "left as it is: drift_exceeds_bound; node1 memory -1.0 GiB > bound 96.0 MiB")
    assert _report.what_happened("failed", "drift_within_bound", "drift_within_bound", [], 1,
                                 "could not cordon the Node through the API, so the node was not touched: boom") == (
        "failed: could not cordon the Node through the API, so the node was not touched")
    assert _report.what_happened("rolled_back", "drift_within_bound", "drift_within_bound", [], 1, "x").startswith("rolled back: ")
    assert _report.what_happened("not_processed", None, None, [], None, "") == "not processed (the rollout did not reach it)"


def test_not_processed_row():
    entry = _report.row("h", "node-x", {}, {})
    assert entry["node"] == "node-x" and entry["action"] == "not_processed" and entry["message"] == _report.NOT_PROCESSED
    assert entry["drift"] == [] and entry["pinned_pods"] == [] and entry["guard"]["installed"] is None and entry["what_to_do"] == ""


def test_guard_view_keeps_the_decision_and_drops_the_advice():
    view = _report.guard_view({"installed": True, "boot_id": "b-1", "verdict": "drift_exceeds_bound", "action": "refused",
                               "message": "touched nothing: kubelet decides (drift_exceeds_bound). What to do: drain it", "time": 0})
    assert view == {"installed": True, "boot_id": "b-1", "verdict": "drift_exceeds_bound", "action": "refused",
                    "message": "touched nothing: kubelet decides (drift_exceeds_bound)", "time": "1970-01-01T00:00:00Z", "decided": True}
    assert _report.guard_view({"installed": False})["decided"] is False


# --------------------------------------------------------------------------- pod names


def test_pod_names_from_a_node_listing_and_the_cache(tmp_path):
    facts = facts_of(drifted_node(tmp_path))
    outcome = probed_outcome(facts)
    assert _report.uids_to_look_up({"worker-1": outcome}, {}) == {"worker-1": ["pod-a", "pod-b"]}
    listing = [{"metadata": {"uid": "pod-a", "name": "web-0", "namespace": "shop"}, "status": {"qosClass": "Guaranteed"}},
               {"metadata": {"uid": "other", "name": "x", "namespace": "y"}}]
    names = _report.names_from_listing(["pod-a", "pod-b"], listing)
    assert names == {"pod-a": {"name": "web-0", "namespace": "shop", "qos": "Guaranteed"}, "pod-b": None}
    # A UID names one pod forever: once looked up (found or not), never again.
    assert _report.uids_to_look_up({"worker-1": outcome}, names) == {}
    pods = _report.row("h", "", outcome, names)["pinned_pods"]
    assert [(p["uid"], p["namespace"], p["name"], p["in_api"], p["containers"]) for p in pods] == [
        ("pod-a", "shop", "web-0", True, ["app", "sidecar"]), ("pod-b", None, None, False, ["db"])]
    assert pods[0]["sizes_text"] == "memory 3.0 GiB"
    assert _report.row("h", "", outcome, {})["pinned_pods"][0]["in_api"] is None  # not looked up


def test_a_static_pod_is_named_by_its_mirror_pod():
    # As kubelet v1.37.2 created it in a molecule guest: the mirror Pod's own uid is the API's; its mirror
    # annotation holds the static pod's UID, the one kubelet's checkpoint records.
    mirror = {"metadata": {"uid": "1f0c6b1e-api-assigned", "name": "guaranteed-0-numa2", "namespace": "default",
                           "annotations": {"kubernetes.io/config.mirror": "9d3c1c0b6f1e4a7b8e2d", "kubernetes.io/config.hash": "9d3c1c0b6f1e4a7b8e2d"}},
              "status": {"qosClass": "Guaranteed"}}
    names = _report.names_from_listing(["9d3c1c0b6f1e4a7b8e2d", "gone"], [mirror])
    assert names == {"9d3c1c0b6f1e4a7b8e2d": {"name": "guaranteed-0-numa2", "namespace": "default", "qos": "Guaranteed"},
                     "gone": None}
    # The config.hash annotation alone (a regular Pod copied from a manifest) names nothing.
    copied = {"metadata": {"uid": "u", "name": "copy", "namespace": "default", "annotations": {"kubernetes.io/config.hash": "gone"}}}
    assert _report.names_from_listing(["gone"], [copied]) == {"gone": None}


def test_build_counts_and_headline(tmp_path):
    outcome = probed_outcome(facts_of(drifted_node(tmp_path)))
    report = _report.build("probe", ["h1", "h2"], [outcome, {}], ["", "node-2"], None, {}, "api", "2026-01-01T00:00:00Z")
    assert report["headline"] == "2 nodes; verdicts drift_within_bound: 1, unknown: 1"
    assert report["counts"]["action"] == {"probed": 1, "not_processed": 1}
    assert [row["node"] for row in report["nodes"]] == ["worker-1", "node-2"]
    stopped = _report.build("remediate", ["h1"], [outcome], [""], {"stop": "pause", "message": "paused"}, {}, "api", "t")
    assert stopped["headline"].endswith("; stopped: paused") and stopped["stopped"]["stop"] == "pause"
    json.dumps(report)


# --------------------------------------------------------------------------- advice, what now, the page


def test_a_repairable_node_is_advised_the_remediate_playbook_limited_to_it(tmp_path):
    facts = facts_of(drifted_node(tmp_path))
    assert facts["verdict"] == "drift_within_bound"
    # The engine (on the node) does not know the inventory name: NODE, which the probe's action plugin fills in.
    assert "ansible-playbook -i INVENTORY nodeops.numa_drift.remediate --limit NODE " in facts["advice"]
    assert "kubelet_mm_checkpoint (state: repaired)" not in facts["advice"]
    entry = _report.row("worker-7", "", probed_outcome(facts), {})
    assert entry["what_to_do"].startswith("Repair it with the remediate playbook, which cordons the Node, stops kubelet")
    assert "nodeops.numa_drift.remediate --limit worker-7 " in entry["what_to_do"]
    report = _report.build("probe", ["worker-7", "worker-8"], [probed_outcome(facts), probed_outcome(facts, "worker-8")],
                           ["", ""], None, {}, "api", "t")
    assert report["repairable"] == ["worker-7", "worker-8"] and report["needs_human"] == []
    assert report["remediate_command"] == "ansible-playbook -i INVENTORY nodeops.numa_drift.remediate --limit worker-7,worker-8"
    assert "--limit worker-7,worker-8 " in report["next_steps"]["drift_within_bound"]
    # With the run's inventory sources (ansible_inventory_sources), the commands name them, quoted for a shell.
    inventory = _verdicts.inventory_option(["/srv/fleet inventory/hosts.ini", "/srv/k8s.yml"])
    assert inventory == "-i '/srv/fleet inventory/hosts.ini' -i /srv/k8s.yml"
    assert _verdicts.inventory_option(None) == _verdicts.inventory_option([]) == "-i INVENTORY"
    report = _report.build("probe", ["worker-7"], [probed_outcome(facts)], [""], None, {}, "api", "t", inventory=inventory)
    assert report["remediate_command"] == "ansible-playbook %s nodeops.numa_drift.remediate --limit worker-7" % inventory
    assert "ansible-playbook %s nodeops.numa_drift.remediate --limit worker-7 " % inventory in report["nodes"][0]["what_to_do"]
    assert "ansible-playbook %s nodeops.numa_drift.remediate --limit worker-7 " % inventory in report["next_steps"]["drift_within_bound"]


def test_the_probe_action_names_the_host_in_a_repairable_nodes_advice():
    from ansible_collections.nodeops.numa_drift.plugins.action.numa_drift_facts import ActionModule  # pylint: disable=import-outside-toplevel

    repairable = {"numa_drift": {"verdict": "drift_within_bound", "advice": _drift.remediate_advice()}}
    ActionModule._advise_for(repairable, "node-a.example", "-i /srv/hosts.ini")  # pylint: disable=protected-access
    assert "ansible-playbook -i /srv/hosts.ini nodeops.numa_drift.remediate --limit node-a.example " in repairable["numa_drift"]["advice"]
    refused = {"numa_drift": {"verdict": "corrupt", "advice": "drain the node"}}
    ActionModule._advise_for(refused, "node-a.example", "-i /srv/hosts.ini")  # pylint: disable=protected-access
    assert refused["numa_drift"]["advice"] == "drain the node"


def test_what_now_lists_the_nodes_that_need_a_human_with_reason_and_next_step(tmp_path):
    exceeds = facts_of(drifted_node(tmp_path / "a", node1_kb=1024 * 1024))
    options = {"api": True, "dry": False, "node_name": "n-refused", "service_mode": "systemd", "loop_max_repairs": 3,
               "loop_window_hours": 24, "history_file": "/h", "cordon_unrepairable": False}
    refused = _remediate.plan(exceeds, options, [], 0.0)["outcome"]
    failed = dict(probed_outcome(facts_of(drifted_node(tmp_path / "b")), "n-failed"), action="failed",
                  message="could not cordon the Node through the API, so the node was not touched: 403. Fix RBAC, run again")
    repaired = dict(probed_outcome(facts_of(drifted_node(tmp_path / "c")), "n-repaired"), action="repaired",
                    verdict_after="in_sync", cordoned_by_us=False, cordoned_before=True)
    report = _report.build("remediate", ["h-refused", "h-failed", "h-repaired", "h-later"], [refused, failed, repaired, {}],
                           ["", "", "", "n-later"], None, {}, "api", "t")
    needs = {need["node"]: need for need in report["needs_human"]}
    assert sorted(needs) == ["n-failed", "n-refused"]
    assert needs["n-refused"]["verdict"] == "drift_exceeds_bound" and "more than the bound" in needs["n-refused"]["reason"]
    assert needs["n-refused"]["next_step"] == exceeds["advice"]
    assert needs["n-failed"]["reason"].startswith("failed: could not cordon") and needs["n-failed"]["next_step"] == failed["message"]
    assert report["not_processed"] == ["h-later"] and report["repairable"] == []
    # Refused, its Ready state unknown (no Node list): named as staying down; Ready, it is not.
    assert report["stay_down"] == [{"node": "n-refused", "action": "refused", "verdict": "drift_exceeds_bound"}]
    ready = {"found": True, "ready": "True", "cordoned": False, "cordoned_by": None}
    down = dict(ready, ready="False")
    for state, expected in ((ready, []), (down, report["stay_down"])):
        again = _report.build("remediate", ["h-refused", "h-repaired"], [refused, repaired], ["", ""], None, {}, "api", "t",
                              states={"n-refused": state, "n-repaired": ready}, states_source="api")
        assert again["stay_down"] == expected
    # Still drift_within_bound after the run (it failed): the per-verdict next step names that host.
    assert "nodeops.numa_drift.remediate --limit h-failed " in report["next_steps"]["drift_within_bound"]
    rows = {entry["node"]: entry for entry in report["nodes"]}
    assert rows["n-refused"]["needs_human"] and not rows["n-repaired"]["needs_human"]
    assert rows["n-repaired"]["action_note"] == "stays cordoned (cordoned before by someone else)"
    html = _report.render_html(report)
    now, nodes = html.index('id="what-now"'), html.index('id="nodes"')
    assert now < html.index('id="verdicts"') < nodes
    box = html[now:nodes]
    assert 'data-node="n-refused"' in box and 'data-node="n-failed"' in box and "n-repaired" not in box
    assert "stays cordoned (cordoned before by someone else)" in html[nodes:]
    assert html.count(_escaped(exceeds["advice"])) == 1  # the advice once: in the box, the row points up to it


def test_action_note_says_whose_cordon():
    assert _report.action_note("repaired", True, False) == "cordoned, then uncordoned"
    assert _report.action_note("repaired", True, True) == "cordoned, then uncordoned"  # our mark from an earlier run
    assert _report.action_note("repaired", False, True) == "stays cordoned (cordoned before by someone else)"
    assert _report.action_note("refused", True, False) == "cordoned by us"
    assert _report.action_note("none", False, False) == ""


def _escaped(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;").replace("'", "&#39;")


def test_the_page_escapes_every_value_by_construction():
    """Autoescaping on: a template value printed without |e is escaped too (the template cannot forget one)."""
    hostile = '<script>alert(1)</script>"&'
    assert _report.render_html({"x": 1}, "{{ numa_drift_report.x }}<p>{{ v }}</p>") == "1<p></p>"
    page = _report.render_html({"name": hostile}, "<p>{{ numa_drift_report.name }}</p>")
    assert page == "<p>&lt;script&gt;alert(1)&lt;/script&gt;&#34;&amp;</p>"


def test_an_unreachable_node_is_a_failed_row_that_says_what_to_do():
    report = _report.build("remediate", ["n1", "n2"], [{"node": "n1", "action": "unreachable", "message": "unreachable: ssh refused"}, {}],
                           ["", ""], None, {}, "none", "2026-12-04T00:00:00Z")
    first, second = report["nodes"]
    assert first["action"] == "unreachable" and first["failed"] is True
    assert first["message"].startswith("unreachable: ssh refused") and "--limit n1" in first["message"]
    assert first["what_happened"] == "unreachable: ssh refused"
    assert second["action"] == "not_processed"
    assert report["counts"]["action"] == {"not_processed": 1, "unreachable": 1}


def test_a_node_lost_during_the_run_is_unreachable_unless_it_had_failed():
    outcomes = [{"node": "n1", "action": "none", "verdict_before": "drift_within_bound"},
                {"node": "n2", "action": "rolled_back", "message": "kubelet did not come back"}, {"node": "n3", "action": "repaired"}]
    rows = _report.build("remediate", ["n1", "n2", "n3"], outcomes, ["", "", ""], None, {}, "none", "now", lost=["n1", "n2"])["nodes"]
    assert [entry["action"] for entry in rows] == ["unreachable", "rolled_back", "repaired"]
    assert "connection to the node was lost" in rows[0]["message"] and "--limit n1" in rows[0]["message"]
    assert rows[0]["verdict_before"] == "drift_within_bound"


def test_every_verdict_has_a_colour_on_the_page():
    with open(_report.TEMPLATE, encoding="utf-8") as handle:
        page = handle.read()
    assert [verdict for verdict in _drift.VERDICTS if ".v-%s" % verdict not in page] == []


def test_nodes_in_progress_are_unreachable_in_the_report_written_before_their_procedure():
    # The report the remediate playbook writes before a batch: what stays on disk when no task runs after it.
    outcomes = [{"node": "n1", "action": "repaired"}, {}, {"node": "n3", "action": "unreachable", "message": "unreachable: refused"}, {}]
    report = _report.build("remediate", ["n1", "n2", "n3", "n4"], outcomes, [""] * 4, None, {}, "none", "now", in_progress=["n2", "n3"])
    rows = report["nodes"]
    assert [entry["action"] for entry in rows] == ["repaired", "unreachable", "unreachable", "not_processed"]
    assert "the run ended during this node's procedure" in rows[1]["message"] and "--limit n2" in rows[1]["message"]
    assert rows[2]["message"].startswith("unreachable: refused")  # reached by nobody: its own message
    assert report["counts"]["action"] == {"repaired": 1, "unreachable": 2, "not_processed": 1}


def test_a_report_says_whether_the_rollout_ended_with_it():
    # The lock's watcher reads it: a report written in the middle of the rollout (before or after a batch's procedures)
    # leaves the rest of the rollout to be finished; the last one does not.
    def ended(**kwargs):
        return _report.build("remediate", ["n1", "n2"], [{"node": "n1", "action": "repaired"}, {}], ["", ""], None, {}, "none", "now",
                             **kwargs)["rollout_ended"]
    assert (ended(in_progress=["n2"]), ended(), ended(rollout_ended=False)) == (False, True, False)
    assert "rollout_ended" not in _report.build("probe", ["n1"], [{}], [""], None, {}, "none", "now")


def test_the_probe_report_sends_an_unreachable_node_back_to_the_probe():
    outcomes = [{"node": "n1", "action": "unreachable", "message": "unreachable: refused. The node was not probed."}, {}]
    rows = _report.build("probe", ["n1", "n2"], outcomes, ["", ""], None, {}, "none", "now", lost=["n2"])["nodes"]
    assert [entry["action"] for entry in rows] == ["unreachable", "unreachable"]
    assert rows[0]["message"].endswith("then run nodeops.numa_drift.probe again with --limit n1.")
    assert rows[1]["message"].startswith("unreachable: the connection to n2 was lost during the probe; a probe changes nothing")
    assert "nodeops.numa_drift.probe again with --limit n2" in rows[1]["message"] and "remediate" not in rows[1]["message"]


def test_a_row_says_which_kubelet_the_node_runs_and_where_that_was_read(tmp_path):
    root = drifted_node(tmp_path / "a")
    install_release(root, "kubeadm", "v1.35.4")
    known = _report.row("h1", "", probed_outcome(facts_of(root)), {})["kubelet"]
    assert (known["version"], known["release"], known["rules_release"]) == ("v1.35.4", "1.35", "1.35")
    assert known["release_source"] == "/usr/bin/kubelet --version: Kubernetes v1.35.4"
    unknown = _report.row("h2", "", probed_outcome(facts_of(drifted_node(tmp_path / "b"))), {})["kubelet"]
    assert unknown["version"] is None and unknown["release_source"].startswith("unknown: ")
    untested = _report.row("h3", "", probed_outcome(facts_of(root, kubelet_release="1.38", untested_release="nearest")), {})["kubelet"]
    assert (untested["release"], untested["rules_release"]) == ("1.38", "1.37")


def test_the_report_is_written_whole_into_a_directory_it_creates(tmp_path) -> None:
    directory = tmp_path / "reports" / "fleet"
    report = _report.build("probe", ["a"], [{"action": "probed", "numa_drift": {"verdict": "in_sync"}}], [""], None, {}, "off", "T")
    _report.write(str(directory), report)
    assert json.loads((directory / "report.json").read_text(encoding="utf-8")) == report
    assert (directory / "report.html").read_text(encoding="utf-8") == _report.render_html(report)
    assert sorted(os.listdir(directory)) == ["report.html", "report.json"]  # no temporary file left
    assert {oct(os.stat(directory / name).st_mode & 0o777) for name in ("report.json", "report.html")} == {"0o644"}
    # Written again: replaced whole.
    _report.write(str(directory), dict(report, headline="again"))
    assert json.loads((directory / "report.json").read_text(encoding="utf-8"))["headline"] == "again"


def test_the_progress_headline_shows_the_batch_about_to_start_as_not_processed_yet() -> None:
    done = {"node": "a", "action": "repaired", "verdict_before": "drift_within_bound", "verdict_after": "in_sync", "numa_drift": {}}
    hosts, outcomes, names = ["a", "b", "c"], [done, {}, {}], ["", "", ""]
    report = _report.build("remediate", hosts, outcomes, names, None, {}, "off", "T", in_progress=["b"])
    # On disk the batch's node reads unreachable (the run may end during its procedure); the terminal says where it is.
    assert report["counts"]["action"] == {"repaired": 1, "unreachable": 1, "not_processed": 1}
    assert _report.progress_headline(report) == (
        "3 nodes; actions not_processed: 2, repaired: 1; verdicts before drift_within_bound: 1, unknown: 2;"
        " after in_sync: 1, unknown: 2")
    nothing_in_progress = _report.build("remediate", hosts, outcomes, names, None, {}, "off", "T")
    assert _report.progress_headline(nothing_in_progress) == nothing_in_progress["headline"]


def test_a_report_written_as_a_batch_starts_is_made_again_as_if_the_batch_had_not_started() -> None:
    # The watcher's rewrite of a run that ended before the batch's rollout controls passed: exactly the report the run
    # would have written with nothing in progress (the finished batch's outcome kept, the batch's nodes not processed).
    done = {"node": "a", "action": "repaired", "verdict_before": "drift_within_bound", "verdict_after": "in_sync", "numa_drift": {}}
    hosts, outcomes, names = ["a", "b", "c"], [done, {"node": "b", "action": "unreachable", "message": "unreachable: refused"}, {}], ["", "", ""]
    states = {"a": {"ready": "True", "cordoned_by": None}}
    report = _report.build("remediate", hosts, outcomes, names, None, {}, "off", "T", in_progress=["b", "c"], inventory="-i inv.yml",
                           states=states, in_progress_batch=2)
    assert (report["in_progress"], report["in_progress_batch"], sorted(report["if_not_started"])) == (["b", "c"], 2, ["b", "c"])
    assert [entry["action"] for entry in report["nodes"]] == ["repaired", "unreachable", "unreachable"]
    again = _report.not_started(json.loads(json.dumps(report)))  # as the watcher reads it from report.json
    assert again == _report.build("remediate", hosts, outcomes, names, None, {}, "off", "T", inventory="-i inv.yml", states=states,
                                  rollout_ended=False)
    assert [entry["action"] for entry in again["nodes"]] == ["repaired", "unreachable", "not_processed"]
    assert (again["in_progress"], again["in_progress_batch"], again["if_not_started"], again["rollout_ended"]) == ([], None, {}, False)


def test_each_row_shows_its_nodes_ready_condition_and_who_cordoned_it(tmp_path):
    facts = facts_of(drifted_node(tmp_path))
    prefix = "numa-drift.nodeops.io"

    def api_node(name, ready="True", cordoned=False, ours=False):
        marks = {prefix + "/cordoned-by": "nodeops.numa_drift"} if ours else {}
        return {"metadata": {"name": name, "annotations": marks}, "spec": {"unschedulable": cordoned},
                "status": {"conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": ready}]}}

    nodes = {"w1": api_node("w1"), "w2": api_node("w2", "False", cordoned=True), "w3": api_node("w3", cordoned=True, ours=True)}
    hosts = ["w1", "w2", "w3", "w4"]
    states = {name: _cordon.node_state(nodes.get(name), prefix) for name in hosts}
    assert states["w2"] == {"found": True, "ready": "False", "cordoned": True, "cordoned_by": "someone else"}
    assert states["w4"] == {"found": False, "ready": None, "cordoned": False, "cordoned_by": None}
    report = _report.build("probe", hosts, [probed_outcome(facts, host) for host in hosts], [""] * 4, None, {}, "api", "t",
                           states=states, states_source="api")
    shown = {entry["host"]: entry["node_state_text"] for entry in report["nodes"]}
    assert shown == {"w1": "Ready, schedulable",
                     "w2": "NotReady, cordoned by someone else (the remediate playbook leaves it cordoned)",
                     "w3": "Ready, cordoned by nodeops.numa_drift", "w4": "no such Node in the API"}
    # What now says which repairable nodes stay cordoned; the page shows each row's state, escaped.
    assert report["repairable_cordoned"] == ["w2"] and report["node_states_source"] == "api"
    assert report["stay_down"] == []  # repairable, not refused
    page = _report.render_html(report)
    assert "(not w2: cordoned by someone else, they stay cordoned)" in page
    assert '<span class="small warn" data-field="node-state">NotReady, cordoned by someone else' in page
    assert '<span class="small" data-field="node-state">Ready, schedulable</span>' in page
    # Not looked up (no API): no state, and the report says why.
    quiet = _report.build("probe", ["w1"], [probed_outcome(facts, "w1")], [""], None, {}, "api", "t", states_source="off")
    assert quiet["nodes"][0]["node_state"] is None and quiet["nodes"][0]["node_state_text"] == "" and quiet["node_states_source"] == "off"
    assert 'data-field="node-state"' not in _report.render_html(quiet)


def test_a_stale_default_cpu_set_is_repairable_in_the_report_and_its_details_show_the_cpu_manager(tmp_path):
    """Both managers in the report: the node is listed as repairable with the remediate command, its row names the CPU
    manager's class, the CPUs online and recorded and the defaultCpuSet the repair writes."""
    from ansible_collections.nodeops.numa_drift.tests.support import cputree  # pylint: disable=import-outside-toplevel

    root = drifted_node(tmp_path)
    cputree.add_static_cpu_manager(root, range(16), "0-1,3-5,8-9,11-13", {"pod-a": {"app": "2,10"}})
    facts = facts_of(root, kubelet_release="1.35.4")
    assert facts["verdict"] == "cpu_default_set_stale" and facts["repairable"] is True
    report = _report.build("probe", ["worker-7"], [probed_outcome(facts)], [""], None, {}, "api", "t")
    entry = report["nodes"][0]
    assert report["repairable"] == ["worker-7"] and report["needs_human"] == []
    assert entry["what_happened"].startswith("repairable (cpu_default_set_stale)")
    assert "nodeops.numa_drift.remediate --limit worker-7" in report["next_steps"]["cpu_default_set_stale"]
    assert entry["cpu_manager"]["class"] == "cpus_unrecorded" and entry["cpu_manager"]["rederived_default"] == "0-1,3-9,11-15"
    html = _report.render_html(report)
    assert ("CPU manager (started before the memory manager): cpus_unrecorded, CPUs online 0-15, recorded 0-5,8-13, "
            "defaultCpuSet re-derived 0-1,3-9,11-15.") in html
