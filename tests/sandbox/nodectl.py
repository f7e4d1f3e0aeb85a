# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``systemctl`` for one sandbox node's kubelet stand-in (run by ``supervisor.py``).

Usage::

    python tests/sandbox/nodectl.py --node-dir D start|stop|restart|is-active|status|service-status
    python tests/sandbox/nodectl.py --node-dir D inject crash|not-ready|clear [--message TEXT]

* ``start``: start the supervisor (Restart=always, RestartSec=1s) unless it runs; resets the
  restart counter like a manual ``systemctl start``; returns once the first start happened.
* ``stop``: synchronous: returns when the stand-in and its supervisor are gone, so nothing
  restarts it (SIGTERM, SIGKILL after the stop timeout).
* ``restart``: ``stop`` then ``start``.
* ``is-active``: prints ``active`` and exits 0 only while the stand-in process runs; otherwise
  prints ``activating`` (waiting to be restarted after a crash) or ``inactive`` and exits 3.
* ``status``: prints ``{"active", "pid", "restarts", "active_since", "last_exit", "state",
  "supervisor_pid"}`` as JSON; exits 0.
* ``service-status``: one line for service-control commands, e.g. ``active restarts=0 pid=4242``;
  exits 0 when active, 3 otherwise (the ``status`` command of the role's ``command`` mode).
* ``inject``: write (or clear) the stand-in's fault file ``D/faults.json``; it takes effect at the
  next start of the stand-in.
* ``systemctl VERB [OPTIONS] UNIT...``: the node's ``systemctl`` (what ``fleet.py`` puts on the
  ``PATH`` of a node run in the role's ``systemd`` service mode): ``start``, ``stop``, ``restart``,
  ``reset-failed``, ``is-active``, ``status``, ``daemon-reload`` and ``show`` (``--property``/``-p``,
  ``--value``) for the one unit this node has (``service.json``'s ``unit``: ``kubelet.service``,
  ``k3s-agent.service``, ...); a unit name gets ``.service`` when it has no unit suffix, as in
  systemd. Any other unit is not loaded: ``stop``/``start`` fail with systemctl's message and exit
  code 5 and touch nothing, ``show`` says ``LoadState=not-found``. Every call is appended to
  ``D/systemctl.log`` (one JSON object a line: ``at``, ``verb``, ``units``, ``rc``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

if __package__:
    from ansible_collections.nodeops.numa_drift.tests.sandbox import supervisor
else:  # run as a script: this directory is on sys.path
    import supervisor  # type: ignore[no-redef]

SUPERVISOR_SCRIPT = os.path.join(os.path.dirname(os.path.realpath(__file__)), "supervisor.py")
FAULT_FILE = "faults.json"
SYSTEMCTL_LOG = "systemctl.log"
UNIT_SUFFIXES = (".service", ".socket", ".target", ".timer", ".mount", ".automount", ".path", ".slice", ".scope", ".device", ".swap")
SHOW_PROPERTIES = ("Id", "LoadState", "ActiveState", "SubState", "NRestarts", "MainPID", "ActiveEnterTimestampMonotonic")
SUB_STATES = {"active": "running", "activating": "auto-restart", "deactivating": "stop-sigterm", "inactive": "dead"}
NOT_LOADED_EXIT = 5  # systemctl start/stop of a unit that does not exist
SUPERVISOR_LOG = "supervisor.log"
START_TIMEOUT = 15.0
INACTIVE_EXIT = 3


def belongs_to(pid: Optional[int], node_dir: str) -> bool:
    """A live process whose command line names this node directory (guards against pid reuse)."""
    if not supervisor.process_alive(pid):
        return False
    prefix = os.path.abspath(node_dir)
    return any(arg == prefix or arg.startswith(prefix + os.sep) for arg in supervisor.process_cmdline(pid or 0))


def effective_status(recorded: Optional[Dict[str, Any]], supervisor_running: bool, service_running: bool) -> Dict[str, Any]:
    """What ``systemctl`` would say, from the supervisor's file and what really runs."""
    recorded = recorded or {}
    status = {
        "active": False,
        "pid": None,
        "restarts": int(recorded.get("restarts", 0)),
        "active_since": None,
        "last_exit": recorded.get("last_exit"),
        "state": "inactive",
        "supervisor_pid": None,
    }
    if not supervisor_running:
        return status
    status["supervisor_pid"] = recorded.get("supervisor_pid")
    if service_running and recorded.get("state") == "active":
        status.update(active=True, pid=recorded.get("pid"), active_since=recorded.get("active_since"), state="active")
    else:
        status["state"] = "deactivating" if recorded.get("state") == "deactivating" else "activating"
    return status


def current_status(node_dir: str) -> Dict[str, Any]:
    recorded = supervisor.read_status(node_dir) or {}
    supervisor_running = belongs_to(recorded.get("supervisor_pid"), node_dir)
    service_running = supervisor_running and belongs_to(recorded.get("pid"), node_dir)
    return effective_status(recorded, supervisor_running, service_running)


def service_status_line(status: Dict[str, Any]) -> str:
    line = "%s restarts=%d" % (status["state"], status["restarts"])
    if status["pid"]:
        line += " pid=%d" % status["pid"]
    return line


def wait_until(predicate: Any, timeout: float, step: float = 0.05) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


def spawn_supervisor(node_dir: str) -> subprocess.Popen:
    """Start the supervisor in its own session (it outlives this command); do not wait."""
    supervisor.load_service(node_dir)  # fail early and clearly on a missing or broken service.json
    with open(os.path.join(node_dir, SUPERVISOR_LOG), "ab") as log:
        return subprocess.Popen(  # pylint: disable=consider-using-with
            [sys.executable, SUPERVISOR_SCRIPT, "--node-dir", node_dir], cwd=node_dir, stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
        )


def wait_started(node_dir: str, process: subprocess.Popen) -> Dict[str, Any]:
    """Returns once the supervisor made its first start of the service."""

    def started() -> bool:
        recorded = supervisor.read_status(node_dir) or {}
        return (recorded.get("supervisor_pid") == process.pid and recorded.get("state") != "inactive") or process.poll() is not None

    if not wait_until(started, START_TIMEOUT) or process.poll() is not None:
        raise RuntimeError("the supervisor of %s did not start (see %s)" % (node_dir, os.path.join(node_dir, SUPERVISOR_LOG)))
    return current_status(node_dir)


def start(node_dir: str) -> Dict[str, Any]:
    node_dir = os.path.abspath(node_dir)
    status = current_status(node_dir)
    if status["supervisor_pid"]:
        return status
    return wait_started(node_dir, spawn_supervisor(node_dir))


def _kill(pid: Optional[int], node_dir: str, signum: int) -> None:
    if belongs_to(pid, node_dir):
        try:
            os.kill(pid or 0, signum)
        except ProcessLookupError:
            pass


def stop_timeout(node_dir: str) -> float:
    try:
        return supervisor.load_service(node_dir).stop_timeout + 5.0
    except (OSError, ValueError, KeyError):
        return supervisor.DEFAULT_STOP_TIMEOUT + 5.0


def request_stop(node_dir: str) -> None:
    """SIGTERM to the supervisor: it stops the stand-in and exits (the asynchronous half of ``stop``)."""
    node_dir = os.path.abspath(node_dir)
    _kill((supervisor.read_status(node_dir) or {}).get("supervisor_pid"), node_dir, signal.SIGTERM)


def stop(node_dir: str) -> Dict[str, Any]:
    """Synchronous stop: the stand-in and its supervisor are gone when this returns."""
    node_dir = os.path.abspath(node_dir)
    recorded = supervisor.read_status(node_dir) or {}
    supervisor_pid, service_pid = recorded.get("supervisor_pid"), recorded.get("pid")
    timeout = stop_timeout(node_dir)
    _kill(supervisor_pid, node_dir, signal.SIGTERM)
    if not wait_until(lambda: not belongs_to(supervisor_pid, node_dir), timeout):
        _kill(supervisor_pid, node_dir, signal.SIGKILL)
    service_pid = (supervisor.read_status(node_dir) or {}).get("pid") or service_pid
    if not wait_until(lambda: not belongs_to(service_pid, node_dir), 2.0):
        _kill(service_pid, node_dir, signal.SIGKILL)
        wait_until(lambda: not belongs_to(service_pid, node_dir), 5.0)
    status = current_status(node_dir)
    final = supervisor.read_status(node_dir)
    if final is not None and final.get("state") != "inactive":
        final.update(state="inactive", active=False, pid=None, active_since=None)
        supervisor.write_status(node_dir, final)
    return status


def inject(node_dir: str, mode: str, message: Optional[str]) -> str:
    path = os.path.join(os.path.abspath(node_dir), FAULT_FILE)
    if mode == "clear":
        if os.path.exists(path):
            os.unlink(path)
        return "fault cleared"
    default = {"crash": "injected start failure", "not-ready": "container runtime network not ready: NetworkReady=false"}[mode]
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"mode": mode, "message": message or default}, handle)
    return "fault %s set; it applies at the next start" % mode


# --------------------------------------------------------------------------- the node's systemctl


def unit_name(name: str) -> str:
    """systemd's name mangling: ``k3s-agent`` -> ``k3s-agent.service``; a name with a unit suffix stays."""
    return name if name.endswith(UNIT_SUFFIXES) else name + ".service"


def node_unit(node_dir: str) -> Optional[str]:
    try:
        return supervisor.load_service(node_dir).unit
    except (OSError, ValueError, KeyError):
        return None


def show_properties(unit: str, loaded: bool, status: Dict[str, Any]) -> Dict[str, str]:
    """``systemctl show`` of a service: the properties the remediate role and the molecule checks read."""
    state = status["state"] if loaded else "inactive"
    since = status.get("active_since") if loaded else None
    return {
        "Id": unit,
        "LoadState": "loaded" if loaded else "not-found",
        "ActiveState": state,
        "SubState": SUB_STATES.get(state, "dead"),
        "NRestarts": str(status["restarts"] if loaded else 0),
        "MainPID": str((status.get("pid") or 0) if loaded else 0),
        # systemd's is CLOCK_MONOTONIC in microseconds; the start time in microseconds identifies a run just as well.
        "ActiveEnterTimestampMonotonic": str(int(since * 1e6) if since else 0),
    }


def split_systemctl_args(args: List[str]) -> Tuple[Optional[str], List[str], List[str], bool]:
    """``(verb, units, properties, value_only)`` of a systemctl command line (options anywhere)."""
    verb, units, properties, value_only = None, [], [], False
    words = list(args)
    while words:
        word = words.pop(0)
        if word in ("-p", "--property") and words:
            properties.extend(words.pop(0).split(","))
        elif word.startswith("--property="):
            properties.extend(word[len("--property="):].split(","))
        elif word == "--value":
            value_only = True
        elif word.startswith("-"):
            continue  # --no-pager, --quiet, --no-block, ...: no effect here
        elif verb is None:
            verb = word
        else:
            units.append(unit_name(word))
    return verb, units, properties, value_only


def systemctl(node_dir: str, args: List[str]) -> Tuple[int, List[str], List[str]]:
    """``(exit code, stdout lines, stderr lines)`` of ``systemctl ARGS`` on this node."""
    verb, units, properties, value_only = split_systemctl_args(args)
    mine = node_unit(node_dir)
    if verb == "daemon-reload":
        return 0, [], []
    if verb is None or verb not in ("start", "stop", "restart", "reset-failed", "is-active", "status", "show"):
        return 1, [], ["Unknown command verb '%s'." % verb if verb else "systemctl: a command verb is required"]
    if not units:
        return 1, [], ["Too few arguments."]
    out: List[str] = []
    err: List[str] = []
    code = 0
    for unit in units:
        loaded = unit == mine
        if verb in ("start", "stop", "restart", "reset-failed") and not loaded:
            what = {"start": "start", "stop": "stop", "restart": "restart", "reset-failed": "reset failed state of unit"}[verb]
            err.append("Failed to %s %s: Unit %s %s." % (what, unit, unit, "not found" if verb in ("start", "restart") else "not loaded"))
            code = code or (1 if verb == "reset-failed" else NOT_LOADED_EXIT)
            continue
        if verb in ("stop", "restart"):
            stop(node_dir)
        if verb in ("start", "restart"):
            start(node_dir)
        status = current_status(node_dir)
        if verb == "is-active":
            out.append(status["state"] if loaded else "inactive")
            code = code or (0 if loaded and status["active"] else INACTIVE_EXIT)
        elif verb == "status":
            if not loaded:
                err.append("Unit %s could not be found." % unit)
                code = code or 4
                continue
            out.append("%s - kubelet (sandbox stand-in, %s)" % (unit, node_dir))
            out.append("     Active: %s (%s) restarts=%d" % (status["state"], SUB_STATES.get(status["state"], "dead"), status["restarts"]))
            out.append("   Main PID: %s" % (status["pid"] or "none"))
            code = code or (0 if status["active"] else INACTIVE_EXIT)
        elif verb == "show":
            shown = show_properties(unit, loaded, status)
            names = properties or list(SHOW_PROPERTIES)
            out.extend(shown.get(name, "") if value_only else "%s=%s" % (name, shown.get(name, "")) for name in names)
    return code, out, err


def log_systemctl(node_dir: str, args: List[str], code: int) -> None:
    verb, units, _properties, _value = split_systemctl_args(args)
    with open(os.path.join(node_dir, SYSTEMCTL_LOG), "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"at": time.time(), "verb": verb, "units": units, "rc": code}, sort_keys=True) + "\n")


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="systemctl for a sandbox node's kubelet stand-in")
    parser.add_argument("--node-dir", required=True, help="the node directory (service.json, supervisor.json, logs)")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("start", "stop", "restart", "is-active", "status", "service-status"):
        commands.add_parser(name)
    injection = commands.add_parser("inject", help="fault injection for the stand-in's next start")
    injection.add_argument("mode", choices=("crash", "not-ready", "clear"))
    injection.add_argument("--message", default=None)
    manager = commands.add_parser("systemctl", help="the node's systemctl (its one unit)")
    manager.add_argument("arguments", nargs=argparse.REMAINDER)
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    options = parse_args(argv)
    node_dir = options.node_dir
    if not os.path.isdir(node_dir):
        sys.stderr.write("nodectl: %s is not a node directory\n" % node_dir)
        return 1
    if options.command in ("start", "restart"):
        if options.command == "restart":
            stop(node_dir)
        try:
            start(node_dir)
        except (RuntimeError, OSError, ValueError, KeyError) as error:
            sys.stderr.write("nodectl: %s\n" % error)
            return 1
        return 0
    if options.command == "stop":
        stop(node_dir)
        return 0
    if options.command == "inject":
        print(inject(node_dir, options.mode, options.message))
        return 0
    if options.command == "systemctl":
        try:
            code, out, err = systemctl(node_dir, options.arguments)
        except (RuntimeError, OSError, ValueError, KeyError) as error:
            code, out, err = 1, [], ["Job failed: %s" % error]
        log_systemctl(node_dir, options.arguments, code)
        for line in out:
            print(line)
        for line in err:
            sys.stderr.write(line + "\n")
        return code
    status = current_status(node_dir)
    if options.command == "status":
        print(json.dumps(status, sort_keys=True))
        return 0
    if options.command == "is-active":
        print(status["state"])
    else:
        print(service_status_line(status))
    return 0 if status["active"] else INACTIVE_EXIT


if __name__ == "__main__":
    sys.exit(main())
