# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A systemd stand-in for one sandbox node's kubelet: ``Restart=always``, ``RestartSec=1s``.

Usage::

    python tests/sandbox/supervisor.py --node-dir D

``D/service.json`` describes the service::

    {"command": ["python3", "kubelet_standin.py", "--root", "..."], "restart_sec": 1.0,
     "restart_max_sec": 0, "restart_steps": 0, "stop_timeout": 10.0, "max_lifetime": 7200,
     "log": "kubelet.log", "environment": {}, "unit": "kubelet.service"}

The supervisor starts the command, restarts it ``restart_sec`` after every exit (whatever the
exit code, like ``Restart=always`` with no start limit) and counts the restarts. ``unit`` is the
service's name (``kubelet.service``; ``k3s-agent.service`` on a k3s-shaped node...): the name
``nodectl.py systemctl`` answers to. With
``restart_steps`` and ``restart_max_sec`` (systemd's ``RestartSteps=``/``RestartMaxDelaySec=``) the
delay grows exponentially from ``restart_sec`` to ``restart_max_sec`` over that many restarts; a
manual start (``nodectl start``) begins again at ``restart_sec`` with the counter at 0. It keeps its
state in ``D/supervisor.json`` (rewritten atomically on every change)::

    {"state": "active"|"activating"|"deactivating"|"inactive", "active": bool, "pid": int|null,
     "restarts": int, "active_since": float|null, "last_exit": {"code", "signal", "at"}|null,
     "supervisor_pid": int, "started_at": float, "next_start_at": float|null}

It stops (SIGTERM to the service, SIGKILL after ``stop_timeout``) and exits on SIGTERM/SIGINT,
when ``D/service.json`` disappears (``D`` removed), or after ``max_lifetime`` seconds; the service gets
``PR_SET_PDEATHSIG=SIGTERM`` so it never outlives a supervisor that was killed. ``nodectl.py``
is the ``systemctl`` that talks to it.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

SERVICE_FILE = "service.json"
STATUS_FILE = "supervisor.json"
PR_SET_PDEATHSIG = 1
POLL_SECONDS = 0.05
DEFAULT_RESTART_SEC = 1.0
DEFAULT_STOP_TIMEOUT = 10.0
DEFAULT_MAX_LIFETIME = 7200.0
DEFAULT_UNIT = "kubelet.service"


@dataclass(frozen=True)
class ServiceConfig:
    command: List[str]
    restart_sec: float = DEFAULT_RESTART_SEC
    restart_max_sec: float = 0.0  # systemd RestartMaxDelaySec=; 0: every restart after restart_sec
    restart_steps: int = 0  # systemd RestartSteps=: restarts to grow from restart_sec to restart_max_sec
    stop_timeout: float = DEFAULT_STOP_TIMEOUT
    max_lifetime: float = DEFAULT_MAX_LIFETIME
    log: str = "kubelet.log"
    environment: Dict[str, str] = field(default_factory=dict)
    unit: str = DEFAULT_UNIT


def load_service(node_dir: str) -> ServiceConfig:
    with open(os.path.join(node_dir, SERVICE_FILE), encoding="utf-8") as handle:
        document = json.load(handle)
    return ServiceConfig(
        command=[str(part) for part in document["command"]],
        restart_sec=float(document.get("restart_sec", DEFAULT_RESTART_SEC)),
        restart_max_sec=float(document.get("restart_max_sec", 0.0)),
        restart_steps=int(document.get("restart_steps", 0)),
        stop_timeout=float(document.get("stop_timeout", DEFAULT_STOP_TIMEOUT)),
        max_lifetime=float(document.get("max_lifetime", DEFAULT_MAX_LIFETIME)),
        log=str(document.get("log", "kubelet.log")),
        environment={str(k): str(v) for k, v in (document.get("environment") or {}).items()},
        unit=str(document.get("unit") or DEFAULT_UNIT),
    )


# --------------------------------------------------------------------------- status file


def status_path(node_dir: str) -> str:
    return os.path.join(node_dir, STATUS_FILE)


def read_status(node_dir: str) -> Optional[Dict[str, Any]]:
    try:
        with open(status_path(node_dir), encoding="utf-8") as handle:
            return json.load(handle)
    except (FileNotFoundError, ValueError):
        return None


def write_status(node_dir: str, status: Dict[str, Any]) -> None:
    if not os.path.isdir(node_dir):
        return
    temporary = "%s.%d.tmp" % (status_path(node_dir), os.getpid())
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(status, handle, sort_keys=True)
    os.replace(temporary, status_path(node_dir))


# --------------------------------------------------------------------------- processes


def process_state(pid: Optional[int]) -> Optional[str]:
    """The one-letter state in ``/proc/<pid>/stat``; None when there is no such process."""
    if not pid:
        return None
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return None
    return text[text.rfind(")") + 2:].split(" ", 1)[0] or None


def process_alive(pid: Optional[int]) -> bool:
    """Running (a zombie nobody reaped yet counts as gone)."""
    return process_state(pid) not in (None, "Z", "X")


def process_cmdline(pid: int) -> List[str]:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            raw = handle.read()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def die_with_parent() -> None:
    """``preexec_fn``: SIGTERM this child when the supervisor dies (Linux ``prctl``)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def restart_delay(config: ServiceConfig, restarts: int) -> float:
    """systemd's delay before the next automatic restart (RestartSec=, RestartSteps=, RestartMaxDelaySec=).

    The first restart waits ``restart_sec``; with steps, each further one waits exponentially longer
    until ``restart_max_sec`` is reached after ``restart_steps`` restarts.
    """
    if config.restart_steps <= 0 or config.restart_max_sec <= config.restart_sec or config.restart_sec <= 0:
        return config.restart_sec
    step = min(restarts, config.restart_steps)
    return config.restart_sec * (config.restart_max_sec / config.restart_sec) ** (step / config.restart_steps)


def exit_description(returncode: int, now: float) -> Dict[str, Any]:
    if returncode < 0:
        return {"code": None, "signal": -returncode, "at": now}
    return {"code": returncode, "signal": None, "at": now}


# --------------------------------------------------------------------------- supervision


class StopFlag:
    def __init__(self) -> None:
        self.reason = ""
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, _frame: Any) -> None:
        self.reason = self.reason or "signal %d" % signum

    def __bool__(self) -> bool:
        return bool(self.reason)


def watchdog(node_dir: str, deadline: float, stop: StopFlag) -> None:
    # service.json, not the directory: nothing rewrites it, so a half-finished `rm -rf` still stops us.
    if not os.path.exists(os.path.join(node_dir, SERVICE_FILE)):
        stop.reason = stop.reason or "%s disappeared" % os.path.join(node_dir, SERVICE_FILE)
    elif time.time() >= deadline:
        stop.reason = stop.reason or "maximum lifetime reached"


def say(message: str) -> None:
    sys.stdout.write("%s supervisor[%d]: %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"), os.getpid(), message))
    sys.stdout.flush()


def spawn(config: ServiceConfig, node_dir: str) -> subprocess.Popen:
    environment = dict(os.environ)
    environment.update(config.environment)
    with open(os.path.join(node_dir, config.log), "ab") as log:
        return subprocess.Popen(  # pylint: disable=consider-using-with
            config.command, cwd=node_dir, env=environment, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent, close_fds=True,
        )


def wait_for_exit(child: subprocess.Popen, node_dir: str, deadline: float, stop: StopFlag) -> Optional[int]:
    """The child's return code, or None when the supervisor was asked to stop first."""
    while True:
        code = child.poll()
        if code is not None:
            return code
        watchdog(node_dir, deadline, stop)
        if stop:
            return None
        time.sleep(POLL_SECONDS)


def sleep_unless_stopped(seconds: float, node_dir: str, deadline: float, stop: StopFlag) -> bool:
    end = time.time() + seconds
    while time.time() < end:
        watchdog(node_dir, deadline, stop)
        if stop:
            return False
        time.sleep(min(POLL_SECONDS, max(0.0, end - time.time())))
    return True


def terminate(child: subprocess.Popen, timeout: float) -> int:
    """SIGTERM, then SIGKILL after ``timeout`` (systemd's stop with TimeoutStopSec)."""
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    return child.returncode


def supervise(node_dir: str) -> int:
    node_dir = os.path.abspath(node_dir)
    stop = StopFlag()
    config = load_service(node_dir)
    deadline = time.time() + config.max_lifetime
    status: Dict[str, Any] = {
        "state": "activating", "active": False, "pid": None, "restarts": 0, "active_since": None,
        "last_exit": (read_status(node_dir) or {}).get("last_exit"), "supervisor_pid": os.getpid(), "started_at": time.time(),
    }
    while not stop:
        child = spawn(config, node_dir)
        status.update(state="active", active=True, pid=child.pid, active_since=time.time(), next_start_at=None)
        write_status(node_dir, status)
        code = wait_for_exit(child, node_dir, deadline, stop)
        if code is None:
            status.update(state="deactivating")
            write_status(node_dir, status)
            code = terminate(child, config.stop_timeout)
            status.update(last_exit=exit_description(code, time.time()))
            break
        status.update(state="activating", active=False, pid=None, active_since=None, last_exit=exit_description(code, time.time()))
        write_status(node_dir, status)
        delay = restart_delay(config, status["restarts"])
        status["next_start_at"] = time.time() + delay
        write_status(node_dir, status)
        say("the service exited with %s; restarting in %.1f s" % (code, delay))
        if not sleep_unless_stopped(delay, node_dir, deadline, stop):
            break
        status["restarts"] += 1
    status.update(state="inactive", active=False, pid=None, active_since=None)
    write_status(node_dir, status)
    say("stopped (%s)" % (stop.reason or "service gone"))
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="systemd stand-in for a sandbox node's kubelet (Restart=always, RestartSec=1s)")
    parser.add_argument("--node-dir", required=True, help="the node directory holding service.json")
    options = parser.parse_args(argv)
    return supervise(options.node_dir)


if __name__ == "__main__":
    sys.exit(main())
