# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The QEMU guests' real-kubelet tooling, on the host: how kubelet's own log lines are read
(guard_state.fatal_errors), the disk that carries kubelet (kubelet_disk.make_disk, its cache keys), and
the guest's one way to the control plane (qemu.api_forward, loopback_pipe.py, hostapi's kubelet
kubeconfig). The guests themselves run in the molecule stage."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for _sub in ("tests/vm", "tests/sandbox"):
    _path = os.path.join(CHECKOUT, _sub)
    if _path not in sys.path:
        sys.path.insert(0, _path)

import guard_state  # noqa: E402
import hostapi  # noqa: E402
import kubelet_disk  # noqa: E402
import qemu  # noqa: E402

# Lines as kubelet v1.37.2 wrote them in a molecule guest (journalctl -o cat).
REFUSED = ('E1204 09:09:01.766943     286 kubelet.go:1850] "Failed to start ContainerManager" '
           'err="start memory manager error: [memorymanager] the expected machine state is different from the real one"')
CONFIG_REJECTED = ('E1204 09:02:35.595327     257 run.go:72] "command failed" '
                   'err="failed to run Kubelet: no client provided, cannot use webhook authentication"')
STARTED = 'I1204 09:03:51.165606     282 eviction_manager.go:193] "Eviction manager: starting control loop"'
OTHER = 'E1204 09:03:40.753542     282 kubelet.go:1754] "Image garbage collection failed once." err="imageFs information is unavailable"'


def test_fatal_errors_reads_a_real_kubelets_err_value():
    assert guard_state.fatal_errors([OTHER, REFUSED, STARTED, CONFIG_REJECTED]) == [
        "start memory manager error: [memorymanager] the expected machine state is different from the real one",
        "failed to run Kubelet: no client provided, cannot use webhook authentication",
    ]


def test_fatal_errors_still_reads_the_stand_in():
    lines = ["E1204 09:00:00       7 kubelet_standin] command failed", "could not restore state from checkpoint: x", "next"]
    assert guard_state.fatal_errors(lines) == ["could not restore state from checkpoint: x"]
    assert guard_state.fatal_errors([OTHER, STARTED]) == []


def test_make_disk_holds_the_binaries_executable(tmp_path, monkeypatch):
    monkeypatch.setattr(kubelet_disk, "CACHE_ROOT", str(tmp_path))
    payload = tmp_path / "payload"
    payload.write_bytes(b"\x7fELF" + os.urandom(4096))
    target = tmp_path / "disk.img"
    kubelet_disk.make_disk({"kubelet-v9.9.9": str(payload)}, str(target))
    listing = subprocess.run(["debugfs", "-R", "stat /kubelet-v9.9.9", str(target)], capture_output=True, text=True, check=True).stdout
    assert "Mode:  0755" in listing and "Size: 4100" in listing
    label = subprocess.run(["debugfs", "-R", "stats", str(target)], capture_output=True, text=True, check=True).stdout
    assert "Filesystem volume name:   %s" % kubelet_disk.DISK_LABEL in label


def test_disk_key_follows_the_fake_runtimes_source(tmp_path, monkeypatch):
    before = kubelet_disk.disk_path()
    source = tmp_path / "main.go"
    source.write_text("package main // changed\n")
    monkeypatch.setattr(kubelet_disk, "FAKE_CRI_SOURCE", str(source))
    assert kubelet_disk.disk_path() != before
    assert kubelet_disk.kubelet_path("v1.37.2") == kubelet_disk.kubelet_path("v1.37.2")
    assert kubelet_disk.kubelet_path("v1.34.4") != kubelet_disk.kubelet_path("v1.37.2")


def test_api_forward_joins_the_guests_api_address_to_the_pipe_and_nothing_else(tmp_path):
    port_file = tmp_path / "port"
    forward = qemu.api_forward({"api_port_file": str(port_file)})
    assert forward == ",guestfwd=tcp:10.0.2.100:6443-cmd:%s %s %s" % (sys.executable, qemu.LOOPBACK_PIPE, port_file)
    assert qemu.api_forward({"api_port_file": None}) == ""
    with pytest.raises(SystemExit, match="commas"):
        qemu.api_forward({"api_port_file": str(tmp_path / "a,b")})


def echo_server() -> socket.socket:
    """A loopback server that answers every connection with its bytes upper-cased, then closes."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)

    def serve() -> None:
        while True:
            try:
                conn, _addr = server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while True:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(data.upper())

    threading.Thread(target=serve, daemon=True).start()
    return server


def test_loopback_pipe_carries_a_connection_both_ways_and_rereads_the_port(tmp_path):
    pipe = os.path.join(CHECKOUT, "tests", "vm", "loopback_pipe.py")
    port_file = tmp_path / "port"
    for _restart in range(2):  # a control plane restarted on another port is found through the same file
        server = echo_server()
        port_file.write_text("%d\n" % server.getsockname()[1])
        payload = os.urandom(200_000).hex().encode("ascii")
        result = subprocess.run([sys.executable, pipe, str(port_file)], input=payload, capture_output=True, timeout=30, check=True)
        server.close()
        assert result.stdout == payload.upper()


def test_loopback_pipe_says_why_it_cannot_connect(tmp_path):
    pipe = os.path.join(CHECKOUT, "tests", "vm", "loopback_pipe.py")
    port_file = tmp_path / "port"
    port_file.write_text("0\n")
    result = subprocess.run([sys.executable, pipe, str(port_file)], capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 1 and "not a TCP port" in result.stderr
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port_file.write_text("%d\n" % unused.getsockname()[1])  # bound, not listening: refused
        result = subprocess.run([sys.executable, pipe, str(port_file)], capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 1 and "refused" in result.stderr.lower()


def test_kubelet_kubeconfig_names_the_node_and_the_guest_address(tmp_path):
    ca = tmp_path / "ca.crt"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n")
    state = {"ca_file": str(ca), "node_tokens": {"numa2": "t2", "numa4": "t4"}}
    config = json.loads(hostapi.kubelet_kubeconfig(state, "numa4"))
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == "https://" + qemu.API_GUEST_ADDRESS
    assert base64.b64decode(cluster["certificate-authority-data"]) == ca.read_bytes()
    assert cluster["tls-server-name"] == "127.0.0.1"
    assert config["users"] == [{"name": "numa4", "user": {"token": "t4"}}]


@pytest.mark.parametrize("serial, said", [
    ("[    2.1] Kernel panic - not syncing: VFS: Unable to mount root fs\n", "kernel panic during boot"),
    ("[  242.6] INFO: task kworker/1:1:31 blocked for more than 241 seconds.\n[  242.6] Workqueue: events do_free_init\n",
     "kernel hung during boot"),
])
def test_a_guest_kernel_that_cannot_boot_is_told_apart_from_a_slow_one(tmp_path, monkeypatch, serial, said):
    """A panic or a hung kernel before SSH raises KernelFailedToBoot at once (boot_one boots once more), not after the
    10-minute SSH timeout."""
    log = tmp_path / "serial-2.log"
    log.write_text("[    0.0] Linux version 6.1.0-50-amd64\n" + serial)
    monkeypatch.setattr(qemu, "qemu_pid", lambda vm: 4242)
    monkeypatch.setattr(qemu.subprocess, "run", lambda *args, **kwargs: pytest.fail("SSH tried on a guest that cannot boot"))
    with pytest.raises(qemu.KernelFailedToBoot, match=said):
        qemu.wait_for_ssh({"name": "numa-guard"}, str(log), time.time())


def _cpu_nodes(command):
    """{vCPU: NUMA node} of a QEMU command line's ``-numa node,...,cpus=N`` options, and its ``-smp``."""
    placed = {}
    for flag, value in zip(command, command[1:]):
        if flag == "-numa":
            parts = dict(part.split("=", 1) for part in value.split(",")[1:] if part.startswith("nodeid="))
            for part in value.split(","):
                if part.startswith("cpus="):
                    placed[int(part[len("cpus="):])] = int(parts["nodeid"])
    return placed, int(command[command.index("-smp") + 1])


@pytest.mark.parametrize("numa", [[512, 512], [256, 256, 256, 256]])
def test_a_reboot_with_another_vcpu_count_keeps_each_shared_vcpu_on_its_node(numa):
    """The CPU manager scenario reboots with more and then fewer vCPUs: every vCPU is on exactly one node, and a vCPU
    both boots have sits on the same node (kubelet's checkpoint names CPU ids; the topology must not move under them)."""
    vm = {"name": "numa4", "numa_mib": numa, "kaslr": False, "image_dir": "/i", "vm_dir": "/v", "append": "",
          "api_port_file": None, "ssh_port": 2222}
    layouts = {}
    for cpus in range(1, 7):
        placed, smp = _cpu_nodes(qemu.qemu_command(dict(vm, cpus=cpus), "/v/serial-1.log"))
        assert smp == cpus and sorted(placed) == list(range(cpus))
        assert set(placed.values()) == set(range(min(cpus, len(numa))))
        layouts[cpus] = placed
    for a in layouts:
        for b in layouts:
            assert all(layouts[a][cpu] == layouts[b][cpu] for cpu in range(min(a, b))), (a, b)


def test_set_cpus_changes_the_next_boot_and_refuses_zero(tmp_path, capsys):
    vm_dir = tmp_path / "numa4"
    vm_dir.mkdir()
    qemu.save(str(vm_dir), {"name": "numa4", "vm_dir": str(vm_dir), "cpus": 2, "numa_mib": [256, 256], "kaslr": False,
                            "append": "", "boots": [], "ssh_port": 2222, "identity_file": str(tmp_path / "id_ed25519")})
    assert qemu.main(["set", "--vm-dir", str(vm_dir), "--cpus", "3", "--numa", "250,262"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["cpus"] == 3
    assert qemu.load(str(vm_dir))["cpus"] == 3 and qemu.load(str(vm_dir))["numa_mib"] == [250, 262]
    assert qemu.main(["set", "--vm-dir", str(vm_dir), "--numa", "256,256"]) == 0
    assert qemu.load(str(vm_dir))["cpus"] == 3
    with pytest.raises(SystemExit, match="at least one vCPU"):
        qemu.main(["set", "--vm-dir", str(vm_dir), "--cpus", "0"])
