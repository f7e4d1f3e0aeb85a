# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The k8s_nodes inventory plugin through the real ansible-inventory, against an API server.

Each test has Nodes in different states (Ready, NotReady with kubelet's memory manager error, Unknown,
cordoned, labelled, without an InternalIP) on the session's real kube-apiserver (``real_nodes``: created
with the admin token, their status put through the status subresource, read under the shipped
ServiceAccount). Where a test inspects the requests, injects an outage or takes the API away, the plugin
reaches that server through a fault proxy (tests/integration/faultproxy.py: its request log, 503s, stopped).
Each test writes a ``*.k8s_nodes.yml`` source in a temporary directory and runs ``ansible-inventory --list``
with ANSIBLE_COLLECTIONS_PATH pointing at a temporary ``ansible_collections/nodeops/numa_drift`` link to this
checkout.
"""

from __future__ import annotations

import calendar
import json
import os
import shutil
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.nodeops.numa_drift.tests.integration import faultproxy

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(CHECKOUT, "examples", "notready.k8s_nodes.yml")
ANSIBLE_INVENTORY = os.path.join(os.path.dirname(sys.executable), "ansible-inventory")
MM_ERROR = ("start memory manager error: [memorymanager] the expected machine state is different from the "
            "real one")
STOPPED_POSTING = "Kubelet stopped posting node status."


def rfc3339(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def node(name, ready, message, labels, addresses, unschedulable=False, extra_conditions=()):
    stamp = rfc3339(calendar.timegm(time.gmtime()))
    conditions = [{"type": "Ready", "status": ready, "reason": "Sandbox", "message": message,
                   "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}]
    conditions.extend(extra_conditions)
    spec = {"unschedulable": True} if unschedulable else {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels, **{"kubernetes.io/hostname": name})},
        "spec": spec,
        "status": {"conditions": conditions, "addresses": addresses},
    }


def addresses(internal=None, external=None, hostname=None):
    found = []
    for kind, value in (("InternalIP", internal), ("ExternalIP", external), ("Hostname", hostname)):
        if value:
            found.append({"type": kind, "address": value})
    return found


NPD_CONDITION = {"type": "KubeletMemoryManagerProblem", "status": "True", "reason": "CheckpointRefused",
                 "message": "kubelet: could not restore state from checkpoint /var/lib/kubelet/memory_manager_state"}

NODES = [
    node("sbx-node-01", "True", "kubelet is posting ready status", {"pool": "numa-a", "zone": "zone-a"},
         addresses("10.77.0.1", "203.0.113.1", "sbx-node-01")),
    node("sbx-node-02", "False", MM_ERROR, {"pool": "numa-a", "zone": "zone-b"},
         addresses("10.77.0.2", None, "sbx-node-02"), unschedulable=True),
    node("sbx-node-03", "Unknown", STOPPED_POSTING, {"pool": "numa-b"},
         addresses("10.77.0.3", "203.0.113.3", "sbx-node-03"), extra_conditions=[NPD_CONDITION]),
    node("sbx-node-04", "False", "container runtime network not ready: NetworkReady=false",
         {"node-role.kubernetes.io/worker": ""}, addresses(hostname="sbx-node-04.lab")),
    node("sbx-node-05", "True", "kubelet is posting ready status", {"pool": "numa-b"},
         addresses("10.77.0.5", "203.0.113.5", "sbx-node-05")),
]
ALL_NODES = sorted(n["metadata"]["name"] for n in NODES)


def plain(value):
    """ansible-inventory's JSON with its untrusted-value wrappers ({"__ansible_unsafe": v}) removed."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def node_list_requests(proxy):
    """The node lists the proxy forwarded or answered, in order."""
    return [r for r in proxy.requests() if r["method"] == "GET" and r["path"] == "/api/v1/nodes"]


@pytest.fixture(scope="module")
def collections_path(tmp_path_factory):
    """<tmp>/ansible_collections/nodeops/numa_drift -> this checkout (never a link inside the repo)."""
    base = tmp_path_factory.mktemp("collections")
    namespace = base / "ansible_collections" / "nodeops"
    namespace.mkdir(parents=True)
    (namespace / "numa_drift").symlink_to(CHECKOUT, target_is_directory=True)
    return str(base)


@pytest.fixture
def real_nodes(control_plane):
    """NODES on the session's real kube-apiserver (registered, then their status put as kubelet would); deleted after."""
    for wanted in NODES:
        created = control_plane.call("POST", "/api/v1/nodes", {key: value for key, value in wanted.items() if key != "status"})
        created["status"] = dict(created.get("status") or {}, **wanted["status"])
        control_plane.call("PUT", "/api/v1/nodes/%s/status" % wanted["metadata"]["name"], created)
    try:
        # Only these Nodes: the inventory lists the whole cluster (the fleets of earlier tests deleted theirs).
        assert sorted(n["metadata"]["name"] for n in control_plane.call("GET", "/api/v1/nodes")["items"]) == ALL_NODES
        yield control_plane
    finally:
        for wanted in NODES:
            control_plane.request("DELETE", "/api/v1/nodes/" + wanted["metadata"]["name"])


@pytest.fixture
def proxy(real_nodes, tmp_path):
    """A fault proxy in front of the real API server with NODES (its own CA, ``proxy.ca_file``); stopped after."""
    with faultproxy.FaultProxy(real_nodes.server, real_nodes.ca_file, str(tmp_path / "proxy")) as started:
        yield started


def write_kubeconfig(directory, url, token):
    path = os.path.join(directory, "kubeconfig")
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump({
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "sandbox",
            "clusters": [{"name": "sandbox", "cluster": {"server": url}}],  # no CA: never reached (nothing listens)
            "users": [{"name": "operator", "user": {"token": token}}],
            "contexts": [{"name": "sandbox", "context": {"cluster": "sandbox", "user": "operator"}}],
        }, handle)
    return path


def write_source(directory, config, name="cluster.k8s_nodes.yml"):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(dict({"plugin": "nodeops.numa_drift.k8s_nodes"}, **config), handle)
    return path


def run_inventory(collections_path, source, *args, env=None):
    """ansible-inventory --list on one source; no parsed source is an error, as AWX sets it for inventory syncs."""
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("K8S_AUTH_", "ANSIBLE_")) and key != "KUBECONFIG"}
    environment.update({
        "ANSIBLE_COLLECTIONS_PATH": collections_path,
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true",
        "ANSIBLE_NOCOLOR": "1",
        "KUBECONFIG": os.path.join(os.path.dirname(source), "no-default-kubeconfig"),
    })
    environment.update(env or {})
    result = subprocess.run([ANSIBLE_INVENTORY, "-i", source, "--list"] + list(args), env=environment,
                            capture_output=True, text=True, timeout=120, check=False)
    inventory = plain(json.loads(result.stdout)) if result.returncode == 0 else None
    return result, inventory


def hosts_of(inventory, group):
    return sorted((inventory.get(group) or {}).get("hosts") or [])


def all_hosts(inventory):
    return sorted(inventory["_meta"]["hostvars"])


def test_groups_and_host_variables_from_a_kubeconfig(collections_path, real_nodes, service_account, tmp_path):
    # The shipped ServiceAccount's kubeconfig (https, the server's CA): RBAC is on, so an answer means its token was sent.
    source = write_source(str(tmp_path), {
        "kubeconfig": service_account,
        "label_groups": ["pool", "node-role.kubernetes.io/worker"],
        "groups": {"cordoned": "k8s_node_unschedulable"},
        "keyed_groups": [{"key": "k8s_node_labels.zone | default('none')", "prefix": "zone"}],
    })
    result, inventory = run_inventory(collections_path, source)
    assert result.returncode == 0, result.stderr

    assert all_hosts(inventory) == ALL_NODES
    assert hosts_of(inventory, "ready") == ["sbx-node-01", "sbx-node-05"]
    assert hosts_of(inventory, "notready") == ["sbx-node-02", "sbx-node-03", "sbx-node-04"]
    assert hosts_of(inventory, "memory_manager_error") == ["sbx-node-02", "sbx-node-03"]
    assert hosts_of(inventory, "label_pool_numa_a") == ["sbx-node-01", "sbx-node-02"]
    assert hosts_of(inventory, "label_pool_numa_b") == ["sbx-node-03", "sbx-node-05"]
    assert hosts_of(inventory, "label_node_role_kubernetes_io_worker") == ["sbx-node-04"]
    assert hosts_of(inventory, "cordoned") == ["sbx-node-02"]
    assert hosts_of(inventory, "zone_zone_b") == ["sbx-node-02"]
    assert hosts_of(inventory, "zone_none") == ["sbx-node-03", "sbx-node-04", "sbx-node-05"]

    hostvars = inventory["_meta"]["hostvars"]
    assert hostvars["sbx-node-02"] == {
        "ansible_host": "10.77.0.2",
        "remediate_node_name": "sbx-node-02",
        "k8s_node_ready": False,
        "k8s_node_labels": {"pool": "numa-a", "zone": "zone-b", "kubernetes.io/hostname": "sbx-node-02"},
        "k8s_node_condition_message": MM_ERROR,
        "k8s_node_unschedulable": True,
    }
    assert hostvars["sbx-node-03"]["k8s_node_condition_message"] == STOPPED_POSTING
    assert hostvars["sbx-node-01"]["k8s_node_ready"] is True
    assert hostvars["sbx-node-01"]["k8s_node_unschedulable"] is False
    # No InternalIP: no ansible_host, and a warning that says which Node.
    assert "ansible_host" not in hostvars["sbx-node-04"]
    assert "sbx-node-04 has no InternalIP address" in result.stderr


def test_the_shipped_notready_example_targets_the_notready_nodes(collections_path, real_nodes, service_account, tmp_path):
    source = os.path.join(str(tmp_path), "notready.k8s_nodes.yml")
    shutil.copyfile(EXAMPLE, source)
    result, inventory = run_inventory(collections_path, source, env={"K8S_AUTH_KUBECONFIG": service_account})
    assert result.returncode == 0, result.stderr
    assert all_hosts(inventory) == ["sbx-node-02", "sbx-node-03", "sbx-node-04"]
    assert hosts_of(inventory, "notready") == ["sbx-node-02", "sbx-node-03", "sbx-node-04"]
    assert hosts_of(inventory, "ready") == []
    assert hosts_of(inventory, "memory_manager_error") == ["sbx-node-02", "sbx-node-03"]
    assert inventory["_meta"]["hostvars"]["sbx-node-03"]["ansible_host"] == "10.77.0.3"


def test_host_and_token_from_k8s_auth_variables_with_selector_and_address_type(collections_path, proxy, service_account_token, tmp_path):
    source = write_source(str(tmp_path), {"label_selector": "pool=numa-b", "address_type": "ExternalIP"})
    result, inventory = run_inventory(collections_path, source, env={
        "K8S_AUTH_HOST": proxy.url, "K8S_AUTH_API_KEY": service_account_token, "K8S_AUTH_SSL_CA_CERT": proxy.ca_file})
    assert result.returncode == 0, result.stderr
    assert all_hosts(inventory) == ["sbx-node-03", "sbx-node-05"]
    assert inventory["_meta"]["hostvars"]["sbx-node-05"]["ansible_host"] == "203.0.113.5"
    assert "labelSelector=pool%3Dnuma-b" in node_list_requests(proxy)[-1]["query"]


def test_rejected_token_is_a_clear_error_naming_the_api(collections_path, real_nodes, tmp_path):
    source = write_source(str(tmp_path), {"host": real_nodes.server, "api_key": "wrong-token", "ca_cert": real_nodes.ca_file})
    result, inventory = run_inventory(collections_path, source)
    assert result.returncode != 0
    assert inventory is None
    assert ("nodeops.numa_drift.k8s_nodes: the Kubernetes API at %s rejected the credentials (401 Unauthorized"
            % real_nodes.server) in result.stderr


def test_a_token_without_the_shipped_role_is_a_clear_error(collections_path, real_nodes, tmp_path):
    """A real API server's RBAC: a valid token whose ServiceAccount has no role to list Nodes (403)."""
    real_nodes.apply({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "no-role", "namespace": "default"}})
    token = real_nodes.service_account_token("default", "no-role", seconds=600)
    source = write_source(str(tmp_path), {"host": real_nodes.server, "api_key": token, "ca_cert": real_nodes.ca_file})
    result, inventory = run_inventory(collections_path, source)
    assert result.returncode != 0 and inventory is None
    assert "nodeops.numa_drift.k8s_nodes: the Kubernetes API at %s" % real_nodes.server in result.stderr, result.stderr
    assert "refused to list nodes (403 Forbidden" in result.stderr and "system:serviceaccount:default:no-role" in result.stderr, result.stderr


def test_unreachable_api_is_a_clear_error_naming_the_api(collections_path, proxy, tmp_path):
    url = proxy.url
    proxy.stop()
    source = write_source(str(tmp_path), {"kubeconfig": write_kubeconfig(str(tmp_path), url, "any-token"),
                                          "request_timeout": 5})
    result, inventory = run_inventory(collections_path, source)
    assert result.returncode != 0
    assert inventory is None
    assert "nodeops.numa_drift.k8s_nodes: cannot reach the Kubernetes API at %s" % url in result.stderr
    assert "Connection refused" in result.stderr


def test_api_outage_answers_are_a_clear_error(collections_path, proxy, service_account_token, tmp_path):
    source = write_source(str(tmp_path), {"host": proxy.url, "api_key": service_account_token, "ca_cert": proxy.ca_file})
    proxy.outage(120)
    try:
        result, _inventory = run_inventory(collections_path, source)
    finally:
        proxy.end_outage()
    assert result.returncode != 0
    assert "the Kubernetes API at %s answered 503 Service Unavailable" % proxy.url in result.stderr


def test_cache_serves_the_last_answer_while_the_api_is_down(collections_path, proxy, service_account_token, tmp_path):
    cache_dir = os.path.join(str(tmp_path), "cache")
    source = write_source(str(tmp_path), {
        "host": proxy.url, "api_key": service_account_token, "ca_cert": proxy.ca_file, "readiness": "notready",
        "cache": True, "cache_plugin": "ansible.builtin.jsonfile", "cache_connection": cache_dir,
        "cache_timeout": 600,
    }, name="notready.k8s_nodes.yml")

    first, fresh = run_inventory(collections_path, source)
    assert first.returncode == 0, first.stderr
    assert all_hosts(fresh) == ["sbx-node-02", "sbx-node-03", "sbx-node-04"]
    assert len(node_list_requests(proxy)) == 1
    assert os.listdir(cache_dir), "the jsonfile cache plugin wrote nothing"

    # The API server answers 503 to everything: the cached answer is used and the API not asked.
    proxy.outage(120)
    try:
        second, cached = run_inventory(collections_path, source)
        assert second.returncode == 0, second.stderr
        assert cached == fresh
        assert len(node_list_requests(proxy)) == 1

        # --flush-cache asks the API again, which fails clearly.
        flushed, _inventory = run_inventory(collections_path, source, "--flush-cache")
        assert flushed.returncode != 0
        assert "answered 503 Service Unavailable" in flushed.stderr
        assert len(node_list_requests(proxy)) == 2
    finally:
        proxy.end_outage()

    # The API server is gone entirely: still the cached answer.
    proxy.stop()
    third, cached_again = run_inventory(collections_path, source)
    assert third.returncode == 0, third.stderr
    assert cached_again == fresh

    # Without the cache the same source fails.
    uncached = write_source(str(tmp_path), {"host": proxy.url, "api_key": service_account_token, "ca_cert": proxy.ca_file,
                                            "readiness": "notready"}, name="uncached.k8s_nodes.yml")
    fourth, _inventory = run_inventory(collections_path, uncached)
    assert fourth.returncode != 0
    assert "cannot reach the Kubernetes API at %s" % proxy.url in fourth.stderr
