# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbooks and the remediate role against the sandbox fleet (tests/sandbox/fleet.py).

Each fleet is a handful of fake nodes (node trees in a temp dir, reached with the local
connection) and a kubelet stand-in per node under a systemd stand-in. Its API is the session's real
kube-apiserver (tests/integration/realapi.py: the kubelet stand-ins register their Nodes there, the
playbooks run under the shipped ServiceAccount); the fleets that need injected API failures (outages,
an eviction refused by a disruption budget or never confirmed) use the Kubernetes API stand-in on
127.0.0.1 instead. The tests run the real ``ansible-playbook`` of the checkout's venv with
``ANSIBLE_COLLECTIONS_PATH`` pointing at a temp dir that links this checkout as
``ansible_collections/nodeops/numa_drift`` (kubernetes.core comes from the venv's site-packages).

Tests that share a fleet run in file order (the rollback and loop-guard tests work on what the
remediation left); each fixture does the steps it depends on itself.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request
from typing import Any, Dict, Iterator, List, Optional, Sequence

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.support.scenario import checkpoint_file, tree_snapshot

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.join(CHECKOUT, ".venv", "bin")
ANSIBLE_PLAYBOOK = os.path.join(VENV_BIN, "ansible-playbook")
PYTHON = os.path.join(VENV_BIN, "python")
FLEET = os.path.join(CHECKOUT, "tests", "sandbox", "fleet.py")
NODECTL = os.path.join(CHECKOUT, "tests", "sandbox", "nodectl.py")
PREFIX = "numa-drift.nodeops.io"
CORDONED_BY = PREFIX + "/cordoned-by"
REASON = PREFIX + "/reason"
LAST_OUTCOME = PREFIX + "/last-outcome"
MARKER = "nodeops.numa_drift"
OTHERS_ANNOTATION = "ops-team.example.com/cordoned-by"
PLAYBOOK_TIMEOUT = 900
RECAP = re.compile(
    r"^(?P<host>\S+)\s+:\s+ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)\s+"
    r"failed=(?P<failed>\d+)\s+skipped=(?P<skipped>\d+)\s+rescued=(?P<rescued>\d+)\s+ignored=(?P<ignored>\d+)",
    re.MULTILINE,
)

pytestmark = [
    pytest.mark.skipif(
        not (os.path.exists(FLEET) and os.path.exists(ANSIBLE_PLAYBOOK) and sys.platform.startswith("linux")),
        reason="needs tests/sandbox/fleet.py, the checkout's .venv (bash scripts/setup.sh) and Linux",
    ),
]


# --------------------------------------------------------------------------- helpers


class Run:
    """One ansible-playbook run: exit code, output, PLAY RECAP and the fleet report it wrote."""

    def __init__(self, completed: subprocess.CompletedProcess, report_dir: str, seconds: float) -> None:
        self.rc = completed.returncode
        self.output = completed.stdout
        self.report_dir = report_dir
        self.seconds = seconds
        self.counts: Dict[str, Dict[str, Any]] = {}
        self.recap = {m["host"]: {k: int(v) for k, v in m.groupdict().items() if k != "host"} for m in RECAP.finditer(self.output)}

    def report(self) -> Dict[str, Any]:
        with open(os.path.join(self.report_dir, "report.json"), encoding="utf-8") as handle:
            return json.load(handle)

    def rows(self) -> Dict[str, Dict[str, Any]]:
        return {row["node"]: row for row in self.report()["nodes"]}

    def html(self) -> str:
        with open(os.path.join(self.report_dir, "report.html"), encoding="utf-8") as handle:
            return handle.read()

    def tail(self, lines: int = 80) -> str:
        return "\n".join(self.output.splitlines()[-lines:])


class Fleet:
    """A sandbox fleet brought up with tests/sandbox/fleet.py, and ways to look at it."""

    def __init__(self, directory: str, collections: str, scenario: str, nodes: int = 0, up_args: Sequence[str] = ()) -> None:
        self.dir = directory
        self.collections = collections
        self.scenario = scenario
        self.runs = 0
        # Arguments every ansible-playbook run of this fleet gets first (a fixture's own setting).
        self.default_args: List[str] = []
        subprocess.run(
            [PYTHON, FLEET, "up", "--dir", directory, "--scenario", scenario, "--settle-seconds", "3"] + (["--nodes", str(nodes)] if nodes else [])
            + list(up_args),
            check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=180,
        )
        with open(os.path.join(directory, "fleet.json"), encoding="utf-8") as handle:
            self.info = json.load(handle)
        self.inventory = os.path.join(directory, "inventory.yml")
        self.api_url = self.info["api"]["url"]
        self.nodes = {node["name"]: node for node in self.info["nodes"]}
        self.originals = {name: self.checkpoint_bytes(name) for name in self.nodes}

    def down(self) -> None:
        subprocess.run([PYTHON, FLEET, "down", "--dir", self.dir], check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)

    # the nodes

    def root(self, name: str) -> str:
        return self.nodes[name]["root"]

    def checkpoint_bytes(self, name: str) -> Optional[bytes]:
        path = checkpoint_file(self.root(name))
        if not os.path.exists(path):
            return None
        with open(path, "rb") as handle:
            return handle.read()

    def drift_again(self, name: str) -> None:
        """Put the node's original (drifted) checkpoint back, its kubelet restarted on it, for the tests after a repair."""
        if self.checkpoint_bytes(name) == self.originals[name]:
            return
        self.nodectl(name, "stop")
        with open(checkpoint_file(self.root(name)), "wb") as handle:
            handle.write(self.originals[name])
        self.nodectl(name, "start")

    def verdict(self, name: str) -> str:
        return probe(HostFiles(self.root(name))).assessment.verdict

    def history_file(self, name: str) -> str:
        return os.path.join(self.root(name), "var/lib/nodeops-numa-drift/history.json")

    def backups(self, name: str) -> List[str]:
        directory = os.path.join(self.root(name), "var/lib/nodeops-numa-drift/backups")
        return sorted(os.listdir(directory)) if os.path.isdir(directory) else []

    def nodectl(self, name: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [PYTHON, NODECTL, "--node-dir", self.nodes[name]["node_dir"], *args],
            check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60,
        )

    def service(self, name: str) -> Dict[str, Any]:
        return json.loads(self.nodectl(name, "status").stdout)

    def start_command(self, name: str) -> str:
        return self.info_inventory_commands(name)["start"]

    def info_inventory_commands(self, name: str) -> Dict[str, str]:
        node_dir = self.nodes[name]["node_dir"]
        base = "%s %s --node-dir %s " % (self.info["python"], NODECTL, node_dir)
        return {"stop": base + "stop", "start": base + "start", "status": base + "service-status"}

    # the API

    def api(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.api_url + path, data=data, method=method, headers={
            "Authorization": "Bearer " + self.info["token"], "Content-Type": "application/json", "Accept": "application/json",
        })
        # A real API server (tests/integration/controlplane.py): https, its CA in fleet.json.
        context = ssl.create_default_context(cafile=self.info["api"]["ca"]) if self.info["api"].get("ca") else None
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return json.loads(response.read().decode("utf-8"))

    def api_node(self, name: str) -> Dict[str, Any]:
        return self.api("GET", "/api/v1/nodes/" + name)

    def annotations(self, name: str) -> Dict[str, str]:
        return self.api_node(name)["metadata"].get("annotations") or {}

    def unschedulable(self, name: str) -> bool:
        return bool(self.api_node(name)["spec"].get("unschedulable"))

    def ready(self, name: str) -> str:
        conditions = self.api_node(name).get("status", {}).get("conditions") or []
        return next((c["status"] for c in conditions if c["type"] == "Ready"), "absent")

    def wait_ready(self, name: str, timeout: float = 30.0) -> str:
        end = time.time() + timeout
        while time.time() < end and self.ready(name) != "True":
            time.sleep(0.5)
        return self.ready(name)

    def events(self, name: str) -> List[Dict[str, Any]]:
        """core/v1 Events whose involvedObject is the Node ``name`` (as kubectl describe node finds them)."""
        listing = self.api("GET", "/api/v1/events?fieldSelector=involvedObject.name%3D" + name)
        return [event for event in listing["items"] if event["involvedObject"]["kind"] == "Node"]

    def audit(self) -> List[Dict[str, Any]]:
        return self.api("GET", "/_sandbox/audit")["audit"]

    def outage(self, seconds: float, mode: str = "unavailable") -> None:
        self.api("POST", "/_sandbox/outage", {"seconds": seconds, "mode": mode})

    def end_outage(self) -> None:
        self.api("DELETE", "/_sandbox/outage")

    # ansible-playbook

    def playbook(self, name: str, *args: str, extra: Optional[Dict[str, Any]] = None) -> Run:
        return self.finish(self.start_playbook(name, *args, extra=extra))

    def start_playbook(self, name: str, *args: str, extra: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Start ansible-playbook in the background (see finish)."""
        self.runs += 1
        report_dir = os.path.join(self.dir, "reports", "%02d-%s" % (self.runs, name))
        command = [ANSIBLE_PLAYBOOK, "-i", self.inventory, "nodeops.numa_drift." + name, "-f", "10"]
        if extra:
            extra_file = os.path.join(self.dir, "extra-%02d.json" % self.runs)
            with open(extra_file, "w", encoding="utf-8") as handle:
                json.dump(extra, handle)
            command += ["-e", "@" + extra_file]
        command += self.default_args + list(args)
        env = dict(
            os.environ,
            ANSIBLE_COLLECTIONS_PATH=self.collections,
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_RETRY_FILES_ENABLED="0",
            ANSIBLE_LOCAL_TEMP=os.path.join(self.dir, "ansible-tmp"),
            ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default",
            NUMA_DRIFT_REPORT_DIR=report_dir,
        )
        env.pop("ANSIBLE_CONFIG", None)
        counts = os.path.join(self.dir, "task-counts-%02d.json" % self.runs)
        env.update(ANSIBLE_CALLBACK_PLUGINS=os.path.join(CHECKOUT, "tests", "integration", "callback_plugins"),
                   ANSIBLE_CALLBACKS_ENABLED="task_counts", NUMA_DRIFT_TASK_COUNTS=counts)
        process = subprocess.Popen(  # pylint: disable=consider-using-with
            command, cwd=self.dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return {"process": process, "command": command, "report_dir": report_dir, "started": time.time(), "counts": counts}

    @staticmethod
    def finish(started: Dict[str, Any]) -> Run:
        process = started["process"]
        try:
            output = process.communicate(timeout=PLAYBOOK_TIMEOUT)[0]
        except subprocess.TimeoutExpired:
            process.kill()
            output = process.communicate()[0]
        run = Run(subprocess.CompletedProcess(started["command"], process.returncode, output), started["report_dir"], time.time() - started["started"])
        run.counts = {}
        if os.path.exists(started["counts"]):
            with open(started["counts"], encoding="utf-8") as handle:
                run.counts = json.load(handle)
        return run


def assert_not_half_done(fleet: Fleet, name: str) -> None:
    """What an interrupted run may leave: the original file or a repaired one, kubelet supervised, our mark on our cordon."""
    current = fleet.checkpoint_bytes(name)
    assert current == fleet.originals[name] or fleet.verdict(name) == "in_sync", "%s: checkpoint neither original nor repaired" % name
    if fleet.nodes[name]["kubelet_started"]:
        assert fleet.service(name)["state"] != "inactive", "%s: kubelet left stopped" % name
    if fleet.unschedulable(name) and not fleet.nodes[name]["cordoned_beforehand"]:
        assert fleet.annotations(name).get(CORDONED_BY) == MARKER, "%s: cordoned without our mark" % name


@pytest.fixture(scope="module")
def collections_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    base = str(tmp_path_factory.mktemp("collections"))
    link = os.path.join(base, "ansible_collections", "nodeops", "numa_drift")
    os.makedirs(os.path.dirname(link))
    os.symlink(CHECKOUT, link)
    return base


def make_fleet(tmp_path_factory: pytest.TempPathFactory, collections: str, scenario: str) -> Iterator[Fleet]:
    directory = str(tmp_path_factory.mktemp("fleet-" + scenario))
    fleet = Fleet(directory, collections, scenario)
    try:
        yield fleet
    finally:
        fleet.down()
        shutil.rmtree(directory, ignore_errors=True)


def make_real_fleet(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, collections: str, scenario: str,
                    prefix: Optional[str] = None) -> Iterator[Fleet]:
    """A fleet on the session's real kube-apiserver; the playbooks under the shipped ServiceAccount (tests/integration/realapi.py)."""
    from ansible_collections.nodeops.numa_drift.tests.integration import realapi  # pylint: disable=import-outside-toplevel

    plane, kubeconfig = request.getfixturevalue("control_plane"), request.getfixturevalue("service_account")
    yield from realapi.real_fleet(tmp_path_factory, collections, plane, kubeconfig, scenario, prefix=prefix)


# --------------------------------------------------------------------------- the mixed fleet


@pytest.fixture(scope="module")
def mixed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, collections_path: str) -> Iterator[Fleet]:
    yield from make_real_fleet(request, tmp_path_factory, collections_path, "mixed")


def expected(fleet: Fleet, verdict: str) -> List[str]:
    return sorted(name for name, node in fleet.nodes.items() if node["expected_verdict"] == verdict)


def test_probe_writes_each_nodes_metrics_on_demand(mixed: Fleet) -> None:
    textfile_dir = "/var/lib/numa-drift-test/textfile"
    run = mixed.playbook("probe", "-e", "numa_drift_write_metrics=true", "-e", "numa_drift_textfile_dir=" + textfile_dir)
    assert run.rc == 0, run.tail()
    try:
        for name, node in mixed.nodes.items():
            path = os.path.join(mixed.root(name), textfile_dir.lstrip("/"), "nodeops_numa_drift.prom")
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            lit = re.findall(r'^nodeops_numa_drift_verdict\{verdict="([a-z_]+)"\} 1$', text, flags=re.M)
            assert lit == [node["expected_verdict"]], (name, text)
            assert re.search(r"^nodeops_numa_drift_last_run_timestamp_seconds [0-9.e+]+$", text, flags=re.M), (name, text)
    finally:
        for name in mixed.nodes:
            shutil.rmtree(os.path.join(mixed.root(name), "var", "lib", "numa-drift-test"), ignore_errors=True)


@pytest.fixture(scope="module")
def remediated(mixed: Fleet) -> Dict[str, Any]:
    """The mixed fleet remediated once (canary, then the rest in one batch), with what was there before."""
    snapshots = {name: tree_snapshot(mixed.root(name)) for name in mixed.nodes}
    run = mixed.playbook("remediate", "-e", "numa_drift_batch=100%")
    assert run.rc == 0, run.tail()
    return {"run": run, "snapshots": snapshots, "checkpoints": {name: mixed.checkpoint_bytes(name) for name in mixed.nodes}}


def test_probe_reports_every_node_and_changes_nothing(mixed: Fleet) -> None:
    before = {name: (mixed.checkpoint_bytes(name), mixed.unschedulable(name), mixed.annotations(name)) for name in mixed.nodes}
    run = mixed.playbook("probe")
    assert run.rc == 0, run.tail()
    rows = run.rows()
    assert sorted(rows) == sorted(mixed.nodes)
    for name, node in mixed.nodes.items():
        assert rows[name]["verdict_before"] == node["expected_verdict"], name
        assert (mixed.checkpoint_bytes(name), mixed.unschedulable(name), mixed.annotations(name)) == before[name], name
    assert all(counts["changed"] == 0 for counts in run.recap.values()), run.recap
    html = run.html()
    assert all(name in html for name in mixed.nodes)
    assert "<script" not in html and "http://" not in html.split("<body>", 1)[1].replace(mixed.api_url, "")
    assert "Fleet report (probe): %s/report.html" % run.report_dir in run.output


def test_dry_run_changes_nothing(mixed: Fleet) -> None:
    before = {name: (mixed.checkpoint_bytes(name), mixed.unschedulable(name), mixed.annotations(name)) for name in mixed.nodes}
    run = mixed.playbook("remediate", "-e", "numa_drift_batch=100%", "-e", "remediate_dry_run=true")
    assert run.rc == 0, run.tail()
    rows = run.rows()
    for name in expected(mixed, "drift_within_bound"):
        assert rows[name]["action"] == "dry_run", rows[name]
        assert "would" in rows[name]["message"]
    for name in mixed.nodes:
        assert (mixed.checkpoint_bytes(name), mixed.unschedulable(name), mixed.annotations(name)) == before[name], name
        assert not os.path.exists(mixed.history_file(name))


def test_repairable_nodes_come_back_ready_and_uncordoned(mixed: Fleet, remediated: Dict[str, Any]) -> None:
    run: Run = remediated["run"]
    rows = run.rows()
    assert run.output.count("PLAY [Remediate memory manager NUMA drift") == 2, "a canary batch of one, then the rest"
    for name in expected(mixed, "drift_within_bound"):
        assert rows[name]["action"] == "repaired", rows[name]
        assert (rows[name]["verdict_before"], rows[name]["verdict_after"]) == ("drift_within_bound", "in_sync")
        assert mixed.verdict(name) == "in_sync"
        assert mixed.ready(name) == "True"
        assert mixed.service(name)["active"]
        assert CORDONED_BY not in mixed.annotations(name) and REASON not in mixed.annotations(name)
        assert mixed.annotations(name)[LAST_OUTCOME].startswith("repaired ")
        assert any(entry.endswith(".before-repair") for entry in mixed.backups(name))
        with open(mixed.history_file(name), encoding="utf-8") as handle:
            assert [entry["action"] for entry in json.load(handle)["repairs"]] == ["repaired"]
        if not mixed.nodes[name]["cordoned_beforehand"]:
            assert not mixed.unschedulable(name), name
            assert rows[name]["cordoned_by_us"] is True
        events = mixed.events(name)
        assert [event["reason"] for event in events] == ["NumaDriftRepaired"], events
        assert events[0]["source"]["component"] == "nodeops-numa-drift" and events[0]["type"] == "Normal"
        assert "bound" in events[0]["message"] and "node0" in events[0]["message"], events[0]["message"]
    # The lean role: tasks that ran per node (the role's own argument validation included).
    repaired = [run.counts[name]["executed"] for name in expected(mixed, "drift_within_bound")]
    nothing = [run.counts[name]["executed"] for name in expected(mixed, "in_sync") + expected(mixed, "no_checkpoint")]
    print("task counts: repaired %s, nothing to do %s" % (repaired, nothing))
    assert max(repaired) <= 25 and max(nothing) <= 6, run.counts
    for name in expected(mixed, "drift_exceeds_bound") + expected(mixed, "hugepages_changed"):
        assert [event["reason"] for event in mixed.events(name)] == ["NumaDriftRefused"]
        assert mixed.events(name)[0]["type"] == "Warning"
    for name in expected(mixed, "in_sync") + expected(mixed, "no_checkpoint"):
        assert mixed.events(name) == []


def test_node_cordoned_beforehand_stays_cordoned(mixed: Fleet, remediated: Dict[str, Any]) -> None:
    rows = remediated["run"].rows()
    cordoned = [name for name, node in mixed.nodes.items() if node["cordoned_beforehand"]]
    assert cordoned
    for name in cordoned:
        assert rows[name]["action"] == "repaired"
        assert rows[name]["cordoned_by_us"] is False
        assert mixed.unschedulable(name)
        assert mixed.annotations(name)[OTHERS_ANNOTATION] == "maintenance ticket OPS-1234"
        assert CORDONED_BY not in mixed.annotations(name)
        assert "stays cordoned" in rows[name]["message"]


def test_non_repairable_nodes_are_left_untouched(mixed: Fleet, remediated: Dict[str, Any]) -> None:
    rows = remediated["run"].rows()
    refused = expected(mixed, "drift_exceeds_bound") + expected(mixed, "hugepages_changed")
    assert len(refused) == 2
    for name in refused:
        assert rows[name]["action"] == "refused"
        assert rows[name]["verdict_before"] in rows[name]["message"]
        assert rows[name]["next_step"]
        assert tree_snapshot(mixed.root(name)) == remediated["snapshots"][name], name
        assert not mixed.unschedulable(name)
        assert not any(key.startswith(PREFIX) for key in mixed.annotations(name))
    for name in expected(mixed, "in_sync") + expected(mixed, "no_checkpoint"):
        assert rows[name]["action"] == "none"
        assert mixed.checkpoint_bytes(name) == mixed.originals[name]


def test_remediate_report_has_every_node_before_and_after(mixed: Fleet, remediated: Dict[str, Any]) -> None:
    run: Run = remediated["run"]
    report = run.report()
    assert report["kind"] == "remediate"
    assert report["counts"]["verdict_before"]["drift_within_bound"] == 4
    assert report["counts"]["verdict_after"]["in_sync"] == 5
    assert report["counts"]["action"] == {"none": 2, "refused": 2, "repaired": 4}
    html = run.html()
    for name in mixed.nodes:
        assert 'id="%s"' % name in html
    assert "&rarr;" in html and 'class="bound"' in html
    assert "Fleet report (remediate): %s/report.html" % run.report_dir in run.output


def test_second_run_changes_nothing(mixed: Fleet, remediated: Dict[str, Any]) -> None:
    run = mixed.playbook("remediate", "-e", "numa_drift_batch=100%")
    assert run.rc == 0, run.tail()
    # localhost runs the playbook's own bookkeeping plays (naming the run, the lock's outcome).
    assert sorted(host for host in run.recap if host != "localhost") == sorted(mixed.nodes)
    assert all(counts["changed"] == 0 for counts in run.recap.values()), run.recap
    for name in mixed.nodes:
        assert mixed.checkpoint_bytes(name) == remediated["checkpoints"][name], name
    assert {row["action"] for row in run.rows().values()} <= {"none", "refused"}


def test_rollback_needs_confirmation_then_restores_the_backup(mixed: Fleet, remediated: Dict[str, Any]) -> None:
    name = sorted(mixed.nodes)[0]
    repaired = mixed.checkpoint_bytes(name)
    refused = mixed.playbook("rollback", "-l", name)
    assert refused.rc != 0 and "numa_drift_rollback_confirm" in refused.output
    assert mixed.checkpoint_bytes(name) == repaired
    run = mixed.playbook("rollback", "-l", name, "-e", "numa_drift_rollback_confirm=true")
    assert run.rc == 0, run.tail()
    assert mixed.checkpoint_bytes(name) == mixed.originals[name]
    assert any(entry.endswith(".before-restore") for entry in mixed.backups(name))
    assert sorted(run.recap) == [name]


def test_loop_guard_refuses_a_node_repaired_too_often(mixed: Fleet, remediated: Dict[str, Any]) -> None:
    name = sorted(mixed.nodes)[0]
    mixed.drift_again(name)  # when the rollback test did not run
    assert mixed.verdict(name) == "drift_within_bound"
    run = mixed.playbook("remediate", "-l", name, "-e", "remediate_loop_max_repairs=1")
    assert run.rc == 0, run.tail()
    row = run.rows()[name]
    assert row["action"] == "loop_guard", row
    assert mixed.history_file(name) in row["message"] and "delete that file" in row["message"]
    assert mixed.checkpoint_bytes(name) == mixed.originals[name]
    assert not mixed.unschedulable(name)
    # Clearing the history lets the node be repaired again (a dry run is enough to see it).
    os.unlink(mixed.history_file(name))
    again = mixed.playbook("remediate", "-l", name, "-e", "remediate_loop_max_repairs=1", "-e", "remediate_dry_run=true")
    assert again.rc == 0, again.tail()
    assert again.rows()[name]["action"] == "dry_run"


def test_cordon_unrepairable_cordons_refused_nodes_and_touches_nothing_else(mixed: Fleet, remediated: Dict[str, Any]) -> None:
    refused = expected(mixed, "drift_exceeds_bound") + expected(mixed, "hugepages_changed")
    before = {name: tree_snapshot(mixed.root(name)) for name in refused}
    run = mixed.playbook("remediate", "-l", ",".join(refused), "-e", "numa_drift_batch=100%", "-e", "remediate_cordon_unrepairable=true")
    assert run.rc == 0, run.tail()
    for name in refused:
        row = run.rows()[name]
        assert row["action"] == "refused" and row["message"].endswith(", and cordoned"), row
        assert tree_snapshot(mixed.root(name)) == before[name], name
        assert mixed.unschedulable(name)
        annotations = mixed.annotations(name)
        assert annotations[CORDONED_BY] == MARKER
        assert annotations[REASON] == "not repairable: " + mixed.nodes[name]["expected_verdict"]
    # Without the option, a later run leaves our cordon as it is (the node is still not repairable).
    again = mixed.playbook("remediate", "-l", ",".join(refused), "-e", "numa_drift_batch=100%")
    assert again.rc == 0, again.tail()
    assert all(mixed.unschedulable(name) and mixed.annotations(name)[CORDONED_BY] == MARKER for name in refused)
    assert all(tree_snapshot(mixed.root(name)) == before[name] for name in refused)
    # The run ends saying which refused nodes stay NotReady (a warning), or fails on them when asked to.
    names = ", ".join("%s (refused: %s)" % (name, mixed.nodes[name]["expected_verdict"]) for name in refused)
    assert "WARNING: 2 node(s) were left as they were and stay NotReady (or their Ready state is unknown): %s." % names in again.output
    failing = mixed.playbook("remediate", "-l", ",".join(refused), "-e", "remediate_dry_run=true", "-e", "numa_drift_fail_on_refused=true")
    assert failing.rc != 0, failing.tail()
    assert "FAILED! => " in failing.output and "stay NotReady (or their Ready state is unknown): %s." % names in failing.output
    assert all(tree_snapshot(mixed.root(name)) == before[name] for name in refused)


# --------------------------------------------------------------------------- kubelet still failing after the repair


@pytest.fixture(scope="module")
def drifting(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, collections_path: str) -> Iterator[Fleet]:
    yield from make_real_fleet(request, tmp_path_factory, collections_path, "all-drift")


def test_kubelet_failing_after_repair_gets_the_original_back_and_stays_cordoned(drifting: Fleet) -> None:
    fleet = drifting
    names = sorted(fleet.nodes)[:3]
    canary, crashing, not_ready = names
    assert fleet.nodectl(crashing, "inject", "crash").returncode == 0
    assert fleet.nodectl(not_ready, "inject", "not-ready").returncode == 0
    run = fleet.playbook(
        "remediate", "-l", ",".join(names), "-e", "numa_drift_batch=100%", "-e", "numa_drift_max_fail_percentage=100",
        "-e", "remediate_ready_timeout=8",
    )
    assert run.rc != 0, run.tail()
    rows = run.rows()
    assert rows[canary]["action"] == "repaired", rows[canary]
    assert not fleet.unschedulable(canary)
    for name in (crashing, not_ready):
        row = rows[name]
        assert row["action"] == "rolled_back", row
        assert "original checkpoint was put back" in row["message"]
        assert run.recap[name]["failed"] == 1
        assert fleet.checkpoint_bytes(name) == fleet.originals[name], name
        assert fleet.unschedulable(name)
        annotations = fleet.annotations(name)
        assert annotations[CORDONED_BY] == MARKER and annotations[REASON]
        assert annotations[LAST_OUTCOME].startswith("rolled_back ")
        assert fleet.service(name)["state"] != "inactive"
        with open(fleet.history_file(name), encoding="utf-8") as handle:
            assert [(entry["action"], entry["by"]) for entry in json.load(handle)["repairs"]] == [("repaired", "role"), ("restored", "role")]
        assert_not_half_done(fleet, name)
        assert "NumaDriftRolledBack" in [event["reason"] for event in fleet.events(name)]
    assert "did not report Ready within 8s" in rows[not_ready]["message"]
    assert "did not stay up" in rows[crashing]["message"] or "did not become active" in rows[crashing]["message"]
    # Each outcome is printed in full once (the role's "Say what happened"); the failing task at the end names it only.
    for name in (crashing, not_ready):
        assert run.output.count(rows[name]["message"]) == 1, run.tail()
        assert "%s: rolled back, as said above (and in the report)" % name in run.output, run.tail()


# --------------------------------------------------------------------------- API outages (a fault proxy injects them)


def make_proxied_fleet(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, collections: str,
                       scenario: str) -> Iterator[Fleet]:
    """A fleet on the session's real kube-apiserver whose playbooks (under the shipped ServiceAccount) reach it through
    a fault proxy (tests/integration/faultproxy.py): ``fleet.outage``, ``fleet.proxy.add_fault``."""
    from ansible_collections.nodeops.numa_drift.tests.integration import realapi  # pylint: disable=import-outside-toplevel

    plane, token = request.getfixturevalue("control_plane"), request.getfixturevalue("service_account_token")
    yield from realapi.proxied_fleet(tmp_path_factory, collections, plane, token, scenario)


@pytest.fixture(scope="module")
def outages(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, collections_path: str) -> Iterator[Fleet]:
    """The role's own handling of API failures, without the cluster lock (numa_drift_lock=false, as operators may
    run it): with the lock, the rollout gate meets an outage first (test_an_api_outage_stops_the_rollout_at_the_gate,
    which runs on this fleet's last nodes with the lock), and a release that fails in an outage leaves the Lease held
    until it expires, as it should. The real API server answers everything the proxy lets through (RBAC included)."""
    for fleet in make_proxied_fleet(request, tmp_path_factory, collections_path, "all-drift"):
        fleet.default_args = ["-e", "numa_drift_lock=false"]
        yield fleet


def test_api_outage_before_cordon_touches_no_node_and_stops_the_rollout(outages: Fleet) -> None:
    fleet = outages
    names = sorted(fleet.nodes)[:3]
    fleet.outage(600)
    try:
        run = fleet.playbook("remediate", "-l", ",".join(names))
    finally:
        fleet.end_outage()
    assert run.rc != 0, run.tail()
    rows = run.rows()
    first = names[0]
    assert rows[first]["action"] == "failed"
    assert "could not cordon" in rows[first]["message"] and "not touched" in rows[first]["message"]
    assert [rows[name]["action"] for name in names[1:]] == ["not_processed", "not_processed"]
    for name in names:
        assert fleet.checkpoint_bytes(name) == fleet.originals[name]
        assert not fleet.unschedulable(name)
        assert CORDONED_BY not in fleet.annotations(name)
        assert not os.path.exists(fleet.history_file(name))
        assert_not_half_done(fleet, name)


def outage_after_start(fleet: Fleet, name: str, request: Dict[str, Any], path: str) -> Dict[str, Any]:
    """remediate_service_commands whose start also tells the fault proxy (its control listener, ``path``: /outage or
    /faults) to fail the playbook's API requests, right after kubelet starts."""
    commands = fleet.info_inventory_commands(name)
    poke = (
        "import json, urllib.request; urllib.request.urlopen(urllib.request.Request(%r, data=json.dumps(%r).encode(), method='POST'), timeout=10)"
        % (fleet.proxy.control_url + path, request)  # type: ignore[attr-defined]
    )
    commands["start"] += " && %s -c %s" % (fleet.info["python"], json.dumps(poke))
    return {"remediate_service_commands": commands}


def test_api_outage_after_the_repair_leaves_the_node_repaired_and_cordoned(outages: Fleet) -> None:
    fleet = outages
    name = sorted(fleet.nodes)[0]
    extra = outage_after_start(fleet, name, {"seconds": 600}, "/outage")
    extra["remediate_ready_timeout"] = 4
    try:
        run = fleet.playbook("remediate", "-l", name, extra=extra)
    finally:
        fleet.end_outage()
    assert run.rc != 0, run.tail()
    row = run.rows()[name]
    assert row["action"] == "failed", row
    assert "repaired but still cordoned" in row["message"] and "kubectl uncordon %s" % name in row["message"]
    assert fleet.verdict(name) == "in_sync"
    assert fleet.service(name)["active"]
    assert fleet.unschedulable(name) and fleet.annotations(name)[CORDONED_BY] == MARKER
    assert_not_half_done(fleet, name)
    # Once the API is back, the next run finishes the job.
    assert fleet.wait_ready(name) == "True"
    again = fleet.playbook("remediate", "-l", name)
    assert again.rc == 0, again.tail()
    assert "finished an earlier repair" in again.rows()[name]["message"]
    assert not fleet.unschedulable(name)
    assert CORDONED_BY not in fleet.annotations(name)


def test_uncordon_failure_says_the_node_is_repaired_but_cordoned(outages: Fleet) -> None:
    fleet = outages
    name = sorted(fleet.nodes)[1]
    fault = {"method": "PATCH", "path": "^/api/v1/nodes/%s$" % name, "code": 500, "message": "injected fault"}  # until cleared
    extra = outage_after_start(fleet, name, fault, "/faults")
    try:
        run = fleet.playbook("remediate", "-l", name, extra=extra)
    finally:
        fleet.proxy.clear_faults()  # type: ignore[attr-defined]
    assert run.rc != 0, run.tail()
    row = run.rows()[name]
    assert row["action"] == "failed", row
    assert "repaired and Ready but still cordoned" in row["message"]
    assert fleet.verdict(name) == "in_sync" and fleet.unschedulable(name)
    assert_not_half_done(fleet, name)
    again = fleet.playbook("remediate", "-l", name)
    assert again.rc == 0, again.tail()
    assert not fleet.unschedulable(name) and CORDONED_BY not in fleet.annotations(name)


def test_without_the_api_the_role_repairs_and_says_cordon_was_not_managed(outages: Fleet) -> None:
    fleet = outages
    name = sorted(fleet.nodes)[2]
    fleet.outage(600)
    try:
        run = fleet.playbook("remediate", "-l", name, "-e", "remediate_require_api=false")
    finally:
        fleet.end_outage()
    assert run.rc == 0, run.tail()
    row = run.rows()[name]
    assert row["action"] == "repaired" and row["api_managed"] is False
    assert "cordon state was not managed" in row["message"]
    assert fleet.verdict(name) == "in_sync" and fleet.service(name)["active"]
    assert not fleet.unschedulable(name)


def test_an_api_outage_stops_the_rollout_at_the_gate(outages: Fleet) -> None:
    fleet = outages
    names = sorted(fleet.nodes)[3:5]
    fleet.outage(600)
    try:
        run = fleet.playbook("remediate", "-l", ",".join(names), "-e", "numa_drift_lock=true")
    finally:
        fleet.end_outage()
    assert run.rc != 0, run.tail()
    assert "the rollout controls could not be checked" in run.output, run.tail()
    assert {row["action"] for row in run.rows().values()} == {"not_processed"}
    assert untouched(fleet, names)


# --------------------------------------------------------------------------- optional drain


@pytest.fixture(scope="module")
def draining(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, collections_path: str) -> Iterator[Fleet]:
    """An all-drift fleet on the real API server; the playbooks under the shipped ServiceAccount with the optional drain
    ClusterRole (extensions/rbac/nodeops-numa-drift-drain.yml) applied for this module, removed after."""
    from ansible_collections.nodeops.numa_drift.tests.integration import controlplane  # pylint: disable=import-outside-toplevel

    plane = request.getfixturevalue("control_plane")
    request.getfixturevalue("service_account")
    drain_rbac = controlplane.rbac_documents(controlplane.DRAIN_RBAC_FILE)
    for document in drain_rbac:
        plane.apply(document)
    try:
        yield from make_real_fleet(request, tmp_path_factory, collections_path, "all-drift")
    finally:
        for document in drain_rbac:
            plane.delete(document)


def pods_on(fleet: Fleet, name: str) -> Dict[str, Dict[str, Any]]:
    listing = fleet.api("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D" + name)
    return {"%s/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"]): pod for pod in listing["items"]}


def owned_by_daemonset(pod: Dict[str, Any]) -> bool:
    return any(owner.get("kind") == "DaemonSet" for owner in pod["metadata"].get("ownerReferences") or [])


class EvictedPodsEnded:
    """Kubelet's part after a graceful delete, for one node: every pod there with a deletionTimestamp is deleted with
    grace period 0 and its UID as precondition, as kubelet's status manager does once the pod's containers stopped
    (pkg/kubelet/status/status_manager.go, syncPod). A thread of the test, every 0.5 s, while in the ``with``.

    Only once the checkpoint was repaired (its bytes differ from the original): before, this node's kubelet refuses the
    checkpoint and does not run, so nothing ends the pods. ``terminating_at_repair``: the pods that were Terminating when
    the thread first saw the repair."""

    def __init__(self, fleet: Fleet, name: str) -> None:
        import threading  # pylint: disable=import-outside-toplevel

        self.fleet, self.name, self.ended = fleet, name, []  # type: Fleet, str, List[str]
        self.terminating_at_repair = None  # type: Optional[List[str]]
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stopping.wait(0.5):
            if self.terminating_at_repair is None and self.fleet.checkpoint_bytes(self.name) == self.fleet.originals[self.name]:
                continue
            try:
                pods = pods_on(self.fleet, self.name)
                terminating = sorted(key for key, pod in pods.items() if pod["metadata"].get("deletionTimestamp"))
                if self.terminating_at_repair is None:
                    self.terminating_at_repair = terminating
                for key in terminating:
                    self.fleet.api("DELETE", "/api/v1/namespaces/%s/pods/%s" % tuple(key.split("/")), {
                        "apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                        "preconditions": {"uid": pods[key]["metadata"]["uid"]}})
                    self.ended.append(key)
            except OSError:  # gone in between (404), or the API busy: kubelet retries at its next sync
                continue

    def __enter__(self) -> "EvictedPodsEnded":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        self.thread.join(timeout=10)


def test_drain_evicts_the_workload_then_repairs_and_uncordons(draining: Fleet) -> None:
    """The drain on a real API server: k8s_drain evicts through the Eviction API under the ServiceAccount (the drain
    ClusterRole) and the server deletes each pod gracefully (a deletionTimestamp). Ending them is kubelet's part, and
    this node's kubelet is the one that refuses the checkpoint: the role does not wait for them before the repair, only
    after it, once the Node is Ready, and uncordons when they are gone. Here the test plays that kubelet once the
    checkpoint is repaired (EvictedPodsEnded: a delete with grace period 0 and the pod's UID, what kubelet sends)."""
    fleet = draining
    name = sorted(fleet.nodes)[0]
    before = pods_on(fleet, name)
    workload = sorted(key for key, pod in before.items() if not owned_by_daemonset(pod))
    daemons = sorted(key for key, pod in before.items() if owned_by_daemonset(pod))
    assert workload and daemons, before.keys()
    with EvictedPodsEnded(fleet, name) as kubelet:
        run = fleet.playbook("remediate", "-l", name, "-e", "remediate_drain=true")
    assert run.rc == 0, run.tail()
    assert run.rows()[name]["action"] == "repaired", run.rows()[name]
    assert kubelet.terminating_at_repair == workload, "the evicted workload was still Terminating at the repair: %s" % (
        kubelet.terminating_at_repair,)
    assert sorted(set(kubelet.ended)) == workload, "only the evicted workload was Terminating: %s" % kubelet.ended
    after = pods_on(fleet, name)
    assert sorted(after) == daemons, "drain must evict the workload and leave DaemonSet pods: %s" % sorted(after)
    assert fleet.verdict(name) == "in_sync"
    assert fleet.ready(name) == "True" and not fleet.unschedulable(name)
    assert CORDONED_BY not in fleet.annotations(name)


def assert_drain_failed_and_nothing_touched(fleet: Fleet, name: str, run: Run, pod: str) -> str:
    assert run.rc != 0, run.tail()
    row = run.rows()[name]
    assert row["action"] == "failed", row
    assert row["message"].startswith("drain failed; kubelet and its checkpoint were not touched"), row["message"]
    assert fleet.checkpoint_bytes(name) == fleet.originals[name]
    assert fleet.unschedulable(name) and fleet.annotations(name)[CORDONED_BY] == MARKER and fleet.annotations(name)[REASON]
    assert pod in pods_on(fleet, name)
    assert not os.path.exists(fleet.history_file(name))
    assert_not_half_done(fleet, name)
    return row["message"]


def test_drain_refused_by_a_disruption_budget_fails_the_node_and_touches_nothing(draining: Fleet) -> None:
    """A real policy/v1 PodDisruptionBudget (minAvailable 1) over one running, Ready pod: the API server answers the
    eviction 429. Its status is written as the disruption controller would (1 healthy pod of 1 needed, no disruption
    allowed; kube-controller-manager does not run here): without it the server refuses too, as for a budget not yet
    processed."""
    fleet = draining
    name = sorted(fleet.nodes)[1]
    pod = next(pod for pod in pods_on(fleet, name).values() if not owned_by_daemonset(pod))
    namespace, pod_name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    blocked = "%s/%s" % (namespace, pod_name)
    path = "/api/v1/namespaces/%s/pods/%s" % (namespace, pod_name)
    # Running and Ready, as its kubelet reported it before the reboot: a Pending pod is evicted whatever the budget.
    labelled = fleet.api("GET", path)
    labelled["metadata"].setdefault("labels", {})["numa-drift-test/budget"] = pod_name
    fleet.api("PUT", path, labelled)  # Fleet.api sends application/json: a PATCH there is a 415
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    current = fleet.api("GET", path)
    current["status"] = dict(current.get("status") or {}, phase="Running", conditions=[
        {"type": "Ready", "status": "True", "lastTransitionTime": stamp}, {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp}])
    fleet.api("PUT", path + "/status", current)
    budgets = "/apis/policy/v1/namespaces/%s/poddisruptionbudgets" % namespace
    budget = fleet.api("POST", budgets, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": pod_name},
                                         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"numa-drift-test/budget": pod_name}}}})
    try:
        budget["status"] = {"observedGeneration": budget["metadata"]["generation"], "disruptionsAllowed": 0, "currentHealthy": 1,
                            "desiredHealthy": 1, "expectedPods": 1}
        fleet.api("PUT", "%s/%s/status" % (budgets, pod_name), budget)
        run = fleet.playbook("remediate", "-l", name, "-e", "remediate_drain=true")
    finally:
        fleet.api("DELETE", "%s/%s" % (budgets, pod_name))
    message = assert_drain_failed_and_nothing_touched(fleet, name, run, blocked)
    assert "Cannot evict pod as it would violate the pod's disruption budget" in message, message
    assert not pods_on(fleet, name)[blocked]["metadata"].get("deletionTimestamp")


def test_drain_wait_after_the_repair_times_out_and_the_repaired_node_stays_cordoned(draining: Fleet) -> None:
    """No kubelet ends the evicted pods on this node (the one that ran no kubelet), so on the real API server they stay
    Terminating. The drain before the repair only requests the evictions: the checkpoint is repaired and the Node Ready;
    the wait for the pods after it times out (kubernetes.core.k8s_drain only warns then: the role fails the node), and
    the node stays cordoned, repaired, with nothing restored."""
    fleet = draining
    name = sorted(fleet.nodes)[2]
    lingering = sorted(key for key, pod in pods_on(fleet, name).items() if not owned_by_daemonset(pod))[0]
    run = fleet.playbook("remediate", "-l", name, "-e", "remediate_drain=true", "-e", "remediate_drain_timeout=3")
    assert run.rc != 0, run.tail()
    row = run.rows()[name]
    assert row["action"] == "failed", row
    message = row["message"]
    assert message.startswith("the checkpoint was repaired and the Node is Ready, but the pods the drain evicted did not end"
                              " within 3s"), message
    assert "so the node stays cordoned" in message and "kubectl uncordon %s" % name in message, message
    assert "kubectl annotate node %s %s-" % (name, CORDONED_BY) in message, message
    assert fleet.verdict(name) == "in_sync", "the repair must stay in place"
    assert fleet.checkpoint_bytes(name) != fleet.originals[name]
    assert os.path.exists(fleet.history_file(name)), "the history records the repair"
    assert fleet.ready(name) == "True"
    assert fleet.unschedulable(name) and fleet.annotations(name)[CORDONED_BY] == MARKER
    assert fleet.annotations(name)[REASON].startswith("drain_wait: "), fleet.annotations(name)[REASON]
    assert pods_on(fleet, name)[lingering]["metadata"].get("deletionTimestamp")
    assert_not_half_done(fleet, name)


# --------------------------------------------------------------------------- rollout controls


LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"


@pytest.fixture(scope="module")
def controls(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, collections_path: str) -> Iterator[Fleet]:
    yield from make_real_fleet(request, tmp_path_factory, collections_path, "all-drift")


def lease_holders(fleet: Fleet) -> List[Any]:
    """The holder of the lock Lease after each write to it, in order (None: released)."""
    return [entry.get("holder") for entry in fleet.audit() if entry["kind"] == "Lease" and entry["name"] == "nodeops-numa-drift"]


def untouched(fleet: Fleet, names: List[str]) -> bool:
    return all(fleet.checkpoint_bytes(name) == fleet.originals[name] and not fleet.unschedulable(name) for name in names)


def test_two_concurrent_runs_never_work_on_the_cluster_at_once(controls: Fleet) -> None:
    check_two_concurrent_runs(controls, sorted(controls.nodes)[:2])


def check_two_concurrent_runs(fleet: Fleet, names: List[str]) -> None:
    """Two remediate runs at once over ``names``: one holds the Lease until it releases it, then the other; each node repaired once.
    (Also run against a real kube-apiserver: tests/integration/test_controlplane.py.)"""
    args = ("-l", ",".join(names), "-e", "numa_drift_batch=100%", "-e", "numa_drift_lock_wait_timeout=600", "-e", "numa_drift_lock_poll=2")
    since = time.time()  # the writes of these two runs only
    before = {name: fleet.unschedulable(name) for name in names}
    first = fleet.start_playbook("remediate", *args)
    second = fleet.start_playbook("remediate", *args)
    runs = [fleet.finish(first), fleet.finish(second)]
    assert all(run.rc == 0 for run in runs), "\n".join(run.tail(40) for run in runs)
    audit = [entry for entry in fleet.audit() if entry["time"] >= since]
    leases = [entry for entry in audit if entry["kind"] == "Lease"]
    holders = [entry.get("holder") for entry in leases]
    # One run holds the Lease (renewing it between batches) until it releases it; only then does the other take it.
    distinct = [holder for index, holder in enumerate(holders) if index == 0 or holder != holders[index - 1]]
    assert len([holder for holder in distinct if holder]) == 2 and distinct[1] is None and distinct[-1] is None, holders
    first_holder, second_holder = distinct[0], distinct[2]
    released = next(entry["time"] for entry in leases if entry.get("holder") is None)
    taken = next(entry["time"] for entry in leases if entry.get("holder") == second_holder)
    assert taken >= released
    # Every cordon and uncordon (a change of spec.unschedulable) happened while the first holder held the Lease.
    held_from = next(entry["time"] for entry in leases if entry.get("holder") == first_holder)
    last: Dict[str, bool] = dict(before)
    changes = []
    for entry in audit:
        if entry["kind"] == "Node" and entry["name"] in names:
            if entry["unschedulable"] != last[entry["name"]]:
                changes.append(entry["time"])
            last[entry["name"]] = entry["unschedulable"]
    assert len(changes) == 4 and all(held_from <= moment <= released for moment in changes), (changes, held_from, released)
    for name in names:
        with open(fleet.history_file(name), encoding="utf-8") as handle:
            assert [entry["action"] for entry in json.load(handle)["repairs"]] == ["repaired"]


def test_a_held_lease_stops_a_second_run_and_a_stale_one_is_taken_over(controls: Fleet) -> None:
    check_held_then_stale_lease(controls, sorted(controls.nodes)[2])


def check_held_then_stale_lease(fleet: Fleet, name: str) -> None:
    """A Lease held by someone else stops a run (nothing touched); the same Lease not renewed in time is taken over."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(now))
    spec = {"holderIdentity": "someone-else", "leaseDurationSeconds": 600, "acquireTime": stamp, "renewTime": stamp}
    existing = fleet.api("GET", LEASE + "/nodeops-numa-drift")  # released by the earlier runs of this fleet
    assert existing["spec"].get("holderIdentity") is None, existing
    existing["spec"] = spec
    created = fleet.api("PUT", LEASE + "/nodeops-numa-drift", existing)
    run = fleet.playbook("remediate", "-l", name)
    assert run.rc != 0, run.tail()
    assert "another rollout holds the cluster lock" in run.output and "someone-else" in run.output
    assert untouched(fleet, [name])
    assert fleet.api("GET", LEASE + "/nodeops-numa-drift")["spec"]["holderIdentity"] == "someone-else"
    # The same lease, not renewed for longer than its duration: stale, taken over.
    stale = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(now - 700))
    created["spec"].update(renewTime=stale, acquireTime=stale)
    fleet.api("PUT", LEASE + "/nodeops-numa-drift", created)
    again = fleet.playbook("remediate", "-l", name, "-e", "remediate_dry_run=true")
    assert again.rc == 0, again.tail()
    assert again.rows()[name]["action"] == "dry_run"
    holders = lease_holders(fleet)
    assert holders[-1] is None and holders[-2] not in (None, "someone-else"), holders


def test_pause_stops_the_rollout_before_the_next_batch(controls: Fleet) -> None:
    check_pause(controls, sorted(controls.nodes)[2:4])


def check_pause(fleet: Fleet, names: List[str]) -> None:
    """The pause ConfigMap (its documented name, extensions/rbac/ grants reading it) stops the run before its batch."""
    fleet.api("POST", "/api/v1/namespaces/kube-system/configmaps", {"metadata": {"name": "numa-drift-rollout"}, "data": {"paused": "true"}})
    try:
        run = fleet.playbook("remediate", "-l", ",".join(names), "-e", "numa_drift_pause_configmap=numa-drift-rollout")
    finally:
        fleet.api("DELETE", "/api/v1/namespaces/kube-system/configmaps/numa-drift-rollout")
    assert run.rc == 0, run.tail()
    assert "the rollout is paused (ConfigMap kube-system/numa-drift-rollout key paused)" in run.output
    assert {row["action"] for row in run.rows().values()} == {"not_processed"}
    assert "paused" in run.report()["stopped"]["message"]
    assert untouched(fleet, names)
    assert lease_holders(fleet)[-1] is None


def cluster_notready_others(fleet: Fleet, name: str) -> List[str]:
    """The cluster's NotReady Nodes besides ``name`` not cordoned by this collection (the real API server also has
    the Nodes of other fleets of the session that are still up)."""
    found = []
    for node in fleet.api("GET", "/api/v1/nodes")["items"]:
        conditions = (node.get("status") or {}).get("conditions") or []
        ready = next((c["status"] for c in conditions if c["type"] == "Ready"), "absent")
        marked = (node["metadata"].get("annotations") or {}).get(CORDONED_BY) == MARKER
        if node["metadata"]["name"] != name and ready != "True" and not marked:
            found.append(node["metadata"]["name"])
    return sorted(found)


def test_health_gate_counts_other_notready_nodes(controls: Fleet) -> None:
    fleet = controls
    name = sorted(fleet.nodes)[3]
    others = cluster_notready_others(fleet, name)
    assert set(others) & set(fleet.nodes), "the all-drift fleet has crash-looping (NotReady) nodes besides the target"
    cluster = len(fleet.api("GET", "/api/v1/nodes")["items"])
    run = fleet.playbook("remediate", "-l", name, "-e", "numa_drift_max_unhealthy=%d" % (len(others) - 1))
    assert run.rc == 0, run.tail()
    assert "%d Nodes are NotReady for reasons other than this rollout" % len(others) in run.output
    assert run.rows()[name]["action"] == "not_processed" and untouched(fleet, [name])
    # The same count as a percentage that allows them: the run goes on (a dry run is enough to see it).
    allowed = "%d%%" % (100 * len(others) // cluster + 1)
    again = fleet.playbook("remediate", "-l", name, "-e", "numa_drift_max_unhealthy=" + allowed, "-e", "remediate_dry_run=true")
    assert again.rc == 0 and again.rows()[name]["action"] == "dry_run", again.tail()


def test_maintenance_window_outside_does_nothing_and_says_when_it_opens(controls: Fleet) -> None:
    fleet = controls
    name = sorted(fleet.nodes)[3]
    hour = time.gmtime().tm_hour
    closed = "%02d:00-%02d:00" % ((hour + 2) % 24, (hour + 3) % 24)
    run = fleet.playbook("remediate", "-l", name, "-e", "numa_drift_window_hours=" + closed, "-e", "numa_drift_window_timezone=UTC")
    assert run.rc == 0, run.tail()
    assert "outside the maintenance window" in run.output and "it opens 20" in run.output
    assert run.rows()[name]["action"] == "not_processed" and untouched(fleet, [name])
    opened = "%02d:00-%02d:00" % (hour, (hour + 1) % 24 or 24)
    again = fleet.playbook("remediate", "-l", name, "-e", "numa_drift_window_hours=" + opened, "-e", "remediate_dry_run=true")
    assert again.rc == 0 and again.rows()[name]["action"] == "dry_run", again.tail()


class Receiver:
    """A webhook receiver on 127.0.0.1 that keeps every JSON body posted to it."""

    def __init__(self) -> None:
        import http.server  # pylint: disable=import-outside-toplevel
        import threading  # pylint: disable=import-outside-toplevel

        bodies = self.bodies = []  # type: List[Any]

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8")))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/hook" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_webhook_gets_the_summary_and_refused_nodes_and_a_dead_one_does_not_fail_the_run(mixed: Fleet, remediated: Dict[str, Any]) -> None:
    receiver = Receiver()
    try:
        run = mixed.playbook("remediate", "-e", "numa_drift_batch=100%", "-e", "remediate_dry_run=true", "-e", "numa_drift_webhook_url=" + receiver.url)
    finally:
        receiver.close()
    assert run.rc == 0, run.tail()
    assert len(receiver.bodies) == 1, receiver.bodies
    body = receiver.bodies[0]
    assert body["text"].startswith("nodeops.numa_drift remediate: 8 nodes")
    refused = sorted(expected(mixed, "drift_exceeds_bound") + expected(mixed, "hugepages_changed"))
    assert sorted(body["nodes"]) == refused and all(name in body["text"] for name in refused)
    # Nothing listens there any more: the notification fails, the run does not.
    dead = mixed.playbook("remediate", "-l", refused[0], "-e", "remediate_dry_run=true", "-e", "numa_drift_webhook_url=" + receiver.url)
    assert dead.rc == 0, dead.tail()
    assert "could not notify %s" % receiver.url in dead.output


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Prometheus on 127.0.0.1 whose rule NumaDriftTestAlwaysFiring always fires."""
    binary = shutil.which("prometheus") or "/usr/bin/prometheus"
    assert os.access(binary, os.X_OK), "prometheus is not installed: bash scripts/setup.sh installs the Debian package"
    directory = str(tmp_path_factory.mktemp("prometheus"))
    with open(os.path.join(directory, "rules.yml"), "w", encoding="utf-8") as handle:
        handle.write("groups:\n  - name: test\n    interval: 1s\n    rules:\n      - alert: NumaDriftTestAlwaysFiring\n"
                     "        expr: vector(1)\n        labels: {severity: critical}\n")
    with open(os.path.join(directory, "prometheus.yml"), "w", encoding="utf-8") as handle:
        handle.write("global: {evaluation_interval: 1s, scrape_interval: 60s}\nrule_files: [%s]\n" % os.path.join(directory, "rules.yml"))
    import socket  # pylint: disable=import-outside-toplevel

    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        port = probe_socket.getsockname()[1]
    log = open(os.path.join(directory, "prometheus.log"), "wb")  # pylint: disable=consider-using-with
    process = subprocess.Popen(  # pylint: disable=consider-using-with
        [binary, "--config.file=" + os.path.join(directory, "prometheus.yml"), "--storage.tsdb.path=" + os.path.join(directory, "data"),
         "--web.listen-address=127.0.0.1:%d" % port], stdout=log, stderr=subprocess.STDOUT)
    url = "http://127.0.0.1:%d" % port
    try:
        end = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(url + "/api/v1/alerts", timeout=5) as response:
                    alerts = json.loads(response.read().decode("utf-8"))["data"]["alerts"]
                if any(alert["state"] == "firing" for alert in alerts):
                    break
            except OSError:
                pass
            assert time.time() < end and process.poll() is None, open(os.path.join(directory, "prometheus.log"), encoding="utf-8").read()[-2000:]
            time.sleep(1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_health_gate_stops_on_firing_prometheus_alerts(controls: Fleet, prometheus: str) -> None:
    fleet = controls
    name = sorted(fleet.nodes)[3]
    run = fleet.playbook("remediate", "-l", name, "-e", "numa_drift_prometheus_url=" + prometheus,
                         "-e", "numa_drift_alert_filter_regexp=^NumaDriftTest")
    assert run.rc == 0, run.tail()
    assert "alerts matching '^NumaDriftTest' are firing in Prometheus (NumaDriftTestAlwaysFiring)" in run.output
    assert run.rows()[name]["action"] == "not_processed" and untouched(fleet, [name])
    again = fleet.playbook("remediate", "-l", name, "-e", "numa_drift_prometheus_url=" + prometheus,
                           "-e", "numa_drift_alert_filter_regexp=^SomethingElse$", "-e", "remediate_dry_run=true")
    assert again.rc == 0 and again.rows()[name]["action"] == "dry_run", again.tail()
