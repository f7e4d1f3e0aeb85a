# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The QEMU guests' real-kubelet tooling, on the host: how kubelet's own log lines are read
(guard_state.fatal_errors, node_status_relay.kubelet_ready) and the disk that carries kubelet
(kubelet_disk.make_disk, its cache keys). The guests themselves run in the molecule stage."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for _sub in ("tests/vm", "tests/sandbox"):
    _path = os.path.join(CHECKOUT, _sub)
    if _path not in sys.path:
        sys.path.insert(0, _path)

import guard_state  # noqa: E402
import kubelet_disk  # noqa: E402
import node_status_relay  # noqa: E402

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


class FakeGuest:
    """systemctl/journalctl answers of a guest, for node_status_relay."""

    def __init__(self, pid, own_log, unit_log, healthz):
        self.pid, self.own_log, self.unit_log, self.healthz = pid, own_log, unit_log, healthz

    def command_output(self, argv):
        if argv[0] == "systemctl":
            return "%d\n" % self.pid
        if any(arg.startswith("_PID=") for arg in argv):
            assert "_PID=%d" % self.pid in argv
            return "\n".join(self.own_log)
        return "\n".join(self.unit_log)


@pytest.mark.parametrize(
    "pid, own_log, healthz, ready",
    [
        (321, [OTHER, STARTED], True, True),      # container manager started, /healthz ok
        (321, [OTHER], True, False),              # /healthz answers before the memory manager starts
        (321, [OTHER, STARTED], False, False),    # started, but /healthz does not answer
        (0, [], False, False),                    # between two starts (auto-restart)
    ],
)
def test_relay_says_ready_only_after_kubelet_started_its_container_manager(monkeypatch, pid, own_log, healthz, ready):
    guest = FakeGuest(pid, own_log, [OTHER, REFUSED], healthz)
    monkeypatch.setattr(node_status_relay, "command_output", guest.command_output)
    monkeypatch.setattr(node_status_relay, "healthz_ok", lambda url: guest.healthz)
    is_ready, message = node_status_relay.kubelet_ready("kubelet", node_status_relay.HEALTHZ)
    assert is_ready is ready
    if not ready:
        assert message == REFUSED.strip()


def test_relay_reads_the_journal_once_per_started_process(monkeypatch):
    guest = FakeGuest(321, [OTHER, STARTED], [OTHER], True)
    calls = []
    monkeypatch.setattr(node_status_relay, "command_output", lambda argv: calls.append(argv) or guest.command_output(argv))
    monkeypatch.setattr(node_status_relay, "healthz_ok", lambda url: True)
    seen = set()
    for heartbeat in range(3):
        assert node_status_relay.kubelet_ready("kubelet", node_status_relay.HEALTHZ, seen)[0] is True, heartbeat
    assert len([argv for argv in calls if argv[0] == "journalctl"]) == 1
    guest.pid, guest.own_log = 400, [OTHER]  # systemd restarted kubelet: the new process must show its own start
    assert node_status_relay.kubelet_ready("kubelet", node_status_relay.HEALTHZ, seen)[0] is False


def test_relay_message_without_a_fatal_line(monkeypatch):
    guest = FakeGuest(0, [], [OTHER], False)
    monkeypatch.setattr(node_status_relay, "command_output", guest.command_output)
    monkeypatch.setattr(node_status_relay, "healthz_ok", lambda url: False)
    assert node_status_relay.kubelet_ready("kubelet", node_status_relay.HEALTHZ) == (
        False, "kubelet has not started its container manager yet")


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
