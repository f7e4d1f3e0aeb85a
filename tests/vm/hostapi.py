# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start or stop the Kubernetes API stand-in (tests/sandbox/apiserver.py) for a molecule scenario.

The server listens on the host's 127.0.0.1 only. The controller's kubernetes.core calls use the
kubeconfig written here; each guest's kubelet stand-in reaches the server through a reverse SSH
tunnel to the guest's own 127.0.0.1 (tests/vm/qemu.py ``--tunnel``).

  hostapi.py start --dir D     start (or reuse) the server; print {"port", "kubeconfig", "pid", "state"}
  hostapi.py stop --dir D      stop it (SIGTERM, then SIGKILL)

The server exits by itself when ``D/alive`` disappears (the scenario's ephemeral directory was
removed) or after NUMA_DRIFT_API_MAX_LIFETIME seconds (default 7200), so no run leaves it behind.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time

if __package__:
    from ansible_collections.nodeops.numa_drift.tests.vm.qemu import pid_alive, read_number, terminate
else:  # run as a script: this directory is on sys.path
    from qemu import pid_alive, read_number, terminate  # type: ignore[no-redef]

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APISERVER = os.path.join(CHECKOUT, "tests", "sandbox", "apiserver.py")

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
             "--max-lifetime", os.environ.get("NUMA_DRIFT_API_MAX_LIFETIME", "7200")],
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
    args = parser.parse_args()
    result = start(args.dir) if args.command == "start" else stop(args.dir)
    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
