# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster lock's release, and the watcher that releases it when ansible-playbook ends without doing so.

The remediate play releases its Lease itself when the rollout ends. Ansible runs no task at all when the run is
interrupted (Ctrl-C, a cancelled job, a killed controller process), or when every node of a batch is lost in the
middle of its procedure (no host is left to run a task on, and Ansible runs no later play). So when the rollout
gate takes the Lease it also starts a watcher on the controller: a separate Python process in its own session (a
Ctrl-C at the terminal does not reach it) that waits for the ansible-playbook process to exit, then gives the Lease
up if this run still holds it. The release is the same compare-and-swap as every write of the lock: it replaces the
Lease carrying its resourceVersion, and only while ``holderIdentity`` is this run's.

A run that still held the Lease when it ended did not finish its rollout: the watcher then prints one short block on
the run's own output (the nodes this run left cordoned, those in the middle of their procedure or not processed, the
report, the command that finishes the work), since Ansible itself says only ``User interrupted execution``.

Before the Lease is taken (the read-only first pass, the wait for the lock), a first-pass watcher, started at the run's
start, says instead that the run changed nothing, when the run ended there; the gate hands over to the Lease's watcher
when it takes the Lease (it removes the first-pass watcher's hand-over file), and only that one speaks from then on.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _cordon, _report, _rollout, _triage
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s import CONFLICT_RETRIES, Api, ApiFailure

LEASE = ("coordination.k8s.io/v1", "Lease")
POLL_SECONDS = 0.5
# Seconds the watcher may hold the run's output after the run ended (see main).
OUTPUT_SECONDS = 15.0
NOT_HELD = "the cluster lock was not held by this run"
FIRST_PASS = "first_pass"
RELEASED = "released the cluster lock"

# The watcher's interpreter loads collections as ansible-playbook does (the same paths), then runs main().
BOOTSTRAP = (
    "import json, sys\n"
    "from ansible.plugins.loader import init_plugin_loader\n"
    "options = json.loads(sys.argv[1])\n"
    "init_plugin_loader(options['collection_paths'])\n"
    "from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._lease_watch import main\n"
    "sys.exit(main(options))\n"
)


def release(api: Api, name: str, namespace: str, holder: str) -> str:
    """Give the Lease up when ``holder`` holds it (holderIdentity cleared, so the next run takes it at once)."""
    for _attempt in range(CONFLICT_RETRIES):
        lease = api.get(LEASE[0], LEASE[1], name, namespace)
        if lease is None or (lease.get("spec") or {}).get("holderIdentity") != holder:
            return NOT_HELD
        try:
            api.replace(LEASE[0], LEASE[1], _rollout.lease_body(lease, name, namespace, holder, 1, time.time(), release=True), namespace)
            return RELEASED
        except ApiFailure as failure:
            if failure.status != 409:  # 409: written meanwhile (renewed or taken over): look again
                raise
    raise ApiFailure("the Lease kept changing while releasing it")


def _stat(pid: int) -> List[str]:
    """/proc/PID/stat's fields after the command name (field 3 on), [] where /proc cannot tell."""
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def process_start(pid: int) -> Optional[str]:
    """The process's start time in clock ticks (/proc/PID/stat field 22), None where /proc cannot tell."""
    fields = _stat(pid)
    return fields[19] if len(fields) > 19 else None


def run_started_at(pid: int) -> str:
    """When the process ``pid`` started (UTC, whole seconds, as a report's ``generated_at``): a report generated at or after
    it is this run's (its first one comes before the gate takes the Lease). Now, where /proc cannot tell."""
    started = process_start(pid)
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            boot = next(int(line.split()[1]) for line in handle if line.startswith("btime "))
        at = boot + int(started or "") / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, StopIteration):
        at = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def running(pid: int, started: Optional[str]) -> bool:
    """``pid`` is still the process that started at ``started`` (a reused PID is another process), and has not ended:
    a zombie (state Z, or X) has ended; its parent may wait for this watcher (the run's output, see spawn) before it
    reaps it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = _stat(pid)
    if fields and fields[0] in ("Z", "X"):
        return False
    return started is None or (fields[19] if len(fields) > 19 else None) == started


def unfinished_block(report: Mapping[str, Any], cordoned_nodes: Optional[Sequence[str]], why_not: str, inventory: str,
                     report_dir: str) -> str:
    """What a run that ended in the middle of its rollout left, and the command that finishes the work.

    ``report``: the report.json this run wrote last (before the batch it was in, its nodes as in progress; {} when it
    wrote none: it ended before any node's procedure started); ``cordoned_nodes``: the Nodes that carry this
    collection's cordon now (None: not known, ``why_not`` says why).
    """
    head = ("nodeops.numa_drift: this remediate run ended before its rollout did (interrupted, cancelled, or every node"
            " of a batch lost); the cluster lock was released.")
    rows = [row for row in report.get("nodes") or [] if isinstance(row, Mapping)]
    if not rows:
        return head + "\n  it ended before any node's procedure started: this run changed no node.\n"
    host_of = {str(row.get("node")): str(row.get("host")) for row in rows}
    cordoned = [host_of[name] for name in cordoned_nodes or () if name in host_of]
    in_progress = [str(row.get("host")) for row in rows if str(row.get("message") or "").startswith(_report.IN_PROGRESS_HEAD)]
    waiting = [str(row.get("host")) for row in rows if row.get("action") == "not_processed"]
    unreachable = [str(row.get("host")) for row in rows if row.get("action") == "unreachable" and str(row.get("host")) not in in_progress]
    lines = [head]
    if cordoned_nodes is None:
        lines.append("  could not list the Nodes (%s): look for Nodes with the annotation cordoned-by: nodeops.numa_drift" % why_not)
    else:
        lines.append("  cordoned by nodeops.numa_drift (kubelet may be stopped there too): %s" % (_triage.shown(cordoned) or "none"))
    for label, hosts in (("in the middle of its procedure when the run ended", in_progress), ("not processed yet", waiting),
                         ("not reached", unreachable)):
        if hosts:
            lines.append("  %s: %s" % (label, _triage.shown(hosts)))
    lines.append("  report: %s (and report.json)" % os.path.join(report_dir, "report.html"))
    finish = list(dict.fromkeys(cordoned + in_progress + waiting + unreachable))
    if finish:
        lines.append("  to finish the work: ansible-playbook %s nodeops.numa_drift.remediate --limit %s" % (inventory, ",".join(finish)))
    else:
        lines.append("  nothing is left to finish")
    return "\n".join(lines) + "\n"


def this_runs_report(report_dir: str, since: str) -> Optional[Dict[str, Any]]:
    """The report.json this run wrote (a remediate report generated at or after ``since``, the run's start), {}
    when it wrote none (an older run's, the probe's, or none at all), None when its last one is the rollout's final
    report (``rollout_ended``: the rollout ended, only its release failed; a report without the field: nothing in
    progress). The report written after a batch's procedures has nothing in progress but the rollout goes on."""
    try:
        with open(os.path.join(report_dir, "report.json"), encoding="utf-8") as handle:
            report = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(report, dict) or report.get("kind") != "remediate" or str(report.get("generated_at") or "") < since:
        return {}
    ended = report.get("rollout_ended")
    return None if (ended if isinstance(ended, bool) else not report.get("in_progress")) else report


def _release_and_look(options: Mapping[str, Any]) -> Tuple[str, Optional[List[str]], str]:
    """Release the Lease; when this run still held it, also the Nodes our cordon is on (None and why when not listed)."""
    api = Api(options.get("kubeconfig"), options.get("context"))
    said = release(api, options["name"], options["namespace"], options["holder"])
    if said != RELEASED or options.get("output_fd") is None:
        return said, None, ""
    prefix = str(options.get("annotation_prefix") or "numa-drift.nodeops.io")
    try:
        items = api.list("v1", "Node").get("items") or []
    except ApiFailure as failure:
        return said, None, str(failure)
    return said, [str((node.get("metadata") or {}).get("name")) for node in items if _cordon.node_state(node, prefix)["cordoned_by"] == "us"], ""


def _close(output: Optional[int]) -> None:
    if output is not None:
        try:
            os.close(output)
        except OSError:
            pass


def handover_file(pid: int, started: Optional[str]) -> str:
    """The first-pass watcher's hand-over file for the run ``pid`` that started at ``started``: it exists while that
    watcher speaks for the run (from the run's start until the gate takes the Lease)."""
    return os.path.join(tempfile.gettempdir(), "nodeops-numa-drift-first-pass-%d-%s" % (pid, started or "unknown"))


def hand_over(pid: int) -> None:
    """The Lease's watcher speaks for the run ``pid`` from now on (it holds the Lease): the first-pass watcher stays silent."""
    # Not there: no first-pass watcher (another playbook, or it could not start), or handed over already.
    _forget(handover_file(pid, process_start(pid)))


def gate_file(pid: int, started: Optional[str]) -> str:
    """Where the rollout gate of the run ``pid`` (started at ``started``) notes the last batch it let start."""
    return os.path.join(tempfile.gettempdir(), "nodeops-numa-drift-gate-%d-%s" % (pid, started or "unknown"))


def gate_passed(pid: int, batch: int) -> None:
    """The rollout controls before ``batch`` passed: its procedures start now (written atomically: a watcher reads the
    number or the one before it)."""
    path = gate_file(pid, process_start(pid))
    temporary = "%s.%d" % (path, os.getpid())
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write("%d\n" % batch)
    os.replace(temporary, path)


def last_batch_started(path: str) -> int:
    """The last batch whose procedures the run started (``gate_passed``), 0 when none (or unreadable)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return int(handle.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def settled_report(report_dir: str, since: str, started_batch: int) -> Optional[Dict[str, Any]]:
    """This run's last report (as ``this_runs_report``), made true for a run that ended before the rollout controls let the
    batch it has in progress start (``started_batch`` is lower): written again with those nodes not processed."""
    report = this_runs_report(report_dir, since)
    batch = (report or {}).get("in_progress_batch")
    if not report or not report.get("in_progress") or not isinstance(batch, int) or started_batch >= batch:
        return report
    report = _report.not_started(report)
    try:
        _report.write(report_dir, report)
    except OSError:
        pass  # the block still says it; the report on disk keeps them as in progress
    return report


def _runs_end(options: Mapping[str, Any]) -> Tuple[int, Optional[Dict[str, Any]]]:
    """What a watcher reads once the run ended: the last batch its gate let start, and its report as ``settled_report``
    leaves it; the gate's note is removed (read once)."""
    gate = str(options.get("gate") or "")
    started_batch = last_batch_started(gate)
    _forget(gate)
    return started_batch, settled_report(str(options.get("report_dir") or ""), str(options.get("since") or ""), started_batch)


def _forget(path: str) -> None:
    """Remove ``path`` when it is there (a hand-over file, the gate's note)."""
    with contextlib.suppress(OSError):
        os.unlink(path)


def first_pass_block(inventory: str, limit: Optional[str]) -> str:
    """What a run that ended before its rollout started left: nothing; the command that runs it again."""
    return ("nodeops.numa_drift: this remediate run ended before its rollout started (in its read-only first pass, or while"
            " waiting for the cluster lock): it changed no node and holds no cluster lock.\n"
            "  to run it again: ansible-playbook %s nodeops.numa_drift.remediate%s\n" % (inventory, " --limit %s" % limit if limit else ""))


def first_pass_main(options: Mapping[str, Any]) -> int:
    """Wait for the run to end; when it ended before the gate took the Lease (no hand-over) and before the rollout controls
    let any batch start (a rollout with no node to do, or stopped by a control, writes its final report and says so), say
    that it changed nothing."""
    while running(int(options["pid"]), options.get("started")):
        time.sleep(POLL_SECONDS)
    output = options.get("output_fd")
    handover = str(options.get("handover") or "")
    handed_over = not os.path.exists(handover)
    _forget(handover)
    if handed_over:  # the Lease's watcher speaks for the run (and reads the gate's note)
        _close(output)
        return 0
    started_batch, report = _runs_end(options)
    # A report the rollout ended with says what happened itself (None here); no report, or one written before a batch
    # when no batch's controls had passed yet (no procedure started): nothing was changed.
    if output is not None and report is not None and started_batch == 0:
        try:
            os.write(output, first_pass_block(str(options.get("inventory") or "-i INVENTORY"), options.get("limit")).encode("utf-8", "replace"))
        except OSError:
            pass
    _close(output)
    return 0


def main(options: Mapping[str, Any]) -> int:
    """Wait for the ansible-playbook process to end, then release the Lease if the run still holds it, and say on the
    run's output (``output_fd``) what an unfinished run left (the first-pass watcher: first_pass_main).

    The run's output is held only OUTPUT_SECONDS after the run: a reader of it (``| tee``, a CI job, AWX) waits for its
    end, and the API client has no timeout of its own. A release that takes longer goes on without it."""
    if options.get("mode") == FIRST_PASS:
        return first_pass_main(options)
    while running(int(options["pid"]), options.get("started")):
        time.sleep(POLL_SECONDS)
    output = options.get("output_fd")
    answer: List[Any] = []

    def work() -> None:
        try:
            answer.append(_release_and_look(options))
        except ApiFailure as failure:
            answer.append(failure)

    thread = threading.Thread(target=work, name="release", daemon=True)
    thread.start()
    thread.join(OUTPUT_SECONDS)
    if thread.is_alive():
        _close(output)
        output = None
        thread.join()
    if not answer or isinstance(answer[0], ApiFailure):
        _close(output)
        return 1  # the Lease expires by itself (numa_drift_lock_duration)
    said, cordoned, why_not = answer[0]
    report = _runs_end(options)[1] if said == RELEASED else None
    _forget(str(options.get("gate") or ""))
    if output is not None and report is not None:
        text = unfinished_block(report, cordoned, why_not, str(options.get("inventory") or "-i INVENTORY"), str(options.get("report_dir")))
        try:
            os.write(output, text.encode("utf-8", "replace"))
        except OSError:
            pass
    _close(output)
    return 0


def run_output(pid: int) -> Optional[int]:
    """The watched run's standard output, opened again for appending (the block lands where the run's output goes: a
    terminal, a pipe, AWX's job output; never over a log file's start), or None where it cannot be opened."""
    try:
        return os.open("/proc/%d/fd/1" % pid, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY)
    except OSError:
        return None


def _start(options: Dict[str, Any], output: Optional[int]) -> Dict[str, Any]:
    """Start a watcher with ``options`` (it gets ``output``, the run's output, and nothing else); closes ``output`` here."""
    try:
        # Its own session: a Ctrl-C (SIGINT to the terminal's process group) or a hang-up does not reach it. It writes
        # nothing but the block, on the run's output it is given (its own stdout and stderr go nowhere).
        watcher = subprocess.Popen(  # pylint: disable=consider-using-with  # it outlives this process on purpose
            [sys.executable, "-c", BOOTSTRAP, json.dumps(options)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=True, pass_fds=(output,) if output is not None else (), start_new_session=True)
    except OSError as error:
        return {"started": False, "error": str(error)}
    finally:
        _close(output)
    return {"started": True, "pid": watcher.pid, "watches": options["pid"]}


def spawn(lock: Mapping[str, Any], kubeconfig: Optional[str], context: Optional[str], pid: int,
          collection_paths: Sequence[str], unfinished: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """Start the watcher of ``pid`` (ansible-playbook) for ``lock``; returns what the gate reports about it.

    ``unfinished``: ``report_dir``, ``inventory`` (the run's ``-i`` options) and ``annotation_prefix``, for the block an
    unfinished run prints on its output (none without them). The first-pass watcher, if any, hands over to it."""
    output = run_output(pid) if unfinished else None
    started_at = process_start(pid)
    options = dict(unfinished or {}, pid=pid, started=started_at, gate=gate_file(pid, started_at), name=lock["name"],
                   namespace=lock["namespace"], holder=lock["holder"], kubeconfig=kubeconfig, context=context, collection_paths=list(collection_paths),
                   output_fd=output, since=run_started_at(pid))
    started = _start(options, output)
    if not started["started"]:
        return {"started": False, "message": "could not start the lock's watcher (%s): a run that ends without releasing the lock "
                                             "leaves it until numa_drift_lock_duration has passed" % started["error"]}
    hand_over(pid)
    return started


def spawn_first_pass(pid: int, collection_paths: Sequence[str], report_dir: str, inventory: str, limit: Optional[str]) -> Dict[str, Any]:
    """Start the first-pass watcher of ``pid`` (ansible-playbook): a run that ends before the gate takes the Lease (and
    before any report) says that it changed nothing, with the command that runs it again (``limit``: the run's --limit)."""
    output = run_output(pid)
    if output is None:
        return {"started": False, "message": "the run's output cannot be opened again: nothing to say it on"}
    started = process_start(pid)
    handover = handover_file(pid, started)
    try:
        with open(handover, "w", encoding="utf-8"):
            pass
    except OSError as error:
        _close(output)
        return {"started": False, "message": "could not write %s: %s" % (handover, error)}
    options = {"mode": FIRST_PASS, "pid": pid, "started": started, "handover": handover, "gate": gate_file(pid, started),
               "report_dir": report_dir, "inventory": inventory,
               "limit": limit or None, "collection_paths": list(collection_paths), "output_fd": output,
               "since": run_started_at(pid)}
    result = _start(options, output)
    if not result["started"]:
        hand_over(pid)
        return {"started": False, "message": "could not start the first pass's watcher (%s)" % result["error"]}
    return result
