# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_probe.py: one node read (settings, facts, checkpoint) and assessed, nothing written."""

from __future__ import annotations

import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.reading import NotRegularFileError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import checkpoint_path, probe, read_checkpoint
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
    result = probe(root=root)
    assert result.path == checkpoint_file(root)
    with open(result.path, "rb") as handle:
        assert result.raw == handle.read()
    assert sorted(node.id for node in result.node.numa_nodes) == [0, 1]
    assert result.settings.root_dir == "/var/lib/kubelet"
    assert result.assessment.verdict == "drift_within_bound"
    assert tree_snapshot(root) == snapshot


def test_checkpoint_path_follows_the_kubelet_root_dir_under_root(tmp_path):
    assert checkpoint_path(str(tmp_path), "/data/kubelet") == os.path.join(str(tmp_path), "data/kubelet/memory_manager_state")


def test_read_checkpoint_missing_is_none_and_a_symlink_is_refused(tmp_path):
    assert read_checkpoint(str(tmp_path / "absent")) is None
    (tmp_path / "real").write_bytes(b"{}")
    os.symlink("real", str(tmp_path / "link"))
    assert read_checkpoint(str(tmp_path / "real")) == b"{}"
    with pytest.raises(NotRegularFileError):
        read_checkpoint(str(tmp_path / "link"))
