# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fast tier: the guest image's root directory booted with real systemd in systemd-nspawn.

A container boots in about a second and runs Ansible about 7x faster than a TCG guest, but it sees
the host's kernel: its NUMA layout is a fake node tree (tests/support/nodetree.py)
bind-mounted over /sys/devices/system/node (memory blocks from 0 up, node after node; the kernel
image and the memory block size are the host's, from /proc/iomem and /sys/devices/system/memory).
A "reboot into another layout" rewrites that tree in place (kubelet sees it at its next start).

Containers share the host's network namespace (systemd-nspawn drops CAP_NET_ADMIN, and
systemd-networkd is masked) and their sshd listens on 127.0.0.1:<free port> only, with the image's
root key: molecule reaches them exactly like the VM guests. The root directory stays read-only
(``--volatile=overlay``: writes go to a tmpfs). ``--register=no --keep-unit``: the host may have no
systemd.

CLI (JSON on stdout)::

  python3 tests/vm/nspawn.py start  --dir D --image-dir I --name N --numa 512,512 [--hugepages-2m 0:16,1:16]
  python3 tests/vm/nspawn.py retree --dir D --numa 508,516 [--hugepages-2m ...]
  python3 tests/vm/nspawn.py stop   --dir D [...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from typing import Dict, List, Optional

if __package__:
    from ansible_collections.nodeops.numa_drift.tests.vm.qemu import free_port, terminate
else:  # run as a script: this directory is on sys.path
    from qemu import free_port, terminate  # type: ignore[no-redef]

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Memory the fake node loses to the kernel and firmware, as a 2-node TCG guest shows it.
NODE_OVERHEAD_KB = {0: 43008 + 45260, "other": 8192}
MASKED_UNITS = ("systemd-networkd.service", "systemd-networkd.socket", "systemd-resolved.service", "console-getty.service")


def log(message: str) -> None:
    sys.stderr.write("nspawn.py: %s\n" % message)
    sys.stderr.flush()


def nodetree():
    """tests/support/nodetree.py, importable as part of the collection."""
    base = os.path.join(os.environ.get("TMPDIR", "/tmp"), "nodeops-numa-drift-nspawn-collection")
    link = os.path.join(base, "ansible_collections", "nodeops", "numa_drift")
    if os.path.realpath(link) != CHECKOUT:
        os.makedirs(os.path.dirname(link), exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(link)
        os.symlink(CHECKOUT, link)
    if base not in sys.path:
        sys.path.insert(0, base)
    from ansible_collections.nodeops.numa_drift.tests.support import nodetree as module  # pylint: disable=import-outside-toplevel
    return module


def parse_hugepages(text: str) -> Dict[int, int]:
    pages = {}
    for item in filter(None, (text or "").split(",")):
        node, _sep, count = item.partition(":")
        pages[int(node)] = int(count)
    return pages


def write_tree(directory: str, numa_mib: List[int], hugepages_2m: Dict[int, int]) -> dict:
    """(Re)write the fake node tree: MemTotal per node like a guest of these memdev sizes."""
    tree = os.path.join(directory, "tree")
    node_dir = os.path.join(tree, "sys", "devices", "system", "node")
    # Empty the directory but keep it: it is the source of a bind mount into the container.
    for entry in os.listdir(node_dir) if os.path.isdir(node_dir) else []:
        path = os.path.join(node_dir, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    nodes = {}
    for node, mib in enumerate(numa_mib):
        overhead = NODE_OVERHEAD_KB[0] if node == 0 else NODE_OVERHEAD_KB["other"]
        nodes[node] = {"mem_total_kb": mib * 1024 - overhead, "hugepages": {2048: hugepages_2m.get(node, 0), 1048576: 0},
                       "cpulist": "%d" % node if node < 2 else ""}
    nodetree().build_node_tree(tree, nodes=nodes)
    return {str(node): spec["mem_total_kb"] for node, spec in nodes.items()}


def leader_of(nspawn_pid: int) -> Optional[int]:
    """The container's PID 1 as the host sees it: a descendant of systemd-nspawn with NSpid ... 1."""
    todo = [nspawn_pid]
    while todo:
        pid = todo.pop()
        with contextlib.suppress(OSError):
            with open("/proc/%d/status" % pid) as handle:
                for line in handle:
                    if line.startswith("NSpid:") and line.split()[-1] == "1" and pid != nspawn_pid:
                        return pid
            with open("/proc/%d/task/%d/children" % (pid, pid)) as handle:
                todo.extend(int(child) for child in handle.read().split())
    return None


def in_container(leader: int, *command: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["nsenter", "-t", str(leader), "-m", "-u", "-i", "-p", "--"] + list(command),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout, check=False)


def start(args: argparse.Namespace) -> dict:
    directory = os.path.abspath(args.dir)
    image_dir = os.path.abspath(args.image_dir)
    rootfs = os.path.join(image_dir, "rootfs")
    os.makedirs(directory, exist_ok=True)
    numa = [int(x) for x in args.numa.split(",")]
    memtotal = write_tree(directory, numa, parse_hugepages(args.hugepages_2m))
    port = free_port()
    sshd_conf = os.path.join(directory, "sshd-port.conf")
    with open(sshd_conf, "w") as handle:
        handle.write("Port %d\nListenAddress 127.0.0.1\n" % port)
    tree = os.path.join(directory, "tree")
    cmd = ["systemd-nspawn", "--register=no", "--keep-unit", "--quiet", "--console=read-only",
           "--directory", rootfs, "--volatile=overlay", "--machine", args.name, "--hostname", args.name, "--boot",
           "--bind-ro=%s:/etc/ssh/sshd_config.d/zz-nspawn-port.conf" % sshd_conf,
           "--bind=%s:/sys/devices/system/node" % os.path.join(tree, "sys/devices/system/node")]
    cmd += ["--bind-ro=/dev/null:/etc/systemd/system/%s" % unit for unit in MASKED_UNITS]
    console = open(os.path.join(directory, "console.log"), "a")  # pylint: disable=consider-using-with
    started = time.time()
    proc = subprocess.Popen(  # pylint: disable=consider-using-with
        cmd, stdin=subprocess.DEVNULL, stdout=console, stderr=console, start_new_session=True, close_fds=True)
    console.close()
    leader = None
    state = ""
    while time.time() - started < 120:
        if proc.poll() is not None:
            raise SystemExit("systemd-nspawn exited with %s; see %s/console.log" % (proc.returncode, directory))
        leader = leader or leader_of(proc.pid)
        if leader:
            state = in_container(leader, "systemctl", "is-system-running").stdout.strip()
            if state in ("running", "degraded") and port_open(port):
                break
        time.sleep(0.5)
    else:
        os.kill(proc.pid, signal.SIGKILL)
        raise SystemExit("container %s did not come up within 120 s (state %r)" % (args.name, state))
    record = {"name": args.name, "instance": args.name, "dir": directory, "nspawn_pid": proc.pid, "leader_pid": leader,
              "address": "127.0.0.1", "port": port, "user": "root", "identity_file": os.path.join(image_dir, "id_ed25519"),
              "numa_mib": numa, "numa_memtotal_kb": memtotal, "up_seconds": round(time.time() - started, 1), "system_state": state}
    with open(os.path.join(directory, "container.json"), "w") as handle:
        json.dump(record, handle, indent=2, sort_keys=True)
    log("%s: up in %.1f s (%s), ssh 127.0.0.1:%d, MemTotal kB %s" % (args.name, record["up_seconds"], state, port, memtotal))
    return record


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def retree(args: argparse.Namespace) -> dict:
    directory = os.path.abspath(args.dir)
    with open(os.path.join(directory, "container.json")) as handle:
        record = json.load(handle)
    record["numa_mib"] = [int(x) for x in args.numa.split(",")] if args.numa else record["numa_mib"]
    record["numa_memtotal_kb"] = write_tree(directory, record["numa_mib"], parse_hugepages(args.hugepages_2m))
    with open(os.path.join(directory, "container.json"), "w") as handle:
        json.dump(record, handle, indent=2, sort_keys=True)
    return record


def stop(directory: str) -> Optional[str]:
    try:
        with open(os.path.join(directory, "container.json")) as handle:
            record = json.load(handle)
    except OSError:
        return None
    # SIGTERM to systemd-nspawn --boot is an orderly poweroff of the container.
    terminate(record["nspawn_pid"], 30)
    return record["name"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("start")
    p.add_argument("--dir", required=True)
    p.add_argument("--image-dir", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--numa", required=True)
    p.add_argument("--hugepages-2m", default="")
    p = sub.add_parser("retree")
    p.add_argument("--dir", required=True)
    p.add_argument("--numa")
    p.add_argument("--hugepages-2m", default="")
    p = sub.add_parser("stop")
    p.add_argument("--dir", action="append", required=True)
    args = parser.parse_args()
    if args.command == "start":
        out: object = start(args)
    elif args.command == "retree":
        out = retree(args)
    else:
        out = [stop(os.path.abspath(d)) for d in args.dir]
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
