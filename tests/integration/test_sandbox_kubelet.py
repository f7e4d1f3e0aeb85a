# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet stand-in, its systemd stand-in (supervisor + nodectl), and the sandbox fleet."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from typing import Any, Dict, Iterator

import pytest
import yaml

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint import checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.sandbox import apiserver, supervisor
from ansible_collections.nodeops.numa_drift.tests.sandbox.testing import (
    PYTHON,
    ansible_module,
    ansible_tool,
    collections_tree,
    http,
    poll_until,
    processes_naming,
    ready_condition,
    run_script,
    script,
    start_apiserver,
    wait_for,
)
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    KIB,
    Boot,
    checkpoint_file,
    guaranteed_pods,
    two_node_boot,
    write_kubelet_node,
)

KASLR_KB = 45260
EXPECTED_DIFFERS = "start memory manager error: [memorymanager] the expected machine state is different from the real one"


def drifted_node(root: str, layout: str = "legacy") -> str:
    recorded = two_node_boot(32 * GIB // KIB, 32 * GIB // KIB)
    return write_kubelet_node(root, recorded, recorded.moved(node0=-KASLR_KB, node1=KASLR_KB), pods=guaranteed_pods(2, (0,), 2 * GIB), layout=layout)


def in_sync_node(root: str, layout: str = "legacy") -> str:
    recorded = two_node_boot(32 * GIB // KIB, 32 * GIB // KIB)
    return write_kubelet_node(root, recorded, recorded, pods=guaranteed_pods(2, (1,), 1 * GIB), layout=layout)


def read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def standin(*args: str) -> subprocess.CompletedProcess:
    return run_script("kubelet_standin.py", *args)


def remove_tree(path: str) -> None:
    """``rm -rf`` while processes may still write into the tree; they stop once their marker files are gone."""
    wait_for(lambda: shutil.rmtree(path, ignore_errors=True) or not os.path.exists(path), 15, 0.2, "%s to be removed" % path)


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def collections(tmp_path_factory: pytest.TempPathFactory) -> str:
    return collections_tree(str(tmp_path_factory.mktemp("collections")))


# --------------------------------------------------------------------------- start-up like kubelet


def test_drifted_checkpoint_fails_like_kubelet_and_is_left_alone(tmp_path: Any) -> None:
    root = drifted_node(str(tmp_path / "node"))
    before = read(checkpoint_file(root))
    completed = standin("run", "--root", root)
    assert completed.returncode == 1
    assert last_line(completed.stderr) == EXPECTED_DIFFERS
    assert read(checkpoint_file(root)) == before
    assert standin("check", "--root", root).returncode == 1


def test_corrupt_checkpoint_is_refused_with_kubelets_restore_error(tmp_path: Any) -> None:
    root = in_sync_node(str(tmp_path / "node"))
    path = checkpoint_file(root)
    corrupted = re.sub(rb'"checksum":\d+', b'"checksum":12345', read(path))
    with open(path, "wb") as handle:
        handle.write(corrupted)
    completed = standin("run", "--root", root)
    assert completed.returncode == 1
    assert last_line(completed.stderr) == (
        'could not restore state from checkpoint: checkpoint is corrupted, please drain this node and delete the memory manager '
        'checkpoint file "%s" before restarting Kubelet' % path
    )
    assert read(path) == corrupted


def test_policy_mismatch_is_a_restore_error(tmp_path: Any) -> None:
    recorded = two_node_boot()
    fields = checkpoint.CheckpointFields(policy_name="None", machine_state={}, entries={})
    root = write_kubelet_node(str(tmp_path / "node"), recorded, checkpoint_bytes=checkpoint.marshal_legacy(fields))
    completed = standin("check", "--root", root)
    assert completed.returncode == 1
    assert last_line(completed.stderr).startswith(
        'could not restore state from checkpoint: [memorymanager] configured policy "Static" differs from state checkpoint policy "None", ')


@pytest.mark.parametrize("era, layout", [("legacy", "legacy"), ("1.37", "v3")])
def test_missing_checkpoint_is_written_with_the_default_state(tmp_path: Any, era: str, layout: str) -> None:
    recorded = two_node_boot(hugepages_1g=2)
    root = write_kubelet_node(str(tmp_path / "node"), recorded, checkpoint_bytes=b"")
    path = checkpoint_file(root)
    assert not os.path.exists(path)
    process = subprocess.Popen([PYTHON, script("kubelet_standin.py"), "run", "--root", root, "--era", era],  # pylint: disable=consider-using-with
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: os.path.exists(path), 10, what="the fresh checkpoint")
        time.sleep(0.3)
        assert process.poll() is None, "the stand-in should keep running"
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0
        process.stderr.close()
    report = checkpoint.inspect_checkpoint(read(path))
    assert report.layout == layout and report.accepted_by == checkpoint.ERAS
    assert report.content.entries == {} and sorted(report.content.machine_state) == [0, 1]
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert probe(HostFiles(root)).assessment.verdict == "in_sync"
    assert standin("check", "--root", root, "--era", era).returncode == 0


def test_era_137_reads_v3_and_refuses_a_broken_data_section(tmp_path: Any) -> None:
    root = in_sync_node(str(tmp_path / "node"), layout="v3")
    assert standin("check", "--root", root, "--era", "1.37").returncode == 0
    assert standin("check", "--root", root, "--era", "legacy").returncode == 0
    path = checkpoint_file(root)
    broken = re.sub(rb'"dataChecksum":\d+', b'"dataChecksum":7', read(path))
    with open(path, "wb") as handle:
        handle.write(broken)
    assert standin("check", "--root", root, "--era", "legacy").returncode == 0  # legacy kubelets read the inline part only
    refused = standin("check", "--root", root, "--era", "1.37")
    assert refused.returncode == 1
    assert last_line(refused.stderr).startswith("could not restore state from checkpoint: could not load v3 checkpoint: checkpoint is corrupted, ")


def test_repaired_checkpoint_starts_posts_ready_and_heartbeats(tmp_path: Any, collections: str) -> None:
    root = drifted_node(str(tmp_path / "node"), layout="v3")
    api = start_apiserver(str(tmp_path / "api"), {"resourceVersion": 1, "nodes": {}, "pods": {}})
    try:
        refused = standin("run", "--root", root, "--era", "1.37", "--api", api.url, "--node-name", "sbx-x", "--node-ip", "127.0.10.9")
        assert refused.returncode == 1
        node = http(api.url + "/api/v1/nodes/sbx-x")[1]
        assert (ready_condition(node)["status"], ready_condition(node)["message"]) == ("False", EXPECTED_DIFFERS)
        assert node["status"]["addresses"][0] == {"type": "InternalIP", "address": "127.0.10.9"}

        result = ansible_module("localhost", "localhost,", "nodeops.numa_drift.kubelet_mm_checkpoint", "root=%s" % root, collections)["localhost"]
        assert result["changed"] and result["verdict"] == "drift_within_bound" and result["written_layout"] == "v3", result
        repaired = read(checkpoint_file(root))

        process = subprocess.Popen(  # pylint: disable=consider-using-with
            [PYTHON, script("kubelet_standin.py"), "--root", root, "--era", "1.37", "--api", api.url, "--node-name", "sbx-x", "--heartbeat", "0.5"],
            stderr=subprocess.PIPE, text=True)
        try:
            node = poll_until(lambda: http(api.url + "/api/v1/nodes/sbx-x")[1], lambda n: ready_condition(n).get("status") == "True", 15, "Ready=True")
            first_beat = ready_condition(node)["lastHeartbeatTime"]
            wait_for(lambda: ready_condition(http(api.url + "/api/v1/nodes/sbx-x")[1])["lastHeartbeatTime"] != first_beat, 5, what="a heartbeat")
            node = http(api.url + "/api/v1/nodes/sbx-x")[1]
            assert ready_condition(node)["reason"] == "KubeletReady"
            assert ready_condition(node)["lastTransitionTime"] <= first_beat
            assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.37.2"  # the release the stand-in plays (KUBELET_VERSIONS)
            assert not any(t["key"].startswith("node.kubernetes.io/not-ready") for t in node["spec"].get("taints", []))
            assert standin("admit", "--root", root, "--era", "1.37", "--pod", "p", "--container", "c", "--memory", "1Gi").returncode == 2
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(10) == 0
            process.stderr.close()
        assert read(checkpoint_file(root)) == repaired
    finally:
        assert api.stop() == 0


def test_fault_injection_crash_and_not_ready(tmp_path: Any) -> None:
    root = in_sync_node(str(tmp_path / "node"))
    fault = tmp_path / "faults.json"
    fault.write_text(json.dumps({"mode": "crash", "message": "injected: cgroup driver mismatch"}))
    completed = standin("run", "--root", root, "--fault-file", str(fault))
    assert (completed.returncode, last_line(completed.stderr)) == (1, "injected: cgroup driver mismatch")


# --------------------------------------------------------------------------- admission


def admit(root: str, pod: str, memory: str, *hugepages: str) -> Dict[str, Any]:
    args = ["admit", "--root", root, "--pod", pod, "--container", "app", "--memory", memory]
    for item in hugepages:
        args += ["--hugepages", item]
    completed = standin(*args)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_admit_places_pods_like_the_static_policy_and_the_result_revalidates(tmp_path: Any) -> None:
    four = Boot({n: 16 * GIB // KIB for n in range(4)}, {n: {2048: 0, 1048576: 2} for n in range(4)})
    root = write_kubelet_node(str(tmp_path / "node"), four, checkpoint_bytes=b"")
    assert standin("check", "--root", root).returncode == 0

    assert admit(root, "pod-small", "2Gi")["numa_affinity"] == [0]  # single node first, lowest id first
    assert admit(root, "pod-wide", "20Gi", "hugepages-1Gi=3Gi")["numa_affinity"] == [1, 2]  # node 0 serves single-NUMA pods now
    assert admit(root, "pod-next", "12Gi")["numa_affinity"] == [3]
    assert admit(root, "pod-fill", "9Gi")["numa_affinity"] == [0]
    refused = standin("admit", "--root", root, "--pod", "pod-huge", "--container", "app", "--memory", "30Gi")
    assert refused.returncode == 1 and "no NUMA nodes with enough memory" in refused.stderr

    content = checkpoint.inspect_checkpoint(read(checkpoint_file(root))).content
    wide = content.entries["pod-wide"]["app"]
    assert [(b.numa_affinity, b.type, b.size) for b in wide] == [([1, 2], "hugepages-1Gi", 3 * GIB), ([1, 2], "memory", 20 * GIB)]
    assert content.machine_state[1].cells == [1, 2] and content.machine_state[1].number_of_assignments == 2
    assert content.machine_state[0].number_of_assignments == 2
    assert standin("check", "--root", root).returncode == 0
    assert standin("check", "--root", root, "--state-comparison", "per-node").returncode == 0
    assert probe(HostFiles(root)).assessment.verdict == "in_sync"


# --------------------------------------------------------------------------- supervisor and nodectl


def node_dir_with_service(base: Any, root_builder: Any) -> str:
    node_dir = str(base)
    root = root_builder(os.path.join(node_dir, "root"))
    command = [PYTHON, script("kubelet_standin.py"), "--root", root, "--exit-if-missing", os.path.join(node_dir, supervisor.SERVICE_FILE)]
    with open(os.path.join(node_dir, supervisor.SERVICE_FILE), "w", encoding="utf-8") as handle:
        json.dump({"command": command, "restart_sec": 1.0, "stop_timeout": 5, "max_lifetime": 600}, handle)
    return node_dir


def nodectl(node_dir: str, *args: str) -> subprocess.CompletedProcess:
    return run_script("nodectl.py", "--node-dir", node_dir, *args)


def status_of(node_dir: str) -> Dict[str, Any]:
    completed = nodectl(node_dir, "status")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


@pytest.fixture
def healthy(tmp_path: Any) -> Iterator[str]:
    node_dir = node_dir_with_service(tmp_path / "healthy", in_sync_node)
    yield node_dir
    nodectl(node_dir, "stop")


@pytest.fixture
def crashing(tmp_path: Any) -> Iterator[str]:
    node_dir = node_dir_with_service(tmp_path / "crashing", drifted_node)
    yield node_dir
    nodectl(node_dir, "stop")


def test_nodectl_start_stop_is_active_and_status(healthy: str) -> None:
    assert (nodectl(healthy, "is-active").stdout.strip(), nodectl(healthy, "is-active").returncode) == ("inactive", 3)
    assert nodectl(healthy, "start").returncode == 0
    first = poll_until(lambda: status_of(healthy), lambda s: s["active"], 10, "active")
    assert set(first) >= {"active", "pid", "restarts", "active_since", "last_exit"}
    assert first["restarts"] == 0 and supervisor.process_alive(first["pid"])
    line = nodectl(healthy, "service-status")
    assert (line.returncode, line.stdout.strip()) == (0, "active restarts=0 pid=%d" % first["pid"])
    assert nodectl(healthy, "is-active").stdout.strip() == "active"
    time.sleep(2.5)
    assert status_of(healthy)["pid"] == first["pid"]  # stays up: no restart

    started = time.time()
    assert nodectl(healthy, "stop").returncode == 0
    stop_seconds = time.time() - started
    assert not supervisor.process_alive(first["pid"]) and not supervisor.process_alive(first["supervisor_pid"])
    stopped = status_of(healthy)
    assert (stopped["active"], stopped["pid"], stopped["state"]) == (False, None, "inactive")
    assert stopped["last_exit"]["code"] == 0  # SIGTERM: the stand-in exits 0
    time.sleep(1.5)
    assert nodectl(healthy, "is-active").returncode == 3  # nothing restarted it
    assert stop_seconds < 12  # SIGTERM is honoured at once; the margin is for loaded CI machines

    assert nodectl(healthy, "restart").returncode == 0
    again = poll_until(lambda: status_of(healthy), lambda s: s["active"], 10, "active again")
    assert again["pid"] != first["pid"] and again["restarts"] == 0


def test_supervisor_restarts_a_crashing_kubelet_every_second(crashing: str) -> None:
    assert nodectl(crashing, "start").returncode == 0
    status = poll_until(lambda: status_of(crashing), lambda s: s["restarts"] >= 2, 15, "two restarts")
    assert status["last_exit"]["code"] == 1
    assert re.match(r"^(active|activating) restarts=\d+( pid=\d+)?$", nodectl(crashing, "service-status").stdout.strip())
    with open(os.path.join(crashing, "kubelet.log"), encoding="utf-8") as handle:
        assert handle.read().count(EXPECTED_DIFFERS) >= 2
    gaps = set()
    while len(gaps) < 2:  # the supervisor's own delay between an exit and the next start: RestartSec=1s
        restarted = poll_until(lambda: status_of(crashing), lambda s: s["active"] and s["last_exit"] and s["active_since"] > s["last_exit"]["at"],
                               20, "a restart")
        gaps.add(restarted["active_since"] - restarted["last_exit"]["at"])
    assert all(0.95 <= gap < 3.0 for gap in gaps), gaps
    assert nodectl(crashing, "stop").returncode == 0
    assert not processes_naming(crashing)


def test_restart_delay_follows_systemds_restart_steps() -> None:
    plain = supervisor.ServiceConfig(["kubelet"])
    stepped = supervisor.ServiceConfig(["kubelet"], restart_sec=1.0, restart_max_sec=8.0, restart_steps=3)
    assert [supervisor.restart_delay(plain, n) for n in range(4)] == [1.0, 1.0, 1.0, 1.0]
    assert [round(supervisor.restart_delay(stepped, n), 6) for n in range(5)] == [1.0, 2.0, 4.0, 8.0, 8.0]


def test_killed_supervisor_takes_the_kubelet_with_it_and_directory_removal_stops_all(healthy: str) -> None:
    assert nodectl(healthy, "start").returncode == 0
    status = poll_until(lambda: status_of(healthy), lambda s: s["active"], 10, "active")
    os.kill(status["supervisor_pid"], signal.SIGKILL)
    wait_for(lambda: not supervisor.process_alive(status["pid"]), 5, what="the stand-in to die with its supervisor")
    assert nodectl(healthy, "is-active").returncode == 3

    assert nodectl(healthy, "start").returncode == 0
    wait_for(lambda: status_of(healthy)["active"], 10, what="active")
    remove_tree(healthy)
    wait_for(lambda: not processes_naming(healthy), 10, what="every process of the removed node directory to exit")


# --------------------------------------------------------------------------- the fleet


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Any]]:
    directory = str(tmp_path_factory.mktemp("fleet") / "mixed")
    started = time.time()
    completed = run_script("fleet.py", "up", "--dir", directory, timeout=120)
    up_seconds = time.time() - started
    try:
        assert completed.returncode == 0, completed.stdout + completed.stderr
        with open(os.path.join(directory, "fleet.json"), encoding="utf-8") as handle:
            document = json.load(handle)
        yield {"dir": directory, "up": completed, "up_seconds": up_seconds, "fleet": document}
    finally:
        down = run_script("fleet.py", "down", "--dir", directory, timeout=120)
        assert down.returncode == 0, down.stdout + down.stderr
        assert not processes_naming(directory)


EXPECTED = {
    "sbx-node-01": "drift_within_bound", "sbx-node-02": "drift_within_bound", "sbx-node-03": "drift_within_bound", "sbx-node-04": "in_sync",
    "sbx-node-05": "no_checkpoint", "sbx-node-06": "drift_exceeds_bound", "sbx-node-07": "hugepages_changed", "sbx-node-08": "drift_within_bound",
}


def test_fleet_up_is_fast_and_prints_one_line_per_node(fleet: Dict[str, Any]) -> None:
    lines = fleet["up"].stdout.strip().splitlines()
    assert lines[0].startswith("sandbox fleet 'mixed' up in ")
    assert float(lines[0].split(" up in ")[1].split(" s ")[0]) < 15  # the fleet's own clock: interpreter start-up not included
    assert [line.split()[:3] for line in lines[1:]] == [[name, "expected", verdict] for name, verdict in EXPECTED.items()]
    assert {n["name"]: n["expected_verdict"] for n in fleet["fleet"]["nodes"]} == EXPECTED
    assert fleet["fleet"]["api"]["url"].startswith("http://127.0.0.1:")


def test_fleet_inventory_lists_every_node_with_the_role_variables(fleet: Dict[str, Any], collections: str) -> None:
    inventory = os.path.join(fleet["dir"], "inventory.yml")
    completed = ansible_tool("ansible-inventory", ["-i", inventory, "--list"], collections)
    assert completed.returncode == 0, completed.stderr
    listing = json.loads(completed.stdout)
    assert sorted(listing["sandbox"]["hosts"]) == sorted(EXPECTED)
    for name, hostvars in listing["_meta"]["hostvars"].items():
        assert hostvars["ansible_connection"] == "local"
        assert hostvars["remediate_node_name"] == name
        assert hostvars["remediate_root"] == os.path.join(fleet["dir"], "nodes", name, "root")
        assert hostvars["remediate_service_mode"] == "command"
        assert set(hostvars["remediate_service_commands"]) == {"stop", "start", "status"}
        assert hostvars["remediate_kubeconfig"] == os.path.join(fleet["dir"], "kubeconfig")
        assert os.path.exists(hostvars["ansible_python_interpreter"])
    with open(os.path.join(fleet["dir"], "kubeconfig"), encoding="utf-8") as handle:
        assert yaml.safe_load(handle)["clusters"][0]["cluster"]["server"] == fleet["fleet"]["api"]["url"]


def test_numa_drift_facts_gives_every_sandbox_node_its_expected_verdict(fleet: Dict[str, Any], collections: str) -> None:
    results = ansible_module("sandbox", os.path.join(fleet["dir"], "inventory.yml"), "nodeops.numa_drift.numa_drift_facts",
                             "root={{ remediate_root }}", collections)
    assert {name: result["numa_drift"]["verdict"] for name, result in results.items()} == EXPECTED
    assert results["sbx-node-02"]["numa_drift"]["checkpoint"]["layout"] == "v3"
    assert results["sbx-node-02"]["numa_drift"]["kernel_image"]["numa_nodes"] == [1]
    assert results["sbx-node-03"]["numa_drift"]["kernel_image"]["numa_nodes"] == [2]


def api_nodes(fleet: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    code, body = http(fleet["fleet"]["api"]["url"] + "/api/v1/nodes")
    assert code == 200
    return {item["metadata"]["name"]: item for item in body["items"]}


def test_fleet_api_shows_crash_loops_and_the_status_command_reports_them(fleet: Dict[str, Any]) -> None:
    nodes = api_nodes(fleet)
    ready = {name: (ready_condition(node)["status"], ready_condition(node)["message"]) for name, node in nodes.items()}
    for name in ("sbx-node-01", "sbx-node-02", "sbx-node-03", "sbx-node-06", "sbx-node-07", "sbx-node-08"):
        assert ready[name] == ("False", EXPECTED_DIFFERS), name
    assert ready["sbx-node-04"] == ("True", "kubelet is posting ready status")
    assert ready["sbx-node-05"] == ("Unknown", apiserver.NEVER_POSTED)
    assert [name for name, node in nodes.items() if node["spec"].get("unschedulable")] == ["sbx-node-08"]
    pods = http(fleet["fleet"]["api"]["url"] + "/api/v1/pods?fieldSelector=spec.nodeName%3Dsbx-node-03")[1]["items"]
    assert len(pods) == 3  # two workload pods and kube-proxy

    completed = run_script("fleet.py", "status", "--dir", fleet["dir"], "--json")
    rows = {row["name"]: row for row in json.loads(completed.stdout)["nodes"]}
    assert rows["sbx-node-04"]["service"] == "active" and rows["sbx-node-04"]["restarts"] == 0
    assert rows["sbx-node-05"]["service"] == "inactive"
    wait_for(lambda: json.loads(run_script("fleet.py", "status", "--dir", fleet["dir"], "--json").stdout)["nodes"][0]["restarts"] >= 1, 10,
             what="sbx-node-01 to restart")
    table = run_script("fleet.py", "status", "--dir", fleet["dir"]).stdout.splitlines()
    assert table[0].startswith("API http://127.0.0.1:") and "running" in table[0]
    assert table[2].split()[:3] == ["sbx-node-01", "False", "no"] and table[9].split()[:3] == ["sbx-node-08", "False", "yes"]


def test_fleet_service_commands_drive_the_node(fleet: Dict[str, Any]) -> None:
    with open(os.path.join(fleet["dir"], "inventory.yml"), encoding="utf-8") as handle:
        hosts = yaml.safe_load(handle)["all"]["children"]["sandbox"]["hosts"]
    commands: Dict[str, str] = hosts["sbx-node-04"]["remediate_service_commands"]

    def run(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60, check=False)

    assert run(commands["status"]).returncode == 0
    assert run(commands["stop"]).returncode == 0
    stopped = run(commands["status"])
    assert (stopped.returncode, stopped.stdout.split()[0]) == (3, "inactive")
    assert run(commands["start"]).returncode == 0
    active = poll_until(lambda: run(commands["status"]), lambda c: c.returncode == 0, 10, "active")
    assert re.match(r"^active restarts=0 pid=\d+$", active.stdout.strip())


def test_fleet_down_leaves_no_process_and_removing_the_directory_stops_a_fleet(tmp_path: Any) -> None:
    directory = str(tmp_path / "single")
    assert run_script("fleet.py", "up", "--dir", directory, "--scenario", "single", timeout=120).returncode == 0
    assert len(processes_naming(directory)) >= 2  # API server, supervisor (and the crash-looping stand-in between restarts)
    remove_tree(directory)
    wait_for(lambda: not processes_naming(directory), 15, what="the fleet to stop by itself")

    directory = str(tmp_path / "again")
    assert run_script("fleet.py", "up", "--dir", directory, "--scenario", "single", timeout=120).returncode == 0
    down = run_script("fleet.py", "down", "--dir", directory, "--purge", timeout=120)
    assert down.returncode == 0 and "no process left" in down.stdout
    assert float(down.stdout.split(" down in ")[1].split(" s")[0]) < 15
    assert not processes_naming(directory) and not os.path.exists(directory)


def test_every_repairable_sandbox_shape_starts_after_the_modules_repair(tmp_path: Any, collections: str) -> None:
    """Engine and stand-in agree: legacy, V3 (kubelet 1.37) and 4-NUMA drift come back Ready once repaired."""
    directory = str(tmp_path / "drift")
    up = run_script("fleet.py", "up", "--dir", directory, "--scenario", "all-drift", "--nodes", "3", timeout=120)
    try:
        assert up.returncode == 0, up.stderr
        with open(os.path.join(directory, "fleet.json"), encoding="utf-8") as handle:
            document = json.load(handle)
        for node in document["nodes"]:
            assert run_script("nodectl.py", "--node-dir", node["node_dir"], "stop").returncode == 0
        results = ansible_module("sandbox", os.path.join(directory, "inventory.yml"), "nodeops.numa_drift.kubelet_mm_checkpoint",
                                 "root={{ remediate_root }}", collections)
        assert {name: (r["changed"], r["after"]["verdict"], r["written_layout"]) for name, r in results.items()} == {
            "sbx-node-01": (True, "in_sync", "legacy"), "sbx-node-02": (True, "in_sync", "v3"), "sbx-node-03": (True, "in_sync", "legacy")}
        for node in document["nodes"]:
            assert run_script("nodectl.py", "--node-dir", node["node_dir"], "start").returncode == 0
        url = document["api"]["url"]
        nodes = poll_until(lambda: http(url + "/api/v1/nodes")[1]["items"],
                           lambda items: all(ready_condition(item).get("status") == "True" for item in items), 20, "every node Ready")
        assert len(nodes) == 3
        assert all(status_of(node["node_dir"])["restarts"] == 0 for node in document["nodes"])
    finally:
        assert run_script("fleet.py", "down", "--dir", directory, timeout=120).returncode == 0


def test_running_fleet_is_not_replaced_silently(fleet: Dict[str, Any]) -> None:
    completed = run_script("fleet.py", "up", "--dir", fleet["dir"])
    assert completed.returncode == 1 and "already holds a fleet" in completed.stderr
    assert processes_naming(os.path.join(fleet["dir"], "api"))  # the API server still runs
