# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The control plane the QEMU scenarios run (``controlplane.py serve``, started by tests/vm/hostapi.py):
a kubelet identity may write its own Node only, and the node lifecycle controller turns a Node whose
kubelet went silent NotReady (status Unknown), as in a real cluster after a reboot."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, Iterator

import pytest

from ansible_collections.nodeops.numa_drift.tests.integration import controlplane
from ansible_collections.nodeops.numa_drift.tests.integration.controlplane import ControlPlane

NODE, OTHER = "serve-worker-1", "serve-worker-2"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Any]]:
    directory = str(tmp_path_factory.mktemp("served"))
    alive = os.path.join(directory, "alive")
    with open(alive, "w", encoding="utf-8") as handle:
        handle.write("remove to stop\n")
    log = open(os.path.join(directory, "serve.log"), "ab")  # pylint: disable=consider-using-with
    proc = subprocess.Popen([sys.executable, controlplane.__file__, "serve", "--dir", os.path.join(directory, "plane"),  # pylint: disable=consider-using-with
                             "--node", NODE, "--node", OTHER, "--controller-manager", "--exit-if-missing", alive],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    state_file = os.path.join(directory, "plane", "state.json")
    deadline = time.monotonic() + controlplane.START_TIMEOUT + 600  # a first build included
    while not os.path.exists(state_file):
        assert proc.poll() is None, "serve exited %s: %s" % (proc.returncode, open(os.path.join(directory, "serve.log"), encoding="utf-8").read()[-3000:])
        assert time.monotonic() < deadline, "serve not ready"
        time.sleep(0.5)
    with open(state_file, encoding="utf-8") as handle:
        state = json.load(handle)
    try:
        yield {"state": state, "plane": ControlPlane.attach(state), "proc": proc, "alive": alive, "state_file": state_file}
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=60)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def register_ready(plane: ControlPlane, name: str, token: str) -> int:
    """As kubelet does at start: create the Node, then post Ready=True through its status subresource."""
    status, answer = plane.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}, token=token)
    assert status == 201, answer
    # Right after the API server turned ready, and on a loaded machine, the Node authorizer may still refuse the
    # new Node's own status write (its graph is filled asynchronously): kubelet retries its status, so do we.
    deadline = time.monotonic() + 60
    while True:
        node = copy.deepcopy(answer)
        node["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                                         "lastHeartbeatTime": now(), "lastTransitionTime": now()}]
        status, refused = plane.request("PUT", "/api/v1/nodes/%s/status" % name, node, token=token)
        if status != 403 or time.monotonic() > deadline:
            return status
        time.sleep(2)
        answer = plane.call("GET", "/api/v1/nodes/%s" % name)


def ready_status(plane: ControlPlane, name: str) -> str:
    node = plane.call("GET", "/api/v1/nodes/%s" % name)
    return next((c["status"] for c in node["status"].get("conditions") or [] if c["type"] == "Ready"), "none")


def test_a_kubelet_identity_writes_its_own_node_only(served: Dict[str, Any]) -> None:
    plane, tokens = served["plane"], served["state"]["node_tokens"]
    assert register_ready(plane, NODE, tokens[NODE]) == 200
    assert ready_status(plane, NODE) == "True"
    # NodeRestriction: another Node's identity may neither create nor change this one.
    cordoned = plane.call("GET", "/api/v1/nodes/%s" % NODE)
    cordoned["spec"]["unschedulable"] = True
    status, answer = plane.request("PUT", "/api/v1/nodes/%s" % NODE, cordoned, token=tokens[OTHER])
    assert status == 403, answer
    status, answer = plane.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "nobody"}}, token=tokens[OTHER])
    assert status == 403, answer


def test_the_node_lifecycle_controller_marks_a_silent_node_not_ready(served: Dict[str, Any]) -> None:
    plane = served["plane"]
    if ready_status(plane, NODE) != "True":  # run alone: register first
        assert register_ready(plane, NODE, served["state"]["node_tokens"][NODE]) == 200
    started = time.monotonic()
    grace = float(controlplane.NODE_MONITOR_GRACE.rstrip("s"))
    while ready_status(plane, NODE) == "True":
        assert time.monotonic() - started < grace + 60, "still Ready %.0f s after the last heartbeat" % (time.monotonic() - started)
        time.sleep(1)
    assert ready_status(plane, NODE) == "Unknown"
    node = plane.call("GET", "/api/v1/nodes/%s" % NODE)
    taints = [taint["key"] for taint in node["spec"].get("taints") or []]
    assert "node.kubernetes.io/unreachable" in taints


def test_serve_stops_everything_when_its_alive_file_goes(served: Dict[str, Any]) -> None:
    os.unlink(served["alive"])
    assert served["proc"].wait(timeout=90) == 0
    assert not os.path.exists(served["state_file"])
    pids = [pid for pid in os.listdir("/proc") if pid.isdigit()]
    workdir = served["state"]["workdir"]
    leftovers = []
    for pid in pids:
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                cmdline = handle.read().decode("utf-8", "replace")
        except OSError:
            continue
        if workdir in cmdline:
            leftovers.append(cmdline.replace("\0", " ")[:200])
    assert leftovers == []
