# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the real ansible-playbook (local connection) over eight fake nodes with mixed verdicts.

playbooks/fake_nodes.yml probes every node with numa_drift_facts, repairs with
kubelet_mm_checkpoint where the verdict allows it (checking every refusal in a rescue),
probes again and writes one JSON report per host. This test builds the node trees, runs the
playbook twice and checks the reports and the files: repaired nodes are in sync with every
assignment kept, every other node is byte-identical, the second run changes nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any, Callable, Dict, Tuple

import yaml

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import ERAS, inspect_checkpoint
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    Boot,
    checkpoint_file,
    guaranteed_pods,
    tree_snapshot,
    write_kubelet_node,
)
from ansible_collections.nodeops.numa_drift.tests.support.module_runner import NON_REPAIRABLE, kaslr_node

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
PLAYBOOK = os.path.join(HERE, "playbooks", "fake_nodes.yml")
INVENTORY = os.path.join(HERE, "inventory", "fake_nodes.yml")
RECAP = re.compile(
    r"^(?P<host>\S+)\s*:\s*ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)\s+"
    r"failed=(?P<failed>\d+)\s+skipped=(?P<skipped>\d+)\s+rescued=(?P<rescued>\d+)\s+ignored=(?P<ignored>\d+)",
    re.MULTILINE,
)


def four_numa_node(root: str) -> str:
    """Four 8 GiB nodes: the kernel image moved from node 2 to node 0, KiB lost on node 3, a cross-NUMA group."""
    recorded = Boot({node_id: 8 * GIB // 1024 for node_id in range(4)})
    current = recorded.moved(node0=-61440, node2=61440 - 8, node3=-4)
    pods = guaranteed_pods(2, affinity=(0,))
    pods["pod-wide-0000-0000-0000-000000000000"] = {"app": [([2, 3], "memory", 10 * GIB)]}
    return write_kubelet_node(root, recorded, current, pods=pods, layout="legacy")


def in_sync_node(root: str) -> str:
    recorded = Boot({0: 16 * GIB // 1024, 1: 16 * GIB // 1024})
    return write_kubelet_node(root, recorded, pods=guaranteed_pods(3), layout="v3")


def no_checkpoint_node(root: str) -> str:
    return write_kubelet_node(root, Boot({0: 16 * GIB // 1024, 1: 16 * GIB // 1024}), checkpoint_bytes=b"")


def from_case(name: str) -> Callable[[str], str]:
    """A node of the unit tests' NON_REPAIRABLE table, built at ``root``."""

    def build(root: str) -> str:
        os.makedirs(root)
        built = NON_REPAIRABLE[name][0](root)  # builds <root>/node
        for entry in os.listdir(built):
            os.rename(os.path.join(built, entry), os.path.join(root, entry))
        os.rmdir(built)
        return root

    return build


# host -> (builder(root), verdict of the first probe)
NODES: Dict[str, Tuple[Callable[[str], str], str]] = {
    "node-in-sync": (in_sync_node, "in_sync"),
    "node-drift-legacy": (lambda root: kaslr_node(os.path.dirname(root), name=os.path.basename(root)), "drift_within_bound"),
    "node-drift-v3": (lambda root: kaslr_node(os.path.dirname(root), layout="v3", name=os.path.basename(root)), "drift_within_bound"),
    "node-drift-4numa": (four_numa_node, "drift_within_bound"),
    "node-drift-exceeds": (from_case("drift_exceeds_bound"), "drift_exceeds_bound"),
    "node-hugepages-lost": (from_case("hugepages_changed"), "hugepages_changed"),
    "node-no-checkpoint": (no_checkpoint_node, "no_checkpoint"),
    "node-corrupt": (from_case("corrupt_truncated"), "corrupt"),
}


def ansible_playbook() -> str:
    """The ansible-playbook of the Python running the tests (the venv), else the one on PATH; never skip."""
    beside = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    found = beside if os.access(beside, os.X_OK) else shutil.which("ansible-playbook")
    assert found, "ansible-playbook is not installed beside %s nor on PATH: run bash scripts/setup.sh" % sys.executable
    return found


def ansible_environment(tmp_path: Any) -> Dict[str, str]:
    """Find this checkout as nodeops.numa_drift (a symlink outside the repository), the venv's collections too."""
    collections = tmp_path / "collections"
    link = collections / "ansible_collections" / "nodeops" / "numa_drift"
    link.parent.mkdir(parents=True)
    link.symlink_to(CHECKOUT, target_is_directory=True)
    config = tmp_path / "ansible.cfg"
    config.write_text("[defaults]\n")
    env = {name: value for name, value in os.environ.items() if not name.startswith("ANSIBLE_")}
    env.update(
        ANSIBLE_CONFIG=str(config),
        ANSIBLE_COLLECTIONS_PATH=str(collections),
        ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="true",
        ANSIBLE_HOME=str(tmp_path / "ansible-home"),
        ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-local-tmp"),
        ANSIBLE_REMOTE_TEMP=str(tmp_path / "ansible-remote-tmp"),
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default",
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        ANSIBLE_RETRY_FILES_ENABLED="false",
        ANSIBLE_FORKS="8",
    )
    return env


def run_playbook(tmp_path: Any, env: Dict[str, str], nodes_dir: str, results_dir: str) -> Tuple[str, Dict[str, Dict[str, int]]]:
    os.makedirs(results_dir)
    command = [
        ansible_playbook(), "-i", INVENTORY, PLAYBOOK,
        "-e", json.dumps({"fake_nodes_dir": nodes_dir, "results_dir": results_dir}),
    ]
    done = subprocess.run(command, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    recap = {match.group("host"): {k: int(v) for k, v in match.groupdict().items() if k != "host"} for match in RECAP.finditer(done.stdout)}
    assert set(recap) == set(NODES), output
    return output, recap


def reports(results_dir: str) -> Dict[str, Dict[str, Any]]:
    found = {}
    for host in NODES:
        with open(os.path.join(results_dir, host + ".json"), encoding="utf-8") as handle:
            found[host] = json.load(handle)
    return found


def test_inventory_lists_exactly_the_built_nodes():
    with open(INVENTORY, encoding="utf-8") as handle:
        inventory = yaml.safe_load(handle)
    assert set(inventory["fake_nodes"]["hosts"]) == set(NODES)
    assert 6 <= len(NODES) <= 8


def test_playbook_repairs_and_refuses_fake_nodes(tmp_path):
    nodes_dir = str(tmp_path / "nodes")
    roots = {host: build(os.path.join(nodes_dir, host)) for host, (build, _verdict) in NODES.items()}
    assert all(roots[host] == os.path.join(nodes_dir, host) for host in NODES)
    before = {host: tree_snapshot(root) for host, root in roots.items()}
    env = ansible_environment(tmp_path)

    output, recap = run_playbook(tmp_path, env, nodes_dir, str(tmp_path / "results-1"))
    results = reports(str(tmp_path / "results-1"))
    backups = os.path.join("var", "lib", "nodeops-numa-drift", "backups")
    for host, (_build, verdict) in NODES.items():
        result, root = results[host], roots[host]
        where = "%s: %s\n%s" % (host, json.dumps(result["repair"], indent=1)[:3000], output[-3000:])
        assert result["before"]["changed"] is False, where
        assert result["before"]["numa_drift"]["verdict"] == verdict, where
        assert recap[host]["failed"] == recap[host]["unreachable"] == 0, where
        repaired = verdict == "drift_within_bound"
        refused = verdict not in ("in_sync", "no_checkpoint") and not repaired
        assert recap[host]["changed"] == (1 if repaired else 0), where
        assert recap[host]["rescued"] == (1 if refused else 0), where
        assert result["repair"]["verdict"] == verdict, where
        assert result["repair"].get("failed", False) is refused, where
        if repaired:
            path = checkpoint_file(root)
            original = before[host][os.path.relpath(path, root)]
            old, new = inspect_checkpoint(original), inspect_checkpoint(open(path, "rb").read())
            assert result["after"]["numa_drift"]["verdict"] == "in_sync", where
            assert result["repair"]["after"]["verdict"] == "in_sync", where
            assert new.content.entries == old.content.entries, where
            assert new.layout == old.layout == result["repair"]["written_layout"], where
            assert new.accepted_by == ERAS, where
            assert open(result["repair"]["backup_file"], "rb").read() == original, where
            assert os.path.dirname(result["repair"]["backup_file"]) == os.path.join(root, backups), where
            # The repair adds exactly its backup and the node's repair history (the loop guard reads it).
            added = {os.path.relpath(result["repair"]["backup_file"], root), "var/lib/nodeops-numa-drift/history.json"}
            assert set(tree_snapshot(root)) == set(before[host]) | added, where
        else:
            assert tree_snapshot(root) == before[host], where
            assert result["after"]["numa_drift"]["verdict"] == verdict, where
        if refused:
            assert "refusing to repair" in result["repair"]["msg"] and verdict in result["repair"]["msg"], where

    repaired_trees = {host: tree_snapshot(root) for host, root in roots.items()}
    output, recap = run_playbook(tmp_path, env, nodes_dir, str(tmp_path / "results-2"))
    assert {host: counts["changed"] for host, counts in recap.items()} == dict.fromkeys(NODES, 0), output
    assert all(counts["failed"] == 0 for counts in recap.values()), output
    assert {host: tree_snapshot(root) for host, root in roots.items()} == repaired_trees
    second = reports(str(tmp_path / "results-2"))
    for host, (_build, verdict) in NODES.items():
        expected = "in_sync" if verdict == "drift_within_bound" else verdict
        assert second[host]["before"]["numa_drift"]["verdict"] == expected, host
        assert second[host]["after"]["numa_drift"]["verdict"] == expected, host
