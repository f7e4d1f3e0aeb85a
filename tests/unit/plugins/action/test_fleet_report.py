# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's pod-name lookup gives up on an API that accepts connections and never answers."""

from __future__ import annotations

import socket
import time

import pytest

from ansible_collections.nodeops.numa_drift.plugins.action import __fleet_report as fleet_report

pytest.importorskip("kubernetes")

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: hole, cluster: {server: "http://127.0.0.1:%d"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: hole, context: {cluster: hole, user: u}}]
current-context: hole
"""
OUTCOMES = {"node-a": {"numa_drift": {"checkpoint": {"pinned_pods": [{"uid": "pod-a"}]}}}}


def test_a_black_holed_api_leaves_the_uids_and_says_why_within_the_timeout(tmp_path, monkeypatch) -> None:
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(16)  # the kernel completes handshakes; nothing ever reads or answers
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG % hole.getsockname()[1], encoding="utf-8")
    monkeypatch.setattr(fleet_report, "POD_LOOKUP_TIMEOUT", 1.0)
    options = {"known": {}, "from_api": True, "kubeconfig": str(kubeconfig), "context": None}
    started = time.monotonic()
    try:
        known, source = fleet_report.ActionModule._pod_names(options, OUTCOMES)  # pylint: disable=protected-access
    finally:
        hole.close()
    assert time.monotonic() - started < 5
    assert known == {}
    assert source == "API did not answer within 1 s, pod UIDs from the checkpoints only"
