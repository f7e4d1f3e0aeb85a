# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The __remediate_plan action plugin decides the loop guard from the repair history the probe read with the node (its
facts' ``history``), else reads the file it is given through the node reader (the probe's channel: the reader program
on the node's interpreter, else the __node_read module)."""

from __future__ import annotations

import os
import time
from unittest import mock

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import shell_loader
from ansible.template import Templar

from ansible_collections.nodeops.numa_drift.plugins.action import __remediate_plan as action
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import history
from ansible_collections.nodeops.numa_drift.tests.unit.plugins.action.test_numa_drift_facts import Node

FACTS = {"verdict": "drift_within_bound", "repairable": True, "summary": "drift_within_bound; memory node0 -44.2 MiB"}


def options(history_file):
    return {
        "node_name": "worker-7", "host": "worker-7", "api": False, "dry": True, "cordon_unrepairable": False, "service_mode": "systemd",
        "service_name": None, "service_commands": {}, "settle_seconds": 20, "ready_timeout": 300, "ready_poll": 5, "drain_timeout": 300,
        "loop_max_repairs": 2, "loop_window_hours": 24.0, "history_file": history_file, "backup_path": "/b", "annotation_prefix": "x.io",
        "checkpoint_path": None,
    }


def run(root, history_file, pipelining, facts=None):
    node = Node(root, root)
    task = mock.MagicMock(action="nodeops.numa_drift.__remediate_plan", args={"facts": facts or FACTS, "options": options(history_file)},
                          async_val=0, check_mode=False, diff=False, environment=None, delegate_to=None)
    connection = mock.MagicMock()
    connection._shell = shell_loader.get("sh")
    connection._shell.tmpdir = None
    connection.is_pipelining_enabled.return_value = pipelining
    plugin = action.ActionModule(task, connection, mock.MagicMock(), DataLoader(), Templar(loader=DataLoader()), mock.MagicMock())
    variables = {"inventory_hostname": "worker-7", "ansible_python_interpreter": node.interpreter}
    with mock.patch.object(plugin, "_execute_module", side_effect=node.execute_module), \
            mock.patch.object(plugin, "_compute_environment_string", return_value="LANG=C.UTF-8"), \
            mock.patch.object(plugin, "_low_level_execute_command", side_effect=node.execute_command), \
            mock.patch.object(plugin, "register_host_variables", create=True):  # outside a task: the facts stay in the result
        result = plugin.run(task_vars=variables)
    return result, node.runs


@pytest.mark.parametrize("pipelining", [True, False], ids=["program on stdin", "module"])
def test_the_loop_guard_is_decided_from_the_history_read_through_the_node_reader(tmp_path, pipelining):
    path = history.history_path(str(tmp_path))
    result, runs = run(str(tmp_path), path, pipelining)
    assert result["plan"]["branch"] == "dry_run" and runs == ["program" if pipelining else "module"]
    now = time.time()
    history.write_history(path, [history.new_entry("repaired", "role", "drift_within_bound", None, "s", now - 3600 * hours) for hours in (1, 2)])
    result, runs = run(str(tmp_path), path, pipelining)
    assert result["plan"]["branch"] == "loop_guard", result
    assert result["outcome"]["action"] == "loop_guard" and path in result["outcome"]["message"]


def test_a_history_that_cannot_be_used_fails_the_plan_naming_it(tmp_path):
    path = history.history_path(str(tmp_path))
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("{")
    result, _runs = run(str(tmp_path), path, True)
    assert result["failed"] and result["phase"] == "loop_guard"
    assert result["msg"].startswith("could not read the repair history %s (delete it if it is corrupt), nothing was changed" % path)
    assert "is not valid JSON" in result["msg"]


@pytest.mark.parametrize("repairs, branch", [([], "dry_run"), ([time.time() - 7200, time.time() - 3600], "loop_guard")])
def test_the_history_the_probe_read_decides_without_reading_the_node_again(tmp_path, repairs, branch):
    path = history.history_path(str(tmp_path))
    facts = dict(FACTS, history={"path": path, "repairs": repairs, "error": None})
    result, runs = run(str(tmp_path), path, True, facts)
    assert result["plan"]["branch"] == branch and runs == [], result
    unusable = dict(FACTS, history={"path": path, "repairs": [], "error": "the repair history %s is not valid JSON (x)" % path})
    result, runs = run(str(tmp_path), path, True, unusable)
    assert result["failed"] and result["phase"] == "loop_guard" and runs == []
    assert result["msg"] == "could not read the repair history %s (delete it if it is corrupt), nothing was changed: %s" % (
        path, unusable["history"]["error"])


def test_a_history_file_elsewhere_than_the_probe_read_is_read_from_the_node(tmp_path):
    facts = dict(FACTS, history={"path": history.history_path(str(tmp_path)), "repairs": [time.time()] * 5, "error": None})
    elsewhere = str(tmp_path / "site-history.json")
    result, runs = run(str(tmp_path), elsewhere, True, facts)
    assert result["plan"]["branch"] == "dry_run" and runs == ["program"], result  # the file it names, absent: no repairs
