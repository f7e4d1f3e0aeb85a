# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the molecule scenario ``guard`` checks in a guest, read in one go (stdlib only, Python 3.9+).

Runs in the guest (``ansible.builtin.script``: one transfer, one Python start under TCG) and prints
one JSON object: kubelet's systemd state and unit text, this boot's id, the guard's record
(``guard.json``), its metrics file parsed into samples, the checkpoint's sha256, the backups with
their sha256, which of the guard's files exist, and from this boot's journal of the kubelet unit
the guard's lines and kubelet's fatal errors (a real kubelet's ``err=`` of its fatal line, or the line
after the stand-in's ``command failed``).

  guard_state.py                      read everything
  guard_state.py --restart-kubelet    first restart kubelet and wait until that start has failed
                                      (kubelet's next fatal error); ``since_restart`` then holds
                                      the guard's lines and kubelet's errors of that start only
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

STATE_DIR = "/var/lib/nodeops-numa-drift"
CHECKPOINT = "/var/lib/kubelet/memory_manager_state"
PROGRAM = "/usr/local/libexec/nodeops-numa-drift/numa-drift-guard"
DROPIN_DIR = "/etc/systemd/system/kubelet.service.d"
DROPIN = DROPIN_DIR + "/nodeops-numa-drift-guard.conf"
METRICS = "/var/lib/node_exporter/textfile_collector/nodeops_numa_drift.prom"
PROPERTIES = ("ActiveState", "SubState", "NRestarts", "MainPID", "ExecMainStatus", "DropInPaths", "ExecStartPre")
FAILED = "kubelet_standin] command failed"
# A real kubelet's fatal start-up lines (klog): the container manager's failure (memory manager
# included, pkg/kubelet/kubelet.go) and the command's failure (cmd/kubelet/app); their err="..." value.
_KUBELET_FATAL = re.compile(r'\] "(?:Failed to start ContainerManager|command failed)" err="(.*)"$')
GUARD = "numa-drift-guard: "
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$")


def output(argv: List[str]) -> str:
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout


def sha256(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def read_text(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None


def samples(text: Optional[str]) -> Dict[str, float]:
    """Prometheus text format -> {'name{labels}': value}; comments left out."""
    found = {}
    for line in (text or "").splitlines():
        match = _SAMPLE.match(line)
        if match and not line.startswith("#"):
            found[match.group(1)] = float(match.group(2))
    return found


def journal() -> List[str]:
    return output(["journalctl", "-u", "kubelet", "-b", "-o", "cat", "--no-pager"]).splitlines()


def fatal_errors(lines: List[str]) -> List[str]:
    """Kubelet's fatal error of each failed start: a real kubelet's err="..." of its fatal line, or the
    line the stand-in writes right after 'command failed'."""
    found = []
    for i, line in enumerate(lines):
        match = _KUBELET_FATAL.search(line)
        if match:
            found.append(match.group(1).replace('\\"', '"'))
        elif line.endswith(FAILED) and i + 1 < len(lines):
            found.append(lines[i + 1])
    return found


def of_journal(lines: List[str]) -> Dict[str, Any]:
    return {"guard_lines": [line for line in lines if line.startswith(GUARD)], "fatal_errors": fatal_errors(lines)}


def restart_kubelet(timeout: float = 180.0) -> List[str]:
    """Restart kubelet and wait until that start failed and systemd saw it exit; the journal lines since the restart."""
    before = len(journal())
    subprocess.run(["systemctl", "restart", "kubelet"], check=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        since = journal()[before:]
        substate = output(["systemctl", "show", "kubelet", "--property=SubState", "--value"]).strip()
        if fatal_errors(since) and substate in ("auto-restart", "failed"):
            return since
        time.sleep(0.5)
    return journal()[before:]


def backups() -> Dict[str, Optional[str]]:
    found = {}
    for directory, _dirs, files in os.walk(os.path.join(STATE_DIR, "backups")):
        for name in files:
            path = os.path.join(directory, name)
            found[path] = sha256(path)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restart-kubelet", action="store_true")
    args = parser.parse_args()
    since_restart = of_journal(restart_kubelet()) if args.restart_kubelet else None
    shown = output(["systemctl", "show", "kubelet"] + ["--property=" + name for name in PROPERTIES])
    guard_record = read_text(os.path.join(STATE_DIR, "guard.json"))
    state = {
        "systemd": dict(line.split("=", 1) for line in shown.splitlines() if "=" in line),
        "unit": output(["systemctl", "cat", "kubelet"]),
        "boot_id": (read_text("/proc/sys/kernel/random/boot_id") or "").strip(),
        "guard": json.loads(guard_record) if guard_record else None,
        "metrics": samples(read_text(METRICS)),
        "checkpoint_sha256": sha256(CHECKPOINT),
        "backups": backups(),
        "exists": {name: os.path.exists(path) for name, path in
                   (("program", PROGRAM), ("dropin", DROPIN), ("dropin_dir", DROPIN_DIR), ("metrics", METRICS),
                    ("guard_record", os.path.join(STATE_DIR, "guard.json")))},
        "journal": of_journal(journal()),
        "since_restart": since_restart,
    }
    json.dump(state, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
