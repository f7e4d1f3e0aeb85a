# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's action plugin: one read per host, the paths it learns remembered, the probe module where a snapshot cannot be exact."""

from __future__ import annotations

import importlib
import json
import os
from unittest import mock

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.nodeops.numa_drift.plugins.action import numa_drift_facts as action
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.unit.plugins.module_utils.scenario import (
    guaranteed_pods,
    two_node_boot,
    write_kubelet_node,
)

plan_reader = importlib.import_module("ansible_collections.nodeops.numa_drift.plugins.module_utils._node.plan_reader")


class Node(object):
    """``_execute_module`` against a tree: ``__node_read`` runs in-process, the probe module is recorded."""

    def __init__(self, root):
        self.root = root
        self.runs = []

    def __call__(self, module_name, module_args, task_vars, wrap_async=False):
        self.runs.append(module_name)
        if module_name == action.READER:
            reader = plan_reader.Reader(module_args["root"], module_args["follow"])
            for rule in module_args["plan"]:
                reader.gather(rule)
            return json.loads(json.dumps({"changed": False, "entries": reader.answer()}))
        return {"changed": False, "numa_drift": json.loads(json.dumps(assessment_facts(probe(root=module_args["root"]))))}


def run(root, args=None, task_vars=None, async_val=0):
    task = mock.MagicMock(args=dict(args or {}, root=root), async_val=async_val, check_mode=False, diff=False)
    connection = mock.MagicMock()
    connection._shell.tmpdir = None
    plugin = action.ActionModule(task, connection, mock.MagicMock(), mock.MagicMock(), mock.MagicMock(), mock.MagicMock())
    node = Node(root)
    with mock.patch.object(plugin, "_execute_module", side_effect=node):
        result = plugin.run(task_vars=dict(task_vars or {}, inventory_hostname="worker-7"))
    return result, node.runs


def drifted(tmp_path, files=None, kubelet_root_dir="/var/lib/kubelet"):
    before = two_node_boot()
    return write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-45260, node1=45260), pods=guaranteed_pods(2, (0,)),
                              kubelet_root_dir=kubelet_root_dir, extra_files=files or {})


def test_one_read_and_the_same_facts_as_the_probe_module(tmp_path):
    root = drifted(tmp_path)
    result, runs = run(root)
    assert runs == [action.READER]
    expected = json.loads(json.dumps(assessment_facts(probe(root=root))))
    expected["advice"] = result["numa_drift"]["advice"]
    assert result["numa_drift"] == expected and "worker-7" in result["numa_drift"]["advice"]
    assert "ansible_facts" not in result


def test_a_path_built_from_a_variable_is_read_once_more_then_remembered(tmp_path):
    files = {"/etc/systemd/system/kubelet.service": "[Service]\nEnvironment=\"ROOT=/data/kubelet\"\n"
                                                    "ExecStart=/usr/bin/kubelet --config=/var/lib/kubelet/config.yaml --root-dir=${ROOT}\n"}
    root = drifted(tmp_path, files, kubelet_root_dir="/data/kubelet")
    result, runs = run(root)
    assert runs == [action.READER, action.READER]
    assert result["numa_drift"]["checkpoint"]["path"] == root + "/data/kubelet/memory_manager_state"
    learned = result["ansible_facts"][action.LEARNED_FACT]
    assert "/data/kubelet/memory_manager_state" in learned
    again, runs = run(root, task_vars={action.LEARNED_FACT: learned})
    assert runs == [action.READER] and again["numa_drift"] == result["numa_drift"] and "ansible_facts" not in again


def test_a_snapshot_that_cannot_be_exact_runs_the_probe_module(tmp_path):
    root = drifted(tmp_path)
    os.makedirs(os.path.join(root, "etc", "systemd", "system", "kubelet.service.d"), exist_ok=True)
    os.mkfifo(os.path.join(root, "etc", "systemd", "system", "kubelet.service.d", "10-fifo.conf"))
    result, runs = run(root)
    assert runs == [action.READER, action.MODULE]
    assert result["numa_drift"]["verdict"] == assessment_facts(probe(root=root))["verdict"]


def test_a_bad_bound_fails_naming_the_option(tmp_path):
    result, runs = run(drifted(tmp_path), {"drift_bound": "lots"})
    assert result.get("failed") and result["msg"].startswith("drift_bound: ") and runs == [action.READER]


def test_an_unknown_option_is_refused_before_anything_is_sent(tmp_path):
    with pytest.raises(AnsibleActionFail, match="nonsense"):
        run(drifted(tmp_path), {"nonsense": 1})


def test_a_background_job_is_refused_as_before(tmp_path):
    with pytest.raises(AnsibleActionFail, match="async"):
        run(drifted(tmp_path), async_val=60)
