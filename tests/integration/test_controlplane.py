# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbooks against a real kube-apiserver + etcd (tests/integration/controlplane.py), under the
ServiceAccount and roles the collection ships (extensions/rbac/nodeops-numa-drift.yml, and for the drain its
optional nodeops-numa-drift-drain.yml), nothing more.

The sandbox fleet's Nodes and pods are created on the real API server with the admin token, and the
kubelet stand-ins post their Node status with it (they play kubelet); every playbook and the inventory
plugin run with the ServiceAccount's kubeconfig. Then each permission of the manifests is taken away in
turn, and the step that needs it fails with its message. The cluster lock and the pause are checked
against the real server's semantics (resourceVersion conflicts, its own audit log for the order of writes).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import yaml

from ansible_collections.nodeops.numa_drift.tests.integration import controlplane, realapi
from ansible_collections.nodeops.numa_drift.tests.integration import test_fleet_sandbox as sandbox
from ansible_collections.nodeops.numa_drift.tests.integration.controlplane import ControlPlane
from ansible_collections.nodeops.numa_drift.tests.integration.realapi import RealFleet
from ansible_collections.nodeops.numa_drift.tests.sandbox import kubelet_standin
from ansible_collections.nodeops.numa_drift.tests.integration.test_fleet_sandbox import collections_path  # noqa: F401  pylint: disable=unused-import

SERVICE_ACCOUNT = realapi.SERVICE_ACCOUNT
ANSIBLE_INVENTORY = os.path.join(sandbox.VENV_BIN, "ansible-inventory")
LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/nodeops-numa-drift"
PAUSE = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "numa-drift-rollout", "namespace": "kube-system"},
         "data": {"paused": "false"}}

pytestmark = sandbox.pytestmark
rbac_documents = realapi.rbac_documents


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, collections_path: str, control_plane: ControlPlane,
          service_account: str) -> Iterator[RealFleet]:
    """Six repairable nodes (all-drift) registered on the real API server; playbooks under the ServiceAccount."""
    for real in realapi.real_fleet(tmp_path_factory, collections_path, control_plane, service_account, "all-drift", nodes=6):
        # Every run: the pause switch is read (not paused) and the health gate lists the Nodes.
        real.default_args = ["-e", "numa_drift_pause_configmap=numa-drift-rollout", "-e", "numa_drift_max_unhealthy=100%"]
        control_plane.apply(PAUSE)
        try:
            yield real
        finally:
            control_plane.delete(PAUSE)  # the pause switch is cluster-wide: the next module's tests create their own


def test_the_kubelet_standin_registers_its_node_and_patches_its_status(
        control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    """kubelet_standin's StatusReporter as kubelet does it: POST /api/v1/nodes, then strategic-merge PATCHes of nodes/<name>/status."""
    monkeypatch.setenv("SSL_CERT_FILE", control_plane.ca_file)
    reporter = kubelet_standin.StatusReporter(control_plane.server, control_plane.admin_token, "registered-by-standin", "127.0.10.99", "1.37", None)
    assert reporter.post(False, "memory manager refused the checkpoint"), "the real API server refused the registration or the status"
    assert reporter.post(True, "kubelet is posting ready status")
    node = control_plane.call("GET", "/api/v1/nodes/registered-by-standin")
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert len(ready) == 1 and ready[0]["status"] == "True" and ready[0]["reason"] == "KubeletReady", ready
    assert {"type": "InternalIP", "address": "127.0.10.99"} in node["status"]["addresses"]
    control_plane.call("DELETE", "/api/v1/nodes/registered-by-standin")


def test_the_kubelet_standins_register_and_post_status_on_a_real_api_server(fleet: RealFleet) -> None:
    for name in fleet.nodes:
        node = fleet.api_node(name)
        ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
        # Drifted: kubelet's memory manager refuses the checkpoint, the stand-in posts Ready=False with the error.
        assert ready["status"] == "False" and ready["reason"] == "KubeletNotReady", (name, ready)
        assert "memory manager" in ready["message"] or "checkpoint" in ready["message"], ready
        assert node["status"]["nodeInfo"]["kubeletVersion"], node["status"]["nodeInfo"]


def inventory_source(directory: str, kubeconfig: str) -> str:
    path = os.path.join(directory, "notready.k8s_nodes.yml")
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump({"plugin": "nodeops.numa_drift.k8s_nodes", "readiness": "notready", "kubeconfig": kubeconfig}, handle)
    return path


def run_inventory(fleet: RealFleet, source: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("K8S_AUTH_", "ANSIBLE_")) and key != "KUBECONFIG"}
    env.update(ANSIBLE_COLLECTIONS_PATH=fleet.collections, ANSIBLE_INVENTORY_UNPARSED_FAILED="true", ANSIBLE_NOCOLOR="1")
    return subprocess.run([ANSIBLE_INVENTORY, "-i", source, "--list"], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_the_inventory_plugin_lists_the_notready_nodes_under_the_service_account(fleet: RealFleet, service_account: str) -> None:
    result = run_inventory(fleet, inventory_source(fleet.dir, service_account))
    assert result.returncode == 0, result.stderr
    assert sorted(json.loads(result.stdout)["_meta"]["hostvars"]) == sorted(fleet.nodes)


def test_remediate_repairs_a_node_under_the_service_account(fleet: RealFleet) -> None:
    name = sorted(fleet.nodes)[0]
    run = fleet.playbook("remediate", "-l", name)
    assert run.rc == 0, run.tail()
    row = run.rows()[name]
    assert row["action"] == "repaired", row
    assert fleet.verdict(name) == "in_sync"
    assert fleet.wait_ready(name) == "True"
    assert not fleet.unschedulable(name)
    assert sandbox.CORDONED_BY not in fleet.annotations(name)
    events = fleet.events(name)
    assert [event["reason"] for event in events] == ["NumaDriftRepaired"], events
    # The pod section names the checkpoint's pods from the real API (pods list under the ServiceAccount).
    report = run.report()
    assert report["pods_source"] == "api", report["pods_source"]
    pods = row["pinned_pods"]
    assert pods and all(pod["in_api"] and pod["namespace"] == "workloads" and pod["name"] for pod in pods), pods
    # The lock was taken and released by the ServiceAccount.
    leases = [entry for entry in fleet.audit() if entry["kind"] == "Lease"]
    fleet.full_run_seconds = run.seconds
    assert leases and leases[-1]["holder"] is None
    assert {entry["user"] for entry in leases} == {"system:serviceaccount:%s:%s" % SERVICE_ACCOUNT}
    print("fleet up %.1f s, remediate of one node under the ServiceAccount %.1f s" % (fleet.up_seconds, run.seconds))


# --------------------------------------------------------------------------- the lock and the pause, real semantics


def test_two_concurrent_runs_never_work_on_the_cluster_at_once(fleet: RealFleet) -> None:
    sandbox.check_two_concurrent_runs(fleet, sorted(fleet.nodes)[1:3])


def test_a_held_lease_stops_a_second_run_and_a_stale_one_is_taken_over(fleet: RealFleet) -> None:
    sandbox.check_held_then_stale_lease(fleet, sorted(fleet.nodes)[3])


def test_pause_stops_the_rollout_before_the_next_batch(fleet: RealFleet) -> None:
    # The pause switch of every run here is numa-drift-rollout (not paused): it is replaced for this test.
    fleet.plane.delete(PAUSE)
    try:
        sandbox.check_pause(fleet, sorted(fleet.nodes)[3:4])
    finally:
        fleet.plane.apply(PAUSE)


def test_pause_set_during_the_canary_stops_the_rollout_before_the_next_batch(fleet: RealFleet) -> None:
    canary, rest = sorted(fleet.nodes)[3:5]
    started = fleet.start_playbook("remediate", "-l", "%s,%s" % (canary, rest))
    try:
        deadline = time.monotonic() + 120
        while not fleet.unschedulable(canary):  # the canary's batch is under way: its Node is cordoned
            assert time.monotonic() < deadline and started["process"].poll() is None, "the canary was never cordoned"
            time.sleep(0.2)
        paused = copy.deepcopy(PAUSE)
        paused["data"]["paused"] = "storage maintenance, ask #infra"
        fleet.plane.apply(paused)
        run = fleet.finish(started)
    finally:
        fleet.plane.apply(PAUSE)
    assert run.rc == 0, run.tail()
    rows = run.rows()
    assert rows[canary]["action"] == "repaired" and rows[rest]["action"] == "not_processed", rows
    assert "storage maintenance, ask #infra" in run.report()["stopped"]["message"], run.report()["stopped"]
    assert fleet.checkpoint_bytes(rest) == fleet.originals[rest] and not fleet.unschedulable(rest)
    assert [entry for entry in fleet.audit() if entry["kind"] == "Lease"][-1]["holder"] is None


# --------------------------------------------------------------------------- every permission is needed


def shipped_documents() -> List[Dict[str, Any]]:
    """Every RBAC object shipped: the main file's and the optional drain rules'."""
    return rbac_documents() + rbac_documents(controlplane.DRAIN_RBAC_FILE)


def role_document(role: str) -> Dict[str, Any]:
    return next(d for d in shipped_documents() if "%s/%s" % (d["kind"], d["metadata"]["name"]) == role)


def permissions() -> List[Tuple[str, int, str]]:
    """(kind/name of the role, index of the rule, verb) for every verb the shipped roles grant."""
    return [("%s/%s" % (document["kind"], document["metadata"]["name"]), index, verb)
            for document in shipped_documents() if document["kind"] in ("Role", "ClusterRole")
            for index, rule in enumerate(document["rules"]) for verb in rule["verbs"]]


def without(role: str, index: int, verb: str) -> Dict[str, Any]:
    """The shipped role ``role`` without ``verb`` in its rule ``index`` (the rule dropped when it had only that verb)."""
    document = copy.deepcopy(role_document(role))
    rule = document["rules"][index]
    rule["verbs"] = [other for other in rule["verbs"] if other != verb]
    if not rule["verbs"]:
        del document["rules"][index]
    return document


def allowed(plane: ControlPlane, token: str, role: str, index: int, verb: str) -> bool:
    """The API server's own answer (SelfSubjectAccessReview under the ServiceAccount) for that permission."""
    document = role_document(role)
    rule = document["rules"][index]
    resource, _slash, subresource = rule["resources"][0].partition("/")
    attributes = {"verb": verb, "group": rule["apiGroups"][0], "resource": resource, "subresource": subresource}
    if document["metadata"].get("namespace"):
        attributes["namespace"] = document["metadata"]["namespace"]
    if rule.get("resourceNames"):
        attributes["name"] = rule["resourceNames"][0]
    status, answer = plane.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": attributes}}, token=token)
    assert status == 201, answer
    return bool(answer["status"].get("allowed"))


# What needs each permission, and how a run without it says so. The Lease is deleted first where creating it
# is the point; the runs over the drifted target leave it drifted (they stop before touching it, or are dry
# runs) until the last one, which repairs it.
STEPS = {
    "leases create": ("delete-lease", (), "Say why the rollout stops"),
    "leases get": ("", (), "Say why the rollout stops"),
    "leases update": ("ensure-lease", (), "Say why the rollout stops"),
    "configmaps get": ("", (), "Say why the rollout stops"),
    "nodes list": ("", (), "Say why the rollout stops"),
    "nodes get": ("", (), "Cordon the Node"),
    "nodes patch": ("", (), "Cordon the Node"),
    "pods list": ("", ("-e", "remediate_dry_run=true"), "Write report.json"),
    "events create": ("", (), "Say that the Event could not be posted"),
    # The optional drain rules (nodeops-numa-drift-drain.yml), over a node of their own: the evictions before the
    # repair, and the wait for the evicted pods after it (k8s_drain reads each pod).
    "pods/eviction create": ("", ("-e", "remediate_drain=true"), "Drain the Node"),
    "pods get": ("", ("-e", "remediate_drain=true"), "Wait for the evicted pods to end"),
}
DRAIN_KEYS = ("pods/eviction create", "pods get")  # in this order: the first evicts nothing, the second everything
DRAIN_WAIT_FAILED = "the checkpoint was repaired and the Node is Ready, but the pods the drain evicted did not end"


def run_without(fleet: RealFleet, token: str, role: str, index: int, verb: str, target: str) -> sandbox.Run:
    """One remediate run over ``target`` with the permission taken away (restored after)."""
    plane = fleet.plane
    original = role_document(role)
    resource = original["rules"][index]["resources"][0]
    if STEPS["%s %s" % (resource, verb)][0] == "delete-lease":
        plane.request("DELETE", LEASE_PATH)
    if STEPS["%s %s" % (resource, verb)][0] == "ensure-lease" and plane.request("GET", LEASE_PATH)[0] == 404:
        plane.apply({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                     "metadata": {"name": "nodeops-numa-drift", "namespace": "kube-system"}, "spec": {}})
    plane.apply(without(role, index, verb))
    try:
        deadline = time.monotonic() + 10
        while allowed(plane, token, role, index, verb):
            assert time.monotonic() < deadline, "the API server still allows %s %s after the role changed" % (verb, resource)
            time.sleep(0.2)
        return fleet.playbook("remediate", "-l", target, *STEPS["%s %s" % (resource, verb)][1])
    finally:
        plane.apply(original)
        deadline = time.monotonic() + 10
        while not allowed(plane, token, role, index, verb) and time.monotonic() < deadline:
            time.sleep(0.2)


def permission_order(permission: Tuple[str, int, str]) -> Tuple[int, int]:
    """The runs that stop before touching the target first, then the drain's (they leave it cordoned by us), then
    events create (it repairs the target)."""
    key = "%s %s" % (rule_resource(permission[0], permission[1]), permission[2])
    return (2, 0) if key == "events create" else (1, DRAIN_KEYS.index(key)) if key in DRAIN_KEYS else (0, 0)


def test_every_permission_of_the_shipped_roles_is_needed(fleet: RealFleet, service_account_token: str) -> None:
    target, drain_target = sorted(fleet.nodes)[4:6]
    for name in (target, drain_target):
        assert fleet.verdict(name) == "drift_within_bound" and not fleet.unschedulable(name)
    granted = permissions()
    # The manifests grant exactly the permissions this test takes away one by one (events create last: it repairs).
    assert sorted("%s %s" % (rule_resource(role, index), verb) for role, index, verb in granted) == sorted(STEPS)
    drain_rbac = rbac_documents(controlplane.DRAIN_RBAC_FILE)
    for document in drain_rbac:
        fleet.plane.apply(document)
    try:
        failures, runs = check_each_permission(fleet, service_account_token, target, drain_target, sorted(granted, key=permission_order))
    finally:
        for document in drain_rbac:
            fleet.plane.delete(document)
    print("runs without each permission:", "; ".join(runs))
    assert not failures, "\n\n".join(failures)


def check_each_permission(fleet: RealFleet, token: str, target: str, drain_target: str,
                          granted: List[Tuple[str, int, str]]) -> Tuple[List[str], List[str]]:
    failures, runs = [], []
    for role, index, verb in granted:
        key = "%s %s" % (rule_resource(role, index), verb)
        node = drain_target if key in DRAIN_KEYS else target
        events_before = len(fleet.events(node))
        run = run_without(fleet, token, role, index, verb, node)
        runs.append("%s: rc %d, %.0f s" % (key, run.rc, run.seconds))
        denied = 'cannot %s resource "%s"' % (key.split()[1], key.split()[0])
        if key == "pods get":
            # k8s_drain's wait reads each evicted pod and says no more than the reason of the answer.
            denied = "Exception raised: Forbidden"
        # The step that needs the permission says so, with the API server's words.
        block = step_output(run.output, STEPS[key][2]).replace("\\", "")
        if key == "pods list":
            block = run.report()["pods_source"]
            assert block.startswith("API refused the pod lookup"), block
        if denied not in block:
            failures.append("%s: %r not in the step %r:\n%s" % (key, denied, STEPS[key][2], block[-1500:] or run.tail(30)))
            continue
        if key in ("pods list", "events create"):
            # Best effort: the run goes on (a dry run; a repair without its Event).
            assert run.rc == 0, run.tail()
            assert fleet.rows_action(run, node) == ("dry_run" if key == "pods list" else "repaired"), run.tail()
            assert len(fleet.events(node)) == events_before
        elif key == "pods/eviction create":
            # The drain failed: kubelet and the checkpoint untouched, the Node left cordoned by us with the reason.
            assert run.rc != 0, (key, run.tail())
            row = run.rows()[node]
            assert row["action"] == "failed" and row["message"].startswith("drain failed; kubelet and its checkpoint were not touched"), row
            assert fleet.checkpoint_bytes(node) == fleet.originals[node] and fleet.unschedulable(node), key
            assert fleet.annotations(node)[sandbox.CORDONED_BY] == sandbox.MARKER, key
        elif key == "pods get":
            # The evictions went through and the node was repaired; the wait for the evicted pods could not read them:
            # the repair stays, the Node stays cordoned by us.
            assert run.rc != 0, (key, run.tail())
            row = run.rows()[node]
            assert row["action"] == "failed" and row["message"].startswith(DRAIN_WAIT_FAILED), row
            assert fleet.verdict(node) == "in_sync" and fleet.unschedulable(node), key
            assert fleet.annotations(node)[sandbox.CORDONED_BY] == sandbox.MARKER, key
        else:
            # Stopped before the node was touched.
            assert run.rc != 0, (key, run.tail())
            assert fleet.checkpoint_bytes(node) == fleet.originals[node] and not fleet.unschedulable(node), key
    return failures, runs


def rule_resource(role: str, index: int) -> str:
    return role_document(role)["rules"][index]["resources"][0]


def step_output(output: str, step: str) -> str:
    """The output of every task whose name starts with ``step`` (up to the next TASK line)."""
    blocks = []
    for chunk in output.split("\nTASK [")[1:]:
        title = chunk.split("]", 1)[0]
        if step in title:
            blocks.append(chunk)
    return "\n".join(blocks)
