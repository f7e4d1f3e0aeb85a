# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate role's quiet waits (plugins/action/__remediate_wait.py): when a poll ends the wait."""

from __future__ import annotations

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _remediate

REGEXP = "(?:NRestarts|MainPID|ActiveEnterTimestampMonotonic|restarts|pid|active_since)[^0-9a-z]{1,4}[0-9.]+"
SYSTEMD = "Id=kubelet.service\nActiveState=active\nNRestarts=0\nMainPID=4242\nActiveEnterTimestampMonotonic=99\n"
OPTIONS = {"service_mode": "systemd", "identity_regexp": REGEXP, "identity": "NRestarts=0 MainPID=4242 ActiveEnterTimestampMonotonic=99",
           "polls": 3}


def shown(stdout, rc=0):
    return {"stdout": stdout, "rc": rc}


def test_active_is_systemds_active_state_or_the_commands_exit_code():
    assert _remediate.kubelet_active(SYSTEMD, 0, "systemd")
    assert not _remediate.kubelet_active(SYSTEMD.replace("=active", "=activating"), 0, "systemd")
    assert _remediate.kubelet_active("whatever", 0, "command") and not _remediate.kubelet_active("active", 3, "command")


def test_waiting_for_active_polls_until_active():
    assert _remediate.wait_step("kubelet_active", shown(SYSTEMD.replace("=active", "=activating")), 1, OPTIONS) is None
    assert _remediate.wait_step("kubelet_active", shown(SYSTEMD), 2, OPTIONS) is True
    assert _remediate.wait_step("kubelet_active", {"failed": True, "msg": "no rc"}, 1, dict(OPTIONS, service_mode="command")) is None


def test_settling_succeeds_after_the_last_poll_and_fails_at_a_restart_or_a_stop():
    assert [_remediate.wait_step("kubelet_settled", shown(SYSTEMD), n, OPTIONS) for n in (1, 2, 3, 4)] == [None, None, None, True]
    restarted = SYSTEMD.replace("NRestarts=0", "NRestarts=1").replace("MainPID=4242", "MainPID=4300")
    assert _remediate.wait_step("kubelet_settled", shown(restarted), 2, OPTIONS) is False
    assert _remediate.wait_step("kubelet_settled", shown(SYSTEMD.replace("=active", "=failed")), 2, OPTIONS) is False
    command = dict(OPTIONS, service_mode="command", identity="restarts=0 pid=4242")
    assert _remediate.wait_step("kubelet_settled", shown("active restarts=0 pid=4242"), 4, command) is True
    assert _remediate.wait_step("kubelet_settled", shown("inactive restarts=0 pid=4242", rc=3), 2, command) is False


def test_the_node_is_ready_when_its_ready_condition_is_true():
    ready = {"resources": [{"status": {"conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}]}}]}
    assert _remediate.wait_step("node_ready", ready, 1, OPTIONS) is True
    assert _remediate.wait_step("node_ready", {"resources": [{"status": {"conditions": [{"type": "Ready", "status": "False"}]}}]}, 1, OPTIONS) is None
    assert _remediate.wait_step("node_ready", {"failed": True, "msg": "connection refused"}, 1, OPTIONS) is None
    assert _remediate.wait_step("node_ready", {"resources": []}, 1, OPTIONS) is None
