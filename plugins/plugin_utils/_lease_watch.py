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
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, Mapping, Optional, Sequence

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _rollout
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s import CONFLICT_RETRIES, Api, ApiFailure

LEASE = ("coordination.k8s.io/v1", "Lease")
POLL_SECONDS = 0.5
NOT_HELD = "the cluster lock was not held by this run"
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


def process_start(pid: int) -> Optional[str]:
    """The process's start time in clock ticks (/proc/PID/stat field 22), None where /proc cannot tell."""
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19] if len(fields) > 19 else None


def running(pid: int, started: Optional[str]) -> bool:
    """``pid`` is still the process that started at ``started`` (a reused PID is another process)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return started is None or process_start(pid) == started


def main(options: Mapping[str, Any]) -> int:
    """Wait for the ansible-playbook process to end, then release the Lease if the run still holds it."""
    while running(int(options["pid"]), options.get("started")):
        time.sleep(POLL_SECONDS)
    try:
        release(Api(options.get("kubeconfig"), options.get("context")), options["name"], options["namespace"], options["holder"])
    except ApiFailure:
        return 1  # the Lease expires by itself (numa_drift_lock_duration)
    return 0


def spawn(lock: Mapping[str, Any], kubeconfig: Optional[str], context: Optional[str], pid: int,
          collection_paths: Sequence[str]) -> Dict[str, Any]:
    """Start the watcher of ``pid`` (ansible-playbook) for ``lock``; returns what the gate reports about it."""
    options = {"pid": pid, "started": process_start(pid), "name": lock["name"], "namespace": lock["namespace"],
               "holder": lock["holder"], "kubeconfig": kubeconfig, "context": context, "collection_paths": list(collection_paths)}
    try:
        # Its own session: a Ctrl-C (SIGINT to the terminal's process group) or a hang-up does not reach it.
        watcher = subprocess.Popen(  # pylint: disable=consider-using-with  # it outlives this process on purpose
            [sys.executable, "-c", BOOTSTRAP, json.dumps(options)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
    except OSError as error:
        return {"started": False, "message": "could not start the lock's watcher (%s): a run that ends without releasing the lock "
                                             "leaves it until numa_drift_lock_duration has passed" % error}
    return {"started": True, "pid": watcher.pid, "watches": pid}
