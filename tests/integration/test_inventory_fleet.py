# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``ansible-playbook -i notready.k8s_nodes.yml nodeops.numa_drift.remediate`` on the sandbox fleet.

The shipped examples/notready.k8s_nodes.yml is copied into a directory whose host_vars/ and
group_vars/ say how to reach each sandbox node (local connection, its node tree, its kubelet
stand-in's service commands, taken from the fleet's own inventory), as an operator's
host_vars/group_vars would say ansible_user. The Nodes and their readiness come only from the API
server through the inventory plugin. A dry run keeps it quick and read-only.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
import urllib.request

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
FLEET = os.path.join(CHECKOUT, "tests", "sandbox", "fleet.py")
EXAMPLE = os.path.join(CHECKOUT, "examples", "notready.k8s_nodes.yml")
BIN = os.path.dirname(sys.executable)


def fleet(*args):
    return subprocess.run([sys.executable, FLEET] + list(args), capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.fixture
def sandbox_fleet(tmp_path, control_plane, service_account):
    """The mixed fleet on the session's real kube-apiserver (its own node names); the playbooks under the shipped ServiceAccount."""
    directory = str(tmp_path / "fleet")
    started = fleet("up", "--dir", directory, "--scenario", "mixed", "--name-prefix", "inv", "--api-server", control_plane.server,
                    "--token", control_plane.admin_token, "--api-ca", control_plane.ca_file, "--kubeconfig", service_account)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield directory
    finally:
        stopped = fleet("down", "--dir", directory, "--purge")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def inventory_hosts(group):
    """(host, vars) of every host of a YAML inventory group, children included."""
    for host, variables in (group.get("hosts") or {}).items():
        yield host, variables or {}
    for child in (group.get("children") or {}).values():
        yield from inventory_hosts(child or {})


def inventory_group_vars(group):
    found = dict(group.get("vars") or {})
    for child in (group.get("children") or {}).values():
        found.update(inventory_group_vars(child or {}))
    return found


def connection_vars_beside(directory, fleet_inventory):
    """host_vars/ and group_vars/ next to the inventory file, from the fleet's inventory."""
    with open(fleet_inventory, encoding="utf-8") as handle:
        document = yaml.safe_load(handle)
    os.makedirs(os.path.join(directory, "host_vars"))
    os.makedirs(os.path.join(directory, "group_vars"))
    for host, variables in inventory_hosts(document["all"]):
        with open(os.path.join(directory, "host_vars", host + ".yml"), "w", encoding="utf-8") as handle:
            yaml.safe_dump(variables, handle)
    with open(os.path.join(directory, "group_vars", "all.yml"), "w", encoding="utf-8") as handle:
        yaml.safe_dump(inventory_group_vars(document["all"]), handle)


def api_nodes(fleet_dir):
    """Every Node of the cluster (the fleets of earlier tests are down: only this fleet's), as the admin reads them."""
    with open(os.path.join(fleet_dir, "fleet.json"), encoding="utf-8") as handle:
        info = json.load(handle)
    request = urllib.request.Request(info["api"]["url"] + "/api/v1/nodes", headers={"Authorization": "Bearer " + info["token"]})
    with urllib.request.urlopen(request, timeout=15, context=ssl.create_default_context(cafile=info["api"]["ca"])) as response:
        return {node["metadata"]["name"]: node for node in json.load(response)["items"]}


def test_remediate_with_the_notready_inventory_targets_exactly_the_notready_nodes(sandbox_fleet, tmp_path):
    workdir = str(tmp_path / "operator")
    os.makedirs(workdir)
    shutil.copyfile(EXAMPLE, os.path.join(workdir, "notready.k8s_nodes.yml"))
    connection_vars_beside(workdir, os.path.join(sandbox_fleet, "inventory.yml"))

    nodes_before = api_nodes(sandbox_fleet)
    notready = sorted(name for name, node in nodes_before.items()
                      if not any(c.get("type") == "Ready" and c.get("status") == "True"
                                 for c in node["status"].get("conditions") or []))
    ready = sorted(set(nodes_before) - set(notready))
    assert notready and ready, "the mixed fleet has Ready and NotReady nodes"
    with open(os.path.join(sandbox_fleet, "fleet.json"), encoding="utf-8") as handle:
        assert sorted(nodes_before) == sorted(node["name"] for node in json.load(handle)["nodes"]), "other Nodes left in the cluster"

    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("K8S_AUTH_", "ANSIBLE_")) and key != "KUBECONFIG"}
    environment.update({
        "ANSIBLE_COLLECTIONS_PATH": os.path.join(sandbox_fleet, "collections"),
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true",
        "ANSIBLE_NOCOLOR": "1",
        "K8S_AUTH_KUBECONFIG": os.path.join(sandbox_fleet, "kubeconfig"),
        "NUMA_DRIFT_REPORT_DIR": os.path.join(workdir, "report"),
        "PATH": BIN + os.pathsep + environment.get("PATH", ""),
    })
    result = subprocess.run(
        [os.path.join(BIN, "ansible-playbook"), "-i", "notready.k8s_nodes.yml", "nodeops.numa_drift.remediate",
         "-e", "remediate_dry_run=true", "-e", "numa_drift_batch=100%"],
        cwd=workdir, env=environment, capture_output=True, text=True, timeout=1200, check=False)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]

    with open(os.path.join(workdir, "report", "report.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    assert report["kind"] == "remediate"
    assert sorted(node["node"] for node in report["nodes"]) == notready
    actions = {node["node"]: node["action"] for node in report["nodes"]}
    assert "dry_run" in actions.values()
    assert not set(actions.values()) & {"repaired", "failed", "rolled_back"}, actions
    for name in ready:
        assert "ok=" not in "".join(line for line in result.stdout.splitlines() if line.startswith(name + " "))

    # A dry run: no Node was cordoned, uncordoned or annotated.
    nodes_after = api_nodes(sandbox_fleet)
    for name, node in nodes_before.items():
        assert bool(nodes_after[name]["spec"].get("unschedulable")) == bool(node["spec"].get("unschedulable")), name
        assert nodes_after[name]["metadata"].get("annotations") == node["metadata"].get("annotations"), name
