# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_probe.py: one node read (settings, facts, checkpoint) and assessed, nothing written."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles, NotRegularFileError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import GUARD_STATE, probe, read_checkpoint, read_plan
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    checkpoint_file,
    guaranteed_pods,
    tree_snapshot,
    two_node_boot,
    write_kubelet_node,
)


def test_probe_reads_the_node_and_assesses_it_without_writing(tmp_path):
    before = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-45260, node1=45260), pods=guaranteed_pods(2))
    snapshot = tree_snapshot(root)
    result = probe(HostFiles(root))
    assert result.path == checkpoint_file(root)
    with open(result.path, "rb") as handle:
        assert result.raw == handle.read()
    assert sorted(node.id for node in result.node.numa_nodes) == [0, 1]
    assert result.settings.root_dir == "/var/lib/kubelet"
    assert result.assessment.verdict == "drift_within_bound"
    assert tree_snapshot(root) == snapshot


def test_the_checkpoint_is_read_under_the_kubelet_root_dir_under_root(tmp_path):
    before = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "node"), before, kubelet_root_dir="/data/kubelet")
    result = probe(HostFiles(root), kubelet_root_dir="/data/kubelet")
    assert result.path == os.path.join(root, "data/kubelet/memory_manager_state") and result.raw is not None


def test_the_guard_record_is_read_with_the_node(tmp_path):
    before = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "node"), before)
    os.makedirs(os.path.join(root, os.path.dirname(GUARD_STATE).lstrip("/")))
    with open(os.path.join(root, GUARD_STATE.lstrip("/")), "w") as handle:
        handle.write('{"boot_id": "b-1", "verdict": "in_sync", "action": "none", "extra": "dropped"}')
    guard = probe(HostFiles(root)).guard
    assert guard == {"installed": False, "boot_id": "b-1", "verdict": "in_sync", "action": "none", "message": None, "time": None}


def test_the_read_plan_declares_what_the_probe_reads_and_the_options_name():
    rules, follows = read_plan({})
    verbs = [next(verb for verb in ("read", "list", "walk", "stat", "version") if verb in rule) for rule in rules if "when" not in rule]
    assert set(verbs) == {"read", "list", "walk", "stat", "version"}
    assert {"read": "/sys/devices/system/node/node*/{meminfo,cpulist,distance}", "raw": True} in rules
    assert {"read": "/var/lib/kubelet/memory_manager_state", "raw": True} in rules
    assert {"read": "/var/lib/kubelet/cpu_manager_state", "raw": True} in rules
    assert {"read": "/sys/devices/system/cpu/cpu[0-9]*/topology/{core_id,physical_package_id}", "raw": True} in rules
    for rule in rules:
        assert set(rule.get("follow", ())) <= set(follows), rule
    for spec in follows.values():
        for then in spec["then"]:
            assert set(then.get("follow", ())) <= set(follows), then
    optional, _follows = read_plan({"kubelet_config": "/etc/k/config.yaml", "kubelet_config_dir": "/etc/k/conf.d",
                                    "kubelet_root_dir": "/data/kubelet", "kubelet_flags": "--root-dir=/srv/kubelet --config /etc/x.yaml"})
    # The options' reads come before the CPU cache files, which the plan reads last, and only where a text it read names
    # the option kubelet picks by them (_probe._cache_reads).
    caches = [{"list": "/sys/devices/system/cpu/cpu[0-9]*/cache"},
              {"read": "/sys/devices/system/cpu/cpu[0-9]*/cache/index*/{id,size,level,type,shared_cpu_map}", "raw": True}]
    assert optional[-1:] == rules[-1:] == [{"when": re.escape("prefer-align-cpus-by-uncorecache"), "then": caches}]
    added = optional[len(rules) - 1:-1]
    assert added == [
        {"read": "/etc/k/config.yaml", "literal": True},
        {"walk": "/etc/k/conf.d", "literal": True},
        {"read": "/data/kubelet/memory_manager_state", "raw": True, "literal": True},
        {"read": "/data/kubelet/cpu_manager_state", "raw": True, "literal": True},
        {"read": "/etc/x.yaml", "follow": [], "literal": True},
        {"read": "/srv/kubelet/memory_manager_state", "raw": True, "follow": ["kubelet-config", "kubelet-config-dir", "kubelet-root-dir"], "literal": True},
        {"read": "/srv/kubelet/cpu_manager_state", "raw": True, "follow": ["kubelet-config", "kubelet-config-dir", "kubelet-root-dir"], "literal": True},
    ]
    # kubelet_flags naming the option: no text of the node needs to.
    named, _follows = read_plan({"kubelet_flags": ["--cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true"]})
    assert named[-2:] == caches


def test_read_checkpoint_missing_is_none_and_a_symlink_is_refused(tmp_path):
    assert read_checkpoint(str(tmp_path / "absent")) is None
    (tmp_path / "real").write_bytes(b"{}")
    os.symlink("real", str(tmp_path / "link"))
    assert read_checkpoint(str(tmp_path / "real")) == b"{}"
    with pytest.raises(NotRegularFileError):
        read_checkpoint(str(tmp_path / "link"))
