# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate playbook on distribution-shaped sandbox nodes (fleet.py --scenario distros).

Three KASLR-drifted nodes shaped like a k0s worker, a k3s agent and a MicroK8s node
(tests/sandbox/distros.py): their files as the distribution leaves them, a kubelet stand-in run
with the argv that distribution's wrapper gives kubelet (it reads its configuration from that argv
as kubelet does) by a service of that distribution's name. The nodes are run in the role's
``systemd`` service mode against the node's own ``systemctl`` (tests/sandbox/nodectl.py), which
knows that one unit only: the role succeeds only when it restarts the service the probe
discovered, with no option but ``root``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, Iterator, List

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.integration.test_fleet_sandbox import FLEET, Fleet, make_real_fleet
from ansible_collections.nodeops.numa_drift.tests.sandbox import kubelet_standin
from ansible_collections.nodeops.numa_drift.tests.sandbox.supervisor import load_service
from ansible_collections.nodeops.numa_drift.tests.sandbox.testing import VENV_BIN, ansible_module, collections_tree

SHAPED = {"k0s": "k0sworker.service", "k3s": "k3s-agent.service", "microk8s": "snap.microk8s.daemon-kubelite.service"}
MEMORY_MANAGER_REFUSED = "start memory manager error: [memorymanager] the expected machine state is different from the real one"

pytestmark = pytest.mark.skipif(
    not (os.path.exists(FLEET) and os.path.exists(os.path.join(VENV_BIN, "ansible-playbook")) and sys.platform.startswith("linux")),
    reason="needs tests/sandbox/fleet.py, the checkout's .venv (bash scripts/setup.sh) and Linux",
)


@pytest.fixture(scope="module")
def fleet(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """The distribution-shaped nodes on the session's real kube-apiserver; the playbooks under the shipped ServiceAccount."""
    yield from make_real_fleet(request, tmp_path_factory, collections_tree(str(tmp_path_factory.mktemp("collections"))), "distros")


def systemctl(fleet: Fleet, name: str, *args: str) -> subprocess.CompletedProcess:
    """The node's own systemctl, as the role's shell tasks find it on the node's PATH."""
    return subprocess.run([os.path.join(fleet.nodes[name]["node_dir"], "bin", "systemctl")] + list(args),
                          capture_output=True, text=True, timeout=60, check=False)


def systemctl_calls(fleet: Fleet, name: str, since: float = 0.0) -> List[Dict[str, Any]]:
    path = os.path.join(fleet.nodes[name]["node_dir"], "systemctl.log")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [call for call in map(json.loads, handle) if call["at"] >= since]


def probe_facts(fleet: Fleet) -> Dict[str, Dict[str, Any]]:
    """numa_drift_facts on every node through Ansible with the fleet's inventory, ``root`` only."""
    results = ansible_module("sandbox", fleet.inventory, "nodeops.numa_drift.numa_drift_facts", "root={{ remediate_root }}", fleet.collections)
    return {name: result["numa_drift"] for name, result in results.items()}


def by_distribution(fleet: Fleet) -> Dict[str, str]:
    return {node["shape"]: name for name, node in fleet.nodes.items()}


def shaped_checkpoint(fleet: Fleet, name: str) -> str:
    node = fleet.nodes[name]
    return os.path.join(node["root"], node["kubelet_root_dir"].lstrip("/"), "memory_manager_state")


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


@pytest.fixture(scope="module")
def remediated(fleet: Fleet) -> Dict[str, Any]:
    before = {name: fleet.service(name) for name in fleet.nodes}
    checkpoints = {name: read_bytes(shaped_checkpoint(fleet, name)) for name in fleet.nodes}
    started = time.time()
    run = fleet.playbook("remediate", "-e", "numa_drift_batch=100%")
    assert run.rc == 0, run.tail()
    return {"run": run, "started": started, "before": before, "checkpoints": checkpoints}


def test_fleet_has_one_node_per_distribution_run_by_its_service(fleet: Fleet) -> None:
    assert {node["shape"]: node["unit"] for node in fleet.nodes.values()} == SHAPED
    for name, node in fleet.nodes.items():
        assert fleet.service(name)["state"] in ("active", "activating"), name  # crash-looping on the drifted checkpoint
        shown = dict(line.split("=", 1) for line in systemctl(fleet, name, "show", node["unit"][: -len(".service")]).stdout.split())
        assert shown["Id"] == node["unit"] and shown["LoadState"] == "loaded", shown
        # The stand-in is given the argv the distribution's wrapper gives kubelet (after --) and gets
        # as far as kubelet's memory manager with it (its configuration was read and accepted).
        service = load_service(node["node_dir"])
        assert service.unit == node["unit"]
        kubelet_argv = service.command[service.command.index("--") + 1:]
        assert any(arg.startswith(("--root-dir=", "--config-dir=")) for arg in kubelet_argv), kubelet_argv
        with open(os.path.join(node["node_dir"], "kubelet.log"), encoding="utf-8") as handle:
            assert MEMORY_MANAGER_REFUSED in handle.read(), name


def test_the_nodes_systemctl_knows_no_kubelet_service(fleet: Fleet) -> None:
    """A role restarting ``kubelet`` by name would fail here, and leave the node's service alone."""
    for name, node in fleet.nodes.items():
        before = fleet.service(name)
        stopped = systemctl(fleet, name, "stop", "kubelet")
        assert stopped.returncode == 5 and stopped.stderr.strip() == "Failed to stop kubelet.service: Unit kubelet.service not loaded.", stopped
        started = systemctl(fleet, name, "start", "kubelet.service")
        assert started.returncode == 5 and "Unit kubelet.service not found." in started.stderr, started
        shown = systemctl(fleet, name, "show", "kubelet", "--property=LoadState", "--property=ActiveState")
        assert shown.stdout.split() == ["LoadState=not-found", "ActiveState=inactive"], shown
        assert fleet.service(name)["supervisor_pid"] == before["supervisor_pid"], name
        assert [call["rc"] for call in systemctl_calls(fleet, name) if call["units"] == ["kubelet.service"]][-3:] == [5, 5, 0]


def test_probe_finds_each_distributions_kubelet_with_root_only(fleet: Fleet) -> None:
    facts = probe_facts(fleet)
    assert sorted(facts) == sorted(fleet.nodes)
    for name, node in fleet.nodes.items():
        kubelet = facts[name]["kubelet"]
        assert facts[name]["verdict"] == "drift_within_bound", facts[name]["summary"]
        assert (kubelet["distribution"], kubelet["service"], kubelet["root_dir"], kubelet["config_path"], kubelet["config_dir"]) == (
            node["distribution"], node["service"], node["kubelet_root_dir"], node["config_path"], node["config_dir"]), kubelet
        assert facts[name]["checkpoint"]["path"] == os.path.join(node["root"], node["kubelet_root_dir"].lstrip("/"), "memory_manager_state")
        assert kubelet["sources"]["policy"] != "default" and kubelet["sources"]["reserved_memory"] != "default", kubelet["sources"]
        # The release each node's program says (k3s and k0s their own binary, MicroK8s its snap.yaml).
        assert kubelet["version"].startswith(kubelet_standin.KUBELET_VERSIONS[node["era"]]), kubelet
        assert kubelet["rules_release"] == kubelet["release"] == kubelet["version"][1:5], kubelet
    names = by_distribution(fleet)
    k3s = facts[names["k3s"]]["kubelet"]
    assert k3s["sources"]["policy"].startswith("/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/10-cli-config.conf (from /etc/rancher/k3s/")
    k0s = facts[names["k0s"]]["kubelet"]
    assert k0s["sources"]["system_reserved"].startswith("flag --system-reserved (--kubelet-extra-args of /etc/systemd/system/k0sworker.service")
    microk8s = facts[names["microk8s"]]["kubelet"]
    assert microk8s["sources"]["reserved_memory"].startswith("flag --reserved-memory (/var/snap/microk8s/current/args/kubelet")


def test_remediate_repairs_and_restarts_the_distributions_service(fleet: Fleet, remediated: Dict[str, Any]) -> None:
    rows = remediated["run"].rows()
    for name, node in fleet.nodes.items():
        assert rows[name]["action"] == "repaired", rows[name]
        assert probe(HostFiles(node["root"])).assessment.verdict == "in_sync", name
        assert fleet.wait_ready(name) == "True", name
        status = fleet.service(name)
        assert status["active"] and status["restarts"] == 0, status
        assert status["supervisor_pid"] != remediated["before"][name]["supervisor_pid"], "%s: the service was not restarted" % name
        assert not fleet.unschedulable(name), name
        assert any(entry.endswith(".before-repair") for entry in fleet.backups(name)), name
        # The role stopped and started the distribution's unit, and no other.
        calls = systemctl_calls(fleet, name, remediated["started"])
        assert {unit for call in calls for unit in call["units"]} == {node["unit"]}, calls
        changing = [call["verb"] for call in calls if call["verb"] != "show"]
        assert changing == ["stop", "reset-failed", "start"], calls
        assert all(call["rc"] == 0 for call in calls), calls


def test_repaired_checkpoint_is_where_the_distributions_kubelet_reads_it(fleet: Fleet, remediated: Dict[str, Any]) -> None:
    for name, node in fleet.nodes.items():
        after = read_bytes(shaped_checkpoint(fleet, name))
        assert after != remediated["checkpoints"][name], name
        if node["kubelet_root_dir"] != "/var/lib/kubelet":
            assert not os.path.exists(os.path.join(node["root"], "var/lib/kubelet/memory_manager_state")), name
        with open(os.path.join(node["node_dir"], "kubelet.log"), encoding="utf-8") as handle:
            log = handle.read()
        # After its last refusal, the stand-in started with the repaired checkpoint from that root dir.
        assert "Started kubelet (memory manager policy Static" in log.rsplit(MEMORY_MANAGER_REFUSED, 1)[-1], name
