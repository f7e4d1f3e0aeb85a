# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbooks as an operator runs them: plain static inventories, unreachable and failing nodes, quiet output.

The sandbox fleet (tests/sandbox/fleet.py) is driven through inventories written here the way a user
writes them: an INI file and a YAML file whose hosts set connection variables and the node options a
fake node needs (its root, how its kubelet is started and stopped), never ``remediate_node_name`` (the
role's default, the host's name, must do). An unreachable node is an SSH host on a closed loopback port.

Tests run in file order on one fleet (each says what it relies on).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shlex
import shutil
import signal
import socket
import sys
import threading
import time
import urllib.error
from typing import Any, Dict, Iterator, List, Optional

import pytest

from ansible_collections.nodeops.numa_drift.tests.integration.test_fleet_sandbox import FLEET, LEASE, PREFIX, Fleet, Run, make_real_fleet
from ansible_collections.nodeops.numa_drift.tests.sandbox.testing import VENV_BIN, collections_tree

pytestmark = pytest.mark.skipif(
    not (os.path.exists(FLEET) and os.path.exists(os.path.join(VENV_BIN, "ansible-playbook")) and sys.platform.startswith("linux")),
    reason="needs tests/sandbox/fleet.py, the checkout's .venv (bash scripts/setup.sh) and Linux",
)

UNREACHABLE = "sbx-unreachable"
LOCK = LEASE + "/nodeops-numa-drift"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed): connecting to it is refused at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def node_vars(fleet: Fleet, name: str) -> Dict[str, Any]:
    """What a user sets for one sandbox node: the connection, the node's root and its service commands."""
    return {
        "ansible_connection": "local",
        "ansible_python_interpreter": fleet.info["python"],
        "ansible_become": False,
        "remediate_root": fleet.root(name),
        "remediate_service_mode": "command",
        "remediate_service_commands": fleet.info_inventory_commands(name),
    }


def unreachable_vars() -> Dict[str, Any]:
    return {
        "ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": closed_port(), "ansible_user": "nobody",
        "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5",
    }


def group_vars(fleet: Fleet) -> Dict[str, Any]:
    """The fleet's kubeconfig (the real API server's, the ServiceAccount's token), and the sandbox's short waits (as the fleet's own inventory sets them)."""
    return {"remediate_kubeconfig": os.path.join(fleet.dir, "kubeconfig"), "remediate_settle_seconds": 3,
            "remediate_ready_poll": 1, "remediate_ready_timeout": 60}


def ini_value(value: Any) -> str:
    return shlex.quote(json.dumps(value) if isinstance(value, dict) else str(value))


def write_ini(fleet: Fleet, path: str, hosts: Dict[str, Dict[str, Any]]) -> str:
    lines = ["[nodes]"]
    lines += [" ".join([host] + ["%s=%s" % (key, ini_value(value)) for key, value in variables.items()]) for host, variables in hosts.items()]
    lines += ["", "[nodes:vars]"] + ["%s=%s" % item for item in group_vars(fleet).items()]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def write_yaml(fleet: Fleet, path: str, hosts: Dict[str, Dict[str, Any]]) -> str:
    document = {"all": {"children": {"nodes": {"hosts": hosts, "vars": group_vars(fleet)}}}}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)  # JSON is YAML; the file is named .yml like any YAML inventory
    return path


def inventory(fleet: Fleet, kind: str, names: List[str], unreachable_at: Optional[int] = None) -> str:
    hosts = {name: node_vars(fleet, name) for name in names}
    if unreachable_at is not None:
        ordered = list(hosts.items())
        ordered.insert(unreachable_at, (UNREACHABLE, unreachable_vars()))
        hosts = dict(ordered)
    path = os.path.join(fleet.dir, "static-%02d.%s" % (fleet.runs + 1, "ini" if kind == "ini" else "yml"))
    return (write_ini if kind == "ini" else write_yaml)(fleet, path, hosts)


def run_with(fleet: Fleet, path: str, playbook: str, *args: str) -> Run:
    fleet.inventory = path
    return fleet.playbook(playbook, *args)


def lease_holder(fleet: Fleet) -> Any:
    return fleet.api("GET", LOCK)["spec"].get("holderIdentity")


def failures(output: str) -> List[str]:
    return [line for line in output.splitlines() if "FAILED" in line or "[WARNING]" in line or "[DEPRECATION WARNING]" in line]


@pytest.fixture(scope="module")
def fleet(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """An all-drift fleet on the session's real kube-apiserver; the playbooks under the shipped ServiceAccount."""
    yield from make_real_fleet(request, tmp_path_factory, collections_tree(str(tmp_path_factory.mktemp("collections"))), "all-drift")


# --------------------------------------------------------------------------- any inventory (item 0)


def test_probe_from_a_plain_ini_inventory_is_quiet(fleet: Fleet) -> None:
    run = run_with(fleet, inventory(fleet, "ini", sorted(fleet.nodes)), "probe")
    assert run.rc == 0, run.tail()
    rows = run.rows()
    assert sorted(rows) == sorted(fleet.nodes)
    assert {row["verdict_before"] for row in rows.values()} == {"drift_within_bound"}
    # No warning (ansible-core warns about run_once under the free strategy).
    assert failures(run.output) == [], failures(run.output)


def test_probe_reports_an_unreachable_node_as_unreachable(fleet: Fleet) -> None:
    names = sorted(fleet.nodes)[:2]
    run = run_with(fleet, inventory(fleet, "ini", names, unreachable_at=1), "probe")
    assert run.rc != 0, run.tail()
    rows = run.rows()
    assert rows[UNREACHABLE]["action"] == "unreachable", rows[UNREACHABLE]
    assert rows[UNREACHABLE]["failed"] is True
    message = rows[UNREACHABLE]["message"]
    assert message.startswith("unreachable: ") and "The node was not probed" in message, message
    assert "nodeops.numa_drift.probe again with --limit %s" % UNREACHABLE in message, message
    assert [(rows[name]["action"], rows[name]["verdict_before"]) for name in names] == [("probed", "drift_within_bound")] * 2
    assert run.report()["counts"]["action"] == {"probed": 2, "unreachable": 1}
    assert run.report()["not_processed"] == []
    html = run.html()
    # The probe's page has no action column: the node's line carries its action, the What now box lists it.
    assert '<tr id="%s" data-action="unreachable">' % UNREACHABLE in html
    needs = html.split('<table id="needs-human">', 1)[1].split("</table>", 1)[0]
    assert '<tr data-node="%s">' % UNREACHABLE in needs and "unreachable" in needs
    assert "Fleet report (probe): " in run.output


def test_dry_run_from_a_plain_ini_inventory_changes_nothing(fleet: Fleet) -> None:
    before = {name: fleet.checkpoint_bytes(name) for name in fleet.nodes}
    run = run_with(fleet, inventory(fleet, "ini", sorted(fleet.nodes)), "remediate", "-e", "remediate_dry_run=true",
                   "-e", "numa_drift_batch=100%")
    assert run.rc == 0, run.tail()
    assert {row["action"] for row in run.rows().values()} == {"dry_run"}, run.rows()
    assert {name: fleet.checkpoint_bytes(name) for name in fleet.nodes} == before
    assert lease_holder(fleet) is None


def test_the_probe_report_shows_a_node_someone_else_cordoned_and_that_it_stays_cordoned(fleet: Fleet) -> None:
    name = sorted(fleet.nodes)[0]
    node = fleet.api_node(name)
    node["spec"]["unschedulable"] = True  # by hand, as an operator does (kubectl cordon): no mark of ours
    fleet.api("PUT", "/api/v1/nodes/" + name, node)
    try:
        run = run_with(fleet, inventory(fleet, "ini", [name]), "probe")
    finally:
        put_back(fleet, name)
    assert run.rc == 0, run.tail()
    row = run.rows()[name]
    assert row["node_state"]["cordoned"] is True and row["node_state"]["cordoned_by"] == "someone else", row["node_state"]
    assert row["node_state_text"].endswith(", cordoned by someone else (the remediate playbook leaves it cordoned)"), row
    assert run.report()["repairable_cordoned"] == [name]
    html = run.html()
    assert "(not %s: cordoned by someone else, they stay cordoned)" % name in html
    # The command the page suggests names this run's inventory file, not a placeholder.
    assert "ansible-playbook -i %s nodeops.numa_drift.remediate --limit %s" % (fleet.inventory, name) in html


# --------------------------------------------------------------------------- failing and unreachable nodes (item 1)


def test_a_node_failing_mid_repair_ends_with_the_lease_free_and_a_full_report(fleet: Fleet) -> None:
    canary, failing, later = sorted(fleet.nodes)[:3]
    assert fleet.nodectl(failing, "inject", "crash").returncode == 0
    try:
        run = run_with(fleet, inventory(fleet, "yaml", [canary, failing, later]), "remediate", "-e", "numa_drift_batch=1",
                       "-e", "remediate_ready_timeout=8")
    finally:
        fleet.nodectl(failing, "inject", "clear")
    assert run.rc != 0, run.tail()
    rows = run.rows()
    assert (rows[canary]["action"], rows[failing]["action"], rows[later]["action"]) == ("repaired", "rolled_back", "not_processed"), rows
    assert fleet.checkpoint_bytes(failing) == fleet.originals[failing]
    assert lease_holder(fleet) is None
    assert "rolled_back" in run.html() and 'id="%s"' % later in run.html()


def test_an_unreachable_first_host_is_left_out_and_the_first_reachable_node_is_the_canary(fleet: Fleet) -> None:
    names = sorted(fleet.nodes)[3:5]
    before = {name: fleet.checkpoint_bytes(name) for name in names}
    run = run_with(fleet, inventory(fleet, "ini", names, unreachable_at=0), "remediate", "-e", "numa_drift_batch=1")
    # The others are repaired; the run still ends non-zero, on the node it could not reach.
    assert run.rc != 0, run.tail()
    rows = run.rows()
    assert [rows[name]["action"] for name in names] == ["repaired", "repaired"], rows
    assert all(fleet.checkpoint_bytes(name) != before[name] for name in names)
    assert "left out (reported as unreachable): %s;" % UNREACHABLE in run.output, run.tail()
    assert "batch 1/2: %s" % names[0] in run.output and "batch 2/2: %s" % names[1] in run.output, run.tail()
    unreachable = rows[UNREACHABLE]
    assert unreachable["action"] == "unreachable" and unreachable["failed"] is True, unreachable
    assert "Nothing was done on this node: the rollout went on without it." in unreachable["message"], unreachable
    assert "nodeops.numa_drift.remediate again with --limit %s" % UNREACHABLE in unreachable["message"], unreachable
    # Failed once, at the end, with the report's words (the first pass's probe only notes it: "...ignoring").
    failed = "fatal: [%s]: FAILED! => " % UNREACHABLE
    assert run.output.count(failed) == 1, run.tail()
    assert run.output.index("PLAY [Fail the nodes the first pass could not reach]") < run.output.index(failed), run.tail()
    assert json.loads(run.output.split(failed, 1)[1].splitlines()[0])["msg"] == unreachable["message"]
    assert lease_holder(fleet) is None
    assert 'class="a-unreachable"' in run.html()
    for name in names:  # the tests below need them drifted
        fleet.drift_again(name)


def test_a_node_lost_after_the_first_pass_stops_the_rollout_in_its_batch_with_the_lease_free(
        fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    # ``second`` answered the first pass, then is lost when the canary's kubelet is stopped (the canary's stop command
    # makes the marker its test connection looks for): batch 2 reaches it as unreachable and the rollout stops there.
    canary, second, third = sorted(fleet.nodes)[1], sorted(fleet.nodes)[2], sorted(fleet.nodes)[5]
    marker = os.path.join(fleet.dir, "lost-" + second)
    monkeypatch.setenv("ANSIBLE_CONNECTION_PLUGINS", os.path.join(os.path.dirname(os.path.abspath(__file__)), "connection_plugins"))
    path = inventory(fleet, "yaml", [canary, second, third])
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    hosts = document["all"]["children"]["nodes"]["hosts"]
    hosts[second].update(ansible_connection="lost_after_marker", sandbox_lost_marker=marker)
    hosts[canary]["remediate_service_commands"] = dict(hosts[canary]["remediate_service_commands"])
    hosts[canary]["remediate_service_commands"]["stop"] += " && touch " + shlex.quote(marker)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
    untouched = {name: fleet.checkpoint_bytes(name) for name in (second, third)}
    try:
        run = run_with(fleet, path, "remediate", "-e", "numa_drift_batch=1")
    finally:
        if os.path.exists(marker):
            os.unlink(marker)
    assert run.rc != 0, run.tail()
    rows = run.rows()
    assert (rows[canary]["action"], rows[second]["action"], rows[third]["action"]) == ("repaired", "unreachable", "not_processed"), rows
    assert "Nothing was done on this node" in rows[second]["message"] and "--limit %s" % second in rows[second]["message"]
    assert "batch 2/3: %s" % second in run.output and "batch 3/3" not in run.output, run.tail()
    assert {name: fleet.checkpoint_bytes(name) for name in (second, third)} == untouched
    assert lease_holder(fleet) is None
    fleet.drift_again(canary)  # the tests below need it drifted


def lease_freed(fleet: Fleet, seconds: float = 20.0) -> Any:
    """The Lease's holder once it is free, or the holder still there after ``seconds``.

    When no host is left to run a task on, the lock is released on the controller just after ansible-playbook exits.
    """
    end = time.time() + seconds
    while lease_holder(fleet) is not None and time.time() < end:
        time.sleep(0.5)
    return lease_holder(fleet)


def test_a_canary_lost_mid_repair_alone_in_its_batch_ends_with_the_lease_free_and_a_report(
        fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    # The canary's connection is lost right after its kubelet is stopped (its stop command makes the marker the
    # test connection looks for): no host is left in the play, Ansible runs no task after that.
    # ``later`` still drifted (no earlier test repaired it): a node that needs nothing leaves the rollout after its probe.
    canary, later = sorted(fleet.nodes)[5], sorted(fleet.nodes)[2]
    marker = os.path.join(fleet.dir, "lost-" + canary)
    monkeypatch.setenv("ANSIBLE_CONNECTION_PLUGINS", os.path.join(os.path.dirname(os.path.abspath(__file__)), "connection_plugins"))
    path = inventory(fleet, "yaml", [canary, later])
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    canary_vars = document["all"]["children"]["nodes"]["hosts"][canary]
    canary_vars.update(ansible_connection="lost_after_marker", sandbox_lost_marker=marker)
    canary_vars["remediate_service_commands"] = dict(canary_vars["remediate_service_commands"])
    canary_vars["remediate_service_commands"]["stop"] += " && touch " + shlex.quote(marker)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
    later_before = fleet.checkpoint_bytes(later)
    try:
        run = run_with(fleet, path, "remediate")
        assert run.rc != 0, run.tail()
        assert os.path.exists(marker), run.tail()
        assert "UNREACHABLE" in run.output, run.tail()
        assert lease_freed(fleet) is None, run.tail()
        rows = run.rows()
        assert rows[canary]["action"] == "unreachable", rows[canary]
        assert "connection to the node was lost" in rows[canary]["message"] and "--limit %s" % canary in rows[canary]["message"]
        assert rows[later]["action"] == "not_processed", rows[later]
        assert fleet.checkpoint_bytes(later) == later_before
        assert run.report()["counts"]["action"] == {"unreachable": 1, "not_processed": 1}, run.report()["counts"]
        html = run.html()
        assert 'class="a-unreachable"' in html and 'id="%s"' % later in html
        # No task ran after the loss: the watcher says what is left, with the command that finishes it.
        assert "cordoned by nodeops.numa_drift (kubelet may be stopped there too): %s\n" % canary in run.output, run.tail()
        assert "not processed yet: %s\n" % later in run.output, run.tail()
        assert "to finish the work: ansible-playbook -i %s nodeops.numa_drift.remediate --limit %s,%s\n" % (path, canary, later) in run.output
    finally:
        put_back(fleet, canary)


def test_ctrl_c_during_the_canary_ends_with_the_lease_free_and_a_report(fleet: Fleet) -> None:
    canary = sorted(fleet.nodes)[2]
    fleet.inventory = inventory(fleet, "yaml", [canary])
    started = fleet.start_playbook("remediate")
    report = os.path.join(started["report_dir"], "report.html")  # written after report.json
    try:
        # Interrupt it once the canary's procedure is under way: the report before the batch written, the Lease held and
        # the canary cordoned, so that Ctrl-C comes while a task of the procedure runs. (Sent while the strategy was
        # still loading the role's tasks, right after the report, it once left ansible-playbook hung for 15 minutes
        # without its "User interrupted execution": ansible-core's, not the collection's; see the closing notes.)
        end = time.time() + 120
        while time.time() < end and started["process"].poll() is None and not (os.path.exists(report) and fleet.unschedulable(canary)):
            time.sleep(0.2)
        assert lease_holder(fleet) is not None
        started["process"].send_signal(signal.SIGINT)  # what Ctrl-C sends (the terminal sends it to the workers too)
        run = Fleet.finish(started)
        assert "User interrupted execution" in run.output, run.tail()
        assert run.rc == 99, run.tail()
        assert lease_freed(fleet) is None, run.tail()
        # After Ansible's own line, the watcher's block on the run's output: what is left and how to finish it.
        block = run.output.split("User interrupted execution", 1)[1]
        assert "this remediate run ended before its rollout did" in block, run.tail()
        assert "in the middle of its procedure when the run ended: %s\n" % canary in block, block
        assert "report: %s (and report.json)" % os.path.join(started["report_dir"], "report.html") in block, block
        assert "to finish the work: ansible-playbook -i %s nodeops.numa_drift.remediate --limit %s\n" % (fleet.inventory, canary) in block
        # Cordoned by this run when the Ctrl-C came, it is named as such (the canary's cordon is its first change).
        assert fleet.unschedulable(canary) == ("cordoned by nodeops.numa_drift (kubelet may be stopped there too): %s\n" % canary in block), block
        row = run.rows()[canary]
        assert row["action"] == "unreachable", row
        assert "the run ended during this node's procedure" in row["message"] and "--limit %s" % canary in row["message"]
        assert 'class="a-unreachable"' in run.html()
    finally:
        put_back(fleet, canary)


def report_in_progress(path: str) -> Any:
    """The hosts report.json says are in the middle of their procedure (None while it is not written)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle).get("in_progress")
    except (OSError, ValueError):
        return None


INTERRUPTS = [pytest.param(signal.SIGTERM, id="sigterm-awx-cancel"), pytest.param(signal.SIGINT, id="sigint-ctrl-c")]


def ended_by(run: Run, sent: int) -> None:
    """The run ended as the signal ends ansible-playbook: Ctrl-C with Ansible's own line and rc 99, AWX's cancel non-zero."""
    if sent == signal.SIGINT:
        assert "User interrupted execution" in run.output and run.rc == 99, run.tail()
    else:
        assert run.rc != 0, run.tail()


@contextlib.contextmanager
def repairs_forgotten(fleet: Fleet, names: List[str]) -> Iterator[None]:
    """The nodes' repair histories put back as they were before the block: a test run once per signal leaves the loop guard's
    budget (3 repairs in 24 hours) to the tests after it as one run would."""
    kept = {}
    for name in names:
        path = fleet.history_file(name)
        with contextlib.suppress(FileNotFoundError), open(path, "rb") as handle:
            kept[name] = handle.read()
    try:
        yield
    finally:
        for name in names:
            path = fleet.history_file(name)
            if name in kept:
                with open(path, "wb") as handle:
                    handle.write(kept[name])
            elif os.path.exists(path):
                os.unlink(path)


@pytest.mark.parametrize("sent", INTERRUPTS)
def test_an_interrupt_during_a_later_batch_names_what_is_left_and_frees_the_lease(fleet: Fleet, sent: int) -> None:
    """AWX's cancel (SIGTERM) or Ctrl-C (SIGINT) while the second batch's node is in its procedure: the canary is done, the
    batch's node is named as in the middle of its procedure, the last one as not processed, with the command that finishes
    both."""
    names = sorted(fleet.nodes)[2:5]
    fleet.inventory = inventory(fleet, "yaml", names)
    with repairs_forgotten(fleet, names):
        interrupt_a_later_batch(fleet, names, sent)


def interrupt_a_later_batch(fleet: Fleet, names: List[str], sent: int) -> None:
    started = fleet.start_playbook("remediate", "-e", "numa_drift_batch=1")
    report = os.path.join(started["report_dir"], "report.json")
    try:
        end = time.time() + 300
        # The report written as batch 2 starts has its node in progress; the gate then lets it start, and its procedure
        # cordons it first: the signal comes in the middle of the procedure.
        while time.time() < end and started["process"].poll() is None and not (
                report_in_progress(report) == [names[1]] and fleet.unschedulable(names[1])):
            time.sleep(0.1)
        assert report_in_progress(report) == [names[1]] and fleet.unschedulable(names[1]), Fleet.finish(started).tail()
        started["process"].send_signal(sent)
        run = Fleet.finish(started)
        ended_by(run, sent)
        assert lease_freed(fleet) is None, run.tail()
        block = run.output[run.output.index("this remediate run ended before its rollout did"):]
        assert "in the middle of its procedure when the run ended: %s\n" % names[1] in block, block
        assert "not processed yet: %s\n" % names[2] in block, block
        assert "to finish the work: ansible-playbook -i %s nodeops.numa_drift.remediate --limit %s,%s\n" % (
            fleet.inventory, names[1], names[2]) in block, block
        rows = run.rows()
        assert rows[names[0]]["action"] == "repaired" and fleet.verdict(names[0]) == "in_sync", rows[names[0]]
        assert rows[names[1]]["action"] == "unreachable" and "the run ended during this node's procedure" in rows[names[1]]["message"]
        assert rows[names[2]]["action"] == "not_processed" and fleet.checkpoint_bytes(names[2]) == fleet.originals[names[2]]
    finally:
        for name in names:
            put_back(fleet, name)
            fleet.drift_again(name)


def lease_now(fleet: Fleet) -> Any:
    """The Lease as the API has it now (None before any run created it: a test run alone with -k)."""
    try:
        return fleet.api("GET", LOCK)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise


def said_it_changed_nothing(run: Run, command: str) -> str:
    """The run was interrupted (Ctrl-C) before its rollout started, and said so once after Ansible's own line, with the
    command (``ansible-playbook`` arguments) that runs it again; returns what it printed after Ansible's line."""
    assert "User interrupted execution" in run.output, run.tail()
    assert run.rc == 99, run.tail()
    block = run.output.split("User interrupted execution", 1)[1]
    assert block.count("nodeops.numa_drift: ") == 1, block
    assert ("nodeops.numa_drift: this remediate run ended before its rollout started (in its read-only first pass, or while waiting for"
            " the cluster lock): it changed no node and holds no cluster lock.\n"
            "  to run it again: ansible-playbook %s\n" % command) in block, block
    return block


def test_ctrl_c_during_the_first_pass_says_that_nothing_was_changed(fleet: Fleet) -> None:
    """Ctrl-C while the first pass probes the nodes (before the Lease is taken): no node touched, the Lease untouched, and
    after Ansible's own line the run says so, with the command that runs it again (this run's --limit)."""
    names = sorted(fleet.nodes)[2:5]
    fleet.inventory = path = inventory(fleet, "yaml", names + [sorted(fleet.nodes)[0]])
    # The first node's modules start through an interpreter that first leaves a mark, then waits a little: the mark says
    # that the first pass's probe is running there, and the wait keeps the first pass going while the signal comes.
    marker = os.path.join(fleet.dir, "first-pass-probe-started")
    wrapper = os.path.join(fleet.dir, "slow-python")
    with open(wrapper, "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\ntouch %s\nsleep 5\nexec %s \"$@\"\n" % (shlex.quote(marker), shlex.quote(fleet.info["python"])))
    os.chmod(wrapper, 0o755)
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    document["all"]["children"]["nodes"]["hosts"][names[0]]["ansible_python_interpreter"] = wrapper
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
    before = {name: fleet.checkpoint_bytes(name) for name in fleet.nodes}
    lease_before = lease_now(fleet)
    started = fleet.start_playbook("remediate", "--limit", ",".join(names))
    try:
        end = time.time() + 120
        while time.time() < end and started["process"].poll() is None and not os.path.exists(marker):
            time.sleep(0.1)
        assert os.path.exists(marker), Fleet.finish(started).tail()
        # The first pass imports the role's probe statically (import_role): no role's tasks are loaded while it runs, so the
        # signal cannot come in the window where ansible-core once hung (the strategy loading an include_role's tasks, see
        # the Ctrl-C test above); it comes while the probe's module runs on the first node.
        started["process"].send_signal(signal.SIGINT)
        run = Fleet.finish(started)
    finally:
        if os.path.exists(marker):
            os.unlink(marker)
    block = said_it_changed_nothing(run, "-i %s nodeops.numa_drift.remediate --limit %s" % (path, ",".join(names)))
    assert "cordoned by nodeops.numa_drift" not in block and "to finish the work" not in block, block
    # Nothing written, nothing touched: no report of this run, the Lease as it was, no Node cordoned, every checkpoint as it was.
    assert not os.path.exists(os.path.join(started["report_dir"], "report.json"))
    assert lease_now(fleet) == lease_before
    assert not any(fleet.unschedulable(name) for name in fleet.nodes)
    assert {name: fleet.checkpoint_bytes(name) for name in fleet.nodes} == before


def test_ctrl_c_while_the_gate_waits_for_the_lock_says_that_nothing_was_changed_and_so_does_the_report(fleet: Fleet) -> None:
    """Ctrl-C at the gate before the canary, while it waits for the cluster lock another rollout holds: the report written
    as the batch started (the canary in progress) is written again with the canary not processed, the run says it changed
    nothing, with the command that runs it again; the other rollout's Lease, every Node and every checkpoint as they were."""
    names = sorted(fleet.nodes)[2:4]
    fleet.inventory = inventory(fleet, "yaml", names)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    lease = lease_now(fleet)
    assert lease is not None and lease["spec"].get("holderIdentity") is None, lease  # released by the earlier runs
    lease["spec"] = {"holderIdentity": "someone-else", "leaseDurationSeconds": 600, "acquireTime": stamp, "renewTime": stamp}
    held = fleet.api("PUT", LOCK, lease)
    before = {name: fleet.checkpoint_bytes(name) for name in fleet.nodes}
    started = fleet.start_playbook("remediate", "-e", "numa_drift_lock_wait_timeout=300", "-e", "numa_drift_lock_poll=2")
    report = os.path.join(started["report_dir"], "report.json")
    try:
        end = time.time() + 300
        while time.time() < end and started["process"].poll() is None and not report_in_progress(report):
            time.sleep(0.1)
        canary = report_in_progress(report)
        assert canary and len(canary) == 1 and canary[0] in names, Fleet.finish(started).tail()
        # The report is the task before the gate's; the gate's action then polls the Lease every 2 s (no role's tasks are
        # being loaded: not the window where ansible-core once hung, see the Ctrl-C test above).
        time.sleep(3)
        assert started["process"].poll() is None and lease_holder(fleet) == "someone-else"
        started["process"].send_signal(signal.SIGINT)
        run = Fleet.finish(started)
        lease_after = lease_now(fleet)
    finally:
        fleet.api("PUT", LOCK, dict(lease_now(fleet), spec={"holderIdentity": None, "leaseDurationSeconds": 1, "renewTime": stamp}))
    said_it_changed_nothing(run, "-i %s nodeops.numa_drift.remediate" % fleet.inventory)
    # The report says the same: the canary not processed (its procedure never started), nothing in progress.
    written = run.report()
    assert (written["in_progress"], written["rollout_ended"], written["if_not_started"]) == ([], False, {}), written
    assert [run.rows()[name]["action"] for name in names] == ["not_processed", "not_processed"], run.rows()
    assert 'class="a-unreachable"' not in run.html()
    assert lease_after == held, lease_after  # the other rollout's Lease, not written by this run
    assert not any(fleet.unschedulable(name) for name in fleet.nodes)
    assert {name: fleet.checkpoint_bytes(name) for name in fleet.nodes} == before


class HeldServer:
    """An HTTP server on 127.0.0.1 that answers the first ``answered`` requests at once (``body``) and holds the next ones
    until ``release()`` (or ``hold_seconds``): ``held`` is set when one arrives, a sign of the task that sent it running."""

    def __init__(self, answered: int, body: Dict[str, Any], hold_seconds: float = 30.0) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.held = threading.Event()
        self.released = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                server.requests.append({"path": self.path, "body": json.loads(self.rfile.read(length).decode("utf-8")) if length else None})
                if len(server.requests) > answered:
                    server.held.set()
                    server.released.wait(hold_seconds)
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(json.dumps(body).encode("utf-8"))
                except OSError:
                    pass  # the run that sent a held request ended meanwhile (what these tests do)

            do_GET = do_POST = _answer  # noqa: N815

            def log_message(self, *args: Any) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("sent", INTERRUPTS)
def test_an_interrupt_during_the_gate_after_the_canary_names_the_next_batches_and_not_the_canary(fleet: Fleet, sent: int) -> None:
    """AWX's cancel (SIGTERM) or Ctrl-C (SIGINT) while the rollout gate before batch 2 runs (the canary done, its health
    gate asking Prometheus): the canary is not named as in the middle of its procedure, the nodes not reached yet are,
    with the command that finishes them; the report says the same, and the Lease is free."""
    # The canary is the node the tests above repaired least: each node may be repaired 3 times in 24 hours (the loop
    # guard), and the quiet rollout below repairs every node again.
    names = [sorted(fleet.nodes)[index] for index in (5, 3, 4)]
    fleet.inventory = inventory(fleet, "yaml", names)
    with repairs_forgotten(fleet, names):
        interrupt_the_gate_after_the_canary(fleet, names, sent)


def interrupt_the_gate_after_the_canary(fleet: Fleet, names: List[str], sent: int) -> None:
    # The gate asks Prometheus for firing alerts (the last of its checks, after the Lease's renewal): none before the
    # canary; the request of the gate before batch 2 is held, the sign that this gate runs.
    prometheus = HeldServer(answered=1, body={"status": "success", "data": {"alerts": []}})
    started = fleet.start_playbook("remediate", "-e", "numa_drift_batch=1", "-e", "numa_drift_prometheus_url=" + prometheus.url)
    try:
        if not prometheus.held.wait(300):
            raise AssertionError(Fleet.finish(started).tail())
        assert len(prometheus.requests) == 2 and lease_holder(fleet) is not None, prometheus.requests
        # The gate's action is waiting for Prometheus' answer: the strategy is not loading a role's tasks (the window where
        # ansible-core once hung, see the Ctrl-C test above).
        started["process"].send_signal(sent)
        run = Fleet.finish(started)
        ended_by(run, sent)
        assert lease_freed(fleet) is None, run.tail()
        block = run.output[run.output.index("nodeops.numa_drift: this remediate run ended before its rollout did"):]
        assert "  cordoned by nodeops.numa_drift (kubelet may be stopped there too): none\n" in block, block
        assert "in the middle of its procedure" not in block, block
        assert "  not processed yet: %s, %s\n" % (names[1], names[2]) in block, block
        assert "to finish the work: ansible-playbook -i %s nodeops.numa_drift.remediate --limit %s,%s\n" % (
            fleet.inventory, names[1], names[2]) in block, block
        # The report written as batch 2 started (the canary done, batch 2's node in progress), written again by the watcher:
        # the gate had not let batch 2 start, so its node is not processed, nothing in progress.
        report = run.report()
        assert (report["in_progress"], report["rollout_ended"], report["if_not_started"]) == ([], False, {}), report
        rows = run.rows()
        assert [rows[name]["action"] for name in names] == ["repaired", "not_processed", "not_processed"], rows
        assert fleet.verdict(names[0]) == "in_sync" and not fleet.unschedulable(names[0])
        assert all(fleet.checkpoint_bytes(name) == fleet.originals[name] and not fleet.unschedulable(name) for name in names[1:])
    finally:
        prometheus.close()
        for name in names:
            put_back(fleet, name)
            fleet.drift_again(name)


def test_ctrl_c_at_the_rollouts_end_leaves_nothing_to_finish_and_prints_no_block(fleet: Fleet) -> None:
    """Ctrl-C at the rollout's end, while its notification is sent (after the last batch, the final report and the
    Lease's release): every node is done, the Lease is free, and the run prints no block (there is nothing to finish)."""
    # Nodes that the tests above left drifted, repaired at most once by them (the loop guard allows 3 repairs in 24 hours;
    # the quiet rollout below is the third).
    names = [sorted(fleet.nodes)[index] for index in (5, 4)]
    fleet.inventory = inventory(fleet, "yaml", names)
    webhook = HeldServer(answered=0, body={})
    started = fleet.start_playbook("remediate", "-e", "numa_drift_webhook_url=" + webhook.url + "/hook")
    try:
        if not webhook.held.wait(300):
            raise AssertionError(Fleet.finish(started).tail())
        # The notification is the uri task's request: the strategy waits for it, it is not loading a role's tasks (the
        # window where ansible-core once hung, see the Ctrl-C test above).
        started["process"].send_signal(signal.SIGINT)
        run = Fleet.finish(started)
        assert "User interrupted execution" in run.output, run.tail()
        assert run.rc == 99, run.tail()
        assert webhook.requests[0]["body"]["text"].startswith("nodeops.numa_drift remediate: 2 nodes; actions repaired: 2;"), webhook.requests
        assert lease_holder(fleet) is None  # released by the play before the notification
        assert "nodeops.numa_drift: this remediate run" not in run.output.split("User interrupted execution", 1)[1], run.tail()
        report = run.report()
        assert (report["in_progress"], report["rollout_ended"], report["not_processed"]) == ([], True, []), report
        assert [run.rows()[name]["action"] for name in names] == ["repaired", "repaired"], run.rows()
        assert all(fleet.verdict(name) == "in_sync" and not fleet.unschedulable(name) for name in names)
    finally:
        webhook.close()
        for name in names:
            put_back(fleet, name)
            fleet.drift_again(name)


def put_back(fleet: Fleet, name: str) -> None:
    """What a node left mid-procedure may have: kubelet stopped, cordoned by the run. Put it back for the next tests."""
    fleet.nodectl(name, "start")  # a no-op when its supervisor runs
    node = fleet.api_node(name)
    node["spec"].pop("unschedulable", None)
    node["metadata"]["annotations"] = {key: value for key, value in (node["metadata"].get("annotations") or {}).items()
                                       if not key.startswith(PREFIX + "/")}
    fleet.api("PUT", "/api/v1/nodes/" + name, node)

# --------------------------------------------------------------------------- quiet success (item 3)


def test_a_real_rollout_from_a_yaml_inventory_is_quiet_and_says_each_batch(fleet: Fleet) -> None:
    names = sorted(fleet.nodes)
    # The nodes earlier tests repaired need nothing: the first pass settles them, the batches are the others'.
    work = [name for name in names if fleet.verdict(name) != "in_sync"]
    assert len(work) >= 3, work
    run = run_with(fleet, inventory(fleet, "yaml", names), "remediate", "-e", "numa_drift_batch=2")
    assert run.rc == 0, run.tail()
    rows = run.rows()
    assert all(fleet.verdict(name) == "in_sync" for name in names)
    assert [rows[name]["action"] for name in names] == ["repaired" if name in work else "none" for name in names], rows
    assert failures(run.output) == [], failures(run.output)
    nothing = len(names) - len(work)
    assert "%d of %d nodes need nothing%s; %d go through the procedure: %s" % (
        nothing, len(names), " (in_sync %d)" % nothing if nothing else "", len(work), ", ".join(work)) in run.output
    # The canary, then batches of two, the last one with what is left.
    batches = [work[:1]] + [work[index:index + 2] for index in range(1, len(work), 2)]
    for number, batch in enumerate(batches, 1):
        assert "batch %d/%d: %s" % (number, len(batches), ", ".join(batch)) in run.output, run.output[-3000:]
    assert "after batch 1 of %d: " % len(batches) in run.output and "after batch %d of %d: " % (len(batches), len(batches)) in run.output
    print("quiet rollout of %d nodes in batches of 2: %.1f s" % (len(names), run.seconds))


# --------------------------------------------------------------------------- rollback (items 0 and 2)


def test_rollback_from_a_plain_ini_inventory_restores_the_backup(fleet: Fleet) -> None:
    name = sorted(fleet.nodes)[0]
    run = run_with(fleet, inventory(fleet, "ini", [name]), "rollback", "-l", name, "-e", "numa_drift_rollback_confirm=true")
    assert run.rc == 0, run.tail()
    assert fleet.checkpoint_bytes(name) == fleet.originals[name]


def test_rollback_without_a_backup_leaves_kubelet_running(fleet: Fleet) -> None:
    name = sorted(fleet.nodes)[1]
    assert fleet.verdict(name) == "in_sync"
    shutil.rmtree(os.path.join(fleet.root(name), "var/lib/nodeops-numa-drift/backups"))
    before = fleet.service(name)
    assert before["active"], before
    checkpoint = fleet.checkpoint_bytes(name)
    run = run_with(fleet, inventory(fleet, "ini", [name]), "rollback", "-l", name, "-e", "numa_drift_rollback_confirm=true")
    assert run.rc != 0, run.tail()
    assert "nothing to restore, nothing was touched" in run.output
    after = fleet.service(name)
    assert (after["pid"], after["restarts"], after["active_since"]) == (before["pid"], before["restarts"], before["active_since"]), (before, after)
    assert fleet.checkpoint_bytes(name) == checkpoint
