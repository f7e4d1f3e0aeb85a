# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster lock's release and its watcher (the API is a dict of Leases; the watched process is a real child)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List, Optional

import pytest

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _lease_watch, _report
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s import ApiFailure


class Leases:
    """get/replace on Leases with the API server's resourceVersion check (409 on a stale one)."""

    def __init__(self, lease: Optional[Dict[str, Any]], conflicts: int = 0) -> None:
        self.lease = lease
        self.conflicts = conflicts
        self.writes: List[Dict[str, Any]] = []

    def get(self, api_version: str, kind: str, name: str, namespace: Optional[str] = None) -> Optional[Dict[str, Any]]:
        assert (api_version, kind, name, namespace) == ("coordination.k8s.io/v1", "Lease", "lock", "ns")
        return copy.deepcopy(self.lease)

    def replace(self, api_version: str, kind: str, body: Dict[str, Any], namespace: Optional[str] = None) -> Dict[str, Any]:
        if self.conflicts:
            self.conflicts -= 1
            self.lease["metadata"]["resourceVersion"] = str(int(self.lease["metadata"]["resourceVersion"]) + 1)
            raise ApiFailure("the object has been modified (HTTP 409)", 409)
        assert body["metadata"]["resourceVersion"] == self.lease["metadata"]["resourceVersion"]
        self.writes.append(body)
        self.lease = dict(body, metadata=dict(body["metadata"], resourceVersion=str(int(body["metadata"]["resourceVersion"]) + 1)))
        return self.lease


def held_by(holder: Optional[str]) -> Dict[str, Any]:
    return {"metadata": {"name": "lock", "namespace": "ns", "resourceVersion": "7"},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 1800, "renewTime": "2026-12-04T09:00:00.000000Z"}}


def test_release_clears_the_holder_of_a_lease_this_run_holds() -> None:
    api = Leases(held_by("run-a"))
    assert _lease_watch.release(api, "lock", "ns", "run-a") == _lease_watch.RELEASED
    assert api.lease["spec"]["holderIdentity"] is None and api.lease["spec"]["leaseDurationSeconds"] == 1


@pytest.mark.parametrize("lease", [None, held_by("run-b"), held_by(None)])
def test_release_leaves_a_lease_this_run_does_not_hold(lease: Optional[Dict[str, Any]]) -> None:
    api = Leases(lease)
    assert _lease_watch.release(api, "lock", "ns", "run-a") == _lease_watch.NOT_HELD
    assert api.writes == []


def test_release_looks_again_after_a_conflict_and_gives_up_after_too_many() -> None:
    api = Leases(held_by("run-a"), conflicts=2)
    assert _lease_watch.release(api, "lock", "ns", "run-a") == _lease_watch.RELEASED
    with pytest.raises(ApiFailure, match="kept changing"):
        _lease_watch.release(Leases(held_by("run-a"), conflicts=99), "lock", "ns", "run-a")


def test_running_follows_the_process_and_not_a_reused_pid() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # pylint: disable=consider-using-with
    try:
        started = _lease_watch.process_start(child.pid)
        if sys.platform.startswith("linux"):
            assert started is not None
            assert not _lease_watch.running(child.pid, str(int(started) + 1))  # same PID, another start: another process
        assert _lease_watch.running(child.pid, started)
    finally:
        child.kill()
        child.wait()
    assert not _lease_watch.running(child.pid, started)


def test_a_runs_start_is_read_from_proc_so_that_its_reports_before_the_lease_count_as_its_own() -> None:
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    before = time.strftime(stamp, time.gmtime(time.time() - 1))  # /proc's boot time is whole seconds
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # pylint: disable=consider-using-with
    try:
        time.sleep(2.5)
        after = time.strftime(stamp, time.gmtime(time.time() - 2))
        assert before <= _lease_watch.run_started_at(child.pid) <= after
    finally:
        child.kill()
        child.wait()
    # A process /proc does not know: now.
    assert _lease_watch.run_started_at(child.pid) >= after


def ended_process() -> Dict[str, Any]:
    child = subprocess.Popen([sys.executable, "-c", "pass"])  # pylint: disable=consider-using-with
    child.wait()
    return {"pid": child.pid, "started": None}


def test_main_waits_for_the_watched_process_then_releases(monkeypatch: pytest.MonkeyPatch) -> None:
    api = Leases(held_by("run-a"))
    monkeypatch.setattr(_lease_watch, "Api", lambda kubeconfig, context: api)
    monkeypatch.setattr(_lease_watch, "POLL_SECONDS", 0.05)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1)"])  # pylint: disable=consider-using-with
    reaper = threading.Thread(target=child.wait)  # reaped when it ends, as its parent would
    reaper.start()
    options = {"pid": child.pid, "started": _lease_watch.process_start(child.pid), "name": "lock", "namespace": "ns", "holder": "run-a"}
    begun = time.time()
    assert _lease_watch.main(options) == 0
    reaper.join()
    assert time.time() - begun >= 0.5  # it waited for the process
    assert api.lease["spec"]["holderIdentity"] is None


def test_main_gives_up_when_the_api_cannot_be_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_api(kubeconfig: Optional[str], context: Optional[str]) -> Any:
        raise ApiFailure("could not create the API client: no kubeconfig")
    monkeypatch.setattr(_lease_watch, "Api", no_api)
    assert _lease_watch.main(dict(ended_process(), name="lock", namespace="ns", holder="run-a")) == 1


def report_rows(*rows: tuple) -> Dict[str, Any]:
    return {"nodes": [{"host": host, "node": node, "action": action, "message": message} for host, node, action, message in rows]}


def test_an_unfinished_run_says_what_it_left_and_the_command_that_finishes_it() -> None:
    report = report_rows(("h1", "n1", "repaired", "repaired"),
                         ("h2", "n2", "unreachable", _report.IN_PROGRESS % "h2"),
                         ("h3", "n3", "not_processed", _report.NOT_PROCESSED),
                         ("h4", "n4", "unreachable", "unreachable: ssh refused. Nothing was done on this node"))
    block = _lease_watch.unfinished_block(report, ["n2", "elsewhere"], "", "-i /srv/hosts.ini", "/srv/report")
    assert block == (
        "nodeops.numa_drift: this remediate run ended before its rollout did (interrupted, cancelled, or every node of a batch"
        " lost); the cluster lock was released.\n"
        "  cordoned by nodeops.numa_drift (kubelet may be stopped there too): h2\n"
        "  in the middle of its procedure when the run ended: h2\n"
        "  not processed yet: h3\n"
        "  not reached: h4\n"
        "  report: /srv/report/report.html (and report.json)\n"
        "  to finish the work: ansible-playbook -i /srv/hosts.ini nodeops.numa_drift.remediate --limit h2,h3,h4\n")
    # The Nodes could not be listed: it says so and where to look; nothing left: it says that.
    unknown = _lease_watch.unfinished_block(report_rows(("h1", "n1", "repaired", "repaired")), None, "Forbidden (HTTP 403)", "-i x", "/r")
    assert "could not list the Nodes (Forbidden (HTTP 403)): look for Nodes with the annotation cordoned-by: nodeops.numa_drift" in unknown
    assert unknown.endswith("  nothing is left to finish\n")


class Nodes(Leases):
    """Leases, and a Node list."""

    def __init__(self, lease: Optional[Dict[str, Any]], nodes: List[Dict[str, Any]]) -> None:
        super().__init__(lease)
        self.nodes = nodes

    def list(self, api_version: str, kind: str, **_kwargs: Any) -> Dict[str, Any]:
        assert (api_version, kind) == ("v1", "Node")
        return {"items": self.nodes}


def gate_note(tmp_path, started_batch: int) -> str:
    """The gate's note of the last batch it let start (none for 0), as __rollout_gate leaves it."""
    path = tmp_path / "gate-note"
    path.unlink(missing_ok=True)
    if started_batch:
        path.write_text("%d\n" % started_batch)
    return str(path)


def watch(monkeypatch: pytest.MonkeyPatch, api: Any, report: Optional[Dict[str, Any]], tmp_path, started_batch: int = 0) -> str:
    """What the watcher writes on the run's output (a pipe) for a run that ended, given the API, the report on disk and the
    last batch the gate let start."""
    if report is not None:
        (tmp_path / "report.json").write_text(json.dumps(report))
    monkeypatch.setattr(_lease_watch, "Api", lambda kubeconfig, context: api)
    read, write = os.pipe()
    gate = gate_note(tmp_path, started_batch)
    options = dict(ended_process(), name="lock", namespace="ns", holder="run-a", report_dir=str(tmp_path), inventory="-i inv.yml",
                   output_fd=write, since="2026-12-06T10:00:00Z", gate=gate)
    assert _lease_watch.main(options) == 0
    assert not os.path.exists(gate)  # removed: nothing is left in the temporary directory
    with os.fdopen(read, encoding="utf-8") as handle:
        return handle.read()  # the watcher closed its end


def fresh(*rows: tuple, in_progress=("h1",), generated_at="2026-12-06T10:00:05Z") -> Dict[str, Any]:
    return dict(report_rows(*rows), kind="remediate", generated_at=generated_at, in_progress=list(in_progress))


OURS = {"metadata": {"name": "n1", "annotations": {"numa-drift.nodeops.io/cordoned-by": "nodeops.numa_drift"}}, "spec": {"unschedulable": True}}


def test_the_watcher_prints_the_block_only_when_the_run_still_held_the_lease(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    report = fresh(("h1", "n1", "unreachable", _report.IN_PROGRESS % "h1"))
    printed = watch(monkeypatch, Nodes(held_by("run-a"), [OURS]), report, tmp_path)
    assert "cordoned by nodeops.numa_drift (kubelet may be stopped there too): h1\n" in printed
    assert printed.endswith("to finish the work: ansible-playbook -i inv.yml nodeops.numa_drift.remediate --limit h1\n")
    # A run that released the Lease itself ended its rollout: nothing printed.
    assert watch(monkeypatch, Nodes(held_by(None), [OURS]), report, tmp_path) == ""


def test_the_watcher_reads_only_this_runs_report(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    rows = (("h1", "n1", "unreachable", _report.IN_PROGRESS % "h1"),)
    changed_nothing = "it ended before any node's procedure started: this run changed no node.\n"
    # An earlier run's report, the probe's, or none: this run ended before its first report, before any procedure.
    for report in (fresh(*rows, generated_at="2026-12-06T09:59:59Z"), dict(fresh(*rows), kind="probe"), None):
        (tmp_path / "report.json").unlink(missing_ok=True)
        assert watch(monkeypatch, Nodes(held_by("run-a"), [OURS]), report, tmp_path).endswith(changed_nothing), report
    # The rollout's final report (nothing in progress): only the release at its end failed; nothing to say.
    assert watch(monkeypatch, Nodes(held_by("run-a"), [OURS]), fresh(*rows, in_progress=()), tmp_path) == ""


def batch_report(in_progress_batch: int = 2) -> Dict[str, Any]:
    """The report the remediate playbook writes as batch 2 starts: the canary h1 repaired, h2 in progress, h3 after it."""
    repaired = {"node": "n1", "action": "repaired", "verdict_before": "drift_within_bound", "verdict_after": "in_sync"}
    return _report.build("remediate", ["h1", "h2", "h3"], [repaired, {}, {}], ["n1", "n2", "n3"], None, {}, "off",
                         "2026-12-06T10:00:05Z", in_progress=["h2"], inventory="-i inv.yml", in_progress_batch=in_progress_batch)


def on_disk(tmp_path) -> Dict[str, Any]:
    return json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))


def test_a_run_interrupted_between_batches_names_the_next_ones_and_not_the_finished_batch(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    # Ended at the gate before batch 2 (it had let only batch 1 start): batch 2's node was not started.
    printed = watch(monkeypatch, Nodes(held_by("run-a"), []), batch_report(), tmp_path, started_batch=1)
    assert "  cordoned by nodeops.numa_drift (kubelet may be stopped there too): none\n" in printed, printed
    assert "in the middle of its procedure" not in printed and "  not processed yet: h2, h3\n" in printed, printed
    assert printed.endswith("to finish the work: ansible-playbook -i inv.yml nodeops.numa_drift.remediate --limit h2,h3\n"), printed
    # The report on disk says the same: written again with batch 2 not processed (as if the run had written it then).
    again = on_disk(tmp_path)
    assert [row["action"] for row in again["nodes"]] == ["repaired", "not_processed", "not_processed"], again["nodes"]
    assert (again["in_progress"], again["rollout_ended"]) == ([], False)
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == _report.render_html(again)
    # Ended after the gate let batch 2 start: h2 is in the middle of its procedure, the report stays as written.
    written = batch_report()
    printed = watch(monkeypatch, Nodes(held_by("run-a"), []), written, tmp_path, started_batch=2)
    assert "  in the middle of its procedure when the run ended: h2\n  not processed yet: h3\n" in printed, printed
    assert on_disk(tmp_path) == written
    # The report the rollout ended with: the release after it is what the run did not do; nothing to say.
    ended = _report.build("remediate", ["h1"], [{"node": "n1", "action": "repaired"}], ["n1"], None, {}, "off", "2026-12-06T10:00:05Z")
    assert watch(monkeypatch, Nodes(held_by("run-a"), []), ended, tmp_path, started_batch=2) == ""


def first_pass(tmp_path, report: Optional[Dict[str, Any]], handed_over: bool, limit: Optional[str] = None, started_batch: int = 0) -> str:
    """What the first-pass watcher writes on the run's output for a run that ended, given the report on disk and the last
    batch the gate let start."""
    (tmp_path / "report.json").unlink(missing_ok=True)
    if report is not None:
        (tmp_path / "report.json").write_text(json.dumps(report))
    handover = tmp_path / "handover"
    if not handed_over:
        handover.write_text("")
    read, write = os.pipe()
    gate = gate_note(tmp_path, started_batch)
    options = dict(ended_process(), mode=_lease_watch.FIRST_PASS, handover=str(handover), report_dir=str(tmp_path),
                   inventory="-i inv.yml", limit=limit, output_fd=write, since="2026-12-06T10:00:00Z", gate=gate)
    assert _lease_watch.main(options) == 0
    assert not handover.exists()  # removed: nothing is left in the temporary directory
    # The gate's note is the Lease's watcher's once handed over; else this watcher's, removed too.
    assert os.path.exists(gate) == (handed_over and started_batch > 0)
    with os.fdopen(read, encoding="utf-8") as handle:
        return handle.read()


def test_a_run_that_ends_before_its_rollout_starts_says_that_it_changed_nothing(tmp_path) -> None:
    said = ("nodeops.numa_drift: this remediate run ended before its rollout started (in its read-only first pass, or while waiting"
            " for the cluster lock): it changed no node and holds no cluster lock.\n"
            "  to run it again: ansible-playbook -i inv.yml nodeops.numa_drift.remediate%s\n")
    # No report, or an earlier run's: nothing of this run's rollout happened.
    assert first_pass(tmp_path, None, handed_over=False) == said % ""
    old = fresh(("h1", "n1", "not_processed", _report.NOT_PROCESSED), generated_at="2026-12-06T09:59:59Z")
    assert first_pass(tmp_path, old, handed_over=False, limit="h1,h2") == said % " --limit h1,h2"
    # The gate took the Lease (its watcher speaks), or this run wrote its final report (no node to do, a control stopped it): silent.
    assert first_pass(tmp_path, None, handed_over=True) == ""
    assert first_pass(tmp_path, batch_report(1), handed_over=True, started_batch=1) == ""
    assert first_pass(tmp_path, fresh(("h1", "n1", "none", "in_sync"), in_progress=()), handed_over=False) == ""
    # The report written as batch 1 starts, the run ended while its controls were checked (waiting for the Lease): nothing
    # changed; the report on disk says so too (its node not processed).
    assert first_pass(tmp_path, batch_report(1), handed_over=False) == said % ""
    assert [row["action"] for row in on_disk(tmp_path)["nodes"]] == ["repaired", "not_processed", "not_processed"]
    # Without the Lease (numa_drift_lock: false) the gate let batch 1 start: its procedure may have changed its node; silent,
    # the report as written.
    assert first_pass(tmp_path, batch_report(1), handed_over=False, started_batch=1) == ""
    assert on_disk(tmp_path) == batch_report(1)


def test_the_lease_watcher_takes_over_from_the_first_pass_watcher(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(_lease_watch.tempfile, "tempdir", str(tmp_path))
    started: List[Dict[str, Any]] = []

    def start(options: Dict[str, Any], output: Optional[int]) -> Dict[str, Any]:  # the watcher's options, no process
        if output is not None:
            os.close(output)
        started.append(options)
        return {"started": True, "pid": 1, "watches": options["pid"]}
    monkeypatch.setattr(_lease_watch, "_start", start)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], stdout=subprocess.PIPE)  # pylint: disable=consider-using-with
    try:
        assert _lease_watch.spawn_first_pass(child.pid, [], str(tmp_path), "-i inv.yml", None)["started"]
        handover = started[0]["handover"]
        assert os.path.exists(handover) and started[0]["mode"] == _lease_watch.FIRST_PASS
        lock = {"name": "lock", "namespace": "ns", "holder": "run-a"}
        assert _lease_watch.spawn(lock, None, None, child.pid, [], {"report_dir": str(tmp_path), "inventory": "-i inv.yml"})["started"]
        assert not os.path.exists(handover)
    finally:
        child.kill()
        child.wait()


class SlowLeases(Nodes):
    """An API that answers the release after ``seconds`` (the client has no timeout of its own)."""

    def __init__(self, lease: Optional[Dict[str, Any]], seconds: float) -> None:
        super().__init__(lease, [OURS])
        self.seconds = seconds

    def get(self, *args: Any, **kwargs: Any) -> Optional[Dict[str, Any]]:
        time.sleep(self.seconds)
        return super().get(*args, **kwargs)


def test_a_slow_api_does_not_hold_the_runs_output(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    # A reader of the run's output (| tee, AWX) waits until every writer closed it: the watcher lets go after OUTPUT_SECONDS
    # and goes on releasing the Lease without it.
    monkeypatch.setattr(_lease_watch, "OUTPUT_SECONDS", 0.2)
    api = SlowLeases(held_by("run-a"), 1.5)
    began = time.time()
    assert watch(monkeypatch, api, fresh(("h1", "n1", "unreachable", _report.IN_PROGRESS % "h1")), tmp_path) == ""
    assert time.time() - began >= 1.5 and api.lease["spec"]["holderIdentity"] is None  # released all the same


def test_the_block_goes_to_the_runs_own_output_appended(tmp_path) -> None:
    log = tmp_path / "run.log"
    log.write_text("earlier output\n")
    with open(log, "a", encoding="utf-8") as handle:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"], stdout=handle)  # pylint: disable=consider-using-with
    try:
        output = _lease_watch.run_output(child.pid)
        os.write(output, b"the block\n")
        os.close(output)
    finally:
        child.kill()
        child.wait()
    assert log.read_text() == "earlier output\nthe block\n"
    assert _lease_watch.run_output(2 ** 22 + 7) is None  # no such process


def test_a_run_that_ended_but_is_not_reaped_yet_has_ended() -> None:
    # Its parent waits for the run's output to close (the watcher holds it) before it reaps the run: a zombie.
    child = subprocess.Popen([sys.executable, "-c", "pass"])  # pylint: disable=consider-using-with
    started = _lease_watch.process_start(child.pid)
    deadline = time.time() + 10
    while time.time() < deadline and _lease_watch._stat(child.pid)[:1] != ["Z"]:  # pylint: disable=protected-access
        time.sleep(0.05)
    try:
        assert _lease_watch._stat(child.pid)[:1] == ["Z"]  # pylint: disable=protected-access
        assert not _lease_watch.running(child.pid, started)
    finally:
        child.wait()
