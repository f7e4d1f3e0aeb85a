# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start or stop the Kubernetes API of a molecule scenario: a real control plane, or the stand-in.

  hostapi.py start --dir D --real --node N ...   the QEMU tier: kube-apiserver + etcd + the node lifecycle
                                                 controller (tests/integration/controlplane.py ``serve``)
  hostapi.py start --dir D                       the fast tier: the API stand-in (tests/sandbox/apiserver.py)
  hostapi.py stop --dir D                        stop whichever runs (SIGTERM, then SIGKILL)

``start`` starts or reuses the server and prints {"port", "kubeconfig", "pid", ...}. Either listens on the
host's 127.0.0.1 only. ``D/kubeconfig`` is what the controller's kubernetes.core calls use: with the real
control plane, a token of the ServiceAccount the collection ships, bound to exactly its shipped roles
(extensions/rbac/), so the scenarios run the role under least privilege; ``D/admin-kubeconfig`` is for
the scenarios' own checks. Each guest's real kubelet gets ``D/kubelet-<node>.conf``: its own Node
identity (``system:node:<node>``, which the Node authorizer and NodeRestriction hold to that Node) and
the server at the guest's guestfwd address (tests/vm/qemu.py ``--api-port-file D/port``), which QEMU
joins to the host's loopback. The fast tier's containers share the host's loopback.

Either server exits by itself when ``D/alive`` disappears (the scenario's ephemeral directory was
removed) or after NUMA_DRIFT_API_MAX_LIFETIME seconds (default 7200), so no run leaves it behind.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import subprocess
import sys
import time
from typing import List, Optional

if __package__:
    from ansible_collections.nodeops.numa_drift.tests.integration import controlplane
    from ansible_collections.nodeops.numa_drift.tests.vm.qemu import API_GUEST_ADDRESS, pid_alive, read_number, terminate
else:  # run as a script: this directory is on sys.path
    from qemu import API_GUEST_ADDRESS, pid_alive, read_number, terminate  # type: ignore[no-redef]

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
    import controlplane  # type: ignore[no-redef]  # noqa: E402

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APISERVER = os.path.join(CHECKOUT, "tests", "sandbox", "apiserver.py")
MAX_LIFETIME = os.environ.get("NUMA_DRIFT_API_MAX_LIFETIME", "7200")
# Waiting for the real control plane's state file: building kube-apiserver on a fresh machine included.
REAL_START_TIMEOUT = float(os.environ.get("NUMA_DRIFT_API_START_TIMEOUT", "1800"))

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
  - name: numa-drift-vm
    cluster:
      server: http://127.0.0.1:{port}
users:
  - name: numa-drift-vm
    user:
      token: numa-drift-vm
contexts:
  - name: numa-drift-vm
    context:
      cluster: numa-drift-vm
      user: numa-drift-vm
current-context: numa-drift-vm
"""


def start(directory: str) -> dict:
    os.makedirs(directory, exist_ok=True)
    paths = {name: os.path.join(directory, name) for name in ("state.json", "port", "pid", "kubeconfig", "alive", "server.log")}
    pid = read_number(paths["pid"])
    port = read_number(paths["port"])
    if not (pid_alive(pid) and port):
        with open(paths["alive"], "w") as handle:
            handle.write("remove this file to stop the API stand-in\n")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(paths["port"])
        log = open(paths["server.log"], "a")  # pylint: disable=consider-using-with
        proc = subprocess.Popen(  # pylint: disable=consider-using-with
            [sys.executable, APISERVER, "--state", paths["state.json"], "--port-file", paths["port"], "--port", "0",
             "--exit-if-missing", paths["alive"],
             "--max-lifetime", MAX_LIFETIME],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
        )
        log.close()
        pid = proc.pid
        with open(paths["pid"], "w") as handle:
            handle.write("%d\n" % pid)
        deadline = time.time() + 30
        port = None
        while time.time() < deadline and not port:
            if proc.poll() is not None:
                raise SystemExit("API stand-in exited with %s; log %s" % (proc.returncode, paths["server.log"]))
            time.sleep(0.2)
            port = read_number(paths["port"])
        if not port:
            raise SystemExit("API stand-in did not write its port within 30 s; log %s" % paths["server.log"])
    with open(paths["kubeconfig"], "w") as handle:
        handle.write(KUBECONFIG.format(port=port))
    return {"port": port, "pid": pid, "kubeconfig": paths["kubeconfig"], "state": paths["state.json"], "url": "http://127.0.0.1:%d" % port}


def read_state(path: str) -> Optional[dict]:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def kubelet_kubeconfig(state: dict, node: str) -> str:
    """The guest kubelet's kubeconfig: its Node's token, the server at the guestfwd address."""
    with open(state["ca_file"], "rb") as handle:
        ca_data = base64.b64encode(handle.read()).decode("ascii")
    # The serving certificate names 127.0.0.1 (kube-apiserver's advertise address), where QEMU connects.
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": node, "preferences": {},
        "clusters": [{"name": "numa-drift-vm", "cluster": {
            "server": "https://%s" % API_GUEST_ADDRESS, "certificate-authority-data": ca_data,
            "tls-server-name": "127.0.0.1"}}],
        "users": [{"name": node, "user": {"token": state["node_tokens"][node]}}],
        "contexts": [{"name": node, "context": {"cluster": "numa-drift-vm", "user": node}}],
    }, indent=2)


def spawn_real(directory: str, nodes: List[str], state_file: str) -> int:
    with open(os.path.join(directory, "alive"), "w") as handle:
        handle.write("remove this file to stop the control plane\n")
    argv = [sys.executable, controlplane.__file__, "serve", "--dir", os.path.join(directory, "plane"),
            "--controller-manager", "--exit-if-missing", os.path.join(directory, "alive"), "--max-lifetime", MAX_LIFETIME]
    for node in nodes:
        argv += ["--node", node]
    with open(os.path.join(directory, "server.log"), "a") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,  # pylint: disable=consider-using-with
                                start_new_session=True, close_fds=True)
    with open(os.path.join(directory, "pid"), "w") as handle:
        handle.write("%d\n" % proc.pid)
    deadline = time.time() + REAL_START_TIMEOUT
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit("control plane exited with %s; log %s" % (proc.returncode, os.path.join(directory, "server.log")))
        if os.path.exists(state_file):
            return proc.pid
        time.sleep(0.5)
    terminate(proc.pid, 10)
    raise SystemExit("control plane not ready within %.0f s; log %s" % (REAL_START_TIMEOUT, os.path.join(directory, "server.log")))


def start_real(directory: str, nodes: List[str]) -> dict:
    """The real control plane (started, or reused when it serves these nodes) and its kubeconfigs."""
    os.makedirs(directory, exist_ok=True)
    state_file = os.path.join(directory, "plane", "state.json")
    state = read_state(state_file)
    if not (state and pid_alive(state.get("pid")) and set(nodes) <= set(state["node_tokens"])):
        stop(directory)
        spawn_real(directory, nodes, state_file)
        state = read_state(state_file)
    plane = controlplane.ControlPlane.attach(state)
    token = controlplane.shipped_service_account_token(plane)
    controlplane.write_private(os.path.join(directory, "kubeconfig"),
                               controlplane.kubeconfig_text(state["server"], state["ca_file"], token, "nodeops-numa-drift"))
    controlplane.write_private(os.path.join(directory, "admin-kubeconfig"),
                               controlplane.kubeconfig_text(state["server"], state["ca_file"], state["admin_token"], "admin"))
    controlplane.write_private(os.path.join(directory, "port"), "%d\n" % state["port"])
    for node in nodes:
        controlplane.write_private(os.path.join(directory, "kubelet-%s.conf" % node), kubelet_kubeconfig(state, node))
    return {"port": state["port"], "pid": state["pid"], "url": state["server"], "real": True,
            "kubeconfig": os.path.join(directory, "kubeconfig"),
            "admin_kubeconfig": os.path.join(directory, "admin-kubeconfig"),
            "port_file": os.path.join(directory, "port")}


def stop(directory: str) -> dict:
    pid = read_number(os.path.join(directory, "pid"))
    if pid_alive(pid):
        terminate(pid, 10)
    for name in ("pid", "port", "alive"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(directory, name))
    return {"stopped": pid}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("command", choices=("start", "stop"))
    parser.add_argument("--dir", required=True)
    parser.add_argument("--real", action="store_true", help="start the real control plane (QEMU tier)")
    parser.add_argument("--node", action="append", default=[], help="--real: a guest's Node name")
    args = parser.parse_args()
    if args.command == "stop":
        result = stop(args.dir)
    elif args.real:
        result = start_real(args.dir, args.node)
    else:
        result = start(args.dir)
    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
