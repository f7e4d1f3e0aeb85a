# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Boot, reboot with a new NUMA memory layout, and power off multi-NUMA QEMU guests (stdlib only).

Each guest lives in one directory (its "VM dir"): ``vm.json`` (configuration and the record of
every boot), ``overlay.qcow2`` (copy-on-write on top of the cached image from build-image.sh),
``serial-<boot>.log`` (the serial console of each boot), ``qmp.sock``, ``qemu.pid``.

Guests run under TCG (``-accel tcg,thread=multi``): this machine's /dev/kvm is a paravirtual
flavour that stock kernels do not boot under. Each NUMA node is its own
``memory-backend-ram`` (``-numa node,nodeid=N,memdev=mN[,cpus=...]``), so node sizes may differ
and nodes beyond the vCPU count are memory-only. A "reboot with a different layout" is a
graceful poweroff and a new boot of the same overlay with new node sizes (or another vCPU count,
``--cpus``): a real reboot of a real kernel that then sees different per-node MemTotal in
/sys/devices/system/node (or another set of online CPUs in /sys/devices/system/cpu). vCPU N sits on
node N mod min(vCPUs, nodes), so the vCPUs two boots share keep their NUMA node (and, one socket of
``-smp N`` cores, their core) whatever the count.

SSH is forwarded from 127.0.0.1:<free port> only, and the guest's user-mode network is
``restrict=on`` (the guest cannot open connections anywhere). The one exception is the test
control plane (``--api-port-file``): QEMU's ``guestfwd`` turns every connection the guest opens to
``API_GUEST_ADDRESS`` into a connection to the host's 127.0.0.1 at the port that file names
(tests/vm/loopback_pipe.py, run by QEMU per connection), from the first second of every boot.
At most two guests boot at the same time on this machine (a file-lock pool in the cache dir).

CLI (every command prints JSON on stdout; progress goes to stderr)::

  qemu.py define  --vm-dir D --image-dir I --name N --numa 512,512 [--cpus 2] [--kaslr]
                  [--append "extra kernel args"] [--api-port-file FILE] [--drive RAW_IMAGE ...]
  qemu.py boot    --vm-dir D [--vm-dir D2 ...] [--numa 508,516] [--cpus 3] [--append ...] [--kaslr|--nokaslr]
  qemu.py reboot  --vm-dir D [--vm-dir D2 ...] [--numa ...] [--cpus ...] [--append ...] [--kaslr|--nokaslr]
                  [--until-kernel-moves MAX_BOOTS]
  qemu.py set     --vm-dir D [--numa ...] [--cpus ...] [--append ...] [--kaslr|--nokaslr]   (for the next boot)
  qemu.py poweroff --vm-dir D [...]
  qemu.py destroy --vm-dir D [...] [--keep DIR]   (power off, keep the records, delete the VM dir)
  qemu.py numa    --vm-dir D              (per-node MemTotal kB read in the guest)
  qemu.py ssh     --vm-dir D -- COMMAND...
  qemu.py info    --vm-dir D

``--numa`` gives MiB per node in node order. Several ``--vm-dir`` boot in parallel (bounded by
the boot slots). Environment: NUMA_DRIFT_VM_CACHE (boot slot locks live there),
NUMA_DRIFT_VM_BOOT_TIMEOUT (seconds to SSH, default 600), NUMA_DRIFT_VM_BOOT_SLOTS (default 2).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Dict, Iterator, List, Optional, Sequence

QEMU = "qemu-system-x86_64"
SSH_USER = "root"
BOOT_TIMEOUT = float(os.environ.get("NUMA_DRIFT_VM_BOOT_TIMEOUT", "600"))
# Where a guest finds the test control plane's kube-apiserver (a guestfwd; see the module docstring).
API_GUEST_ADDRESS = "10.0.2.100:6443"
LOOPBACK_PIPE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "loopback_pipe.py")
BOOT_SLOTS = int(os.environ.get("NUMA_DRIFT_VM_BOOT_SLOTS", "2"))
CACHE_ROOT = os.environ.get("NUMA_DRIFT_VM_CACHE") or os.path.join(
    os.path.expanduser("~"), ".cache", "nodeops-numa-drift", "vm")
# no_timer_check: under TCG on a loaded host the kernel's IO-APIC timer check can miss ticks and
# panic ("IO-APIC + timer doesn't work!"); it is the usual setting for virtual machines.
BASE_APPEND = "root=/dev/vda rw console=ttyS0 systemd.show_status=false mitigations=off random.trust_cpu=on no_timer_check"
_PANIC = re.compile(r"Kernel panic|VFS: Unable to mount root|end Kernel panic")
# The hung-task detector (a task blocked for 120 s and more): under TCG on a starved host a boot can stop for good
# there (an RCU grace period that never ends while the kernel frees its init memory, 2026-12-05).
_HUNG = re.compile(r"INFO: task \S+ blocked for more than \d+ seconds")


def log(message: str) -> None:
    sys.stderr.write("qemu.py: %s\n" % message)
    sys.stderr.flush()


# ---------------------------------------------------------------- VM dir records

def load(vm_dir: str) -> dict:
    with open(os.path.join(vm_dir, "vm.json")) as handle:
        return json.load(handle)


def save(vm_dir: str, vm: dict) -> None:
    path = os.path.join(vm_dir, "vm.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(vm, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.replace(tmp, path)


def parse_numa(text: str) -> List[int]:
    sizes = [int(part) for part in text.replace(" ", "").split(",") if part]
    if not sizes or any(size < 64 for size in sizes):
        raise SystemExit("--numa wants MiB per node, each at least 64: %r" % text)
    return sizes


def parse_cpus(count: int) -> int:
    if count < 1:
        raise SystemExit("--cpus wants at least one vCPU: %r" % count)
    return count


def define(args: argparse.Namespace) -> dict:
    vm_dir = os.path.abspath(args.vm_dir)
    image_dir = os.path.abspath(args.image_dir)
    for name in ("rootfs.qcow2", "vmlinuz", "initrd.img", "id_ed25519"):
        if not os.path.exists(os.path.join(image_dir, name)):
            raise SystemExit("%s has no %s: run tests/vm/build-image.sh" % (image_dir, name))
    os.makedirs(vm_dir, exist_ok=True)
    overlay = os.path.join(vm_dir, "overlay.qcow2")
    if os.path.exists(overlay):
        os.unlink(overlay)
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b",
                    os.path.join(image_dir, "rootfs.qcow2"), overlay], check=True)
    vm = {
        "name": args.name,
        "vm_dir": vm_dir,
        "image_dir": image_dir,
        "identity_file": os.path.join(image_dir, "id_ed25519"),
        "cpus": parse_cpus(args.cpus),
        "numa_mib": parse_numa(args.numa),
        "kaslr": bool(args.kaslr),
        "append": args.append or "",
        "api_port_file": os.path.abspath(args.api_port_file) if args.api_port_file else None,
        "drives": [os.path.abspath(path) for path in args.drive or []],
        "ssh_port": None,
        "boots": [],
    }
    save(vm_dir, vm)
    return vm


# ---------------------------------------------------------------- processes

def pid_alive(pid: Optional[int]) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is not running; /proc says so.
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def read_number(path: str) -> Optional[int]:
    """The positive integer a pid or port file holds; None when it is missing, empty, 0 or not a number."""
    try:
        with open(path) as handle:
            return int(handle.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


def qemu_pid(vm: dict) -> Optional[int]:
    pid = read_number(os.path.join(vm["vm_dir"], "qemu.pid"))
    return pid if pid_alive(pid) else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as QEMU's hostfwd listener
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def boot_slot() -> Iterator[int]:
    """Hold one of BOOT_SLOTS host-wide boot slots while a guest boots to SSH."""
    os.makedirs(CACHE_ROOT, exist_ok=True)
    while True:
        for slot in range(BOOT_SLOTS):
            handle = open(os.path.join(CACHE_ROOT, ".boot-slot-%d" % slot), "w")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            try:
                yield slot
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                handle.close()
            return
        time.sleep(1)


# ---------------------------------------------------------------- SSH

def ssh_base(vm: dict, extra: Sequence[str] = ()) -> List[str]:
    return ["ssh", "-i", vm["identity_file"], "-p", str(vm["ssh_port"]),
            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
            "-o", "ConnectTimeout=10"] + list(extra) + ["%s@127.0.0.1" % SSH_USER]


# ssh's own failures before the command ran (exit 255): a guest under TCG on a busy host can be slow to
# answer the handshake right after boot. These are tried again; anything after the handshake is not.
_SSH_NOT_CONNECTED = re.compile(r"during banner exchange|Connection timed out|Connection refused")
SSH_CONNECT_TRIES = 4


def ssh(vm: dict, command: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    for attempt in range(1, SSH_CONNECT_TRIES + 1):
        result = subprocess.run(ssh_base(vm) + [command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True, timeout=timeout, check=False)
        if result.returncode != 255 or not _SSH_NOT_CONNECTED.search(result.stderr) or attempt == SSH_CONNECT_TRIES:
            break
        time.sleep(3 * attempt)
    if check and result.returncode != 0:
        raise RuntimeError("%s: ssh %r exited %d: %s" % (vm["name"], command, result.returncode, result.stderr.strip()))
    return result


# ---------------------------------------------------------------- boot / poweroff

def kernel_append(vm: dict) -> str:
    parts = [BASE_APPEND, "systemd.hostname=%s" % vm["name"]]
    if not vm["kaslr"]:
        parts.append("nokaslr")
    if vm.get("append"):
        parts.append(vm["append"])
    return " ".join(parts)


def api_forward(vm: dict) -> str:
    """The netdev option that forwards the guest's API_GUEST_ADDRESS to the host's loopback ("" without one)."""
    if not vm.get("api_port_file"):
        return ""
    command = [sys.executable, LOOPBACK_PIPE, vm["api_port_file"]]
    if any("," in part or " " in part for part in command):
        raise SystemExit("guestfwd command parts may hold neither commas nor spaces: %r" % command)
    return ",guestfwd=tcp:%s-cmd:%s" % (API_GUEST_ADDRESS, " ".join(command))


def qemu_command(vm: dict, serial_log: str) -> List[str]:
    sizes = vm["numa_mib"]
    cpus = vm["cpus"]
    cmd = [QEMU, "-name", vm["name"], "-machine", "q35", "-accel", "tcg,thread=multi",
           "-smp", str(cpus), "-m", "%dM" % sum(sizes)]
    if vm["kaslr"]:
        # KASLR takes its early-boot entropy from RDRAND when the CPU has it, else from the TSC,
        # which under TCG varies little between boots (measured: the kernel image stayed on the
        # same node for 7 boots in a row). QEMU's TCG implements RDRAND.
        cmd += ["-cpu", "qemu64,+rdrand"]
    for node, size in enumerate(sizes):
        cmd += ["-object", "memory-backend-ram,id=m%d,size=%dM" % (node, size)]
    # vCPUs go round-robin over the first min(cpus, nodes) nodes; the rest are memory-only. vCPU i is on node
    # i mod min(cpus, nodes): for the vCPUs of two boots with different counts that is the same node (i < both
    # counts, so i mod the smaller count of CPU nodes is i, or both are i mod the node count).
    cpu_nodes = min(cpus, len(sizes))
    for node in range(len(sizes)):
        spec = "node,nodeid=%d,memdev=m%d" % (node, node)
        mine = [cpu for cpu in range(cpus) if cpu % cpu_nodes == node] if node < cpu_nodes else []
        for cpu in mine:
            spec += ",cpus=%d" % cpu
        cmd += ["-numa", spec]
    cmd += [
        "-kernel", os.path.join(vm["image_dir"], "vmlinuz"),
        "-initrd", os.path.join(vm["image_dir"], "initrd.img"),
        "-append", kernel_append(vm),
        "-drive", "file=%s,if=virtio,format=qcow2,cache=unsafe,discard=unmap"
        % os.path.join(vm["vm_dir"], "overlay.qcow2"),
    ]
    # Extra read-only disks (/dev/vdb, /dev/vdc, ...): e.g. the real kubelet's binaries.
    for path in vm.get("drives", []):
        cmd += ["-drive", "file=%s,if=virtio,format=raw,readonly=on" % path]
    cmd += [
        "-netdev", "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:%d-:22%s" % (vm["ssh_port"], api_forward(vm)),
        "-device", "virtio-net-pci,netdev=n0",
        "-device", "virtio-rng-pci",
        "-display", "none", "-vga", "none", "-monitor", "none",
        "-serial", "file:%s" % serial_log,
        "-qmp", "unix:%s,server=on,wait=off" % os.path.join(vm["vm_dir"], "qmp.sock"),
        "-no-reboot",
        "-pidfile", os.path.join(vm["vm_dir"], "qemu.pid"),
        "-daemonize",
    ]
    return cmd


def wait_for_ssh(vm: dict, serial_log: str, started: float) -> float:
    deadline = started + BOOT_TIMEOUT
    while time.time() < deadline:
        if not qemu_pid(vm):
            raise RuntimeError("%s: QEMU exited during boot; serial log %s:\n%s"
                               % (vm["name"], serial_log, tail(serial_log)))
        text = tail(serial_log, 4000)
        if _PANIC.search(text):
            raise KernelFailedToBoot("%s: kernel panic during boot:\n%s" % (vm["name"], tail(serial_log)))
        if _HUNG.search(text):
            raise KernelFailedToBoot("%s: kernel hung during boot:\n%s" % (vm["name"], tail(serial_log)))
        try:
            result = subprocess.run(ssh_base(vm, ["-o", "ConnectTimeout=5"]) + ["true"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30, check=False)
            if result.returncode == 0:
                return time.time() - started
        except subprocess.TimeoutExpired:
            pass
        time.sleep(1)
    raise RuntimeError("%s: no SSH after %.0f s; serial log %s:\n%s"
                       % (vm["name"], BOOT_TIMEOUT, serial_log, tail(serial_log)))


def tail(path: str, size: int = 2500) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def guest_numa(vm: dict) -> Dict[str, int]:
    """Per-node MemTotal (kB) as the guest's /sys/devices/system/node shows it."""
    out = ssh(vm, "grep -H MemTotal /sys/devices/system/node/node*/meminfo").stdout
    nodes = {}
    for line in out.splitlines():
        match = re.search(r"node(\d+)/meminfo:Node \d+ MemTotal:\s+(\d+) kB", line)
        if match:
            nodes["node%s" % match.group(1)] = int(match.group(2))
    return dict(sorted(nodes.items(), key=lambda item: int(item[0][4:])))


def kernel_image_node(vm: dict) -> Optional[int]:
    """The node whose memory blocks hold the start of "Kernel code" (None when unknown)."""
    script = (
        "s=$(awk -F'[- :]+' '/Kernel code/ {print $2; exit}' /proc/iomem); "
        "b=$(cat /sys/devices/system/memory/block_size_bytes); "
        "i=$(( 0x$s / 0x$b )); "
        "ls -d /sys/devices/system/node/node*/memory$i 2>/dev/null | sed -n 's|.*/node\\([0-9]*\\)/.*|\\1|p'"
    )
    out = ssh(vm, script, check=False).stdout.strip()
    return int(out) if out.isdigit() else None


class KernelFailedToBoot(RuntimeError):
    """A panic or a hung kernel before SSH: the boot is tried once more."""


def start_qemu(vm: dict, serial_log: str) -> float:
    """Start QEMU daemonized for this boot; the time it started."""
    for attempt in range(3):
        # The same port on every boot (molecule's inventory names it), unless it got taken.
        if attempt or not vm.get("ssh_port") or not port_free(vm["ssh_port"]):
            vm["ssh_port"] = free_port()
        cmd = qemu_command(vm, serial_log)
        started = time.time()
        result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        if result.returncode == 0:
            return started
        if "hostfwd" not in result.stdout or attempt == 2:
            raise RuntimeError("%s: QEMU failed to start: %s\n%s" % (vm["name"], result.stdout, shlex.join(cmd)))
    raise AssertionError("unreachable")


def kill_qemu(vm: dict) -> None:
    pid = qemu_pid(vm)
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        wait_gone(pid, 10)


def boot_one(vm_dir: str) -> dict:
    vm = load(vm_dir)
    if qemu_pid(vm):
        log("%s: already running" % vm["name"])
        return vm
    number = len(vm["boots"]) + 1
    serial_log = os.path.join(vm_dir, "serial-%d.log" % number)
    record = {"boot": number, "numa_mib": vm["numa_mib"], "cpus": vm["cpus"], "kaslr": vm["kaslr"],
              "append": kernel_append(vm)}
    with boot_slot() as slot:
        for boot_try in (1, 2):
            started = start_qemu(vm, serial_log)
            save(vm_dir, vm)
            log("%s: boot %d (slot %d), NUMA MiB %s, %d vCPUs, ssh 127.0.0.1:%d"
                % (vm["name"], number, slot, vm["numa_mib"], vm["cpus"], vm["ssh_port"]))
            try:
                record["ssh_seconds"] = round(wait_for_ssh(vm, serial_log, started), 1)
                record["numa_memtotal_kb"] = guest_numa(vm)
                record["kernel_image_node"] = kernel_image_node(vm)
                break
            except (KernelFailedToBoot, subprocess.TimeoutExpired) as failure:
                # A TCG guest starved of CPU by a busy host can fail early timer checks or hang, also just after its
                # SSH first answers (the first reads then time out: a CI run of 2026-12-06): boot once more.
                kill_qemu(vm)
                os.replace(serial_log, serial_log[:-len(".log")] + "-failed.log")
                if boot_try == 2:
                    raise
                log("%s; booting once more" % failure)
    record["started_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    vm["boots"].append(record)
    save(vm_dir, vm)
    log("%s: SSH after %.1f s; MemTotal kB per node %s; kernel image on node %s"
        % (vm["name"], record["ssh_seconds"], record["numa_memtotal_kb"], record["kernel_image_node"]))
    return vm


def poweroff_one(vm_dir: str, timeout: float = 90) -> dict:
    vm = load(vm_dir)
    pid = qemu_pid(vm)
    if not pid:
        return vm
    started = time.time()
    with contextlib.suppress(Exception):
        # The connection drops while systemd goes down; the exit status does not matter.
        ssh(vm, "systemctl poweroff", timeout=30, check=False)
    if not wait_gone(pid, timeout):
        log("%s: no poweroff after %.0f s; QMP system_powerdown" % (vm["name"], timeout))
        qmp(vm, "system_powerdown")
        if not wait_gone(pid, 30):
            log("%s: killing QEMU %d" % (vm["name"], pid))
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            wait_gone(pid, 10)
    if vm["boots"]:
        vm["boots"][-1]["poweroff_seconds"] = round(time.time() - started, 1)
    save(vm_dir, vm)
    log("%s: powered off in %.1f s" % (vm["name"], time.time() - started))
    return vm


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.5)
    return not pid_alive(pid)


def terminate(pid: int, timeout: float) -> None:
    """SIGTERM, then SIGKILL when the process is still there after ``timeout`` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if not wait_gone(pid, timeout):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def qmp(vm: dict, command: str) -> None:
    path = os.path.join(vm["vm_dir"], "qmp.sock")
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(path)
        sock.recv(4096)
        sock.sendall(b'{"execute": "qmp_capabilities"}\n')
        sock.recv(4096)
        sock.sendall(json.dumps({"execute": command}).encode() + b"\n")
        sock.recv(4096)


def reboot_until_kernel_moves(vm_dir: str, max_boots: int) -> dict:
    """Reboot until the kernel image sits on another NUMA node than on the current boot."""
    vm = load(vm_dir)
    before = vm["boots"][-1]["kernel_image_node"] if vm["boots"] else None
    for attempt in range(1, max_boots + 1):
        poweroff_one(vm_dir)
        vm = boot_one(vm_dir)
        now = vm["boots"][-1]["kernel_image_node"]
        if before is None or (now is not None and now != before):
            log("%s: kernel image moved from node %s to node %s after %d reboot(s)" % (vm["name"], before, now, attempt))
            return vm
        log("%s: kernel image still on node %s after reboot %d of %d" % (vm["name"], now, attempt, max_boots))
    raise RuntimeError("%s: the kernel image stayed on node %s for %d reboots" % (vm["name"], before, max_boots))


def apply_changes(vm_dir: str, args: argparse.Namespace) -> None:
    vm = load(vm_dir)
    if getattr(args, "numa", None):
        vm["numa_mib"] = parse_numa(args.numa)
    if getattr(args, "cpus", None) is not None:
        vm["cpus"] = parse_cpus(args.cpus)
    if getattr(args, "append", None) is not None:
        vm["append"] = args.append
    if getattr(args, "kaslr", None) is not None:
        vm["kaslr"] = args.kaslr
    save(vm_dir, vm)


def in_parallel(function, vm_dirs: Sequence[str]) -> List[dict]:
    results: Dict[str, object] = {}

    def run(vm_dir: str) -> None:
        try:
            results[vm_dir] = function(vm_dir)
        except Exception as exc:  # reported below, per guest
            results[vm_dir] = exc

    threads = [threading.Thread(target=run, args=(d,)) for d in vm_dirs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    errors = [str(r) for r in results.values() if isinstance(r, Exception)]
    if errors:
        raise SystemExit("\n".join(errors))
    return [results[d] for d in vm_dirs]  # type: ignore[misc]


def keep_records(vm_dir: str, name: str, keep: str) -> None:
    os.makedirs(keep, exist_ok=True)
    shutil.copyfile(os.path.join(vm_dir, "vm.json"), os.path.join(keep, "%s.json" % name))
    for entry in sorted(os.listdir(vm_dir)):
        if entry.startswith("serial-") and entry.endswith(".log"):
            shutil.copyfile(os.path.join(vm_dir, entry), os.path.join(keep, "%s-%s" % (name, entry)))


def summary(vm: dict) -> dict:
    last = vm["boots"][-1] if vm["boots"] else {}
    return {"name": vm["name"], "instance": vm["name"], "vm_dir": vm["vm_dir"], "address": "127.0.0.1", "port": vm["ssh_port"],
            "user": SSH_USER, "identity_file": vm["identity_file"], "running": bool(qemu_pid(vm)),
            "numa_mib": vm["numa_mib"], "cpus": vm["cpus"], "kaslr": vm["kaslr"], "boots": len(vm["boots"]), "last_boot": last}


# ---------------------------------------------------------------- CLI

def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("define")
    p.add_argument("--vm-dir", required=True)
    p.add_argument("--image-dir", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--numa", required=True)
    p.add_argument("--cpus", type=int, default=2)
    p.add_argument("--kaslr", action="store_true")
    p.add_argument("--append", default="")
    p.add_argument("--api-port-file", help="guestfwd %s -> the host's 127.0.0.1:<port in this file>" % API_GUEST_ADDRESS)
    p.add_argument("--drive", action="append", help="a raw disk image attached read-only at every boot (repeatable)")

    for name in ("boot", "reboot", "set"):
        p = sub.add_parser(name)
        p.add_argument("--vm-dir", action="append", required=True)
        p.add_argument("--numa")
        p.add_argument("--cpus", type=int, help="vCPUs from this boot on")
        p.add_argument("--append")
        if name == "reboot":
            p.add_argument("--until-kernel-moves", type=int, default=0, metavar="MAX_BOOTS",
                           help="reboot until the kernel image is on another NUMA node than now (KASLR), at most this often")
        g = p.add_mutually_exclusive_group()
        g.add_argument("--kaslr", dest="kaslr", action="store_true", default=None)
        g.add_argument("--nokaslr", dest="kaslr", action="store_false")

    for name in ("poweroff", "destroy", "info", "numa"):
        p = sub.add_parser(name)
        p.add_argument("--vm-dir", action="append", required=True)
        if name == "destroy":
            p.add_argument("--keep", help="copy vm.json and the serial logs here first (<name>.json, <name>-serial-<n>.log)")

    p = sub.add_parser("ssh")
    p.add_argument("--vm-dir", required=True)
    p.add_argument("remote", nargs=argparse.REMAINDER)

    args = parser.parse_args(argv)
    out: object
    if args.command == "define":
        out = summary(define(args))
    elif args.command in ("boot", "reboot"):
        dirs = [os.path.abspath(d) for d in args.vm_dir]
        for d in dirs:
            apply_changes(d, args)
        if args.command == "reboot" and args.until_kernel_moves:
            out = [summary(vm) for vm in in_parallel(lambda d: reboot_until_kernel_moves(d, args.until_kernel_moves), dirs)]
        else:
            if args.command == "reboot":
                in_parallel(poweroff_one, dirs)
            out = [summary(vm) for vm in in_parallel(boot_one, dirs)]
    elif args.command == "set":
        for d in args.vm_dir:
            apply_changes(os.path.abspath(d), args)
        out = [summary(load(os.path.abspath(d))) for d in args.vm_dir]
    elif args.command == "poweroff":
        out = [summary(vm) for vm in in_parallel(poweroff_one, [os.path.abspath(d) for d in args.vm_dir])]
    elif args.command == "destroy":
        out = []
        for d in args.vm_dir:
            if os.path.exists(os.path.join(d, "vm.json")):
                poweroff_one(d, timeout=20)
                name = load(d)["name"]
                if args.keep:
                    keep_records(d, name, args.keep)
                out.append(name)
            shutil.rmtree(d, ignore_errors=True)
    elif args.command == "info":
        out = [summary(load(d)) for d in args.vm_dir]
    elif args.command == "numa":
        out = {load(d)["name"]: guest_numa(load(d)) for d in args.vm_dir}
    else:
        remote = args.remote[1:] if args.remote[:1] == ["--"] else args.remote
        command = remote[0] if len(remote) == 1 else shlex.join(remote)
        return subprocess.call(ssh_base(load(args.vm_dir)) + [command])
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
