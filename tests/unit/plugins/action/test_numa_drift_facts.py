# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's action plugin: one read per host (the reader program on the interpreter's standard input where Ansible
pipelines modules, else the ``__node_read`` module), the paths it learns remembered, the probe module where a snapshot
cannot be exact."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from types import SimpleNamespace
from unittest import mock

import pytest
from ansible.errors import AnsibleActionFail
from ansible.plugins.loader import shell_loader

from ansible_collections.nodeops.numa_drift.plugins.action import numa_drift_facts as action
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    guaranteed_pods,
    two_node_boot,
    write_kubelet_node,
)

plan_reader = importlib.import_module("ansible_collections.nodeops.numa_drift.plugins.module_utils._node.plan_reader")


class Node(object):
    """The node of one task: ``__node_read`` runs in-process, the reader program in a real interpreter (``/bin/sh -c``
    with the command the action plugin built, its program on standard input, started in ``cwd``), the probe module is
    recorded."""

    def __init__(self, root, cwd, interpreter=sys.executable):
        self.root = root
        self.cwd = cwd
        self.interpreter = interpreter
        self.runs = []
        self.commands = []
        self.sudoable = []
        self.module_facts = {}

    def execute_module(self, module_name, module_args, task_vars, wrap_async=False):
        self.runs.append(module_name)
        if module_name == action.READER:
            entries = plan_reader.read_plan(module_args["root"], module_args["plan"], module_args["follow"])
            return json.loads(json.dumps({"changed": False, "entries": entries, "ansible_facts": self.module_facts}))
        return {"changed": False, "numa_drift": json.loads(json.dumps(assessment_facts(probe(root=module_args["root"]))))}

    def configure_module(self, module_name, module_args, task_vars):
        assert module_name == action.READER
        return SimpleNamespace(module_style="new", shebang="#!" + self.interpreter), "/collection/plugins/modules/__node_read.py"

    def execute_command(self, cmd, sudoable=True, in_data=None):
        self.runs.append(action.READER)
        self.commands.append(cmd)
        self.sudoable.append(sudoable)
        ran = subprocess.run(["/bin/sh", "-c", cmd], input=in_data, cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        return {"rc": ran.returncode, "stdout": ran.stdout.decode(), "stderr": ran.stderr.decode()}


def run(root, args=None, task_vars=None, async_val=0, pipelining=True, node=None):
    task = mock.MagicMock(args=dict(args or {}, root=root), async_val=async_val, check_mode=False, diff=False, environment=None)
    connection = mock.MagicMock()
    connection._shell = shell_loader.get("sh")
    connection._shell.tmpdir = None
    plugin = action.ActionModule(task, connection, mock.MagicMock(), mock.MagicMock(), mock.MagicMock(), mock.MagicMock())
    node = node or Node(root, os.path.dirname(root))
    with mock.patch.object(plugin, "_execute_module", side_effect=node.execute_module), \
            mock.patch.object(plugin, "_is_pipelining_enabled", return_value=pipelining), \
            mock.patch.object(plugin, "_configure_module", side_effect=node.configure_module), \
            mock.patch.object(plugin, "_compute_environment_string", return_value="LANG=C.UTF-8"), \
            mock.patch.object(plugin, "_low_level_execute_command", side_effect=node.execute_command):
        result = plugin.run(task_vars=dict(task_vars or {}, inventory_hostname="worker-7"))
    return result, node.runs


def drifted(tmp_path, files=None, kubelet_root_dir="/var/lib/kubelet"):
    before = two_node_boot()
    return write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-45260, node1=45260), pods=guaranteed_pods(2, (0,)),
                              kubelet_root_dir=kubelet_root_dir, extra_files=files or {})


@pytest.mark.parametrize("pipelining", [True, False], ids=["program on stdin", "module"])
def test_one_read_and_the_same_facts_as_the_probe_module(tmp_path, pipelining):
    root = drifted(tmp_path)
    result, runs = run(root, pipelining=pipelining)
    assert runs == [action.READER]
    expected = json.loads(json.dumps(assessment_facts(probe(root=root))))
    expected["advice"] = result["numa_drift"]["advice"]
    assert result["numa_drift"] == expected and "worker-7" in result["numa_drift"]["advice"]
    assert "ansible_facts" not in result


@pytest.mark.parametrize("pipelining", [True, False], ids=["program on stdin", "module"])
def test_a_path_built_from_a_variable_is_read_once_more_then_remembered(tmp_path, pipelining):
    files = {"/etc/systemd/system/kubelet.service": "[Service]\nEnvironment=\"ROOT=/data/kubelet\"\n"
                                                    "ExecStart=/usr/bin/kubelet --config=/var/lib/kubelet/config.yaml --root-dir=${ROOT}\n"}
    root = drifted(tmp_path, files, kubelet_root_dir="/data/kubelet")
    result, runs = run(root, pipelining=pipelining)
    assert runs == [action.READER, action.READER]
    assert result["numa_drift"]["checkpoint"]["path"] == root + "/data/kubelet/memory_manager_state"
    learned = result["ansible_facts"][action.LEARNED_FACT]
    assert "/data/kubelet/memory_manager_state" in learned
    again, runs = run(root, task_vars={action.LEARNED_FACT: learned}, pipelining=pipelining)
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


# The controller's Python and, where there is one, the system's (an older one: the program is for nodes' Pythons).
INTERPRETERS = sorted({sys.executable} | {path for path in ("/usr/bin/python3",) if os.path.exists(path)})


@pytest.mark.parametrize("interpreter", INTERPRETERS)
def test_the_program_runs_under_the_modules_interpreter_and_environment(tmp_path, interpreter):
    root = drifted(tmp_path)
    node = Node(root, str(tmp_path), interpreter=interpreter)
    result, runs = run(root, node=node)
    expected = json.loads(json.dumps(assessment_facts(probe(root=root))))
    expected["advice"] = result["numa_drift"]["advice"]
    assert runs == [action.READER] and result["numa_drift"] == expected
    assert node.commands == ["LANG=C.UTF-8 %s" % interpreter] and node.sudoable == [True]  # with the task's become


def test_the_program_never_imports_from_the_directory_it_starts_in(tmp_path):
    """A ``json.py`` (or any module) where the command starts, a user's home under become, is never run as the reader."""
    root = drifted(tmp_path)
    trap = tmp_path / "home"
    trap.mkdir()
    for name in ("json", "re", "os", "base64", "fnmatch", "posixpath", "stat", "errno"):
        (trap / ("%s.py" % name)).write_text("open(%r, 'w').close()\nraise SystemExit(9)\n" % str(tmp_path / "ran"))
    node = Node(root, str(trap))
    result, _runs = run(root, node=node)
    assert node.commands, "the program on standard input was not what ran"
    assert not result.get("failed") and result["numa_drift"]["verdict"] == assessment_facts(probe(root=root))["verdict"]
    assert not (tmp_path / "ran").exists()


def test_a_reader_that_fails_on_the_node_fails_the_task_with_what_the_node_said(tmp_path):
    root = drifted(tmp_path)
    (tmp_path / "python").write_text("#!/bin/sh\necho 'SyntaxError: invalid syntax' >&2\nexit 1\n")
    (tmp_path / "python").chmod(0o755)
    result, runs = run(root, node=Node(root, str(tmp_path), interpreter=str(tmp_path / "python")))
    assert runs == [action.READER] and result["failed"] is True and result["rc"] == 1
    assert result["msg"] == "the node reader failed (rc 1): SyntaxError: invalid syntax"
    assert result["module_stderr"] == "SyntaxError: invalid syntax\n" and "numa_drift" not in result


@pytest.mark.parametrize("pipelining", [True, False], ids=["program on stdin", "module"])
def test_an_interpreter_discovered_on_first_contact_is_kept_as_a_host_fact(tmp_path, pipelining):
    """Only that fact: nothing else a reader's result might carry becomes a host fact."""
    root = drifted(tmp_path)
    node = Node(root, str(tmp_path))
    node.module_facts = {"discovered_interpreter_python": sys.executable, action.LEARNED_FACT: ["/etc/shadow"]}
    plugin_holder = {}
    original_init = action.ActionModule.__init__

    def remembering(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        # what ActionBase._configure_module does after interpreter discovery (both paths call it)
        self._discovered_interpreter_key, self._discovered_interpreter = "discovered_interpreter_python", sys.executable
        plugin_holder["plugin"] = self

    with mock.patch.object(action.ActionModule, "__init__", remembering):
        result, _runs = run(root, node=node, pipelining=pipelining)
    assert result["ansible_facts"] == {"discovered_interpreter_python": sys.executable}
    assert bool(node.commands) is pipelining
