# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/flags.py: kubelet's map flags and command line as pflag parses them."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.flags import (
    parse_eviction_hard_flag,
    parse_key_value_flag,
    parse_kubelet_flags,
)


def test_key_value_flag():
    assert parse_key_value_flag("memory=1Gi, cpu=500m,,") == {"memory": "1Gi", "cpu": "500m"}
    assert parse_key_value_flag("") == {}
    with pytest.raises(ValueError, match="malformed pair, expect string=string"):
        parse_key_value_flag("memory")


def test_eviction_hard_flag():
    assert parse_eviction_hard_flag("memory.available<100Mi,nodefs.available<10%") == {
        "memory.available": "100Mi",
        "nodefs.available": "10%",
    }
    with pytest.raises(ValueError, match="malformed pair, expect string<string"):
        parse_eviction_hard_flag("memory.available=100Mi")


def test_kubelet_flags_in_every_form():
    flags = parse_kubelet_flags(
        [
            "/usr/bin/kubelet",
            "--root-dir",
            "/data/kubelet",
            "--memory-manager-policy=None",
            "--reserved-memory",
            "0:memory=1Gi",
            "--register-node",
            "--reserved-memory=1:memory=2Gi;2:memory=3Gi",
            "--memory-manager-policy",
            "Static",
            "--system-reserved=memory=1Gi,cpu=1",
            "--system-reserved",
            "memory=2Gi",
            "--kube-reserved=memory=512Mi",
            "--eviction-hard=memory.available<500Mi",
            "--config=/etc/kubernetes/kubelet.yaml",
            "-v=2",
        ]
    )
    assert flags.problems == ()
    assert flags.root_dir == "/data/kubelet"
    assert flags.policy == "Static"  # last one wins
    assert [entry.numa_node for entry in flags.reserved_memory] == [0, 1, 2]  # every occurrence appends
    assert flags.system_reserved == {"memory": "2Gi", "cpu": "1"}  # later occurrences add keys
    assert flags.kube_reserved == {"memory": "512Mi"}
    assert flags.eviction_hard == {"memory.available": "500Mi"}
    assert flags.config == "/etc/kubernetes/kubelet.yaml"


def test_kubelet_flags_stop_at_double_dash_and_report_missing_values():
    flags = parse_kubelet_flags(["--root-dir=/a", "--", "--root-dir=/b"])
    assert flags.root_dir == "/a"
    flags = parse_kubelet_flags(["--root-dir=/a", "--reserved-memory"])
    assert flags.reserved_memory is None
    assert flags.problems == ("flag needs an argument: --reserved-memory",)


def test_kubelet_flags_report_bad_values_like_pflag():
    flags = parse_kubelet_flags(["--reserved-memory=0:cpu=1", "--system-reserved", "memory"])
    assert flags.problems == (
        'invalid argument "0:cpu=1" for "--reserved-memory" flag: memory type conversion error, unknown type: "cpu"',
        'invalid argument "memory" for "--system-reserved" flag: malformed pair, expect string=string',
    )
