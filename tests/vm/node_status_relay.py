# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Relay a real kubelet's health to the Node's Ready condition in the API stand-in (QEMU guests).

The guests run an unmodified kubelet in standalone mode (no API server yet: the API the role talks
to is tests/sandbox/apiserver.py, which a real kubelet cannot register with). The role still waits
for the Node to be Ready in the API, so this relay, a service beside kubelet, posts the Node status
kubelet would post, judged from kubelet itself, every ``--heartbeat`` seconds:

- Ready=True when kubelet's unit has a running process, that process logged
  ``Eviction manager: starting control loop`` (kubelet logs it right after its ContainerManager,
  memory manager included, started: pkg/kubelet/kubelet.go, initializeRuntimeDependentModules) and
  kubelet's ``/healthz`` answers ``ok``;
- Ready=False otherwise, with kubelet's own last fatal line (``Failed to start ContainerManager``
  ... ``[memorymanager] the expected machine state is different from the real one``) as the message.

It runs next to kubelet_standin.py (whose StatusReporter it uses, the one Node-status writer of the
tests) and reads only kubelet's journal, systemd state and /healthz; it never touches kubelet's files.

    python3 node_status_relay.py --api URL --node-name NAME [--unit kubelet] [--era legacy|1.37]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import urllib.request
from typing import Optional, Sequence, Set, Tuple

import kubelet_standin

STARTED_LINE = "Eviction manager: starting control loop"
FATAL_MARKERS = ("Failed to start ContainerManager", "command failed", "Failed to run kubelet")
HEALTHZ = "http://127.0.0.1:10248/healthz"


def command_output(argv: Sequence[str]) -> str:
    try:
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def main_pid(unit: str) -> int:
    text = command_output(["systemctl", "show", unit, "--property=MainPID", "--value"]).strip()
    return int(text) if text.isdigit() else 0


def healthz_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # nosec: the guest's own loopback
            return response.status == 200 and response.read().strip() == b"ok"
    except OSError:
        return False


def last_fatal_line(unit: str) -> Optional[str]:
    lines = command_output(["journalctl", "-u", unit, "-b", "-n", "400", "--no-pager", "-o", "cat"]).splitlines()
    for line in reversed(lines):
        if any(marker in line for marker in FATAL_MARKERS):
            return line.strip()
    return None


def kubelet_ready(unit: str, healthz: str, started_pids: Optional[Set[int]] = None) -> Tuple[bool, str]:
    """(Ready, message) of kubelet now, from its own process, log and /healthz.

    ``started_pids`` remembers the processes already seen past their ContainerManager start, so a
    healthy kubelet costs one ``systemctl show`` and one /healthz request per heartbeat (processes
    are expensive under TCG), not a journal read."""
    started_pids = set() if started_pids is None else started_pids
    pid = main_pid(unit)
    if pid and pid not in started_pids:
        own_log = command_output(["journalctl", "-b", "_PID=%d" % pid, "--no-pager", "-o", "cat"])
        if STARTED_LINE in own_log:
            started_pids.add(pid)
    if pid in started_pids and healthz_ok(healthz):
        return True, "kubelet is posting ready status (memory manager started, /healthz ok)"
    fatal = last_fatal_line(unit)
    return False, fatal or "kubelet has not started its container manager yet"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--api", required=True, help="API server URL (the guest's end of the tunnel)")
    parser.add_argument("--node-name", required=True)
    parser.add_argument("--unit", default="kubelet", help="kubelet's systemd unit")
    parser.add_argument("--era", choices=kubelet_standin.ERA_CHOICES, default="legacy", help="the kubelet's checkpoint era (nodeInfo)")
    parser.add_argument("--healthz", default=HEALTHZ)
    parser.add_argument("--heartbeat", type=float, default=5.0)
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    options = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        node = kubelet_standin.load_node("/", None, None)
    except Exception as error:  # pylint: disable=broad-except  # capacity is optional; the relay must run
        kubelet_standin.log("node capacity unknown: %s" % error)
        node = None
    reporter = kubelet_standin.StatusReporter(options.api, "", options.node_name, "127.0.0.1", options.era, node)
    stop = kubelet_standin.Stop()
    last = None
    started_pids: Set[int] = set()
    while not stop.requested:
        ready, message = kubelet_ready(options.unit, options.healthz, started_pids)
        if (ready, message) != last:
            kubelet_standin.log("Ready=%s: %s" % (ready, message))
            last = (ready, message)
        reporter.post(ready, message)
        deadline = time.time() + options.heartbeat
        while time.time() < deadline and not stop.requested:
            time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
