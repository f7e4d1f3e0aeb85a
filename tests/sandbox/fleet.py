# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox fleet: fake nodes, a kubelet stand-in per node under a systemd stand-in, an API server.

Usage::

    python tests/sandbox/fleet.py up --dir DIR [--scenario mixed|distros|mixed-distros|all-drift|single|in-sync] [--nodes N]
        [--token T] [--heartbeat 3] [--node-monitor-grace-period 40] [--max-lifetime 7200]
        [--python PATH] [--settle-seconds 5] [--replace] [--name-prefix sbx]
        [--api-server URL --api-ca CA_FILE --token ADMIN_TOKEN --kubeconfig PLAYBOOKS_KUBECONFIG]
    python tests/sandbox/fleet.py status --dir DIR [--json]
    python tests/sandbox/fleet.py down --dir DIR [--purge]

``up`` writes, under DIR:

* ``nodes/<name>/root/``: the node tree (sysfs, /proc/iomem, kubelet config and checkpoint) of a
  node after a reboot, from ``tests/support/scenario.py``;
* ``nodes/<name>/service.json``: the kubelet stand-in's service; ``supervisor.json``, ``kubelet.log``
  and ``supervisor.log`` appear once it runs;
* distribution-shaped nodes (``distros.py``: k3s, k0s, MicroK8s) have that distribution's files in
  their tree, a stand-in started with the argv that distribution's wrapper gives kubelet, a service
  named as there (``k3s-agent.service``, ...) and ``nodes/<name>/bin/``: the node's ``systemctl``
  (``nodectl.py systemctl``, every call logged in ``systemctl.log``) and a ``python`` that puts it
  first on ``PATH``; their inventory entry uses the role's ``systemd`` service mode with that
  interpreter, so the role must name the service the probe discovered;
* ``api/state.json``: the API server's Nodes and Pods (``api/apiserver.log``, ``api/port``);
* ``kubeconfig`` (``http://127.0.0.1:<port>``, a bearer token), ``inventory.yml`` (group
  ``sandbox``, local connection, the role's variables) and ``fleet.json`` (what was built, the
  expected verdict of every node, the processes);
* ``collections/ansible_collections/nodeops/numa_drift``: a link to this checkout.

Every process started here stops on ``down``, when DIR is removed (its ``.sandbox-fleet`` marker and
``nodes/<name>/service.json`` are watched: files no process rewrites), or after ``--max-lifetime``.
Everything listens on 127.0.0.1 only. Node names are ``sbx-node-01``, ``sbx-node-02``, ... (``--name-prefix``).

With ``--api-server`` no stand-in starts: the Nodes and pods are created on that (real) API server with
the admin ``--token``, the kubelet stand-ins register and post their status there (the status
subresource, as kubelet does), the playbooks use ``--kubeconfig``, and ``down`` deletes the fleet's
Nodes and pods again (the integration tests: tests/integration/realapi.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

if __package__:
    from ansible_collections.nodeops.numa_drift.tests.sandbox import apiserver, distros, kubelet_standin, nodectl, supervisor
else:  # run as a script: this directory is on sys.path; kubelet_standin puts the collection on it
    import apiserver  # type: ignore[no-redef]
    import distros  # type: ignore[no-redef]
    import kubelet_standin  # type: ignore[no-redef]
    import nodectl  # type: ignore[no-redef]
    import supervisor  # type: ignore[no-redef]

from ansible_collections.nodeops.numa_drift.tests.support.nodetree import OMIT, default_memory_blocks  # noqa: E402
from ansible_collections.nodeops.numa_drift.tests.support.programs import install_release  # noqa: E402
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (  # noqa: E402
    GIB,
    HUGEPAGE_1G_KB,
    HUGEPAGE_2M_KB,
    KIB,
    MIB,
    Blocks,
    Boot,
    kubelet_config,
    uniform_reserved,
    write_kubelet_node,
)

SANDBOX_DIR = os.path.dirname(os.path.realpath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(SANDBOX_DIR))
MEMORY_BLOCK_BYTES = 2 * GIB  # x86_64 with >= 64 GiB of memory: 2 GiB memory blocks (fewer sysfs entries to write)
KASLR_SHIFT_KB = 45260  # the kernel image moving to another NUMA node (measured, issue 5)
DEFAULT_TOKEN = "sandbox-token"
FLEET_MARKER = ".sandbox-fleet"  # written once, never rewritten: its absence stops the fleet's processes
WORKLOAD_NAMESPACE = "workloads"
SCENARIO_LABEL = "sandbox.nodeops.io/scenario"
CORDONED_BY_OTHERS = "ops-team.example.com/cordoned-by"
API_START_TIMEOUT = 10.0
FIRST_POST_TIMEOUT = 12.0
DOWN_TIMEOUT = 20.0


# --------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class NodePlan:
    """One fake node: the boot kubelet recorded, the boot it restarts in, and how it is run."""

    expected_verdict: str
    description: str
    recorded: Boot
    current: Boot
    pods: Dict[str, Dict[str, Blocks]] = field(default_factory=dict)
    layout: str = "legacy"
    era: str = "legacy"
    kernel_node: int = 0
    cordoned: bool = False
    kubelet_started: bool = True
    with_checkpoint: bool = True
    distribution: Optional[str] = None  # a shape of distros.SHAPES; None: kubeadm's defaults (kubelet.service)


def boot(numa_gib: Sequence[int], hugepages_1g: Optional[Sequence[int]] = None) -> Boot:
    pages = hugepages_1g or [0] * len(numa_gib)
    return Boot(
        {node: size * GIB // KIB for node, size in enumerate(numa_gib)},
        {node: {HUGEPAGE_2M_KB: 0, HUGEPAGE_1G_KB: pages[node]} for node in range(len(numa_gib))},
    )


def pod_uid(node_name: str, index: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "sandbox/%s/pod-%d" % (node_name, index)))


def pods_for(node_name: str, placements: Sequence[Sequence[Tuple[Sequence[int], str, int]]]) -> Dict[str, Dict[str, Blocks]]:
    """Guaranteed pods, one container ``app`` each, with the given blocks."""
    return {pod_uid(node_name, index): {"app": [(list(a), r, s) for a, r, s in blocks]} for index, blocks in enumerate(placements)}


def drift_legacy(name: str, cordoned: bool = False) -> NodePlan:
    recorded = boot([32, 32])
    return NodePlan(
        "drift_within_bound",
        "2 NUMA nodes, legacy checkpoint: KASLR moved the kernel image, node0 -%d kB, node1 +%d kB" % (KASLR_SHIFT_KB, KASLR_SHIFT_KB)
        + ("; cordoned beforehand by someone else" if cordoned else ""),
        recorded,
        recorded.moved(node0=-KASLR_SHIFT_KB, node1=KASLR_SHIFT_KB),
        pods_for(name, [[([0], "memory", 4 * GIB)], [([0], "memory", 4 * GIB)], [([1], "memory", 2 * GIB)]]),
        kernel_node=0,
        cordoned=cordoned,
    )


def drift_v3(name: str) -> NodePlan:
    recorded = boot([32, 32])
    return NodePlan(
        "drift_within_bound",
        "2 NUMA nodes, kubelet 1.37 (V3 checkpoint): node1 -%d kB, node0 +%d kB" % (KASLR_SHIFT_KB, KASLR_SHIFT_KB),
        recorded,
        recorded.moved(node0=KASLR_SHIFT_KB, node1=-KASLR_SHIFT_KB),
        pods_for(name, [[([0], "memory", 1 * GIB)], [([1], "memory", 3 * GIB)], [([1], "memory", 3 * GIB)]]),
        layout="v3",
        era="1.37",
        kernel_node=1,
    )


def drift_four_numa(name: str) -> NodePlan:
    recorded = boot([16, 16, 16, 16], hugepages_1g=[2, 2, 2, 2])
    return NodePlan(
        "drift_within_bound",
        "4 NUMA nodes with 1Gi hugepages and a cross-NUMA pod on [2,3]: node2 -%d kB, node0 +%d kB, node1 +12 kB"
        % (KASLR_SHIFT_KB, KASLR_SHIFT_KB - 12),
        recorded,
        recorded.moved(node2=-KASLR_SHIFT_KB, node0=KASLR_SHIFT_KB - 12, node1=12),
        pods_for(name, [[([0], "memory", 2 * GIB)], [([2, 3], "memory", 20 * GIB), ([2, 3], "hugepages-1Gi", 2 * GIB)]]),
        kernel_node=2,
    )


def in_sync(name: str) -> NodePlan:
    recorded = boot([32, 32])
    return NodePlan(
        "in_sync", "2 NUMA nodes, same memory layout as when the checkpoint was written", recorded, recorded,
        pods_for(name, [[([0], "memory", 2 * GIB)], [([1], "memory", 2 * GIB)]]),
    )


def no_checkpoint(name: str) -> NodePlan:
    recorded = boot([32, 32])
    return NodePlan(
        "no_checkpoint", "2 NUMA nodes, kubelet never started (no checkpoint, service inactive)", recorded, recorded,
        kubelet_started=False, with_checkpoint=False,
    )


def capacity_loss(name: str) -> NodePlan:
    recorded = boot([32, 32])
    return NodePlan(
        "drift_exceeds_bound", "2 NUMA nodes, node1 lost 1 GiB (a real capacity change)", recorded,
        recorded.moved(node1=-1024 * 1024), pods_for(name, [[([1], "memory", 4 * GIB)]]),
    )


def hugepages_changed(name: str) -> NodePlan:
    recorded = boot([32, 32], hugepages_1g=[4, 4])
    current = boot([32, 32], hugepages_1g=[4, 2])
    return NodePlan(
        "hugepages_changed", "2 NUMA nodes, node1 now has 2 instead of 4 1Gi hugepages", recorded, current,
        pods_for(name, [[([0], "memory", 2 * GIB), ([0], "hugepages-1Gi", 2 * GIB)]]),
    )


def drift_distribution(name: str, distribution: str) -> NodePlan:
    """A KASLR-drifted node laid out as ``distribution`` runs kubelet (distros.SHAPES)."""
    shape = distros.SHAPES[distribution]
    v3 = distribution == "k0s"
    plan = drift_v3(name) if v3 else drift_legacy(name)
    return NodePlan(
        plan.expected_verdict, "%s; %s" % (plan.description, shape.about), plan.recorded, plan.current, plan.pods,
        layout=plan.layout, era=plan.era, kernel_node=plan.kernel_node, distribution=distribution,
    )


def node_name(index: int) -> str:
    return "sbx-node-%02d" % index


def with_prefix(plans: List[Tuple[str, NodePlan]], prefix: str) -> List[Tuple[str, NodePlan]]:
    """The scenario's nodes named ``<prefix>-node-NN`` (``--name-prefix``: fleets that share one real API server)."""
    return [(prefix + name[len("sbx"):], plan) for name, plan in plans]


def mixed(count: int) -> List[Tuple[str, NodePlan]]:
    builders: List[Callable[[str], NodePlan]] = [
        drift_legacy, drift_v3, drift_four_numa, in_sync, no_checkpoint, capacity_loss, hugepages_changed,
        lambda name: drift_legacy(name, cordoned=True),
    ]
    return [(node_name(i + 1), build(node_name(i + 1))) for i, build in enumerate(builders)]


def distribution_nodes(first: int) -> List[Tuple[str, NodePlan]]:
    return [(node_name(first + i), drift_distribution(node_name(first + i), name)) for i, name in enumerate(sorted(distros.SHAPES))]


def distributions(count: int) -> List[Tuple[str, NodePlan]]:
    return distribution_nodes(1)


def mixed_distributions(count: int) -> List[Tuple[str, NodePlan]]:
    plans = mixed(count)
    return plans + distribution_nodes(len(plans) + 1)


def all_drift(count: int) -> List[Tuple[str, NodePlan]]:
    builders: List[Callable[[str], NodePlan]] = [drift_legacy, drift_v3, drift_four_numa]
    return [(node_name(i + 1), builders[i % len(builders)](node_name(i + 1))) for i in range(count)]


def single(count: int) -> List[Tuple[str, NodePlan]]:
    return [(node_name(1), drift_legacy(node_name(1)))]


def all_in_sync(count: int) -> List[Tuple[str, NodePlan]]:
    return [(node_name(i + 1), in_sync(node_name(i + 1))) for i in range(count)]


SCENARIOS: Dict[str, Tuple[Callable[[int], List[Tuple[str, NodePlan]]], int, str]] = {
    "mixed": (mixed, 8, "every verdict the role meets: 3 repairable, in_sync, no_checkpoint, 2 refused, a node cordoned by someone else"),
    "distros": (distributions, len(distros.SHAPES), "repairable drift on k0s, k3s and MicroK8s shaped nodes (their files, "
                "kubelet argv and service names)"),
    "mixed-distros": (mixed_distributions, 8 + len(distros.SHAPES), "mixed, then the distros nodes"),
    "all-drift": (all_drift, 6, "every node repairable (legacy, V3, 4 NUMA nodes in turn)"),
    "single": (single, 1, "one repairable node"),
    "in-sync": (all_in_sync, 3, "nothing to do anywhere"),
}


# --------------------------------------------------------------------------- building the nodes


def kernel_start_on(current: Boot, numa_node: int) -> int:
    """An address 16 MiB into the first memory block of ``numa_node`` (where the image is placed)."""
    blocks = default_memory_blocks({n: {"mem_total_kb": kb} for n, kb in current.mem_total_kb.items()}, MEMORY_BLOCK_BYTES)
    return blocks[numa_node][0] * MEMORY_BLOCK_BYTES + 16 * MIB


def static_config(plan: NodePlan) -> Dict[str, object]:
    """The KubeletConfiguration fields the node's checkpoint was written with (Static, 1 GiB per NUMA node)."""
    return kubelet_config(uniform_reserved(sorted(plan.recorded.mem_total_kb)))


def write_node_tree(root: str, plan: NodePlan) -> None:
    shaped: Dict[str, Any] = {}
    if plan.distribution:
        shape = distros.SHAPES[plan.distribution]
        shaped = {"config": OMIT, "kubelet_root_dir": shape.root_dir, "extra_files": shape.files(static_config(plan))}
    write_kubelet_node(
        root, plan.recorded, plan.current, pods=plan.pods, layout=plan.layout, block_size_bytes=MEMORY_BLOCK_BYTES,
        checkpoint_bytes=None if plan.with_checkpoint else b"", kernel_start=kernel_start_on(plan.current, plan.kernel_node), **shaped,
    )
    # The program the node's unit runs kubelet with (kubeadm's /usr/bin/kubelet, k3s, k0s; MicroK8s' snap.yaml),
    # saying the release of its era, as the real binary does; the stand-in runs as the service meanwhile.
    install_release(root, plan.distribution or "kubeadm", kubelet_standin.KUBELET_VERSIONS[plan.era])


def memory_quantity(blocks: Blocks) -> str:
    return "%dMi" % (sum(size for _affinity, resource, size in blocks if resource == "memory") // MIB)


def api_objects(name: str, index: int, plan: NodePlan) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """The Node as registered before this boot, its workload pods and a kube-proxy DaemonSet pod."""
    total = sum(plan.current.mem_total_kb.values())
    node = apiserver.node_object(
        name,
        labels={SCENARIO_LABEL: plan.expected_verdict.replace("_", "-"), "node-role.kubernetes.io/worker": ""},
        annotations={CORDONED_BY_OTHERS: "maintenance ticket OPS-1234"} if plan.cordoned else {},
        internal_ip="127.0.10.%d" % index,
        capacity={"cpu": str(2 * len(plan.current.mem_total_kb)), "memory": "%dKi" % total, "pods": "110"},
        unschedulable=plan.cordoned,
        kubelet_version=kubelet_standin.KUBELET_VERSIONS[plan.era],
    )
    pods = [
        # Named after the node: fleets that share one real API server (--name-prefix) have distinct pods.
        apiserver.pod_object(WORKLOAD_NAMESPACE, "numa-app-%s-%d" % (name, number), name, uid=uid, owner_name="numa-app-%02d" % index,
                             labels={"app": "numa-app"}, memory=memory_quantity(containers["app"]))
        for number, (uid, containers) in enumerate(sorted(plan.pods.items()))
    ]
    pods.append(apiserver.pod_object("kube-system", "kube-proxy-%s" % name, name, owner_kind="DaemonSet", owner_name="kube-proxy",
                                     labels={"k8s-app": "kube-proxy"}, memory="64Mi", cpu="100m"))
    return node, pods


def python_for_inventory(explicit: Optional[str]) -> str:
    venv = os.path.join(CHECKOUT, ".venv", "bin", "python")
    return explicit or (venv if os.path.exists(venv) else sys.executable)


def link_collection(directory: str) -> str:
    base = os.path.join(directory, "collections")
    link = os.path.join(base, "ansible_collections", "nodeops", "numa_drift")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if not os.path.islink(link):
        os.symlink(CHECKOUT, link)
    return base


def standin_command(python: str, node_dir: str, name: str, plan: NodePlan, api_url: str, options: argparse.Namespace) -> List[str]:
    return [
        python, os.path.join(SANDBOX_DIR, "kubelet_standin.py"), "run", "--root", os.path.join(node_dir, "root"), "--era", plan.era,
        "--api", api_url, "--node-name", name, "--token", options.token, "--heartbeat", str(options.heartbeat),
        "--fault-file", os.path.join(node_dir, nodectl.FAULT_FILE), "--exit-if-missing", os.path.join(node_dir, supervisor.SERVICE_FILE),
        "--max-lifetime", str(options.max_lifetime),
    ] + (["--"] + list(distros.SHAPES[plan.distribution].kubelet_argv(static_config(plan))) if plan.distribution else [])


def write_node_bin(python: str, node_dir: str) -> str:
    """``<node>/bin/systemctl`` (this node's units) and ``<node>/bin/python`` (that PATH first); returns the python."""
    bin_dir = os.path.join(node_dir, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    scripts = {
        "systemctl": "#!/bin/sh\n# systemctl of sandbox node %s (tests/sandbox/nodectl.py systemctl)\nexec %s\n" % (
            os.path.basename(node_dir), shlex.join([python, os.path.join(SANDBOX_DIR, "nodectl.py"), "--node-dir", node_dir, "systemctl"])
            + ' "$@"'),
        "python": "#!/bin/sh\n# The node's Python for Ansible: its own systemctl first on PATH\nPATH=%s:\"$PATH\"\nexport PATH\nexec %s \"$@\"\n" % (
            shlex.quote(bin_dir), shlex.quote(python)),
    }
    for name, text in scripts.items():
        path = os.path.join(bin_dir, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(path, 0o755)
    return os.path.join(bin_dir, "python")


def nodectl_command(python: str, node_dir: str, action: str) -> str:
    return shlex.join([python, os.path.join(SANDBOX_DIR, "nodectl.py"), "--node-dir", node_dir, action])


def service_commands(python: str, node_dir: str) -> Dict[str, str]:
    """``remediate_service_commands`` for the role's ``command`` service mode."""
    return {
        "stop": nodectl_command(python, node_dir, "stop"),
        "start": nodectl_command(python, node_dir, "start"),
        "status": nodectl_command(python, node_dir, "service-status"),
    }


# --------------------------------------------------------------------------- processes


def start_apiserver(directory: str, python: str, options: argparse.Namespace) -> Tuple[int, int]:
    api_dir = os.path.join(directory, "api")
    port_file = os.path.join(api_dir, "port")
    command = [
        python, os.path.join(SANDBOX_DIR, "apiserver.py"), "--state", os.path.join(api_dir, "state.json"), "--port-file", port_file,
        "--node-monitor-grace-period", str(options.node_monitor_grace_period), "--exit-if-missing", os.path.join(directory, FLEET_MARKER),
        "--max-lifetime", str(options.max_lifetime),
    ]
    if options.require_token:
        command += ["--token", options.token]
    with open(os.path.join(api_dir, "apiserver.log"), "ab") as log:
        process = subprocess.Popen(  # pylint: disable=consider-using-with
            command, cwd=api_dir, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
        )
    if not nodectl.wait_until(lambda: os.path.exists(port_file) or process.poll() is not None, API_START_TIMEOUT) or process.poll() is not None:
        raise RuntimeError("the API server did not start (see %s)" % os.path.join(api_dir, "apiserver.log"))
    with open(port_file, encoding="utf-8") as handle:
        return process.pid, int(handle.read().strip())


def api_get(url: str, token: str, path: str) -> Any:
    return api_call(url, token, "GET", path)


def api_call(url: str, token: str, method: str, path: str, body: Any = None, ca: Optional[str] = None) -> Any:
    """One API request; with a real API server (https) the CA is ``ca`` or else ``SSL_CERT_FILE`` (``--api-ca``)."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url + path, data=data, method=method, headers={
        "Authorization": "Bearer " + token, "Accept": "application/json", "Content-Type": "application/json"})
    context = ssl.create_default_context(cafile=ca) if ca and url.startswith("https:") else None
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        return json.loads(response.read().decode("utf-8"))


def unregister_real_api(fleet: Dict[str, Any]) -> List[str]:
    """Delete the fleet's Nodes and their pods from a real API server (``down``): fleets that share it
    one after another see only their own Nodes. Returns what could not be deleted."""
    url, token, ca = fleet["api"]["url"], fleet.get("token", DEFAULT_TOKEN), fleet["api"].get("ca")
    names = {node["name"] for node in fleet["nodes"]}
    failed = []
    try:
        pods = api_call(url, token, "GET", "/api/v1/pods", ca=ca)["items"]
    except (OSError, ValueError, KeyError) as error:
        return ["pods: %s" % error]
    # No kubelet confirms that a pod bound to a Node stopped: delete at once (as `kubectl delete --force`).
    targets = ["/api/v1/namespaces/%s/pods/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"])
               for pod in pods if (pod.get("spec") or {}).get("nodeName") in names]
    targets += ["/api/v1/nodes/%s" % name for name in sorted(names)]
    for path in targets:
        try:
            api_call(url, token, "DELETE", path, {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}, ca=ca)
        except urllib.error.HTTPError as error:
            if error.code != 404:
                failed.append("%s: HTTP %d" % (path, error.code))
        except OSError as error:
            failed.append("%s: %s" % (path, error))
    return failed


def seed_real_api(url: str, token: str, plans: List[Tuple[str, NodePlan]]) -> List[Tuple[str, NodePlan]]:
    """Register the fleet's Nodes and create their pods on a real API server (an admin token).

    A real API server gives every object its own ``metadata.uid``: the plans come back with their
    pods keyed by the UIDs the server gave, so the checkpoints name the pods the API has."""
    namespaces = {WORKLOAD_NAMESPACE, "kube-system"}
    for namespace in sorted(namespaces):
        for path, body in (("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
                           ("/api/v1/namespaces/%s/serviceaccounts" % namespace,
                            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})):
            try:
                api_call(url, token, "POST", path, body)
            except urllib.error.HTTPError as error:
                if error.code != 409:
                    raise
    seeded: List[Tuple[str, NodePlan]] = []
    registered: List[str] = []
    try:
        for index, (name, plan) in enumerate(plans, start=1):
            node, pods = api_objects(name, index, plan)
            api_call(url, token, "POST", "/api/v1/nodes", node)
            registered.append(name)
            uids = {}
            for pod in pods:
                old = pod["metadata"].pop("uid")
                pod.pop("status", None)
                created = api_call(url, token, "POST", "/api/v1/namespaces/%s/pods" % pod["metadata"]["namespace"], pod)
                uids[old] = created["metadata"]["uid"]
            seeded.append((name, dataclasses.replace(plan, pods={uids.get(uid, uid): pods_ for uid, pods_ in plan.pods.items()})))
    except urllib.error.HTTPError as error:
        # Leave nothing half registered: the Nodes registered here and their pods go (a Node of the same name that
        # was there before, a 409, is not ours and stays).
        unregister_real_api({"api": {"url": url, "ca": None}, "token": token, "nodes": [{"name": name} for name in registered]})
        raise RuntimeError("the API server at %s answered HTTP %d to a write of %s: %s (another fleet with the same "
                           "--name-prefix?)" % (url, error.code, error.geturl(), error.read().decode("utf-8", "replace")[:300])) from error
    return seeded


def ready_of(node: Dict[str, Any]) -> Dict[str, Any]:
    return apiserver.condition(node, "Ready") or {}


def kubelet_has_posted(node: Dict[str, Any]) -> bool:
    # The stand-in registers every Node with NodeStatusNeverUpdated; a real API server's has no condition until kubelet posts.
    ready = ready_of(node)
    return bool(ready) and ready.get("reason") != "NodeStatusNeverUpdated"


def wait_for_first_posts(url: str, token: str, names: List[str], timeout: float) -> bool:
    def posted() -> bool:
        try:
            nodes = {item["metadata"]["name"]: item for item in api_get(url, token, "/api/v1/nodes")["items"]}
        except (OSError, ValueError, KeyError):
            return False
        return all(name in nodes and kubelet_has_posted(nodes[name]) for name in names)

    return nodectl.wait_until(posted, timeout, step=0.2)


def processes_referencing(directory: str) -> List[int]:
    """Pids (not this process or its ancestors) whose command line names a path under ``directory``."""
    prefix = os.path.abspath(directory)
    spared = {os.getpid(), os.getppid()}
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in spared or not supervisor.process_alive(int(entry)):
            continue
        if any(arg == prefix or arg.startswith(prefix + os.sep) for arg in supervisor.process_cmdline(int(entry))):
            found.append(int(entry))
    return sorted(found)


# --------------------------------------------------------------------------- files


def write_yaml(path: str, document: Any) -> None:
    try:
        import yaml  # PyYAML when available; JSON is YAML too
        text = yaml.safe_dump(document, default_flow_style=False, sort_keys=False)
    except ImportError:
        text = json.dumps(document, indent=2)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def kubeconfig(url: str, token: str) -> Dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "sandbox", "cluster": {"server": url}}],
        "users": [{"name": "sandbox-admin", "user": {"token": token}}],
        "contexts": [{"name": "sandbox", "context": {"cluster": "sandbox", "user": "sandbox-admin", "namespace": "default"}}],
        "current-context": "sandbox",
        "preferences": {},
    }


def host_variables(python: str, node: Dict[str, Any]) -> Dict[str, Any]:
    """A node's inventory entry: the role's command service mode, or, on a distribution-shaped node,
    its systemd mode against the node's own systemctl (the role names the service the probe found)."""
    variables: Dict[str, Any] = {
        "ansible_connection": "local",
        # Fake nodes are directories owned by whoever runs the sandbox: no privilege escalation
        # (inventory variables override the playbooks' `become` keyword).
        "ansible_become": False,
        "ansible_python_interpreter": python,
        "remediate_root": node["root"],
        "remediate_node_name": node["name"],
        "remediate_service_mode": "command",
        "remediate_service_commands": service_commands(python, node["node_dir"]),
        "sandbox_node_dir": node["node_dir"],
        "sandbox_expected_verdict": node["expected_verdict"],
        "sandbox_era": node["era"],
    }
    if node.get("shape"):
        del variables["remediate_service_commands"]
        variables.update(
            ansible_python_interpreter=os.path.join(node["node_dir"], "bin", "python"), remediate_service_mode="systemd",
            sandbox_distribution=node["distribution"], sandbox_service=node["service"],
        )
    return variables


def inventory(directory: str, python: str, nodes: List[Dict[str, Any]], options: argparse.Namespace, url: str) -> Dict[str, Any]:
    hosts = {node["name"]: host_variables(python, node) for node in nodes}
    group_vars = {
        "remediate_kubeconfig": os.path.join(directory, "kubeconfig"),
        "remediate_settle_seconds": options.settle_seconds,
        "remediate_ready_poll": 1,
        "remediate_ready_timeout": 60,
        "sandbox_fleet_dir": directory,
        "sandbox_api_url": url,
    }
    return {"all": {"children": {"sandbox": {"hosts": hosts, "vars": group_vars}}}}


def write_json(path: str, document: Any) -> None:
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.replace(temporary, path)


def load_fleet(directory: str) -> Dict[str, Any]:
    with open(os.path.join(directory, "fleet.json"), encoding="utf-8") as handle:
        return json.load(handle)


# --------------------------------------------------------------------------- commands


def node_record(directory: str, name: str, plan: NodePlan) -> Dict[str, Any]:
    """What fleet.json says about one node."""
    node_dir = os.path.join(directory, "nodes", name)
    return {
        "name": name, "node_dir": node_dir, "root": os.path.join(node_dir, "root"), "expected_verdict": plan.expected_verdict,
        "description": plan.description, "layout": plan.layout if plan.with_checkpoint else None, "era": plan.era,
        "numa_nodes": len(plan.current.mem_total_kb), "cordoned_beforehand": plan.cordoned, "kubelet_started": plan.kubelet_started,
        "pods": sorted(plan.pods), **expected_kubelet(plan),
    }


def expected_kubelet(plan: NodePlan) -> Dict[str, Any]:
    """What the probe must report as ``kubelet.*`` on the node; ``service_mode``: the role's, in the inventory."""
    if not plan.distribution:
        return {"shape": None, "distribution": "kubeadm", "service": "kubelet", "unit": supervisor.DEFAULT_UNIT,
                "kubelet_root_dir": "/var/lib/kubelet", "config_path": "/var/lib/kubelet/config.yaml", "config_dir": None,
                "service_mode": "command"}
    shape = distros.SHAPES[plan.distribution]
    return {"shape": plan.distribution, "distribution": shape.distribution, "service": shape.unit[: -len(".service")], "unit": shape.unit,
            "kubelet_root_dir": shape.root_dir, "config_path": shape.config_path, "config_dir": shape.config_dir, "service_mode": "systemd"}


def build_nodes(directory: str, plans: List[Tuple[str, NodePlan]]) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """Write every node tree; return the node records and the API server's initial state."""
    state: Dict[str, Any] = {"resourceVersion": 1, "nodes": {}, "pods": {}}
    nodes = []
    for index, (name, plan) in enumerate(plans, start=1):
        record = node_record(directory, name, plan)
        write_node_tree(record["root"], plan)
        node, pods = api_objects(name, index, plan)
        state["nodes"][name] = node
        state["pods"].update({"%s/%s" % (p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods})
        nodes.append(record)
    return nodes, state


def service_definition(python: str, record: Dict[str, Any], plan: NodePlan, url: str, collections: str, options: argparse.Namespace) -> Dict[str, Any]:
    return {
        "command": standin_command(python, record["node_dir"], record["name"], plan, url, options), "restart_sec": options.restart_sec,
        "restart_max_sec": options.restart_max_sec, "restart_steps": options.restart_steps, "stop_timeout": 10.0,
        "max_lifetime": options.max_lifetime, "log": "kubelet.log",
        "environment": dict({"NUMA_DRIFT_COLLECTIONS_PATH": collections}, **({"SSL_CERT_FILE": options.api_ca} if options.api_ca else {})),
        "unit": record["unit"],
    }


def start_kubelets(nodes: List[Dict[str, Any]]) -> None:
    """Start every supervisor at once, then wait for each first start."""
    started = [(node["node_dir"], nodectl.spawn_supervisor(node["node_dir"])) for node in nodes if node["kubelet_started"]]
    for node_dir, process in started:
        nodectl.wait_started(node_dir, process)


def phase_text(started: float, phases: List[Tuple[str, float]]) -> str:
    previous = [started] + [at for _label, at in phases]
    return ", ".join("%s %.1f s" % (label, at - before) for (label, at), before in zip(phases, previous))


def up(options: argparse.Namespace) -> List[str]:
    """Build and start the fleet; the summary lines to print."""
    started = time.time()
    directory = os.path.abspath(options.dir)
    if os.path.exists(os.path.join(directory, "fleet.json")):
        if not options.replace:
            raise FleetExists("%s already holds a fleet; run `down --purge` first or pass --replace" % directory)
        down_fleet(directory, purge=True)
    build, default_count, _about = SCENARIOS[options.scenario]
    plans = with_prefix(build(options.nodes or default_count), options.name_prefix)
    python = python_for_inventory(options.python)
    os.makedirs(os.path.join(directory, "api"), exist_ok=True)
    with open(os.path.join(directory, FLEET_MARKER), "w", encoding="utf-8") as marker:
        marker.write("every sandbox process of this fleet stops when this file disappears\n")
    collections = link_collection(directory)

    if options.api_server:
        # A real API server (tests/integration/controlplane.py): the Nodes and pods go there, through --token.
        url, api_pid, port = options.api_server.rstrip("/"), None, None
        plans = seed_real_api(url, options.token, plans)
        nodes, _state = build_nodes(directory, plans)
        phases = [("nodes built and registered", time.time())]
        shutil.copyfile(options.kubeconfig, os.path.join(directory, "kubeconfig"))
    else:
        nodes, state = build_nodes(directory, plans)
        write_json(os.path.join(directory, "api", "state.json"), state)
        phases = [("nodes built", time.time())]
        api_pid, port = start_apiserver(directory, python, options)
        phases.append(("API server", time.time()))
        url = "http://%s:%d" % (apiserver.HOST, port)
        write_yaml(os.path.join(directory, "kubeconfig"), kubeconfig(url, options.token))
    write_json(os.path.join(directory, "fleet.json"), {
        "dir": directory, "scenario": options.scenario, "created_at": started,
        "api": {"url": url, "port": port, "pid": api_pid, "real": bool(options.api_server), "ca": options.api_ca},
        "python": python, "token": options.token, "collections_path": collections, "nodes": nodes,
    })
    for record, (_name, plan) in zip(nodes, plans):
        if plan.distribution:
            write_node_bin(python, record["node_dir"])
        write_json(os.path.join(record["node_dir"], supervisor.SERVICE_FILE), service_definition(python, record, plan, url, collections, options))
    start_kubelets(nodes)
    phases.append(("kubelets started", time.time()))
    write_yaml(os.path.join(directory, "inventory.yml"), inventory(directory, python, nodes, options, url))
    if not wait_for_first_posts(url, options.token, [n["name"] for n in nodes if n["kubelet_started"]], FIRST_POST_TIMEOUT):
        sys.stderr.write("fleet: warning: not every kubelet stand-in posted its status within %.0f s\n" % FIRST_POST_TIMEOUT)
    phases.append(("first status posts", time.time()))
    lines = ["sandbox fleet %r up in %.1f s (%s): API %s, %d nodes, inventory %s" % (
        options.scenario, time.time() - started, phase_text(started, phases), url, len(nodes), os.path.join(directory, "inventory.yml"))]
    return lines + ["  %-12s expected %-20s %-38s %s" % (node["name"], node["expected_verdict"], node["unit"], node["description"])
                    for node in nodes]


def node_rows(fleet: Dict[str, Any]) -> List[Dict[str, Any]]:
    url, token = fleet["api"]["url"], fleet.get("token", DEFAULT_TOKEN)
    try:
        api_nodes = {item["metadata"]["name"]: item for item in api_get(url, token, "/api/v1/nodes")["items"]}
        api_error = None
    except (OSError, ValueError, KeyError) as error:
        api_nodes, api_error = {}, str(error)
    rows = []
    for node in fleet["nodes"]:
        api_node = api_nodes.get(node["name"], {})
        ready = ready_of(api_node)
        service = nodectl.current_status(node["node_dir"])
        rows.append({
            "name": node["name"], "expected_verdict": node["expected_verdict"],
            "ready": ready.get("status", "?" if api_error else "absent"), "message": ready.get("message", api_error or ""),
            "unschedulable": bool((api_node.get("spec") or {}).get("unschedulable")),
            "service": service["state"], "restarts": service["restarts"], "pid": service["pid"],
            "unit": node.get("unit", supervisor.DEFAULT_UNIT), "distribution": node.get("distribution"), "shape": node.get("shape"),
        })
    return rows


def status_lines(directory: str, as_json: bool) -> List[str]:
    fleet = load_fleet(directory)
    api_up = bool(fleet["api"]["pid"]) and supervisor.process_alive(fleet["api"]["pid"]) and bool(processes_referencing(os.path.join(directory, "api")))
    rows = node_rows(fleet)
    if as_json:
        return [json.dumps({"api": dict(fleet["api"], running=api_up), "nodes": rows}, indent=2, sort_keys=True)]
    lines = ["API %s: %s" % (fleet["api"]["url"], "running (pid %d)" % fleet["api"]["pid"] if api_up else "not running"),
             "%-12s %-8s %-5s %-38s %-12s %-8s %-20s %s" % ("NODE", "READY", "CORD", "SERVICE", "KUBELET", "RESTARTS", "EXPECTED", "MESSAGE")]
    return lines + [status_line(row) for row in rows]


def status_line(row: Dict[str, Any]) -> str:
    cordoned = "yes" if row["unschedulable"] else "no"
    return "%-12s %-8s %-5s %-38s %-12s %-8d %-20s %s" % (
        row["name"], row["ready"], cordoned, row["unit"], row["service"], row["restarts"], row["expected_verdict"], row["message"][:120])


def stop_process(pid: int, timeout: float) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not nodectl.wait_until(lambda: not supervisor.process_alive(pid), timeout):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def down_fleet(directory: str, purge: bool) -> List[int]:
    """Stop every node's kubelet and supervisor, the API server, then anything left naming DIR."""
    try:
        fleet = load_fleet(directory)
    except (OSError, ValueError):
        fleet = {"nodes": [], "api": {}}
    node_dirs = [node["node_dir"] for node in fleet["nodes"] if os.path.isdir(node["node_dir"])]
    for node_dir in node_dirs:
        nodectl.request_stop(node_dir)
    for node_dir in node_dirs:
        nodectl.stop(node_dir)
    if fleet["api"].get("real") and fleet["nodes"]:
        for failure in unregister_real_api(fleet):
            sys.stderr.write("fleet: warning: could not delete from the API server: %s\n" % failure)
    api_pid = fleet["api"].get("pid")
    if api_pid and api_pid in processes_referencing(directory):
        stop_process(api_pid, 5.0)
    for pid in processes_referencing(directory):
        stop_process(pid, 5.0)
    nodectl.wait_until(lambda: not processes_referencing(directory), DOWN_TIMEOUT)
    left = processes_referencing(directory)
    if purge and not left:
        shutil.rmtree(directory, ignore_errors=True)
    return left


def down(options: argparse.Namespace) -> int:
    started = time.time()
    directory = os.path.abspath(options.dir)
    left = down_fleet(directory, options.purge)
    if left:
        sys.stderr.write("fleet: processes still running after down: %s\n" % ", ".join(map(str, left)))
        return 1
    return print_lines(["sandbox fleet in %s down in %.1f s; no process left%s" % (
        directory, time.time() - started, "; directory removed" if options.purge else "")])


class FleetExists(Exception):
    """DIR already holds a fleet."""


def print_lines(lines: List[str]) -> int:
    try:
        print("\n".join(lines))
        sys.stdout.flush()
    except BrokenPipeError:
        pass  # the reader went away (e.g. `| head`); the fleet stays up
    return 0


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="The nodeops.numa_drift sandbox fleet (fake nodes, kubelet and API stand-ins on 127.0.0.1)")
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("up", help="build the nodes and start everything")
    start.add_argument("--dir", required=True)
    start.add_argument("--scenario", choices=sorted(SCENARIOS), default="mixed",
                       help="; ".join("%s: %s" % (name, about) for name, (_b, _n, about) in sorted(SCENARIOS.items())))
    start.add_argument("--nodes", type=int, default=0, help="node count for all-drift and in-sync")
    start.add_argument("--token", default=DEFAULT_TOKEN, help="bearer token written to the kubeconfig")
    start.add_argument("--require-token", action="store_true", help="make the API server reject other tokens")
    start.add_argument("--heartbeat", type=float, default=3.0, help="seconds between kubelet status posts")
    start.add_argument("--node-monitor-grace-period", type=float, default=apiserver.DEFAULT_GRACE_SECONDS)
    start.add_argument("--max-lifetime", type=float, default=supervisor.DEFAULT_MAX_LIFETIME, help="every process stops after this")
    start.add_argument("--python", default=None, help="interpreter for the processes and ansible_python_interpreter (default: the venv's)")
    start.add_argument("--settle-seconds", type=int, default=5, help="remediate_settle_seconds written to the inventory")
    start.add_argument("--restart-sec", type=float, default=1.0, help="RestartSec= of every kubelet service")
    start.add_argument("--restart-max-sec", type=float, default=8.0,
                       help="RestartMaxDelaySec=: crash loops slow down to this (keeps idle fleets cheap); 0 or 1: always --restart-sec")
    start.add_argument("--restart-steps", type=int, default=4, help="RestartSteps=: restarts to reach --restart-max-sec")
    start.add_argument("--replace", action="store_true", help="take down and remove a fleet already in DIR first")
    start.add_argument("--api-server", default=None,
                       help="a real API server's URL (no stand-in is started): Nodes and pods are created there with --token "
                            "(an admin token; the kubelet stand-ins post status with it too); with --kubeconfig")
    start.add_argument("--kubeconfig", default=None, help="with --api-server: the kubeconfig the playbooks use (copied into DIR)")
    start.add_argument("--api-ca", default=None, help="with --api-server: its CA file (SSL_CERT_FILE of every fleet process)")
    start.add_argument("--name-prefix", default="sbx",
                       help="nodes are named PREFIX-node-01, ...; distinct prefixes let fleets share one --api-server "
                            "(down deletes the fleet's Nodes and pods there)")
    show = commands.add_parser("status", help="API readiness and kubelet services")
    show.add_argument("--dir", required=True)
    show.add_argument("--json", action="store_true")
    stop = commands.add_parser("down", help="stop everything (nothing keeps running)")
    stop.add_argument("--dir", required=True)
    stop.add_argument("--purge", action="store_true", help="also remove DIR")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    options = parse_args(argv)
    if getattr(options, "api_ca", None):
        os.environ["SSL_CERT_FILE"] = options.api_ca  # inherited by the kubelet stand-ins' supervisors
    if options.command == "up":
        try:
            lines = up(options)
        except FleetExists as error:
            sys.stderr.write("fleet: %s\n" % error)
            return 1
        except (RuntimeError, OSError) as error:
            sys.stderr.write("fleet: up failed: %s; stopping what started\n" % error)
            down_fleet(os.path.abspath(options.dir), purge=False)
            return 1
        return print_lines(lines)
    if options.command == "status":
        try:
            lines = status_lines(os.path.abspath(options.dir), options.json)
        except (OSError, ValueError) as error:
            sys.stderr.write("fleet: no fleet in %s: %s\n" % (options.dir, error))
            return 1
        return print_lines(lines)
    return down(options)


if __name__ == "__main__":
    sys.exit(main())
