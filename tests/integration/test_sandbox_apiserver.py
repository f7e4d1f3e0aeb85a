# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox API server against real clients: the python ``kubernetes`` client and kubernetes.core."""

from __future__ import annotations

import json
import os
import socket
import textwrap
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator

import pytest
from kubernetes import client, config, dynamic
from kubernetes.dynamic.exceptions import ConflictError

from ansible_collections.nodeops.numa_drift.tests.sandbox import apiserver
from ansible_collections.nodeops.numa_drift.tests.sandbox.testing import (
    ApiServer,
    ansible_tool,
    http,
    kubeconfig_text,
    poll_until,
    ready_condition,
    start_apiserver,
    wait_for,
)

NODES = ("sbx-a", "sbx-b", "sbx-c")


def initial_state() -> Dict[str, Any]:
    nodes = {name: apiserver.node_object(name, labels={"pool": "numa" if name != "sbx-c" else "plain"}, internal_ip="127.0.10.%d" % i)
             for i, name in enumerate(NODES, start=1)}
    pods = [
        apiserver.pod_object("workloads", "app-a-0", "sbx-a", labels={"app": "numa"}),
        apiserver.pod_object("workloads", "app-a-1", "sbx-a", labels={"app": "numa"}),
        apiserver.pod_object("kube-system", "kube-proxy-a", "sbx-a", owner_kind="DaemonSet", owner_name="kube-proxy"),
        apiserver.pod_object("workloads", "app-b-0", "sbx-b", labels={"app": "numa"}),
        apiserver.pod_object("workloads", "guarded-c-0", "sbx-c", annotations={apiserver.EVICTION_BLOCKED_ANNOTATION: "true"}),
        apiserver.pod_object("workloads", "stuck-b-1", "sbx-b", annotations={apiserver.EVICTION_LINGERS_ANNOTATION: "true"}),
    ]
    return {"resourceVersion": 1, "nodes": nodes, "pods": {"%s/%s" % (p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}}


def post_ready(url: str, name: str, ready: bool, message: str = "kubelet is posting ready status") -> Dict[str, Any]:
    now = apiserver.rfc3339(time.time())
    body = {"status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False", "reason": "KubeletReady" if ready else "KubeletNotReady",
                                       "message": message, "lastHeartbeatTime": now, "lastTransitionTime": now}]}}
    code, node = http("%s/api/v1/nodes/%s/status" % (url, name), "PATCH", body, "application/strategic-merge-patch+json")
    assert code == 200, node
    return node


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    server = start_apiserver(str(tmp_path_factory.mktemp("api")), initial_state())
    yield server
    assert server.stop() == 0
    assert not os.path.exists(os.path.join(os.path.dirname(server.state_file), "port"))


@pytest.fixture(scope="module")
def kubeconfig(api: ApiServer, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("kube") / "kubeconfig"
    path.write_text(kubeconfig_text(api.url))
    return str(path)


@pytest.fixture
def dyn(kubeconfig: str) -> dynamic.DynamicClient:
    return dynamic.DynamicClient(config.new_client_from_config(config_file=kubeconfig))


def test_listens_on_loopback_only(api: ApiServer) -> None:
    port = int(api.url.rsplit(":", 1)[1])
    connections = open("/proc/net/tcp", encoding="ascii").read().splitlines()[1:]  # pylint: disable=consider-using-with
    listening = [line.split()[1] for line in connections if line.split()[3] == "0A" and int(line.split()[1].split(":")[1], 16) == port]
    assert listening == ["0100007F:%04X" % port]


def test_dynamic_client_get_and_patches_as_kubernetes_core_uses_them(dyn: dynamic.DynamicClient) -> None:
    nodes = dyn.resources.get(api_version="v1", kind="Node")
    before = nodes.get(name="sbx-a")
    assert before.metadata.name == "sbx-a" and before.spec.unschedulable is None

    merged = nodes.patch(name="sbx-a", body={"metadata": {"annotations": {"example.com/note": "merge"}}},
                         content_type="application/merge-patch+json")
    assert merged.metadata.annotations["example.com/note"] == "merge"
    assert int(merged.metadata.resourceVersion) > int(before.metadata.resourceVersion)

    strategic = nodes.patch(name="sbx-a", body={"spec": {"unschedulable": True}}, content_type="application/strategic-merge-patch+json")
    assert strategic.spec.unschedulable is True
    assert {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}.items() <= strategic.spec.taints[-1].to_dict().items()
    assert strategic.metadata.annotations["example.com/note"] == "merge"

    back = nodes.patch(name="sbx-a", body={"spec": {"unschedulable": None}}, content_type="application/merge-patch+json")
    assert back.spec.unschedulable is None
    assert all(t.key != "node.kubernetes.io/unschedulable" for t in back.spec.taints or [])
    assert [item.metadata.name for item in nodes.get(label_selector="pool=numa").items] == ["sbx-a", "sbx-b"]
    assert [item.metadata.name for item in nodes.get(field_selector="metadata.name=sbx-c").items] == ["sbx-c"]


def test_typed_client_models_validate(kubeconfig: str) -> None:
    """The generated models are strict (pydantic): every object must carry the fields they require."""
    core = client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig))
    assert [node.metadata.name for node in core.list_node().items] == list(NODES)
    assert core.read_node("sbx-b").status.node_info.kubelet_version.startswith("v1.")
    on_a = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=sbx-a")
    assert sorted(pod.metadata.name for pod in on_a.items) == ["app-a-0", "app-a-1", "kube-proxy-a"]
    assert [pod.metadata.name for pod in core.list_namespaced_pod("workloads", label_selector="app in (numa),app!=other").items] == [
        "app-a-0", "app-a-1", "app-b-0"]


def test_stale_resource_version_is_a_409_status(dyn: dynamic.DynamicClient, api: ApiServer) -> None:
    nodes = dyn.resources.get(api_version="v1", kind="Node")
    stale = nodes.get(name="sbx-b")
    nodes.patch(name="sbx-b", body={"metadata": {"labels": {"touched": "1"}}}, content_type="application/merge-patch+json")
    with pytest.raises(ConflictError) as patch_conflict:
        nodes.patch(name="sbx-b", body={"metadata": {"resourceVersion": stale.metadata.resourceVersion, "labels": {"touched": "2"}}},
                    content_type="application/merge-patch+json")
    status = json.loads(patch_conflict.value.body)
    assert (status["kind"], status["status"], status["reason"], status["code"]) == ("Status", "Failure", "Conflict", 409)
    assert status["message"] == ('Operation cannot be fulfilled on nodes "sbx-b": the object has been modified; '
                                 "please apply your changes to the latest version and try again")
    with pytest.raises(ConflictError):
        nodes.replace(body=stale.to_dict())
    current = nodes.get(name="sbx-b").to_dict()
    current["metadata"]["labels"]["touched"] = "3"
    assert nodes.replace(body=current).metadata.labels["touched"] == "3"
    code, body = http(api.url + "/api/v1/nodes/sbx-b", "PUT", dict(current, metadata=dict(current["metadata"], resourceVersion="")))
    assert (code, body["reason"]) == (422, "Invalid")


def test_status_subresource_json_patch_and_dry_run(api: ApiServer) -> None:
    node_url = api.url + "/api/v1/nodes/sbx-c"
    code, node = http(node_url, "PATCH", {"status": {"phase": "ignored"}, "metadata": {"labels": {"via": "main"}}},
                      "application/merge-patch+json")
    assert code == 200 and "phase" not in node["status"] and node["metadata"]["labels"]["via"] == "main"
    node = post_ready(api.url, "sbx-c", False, "first")
    node = post_ready(api.url, "sbx-c", True)
    conditions = {c["type"]: c for c in node["status"]["conditions"]}
    assert conditions["Ready"]["status"] == "True" and conditions["MemoryPressure"]["status"] == "Unknown"
    assert not any(t["key"].startswith("node.kubernetes.io/not-ready") for t in node["spec"].get("taints", []))
    code, node = http(node_url + "/status", "PATCH", {"spec": {"unschedulable": True}}, "application/merge-patch+json")
    assert code == 200 and "unschedulable" not in node["spec"]
    code, node = http(node_url, "PATCH", [{"op": "add", "path": "/metadata/labels/jp", "value": "yes"},
                                          {"op": "test", "path": "/metadata/name", "value": "sbx-c"}], "application/json-patch+json")
    assert code == 200 and node["metadata"]["labels"]["jp"] == "yes"
    code, status = http(node_url, "PATCH", [{"op": "test", "path": "/metadata/name", "value": "other"}], "application/json-patch+json")
    assert (code, status["reason"]) == (422, "Invalid")
    version = node["metadata"]["resourceVersion"]
    code, node = http(node_url + "?dryRun=All", "PATCH", {"metadata": {"labels": {"dry": "run"}}}, "application/merge-patch+json")
    assert code == 200 and node["metadata"]["labels"]["dry"] == "run"
    assert http(node_url)[1]["metadata"]["resourceVersion"] == version
    code, status = http(node_url, "PATCH", {"a": 1}, "application/apply-patch+yaml")
    assert code == 415 and status["reason"] == "UnsupportedMediaType"
    assert http(api.url + "/api/v1/nodes/missing")[1]["reason"] == "NotFound"
    assert http(api.url + "/api/v1/nodes?labelSelector=a%20in%20(b")[0] == 400
    assert http(api.url + "/api/v1/pods?fieldSelector=spec.bogus%3Dx")[1]["message"] == "field label not supported: spec.bogus"


def test_eviction_deletes_the_pod_or_answers_429(kubeconfig: str) -> None:
    core = client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig))
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="app-b-0", namespace="workloads"))
    core.create_namespaced_pod_eviction("app-b-0", "workloads", eviction)
    with pytest.raises(client.ApiException) as gone:
        core.read_namespaced_pod("app-b-0", "workloads")
    assert gone.value.status == 404
    with pytest.raises(client.ApiException) as blocked:
        core.create_namespaced_pod_eviction("guarded-c-0", "workloads", client.V1Eviction(metadata=client.V1ObjectMeta(name="guarded-c-0")))
    assert blocked.value.status == 429 and "disruption budget" in json.loads(blocked.value.body)["message"]
    # Accepted, but the pod stays Terminating (its kubelet never confirms it stopped).
    core.create_namespaced_pod_eviction("stuck-b-1", "workloads", client.V1Eviction(metadata=client.V1ObjectMeta(name="stuck-b-1")))
    assert core.read_namespaced_pod("stuck-b-1", "workloads").metadata.deletion_timestamp is not None


def test_outage_injection_unavailable_then_refused(api: ApiServer) -> None:
    assert http(api.url + "/_sandbox/outage", "POST", {"seconds": 1.5})[0] == 202
    code, status = http(api.url + "/api/v1/nodes")
    assert (code, status["reason"]) == (503, "ServiceUnavailable")
    wait_for(lambda: http(api.url + "/api/v1/nodes")[0] == 200, 5, what="the end of the 503 outage")

    assert http(api.url + "/_sandbox/outage", "POST", {"seconds": 2, "mode": "refuse"})[0] == 202
    port = int(api.url.rsplit(":", 1)[1])

    def refused() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except ConnectionRefusedError:
            return True
        except ConnectionResetError:
            return False  # accepted into the backlog while the socket was closing: not closed yet
        return False

    wait_for(refused, 3, 0.05, "the port to close")
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(api.url + "/version", timeout=2)  # pylint: disable=consider-using-with
    wait_for(lambda: not refused(), 6, 0.1, "the port to open again")
    assert http(api.url + "/version")[1]["gitVersion"].startswith("v1.")


def test_injected_faults_hit_the_next_matching_requests(api: ApiServer) -> None:
    http(api.url + "/_sandbox/faults", "POST", {"method": "PATCH", "path": "/nodes/sbx-c$", "code": 500, "count": 1})
    assert http(api.url + "/api/v1/nodes/sbx-c", "PATCH", {"metadata": {"labels": {"f": "1"}}}, "application/merge-patch+json")[0] == 500
    assert http(api.url + "/api/v1/nodes/sbx-c", "PATCH", {"metadata": {"labels": {"f": "2"}}}, "application/merge-patch+json")[0] == 200


def test_bearer_token_is_checked_when_configured(tmp_path: Any) -> None:
    server = start_apiserver(str(tmp_path), initial_state(), "--token", "s3cret")
    try:
        assert http(server.url + "/api/v1/nodes", token=None)[0] == 401
        assert http(server.url + "/api/v1/nodes", token="wrong")[1]["reason"] == "Unauthorized"
        assert http(server.url + "/api/v1/nodes", token="s3cret")[0] == 200
        assert http(server.url + "/version", token=None)[0] == 200
    finally:
        assert server.stop() == 0


def test_silent_kubelet_turns_ready_unknown_and_state_persists(tmp_path: Any) -> None:
    server = start_apiserver(str(tmp_path), initial_state(), "--node-monitor-grace-period", "1")
    try:
        post_ready(server.url, "sbx-a", True)
        node = poll_until(lambda: http(server.url + "/api/v1/nodes/sbx-a")[1], lambda n: ready_condition(n)["status"] == "Unknown", 6, "Ready=Unknown")
        assert ready_condition(node)["message"] == apiserver.STOPPED_POSTING
        assert {"node.kubernetes.io/unreachable"} == {t["key"] for t in node["spec"]["taints"]}
    finally:
        assert server.stop() == 0
    with open(server.state_file, encoding="utf-8") as handle:
        saved = json.load(handle)
    assert ready_condition(saved["nodes"]["sbx-a"])["status"] == "Unknown"
    assert int(saved["resourceVersion"]) == int(saved["nodes"]["sbx-a"]["metadata"]["resourceVersion"])


def test_api_server_stops_when_its_directory_disappears(tmp_path: Any) -> None:
    directory = tmp_path / "gone"
    server = start_apiserver(str(directory), initial_state())
    for name in os.listdir(directory):
        os.unlink(directory / name)
    directory.rmdir()
    wait_for(lambda: server.process.poll() is not None, 5, what="the API server to exit")


PLAYBOOK = textwrap.dedent("""\
    - name: kubernetes.core against the sandbox API server
      hosts: localhost
      gather_facts: false
      module_defaults:
        group/kubernetes.core.k8s:
          kubeconfig: "{{ kubeconfig }}"
      tasks:
        - name: Wait until sbx-c reports Ready (it turns Ready a few seconds after the start)
          kubernetes.core.k8s_info:
            kind: Node
            name: sbx-c
            wait: true
            wait_condition: {type: Ready, status: "True"}
            wait_timeout: 60
            wait_sleep: 1
          register: ready

        - name: A merge patch, as the role writes its annotations
          kubernetes.core.k8s:
            state: patched
            merge_type: merge
            definition:
              apiVersion: v1
              kind: Node
              metadata:
                name: sbx-a
                annotations:
                  numa-drift.nodeops.io/cordoned-by: nodeops.numa_drift
          register: annotated

        - name: The same patch again changes nothing
          kubernetes.core.k8s:
            state: patched
            merge_type: merge
            definition:
              apiVersion: v1
              kind: Node
              metadata:
                name: sbx-a
                annotations:
                  numa-drift.nodeops.io/cordoned-by: nodeops.numa_drift
          register: annotated_again

        - name: A patch with a stale resourceVersion fails with the API's conflict
          kubernetes.core.k8s:
            state: patched
            merge_type: merge
            definition:
              apiVersion: v1
              kind: Node
              metadata: {name: sbx-a, resourceVersion: "1", labels: {stale: "yes"}}
          register: stale
          ignore_errors: true

        - name: Cordon
          kubernetes.core.k8s_drain: {name: sbx-a, state: cordon}
          register: cordoned

        - name: Drain with evictions
          kubernetes.core.k8s_drain:
            name: sbx-a
            state: drain
            delete_options: {disable_eviction: false, ignore_daemonsets: true, wait_timeout: 30, wait_sleep: 1}
          register: drained

        - name: Drain a node whose pod is protected by a disruption budget
          kubernetes.core.k8s_drain:
            name: sbx-c
            state: drain
            delete_options: {disable_eviction: false, force: true, wait_timeout: 10, wait_sleep: 1}
          register: blocked
          ignore_errors: true

        - name: Uncordon
          kubernetes.core.k8s_drain: {name: sbx-a, state: uncordon}
          register: uncordoned

        - name: Pods left on sbx-a
          kubernetes.core.k8s_info:
            kind: Pod
            field_selectors: ["spec.nodeName=sbx-a"]
          register: left

        - name: Node sbx-a now
          kubernetes.core.k8s_info: {kind: Node, name: sbx-a}
          register: after

        - name: Check what every module saw
          ansible.builtin.assert:
            that:
              - ready.resources | length == 1
              - (ready.resources[0].status.conditions | selectattr('type', 'eq', 'Ready') | first).status == 'True'
              - annotated is changed
              - annotated.result.metadata.annotations['numa-drift.nodeops.io/cordoned-by'] == 'nodeops.numa_drift'
              - annotated_again is not changed
              - stale is failed
              - "'Conflict' in stale.msg and '409' in stale.msg"
              - cordoned is changed and 'marked unschedulable' in cordoned.result
              - drained is changed and '2 Pod(s) deleted from node' in drained.result
              - blocked is failed and 'disruption budget' in blocked.msg
              - uncordoned is changed and 'marked schedulable' in uncordoned.result
              - left.resources | map(attribute='metadata.name') | list == ['kube-proxy-a']
              - after.resources[0].spec.unschedulable is not defined or not after.resources[0].spec.unschedulable
    """)


def test_kubernetes_core_modules_via_ansible_playbook(api: ApiServer, kubeconfig: str, tmp_path: Any) -> None:
    started = time.time()
    post_ready(api.url, "sbx-c", False, "starting")
    timer = threading.Timer(4.0, post_ready, (api.url, "sbx-c", True))
    timer.start()
    playbook = tmp_path / "k8s.yml"
    playbook.write_text(PLAYBOOK)
    try:
        completed = ansible_tool("ansible-playbook", ["-i", "localhost,", "-c", "local", str(playbook), "-e", "kubeconfig=" + kubeconfig,
                                                      "-e", "ansible_python_interpreter={{ ansible_playbook_python }}"], str(tmp_path))
    finally:
        timer.cancel()
    assert completed.returncode == 0, completed.stdout + completed.stderr
    requests = [r for r in http(api.url + "/_sandbox/requests")[1]["requests"] if r["time"] >= started]
    evictions = [r["path"] for r in requests if r["method"] == "POST" and r["path"].endswith("/eviction")]
    assert sorted(evictions) == ["/api/v1/namespaces/workloads/pods/app-a-0/eviction", "/api/v1/namespaces/workloads/pods/app-a-1/eviction",
                                 "/api/v1/namespaces/workloads/pods/guarded-c-0/eviction"]
    patches = {(r["path"], r["content_type"]) for r in requests if r["method"] == "PATCH" and r["code"] == 200}
    assert ("/api/v1/nodes/sbx-a", "application/merge-patch+json") in patches
    assert ("/api/v1/nodes/sbx-a", "application/strategic-merge-patch+json") in patches
