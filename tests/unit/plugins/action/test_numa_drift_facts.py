# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's action plugin: one read per host (the reader program on the interpreter's standard input where Ansible
pipelines modules and the host's Python is known, else the ``__node_read`` module), the paths it learns remembered,
the answer assessed here in memory; a failing, hostile or silent node fails the task with a short, escaped message and
nothing of what it sent."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time
from unittest import mock

import pytest
from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import shell_loader
from ansible.template import Templar

from ansible_collections.nodeops.numa_drift.plugins.action import numa_drift_facts as action
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node import plan_reader
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _node_reader, _snapshot
from ansible_collections.nodeops.numa_drift.tests.support.go_images import go_image
from ansible_collections.nodeops.numa_drift.tests.support.programs import install_program, said, version_script
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    guaranteed_pods,
    two_node_boot,
    write_kubelet_node,
)


class Node(object):
    """The node of one task: ``__node_read`` runs in-process, the reader program in a real interpreter (``/bin/sh -c``
    with the command the action plugin built, its program on standard input, started in ``cwd``)."""

    def __init__(self, root, cwd, interpreter=sys.executable):
        self.root = root
        self.cwd = cwd
        self.interpreter = interpreter
        self.runs = []
        self.commands = []
        self.sudoable = []
        self.stdouts = []
        self.module_facts = {}

    def execute_module(self, module_name, module_args, task_vars, wrap_async=False):
        assert module_name == _node_reader.READER
        self.runs.append("module")
        entries = plan_reader.read_plan(module_args["root"], module_args["plan"], module_args["follows"], known=module_args.get("known"))
        return json.loads(json.dumps({"changed": False, "entries": entries, "ansible_facts": self.module_facts}))

    def execute_command(self, cmd, sudoable=True, in_data=None):
        self.runs.append("program")
        self.commands.append(cmd)
        self.sudoable.append(sudoable)
        ran = subprocess.run(["/bin/sh", "-c", cmd], input=in_data, cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        self.stdouts.append(ran.stdout)
        return {"rc": ran.returncode, "stdout": ran.stdout.decode("utf-8", "surrogateescape"), "stderr": ran.stderr.decode("utf-8", "replace")}


def run(root, args=None, task_vars=None, async_val=0, pipelining=True, node=None, interpreter_known=True, delegate_to=None):
    node = node or Node(root, os.path.dirname(root))
    variables = dict(task_vars or {}, inventory_hostname="worker-7")
    if interpreter_known:
        variables.setdefault("ansible_python_interpreter", node.interpreter)
    task = mock.MagicMock(action="nodeops.numa_drift.numa_drift_facts", args=dict(args or {}, root=root), async_val=async_val, check_mode=False,
                          diff=False, environment=None,
                          delegate_to=delegate_to)
    connection = mock.MagicMock()
    connection._shell = shell_loader.get("sh")
    connection._shell.tmpdir = None
    connection.is_pipelining_enabled.return_value = pipelining
    plugin = action.ActionModule(task, connection, mock.MagicMock(), DataLoader(), Templar(loader=DataLoader()), mock.MagicMock())
    with mock.patch.object(plugin, "_execute_module", side_effect=node.execute_module), \
            mock.patch.object(plugin, "_compute_environment_string", return_value="LANG=C.UTF-8"), \
            mock.patch.object(plugin, "_low_level_execute_command", side_effect=node.execute_command):
        result = plugin.run(task_vars=variables)
    return result, node.runs


def drifted(tmp_path, files=None, kubelet_root_dir="/var/lib/kubelet"):
    before = two_node_boot()
    return write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-45260, node1=45260), pods=guaranteed_pods(2, (0,)),
                              kubelet_root_dir=kubelet_root_dir, extra_files=files or {})


def probed(root, **options):
    return json.loads(json.dumps(assessment_facts(probe(HostFiles(root), **options))))


@pytest.mark.parametrize("pipelining", [True, False], ids=["program on stdin", "module"])
def test_one_read_and_the_same_facts_as_the_probe_module(tmp_path, pipelining):
    root = drifted(tmp_path)
    result, runs = run(root, pipelining=pipelining)
    assert runs == ["program" if pipelining else "module"]
    expected = probed(root)
    expected["advice"] = result["numa_drift"]["advice"]
    assert result["numa_drift"] == expected and "worker-7" in result["numa_drift"]["advice"]
    assert "ansible_facts" not in result


@pytest.mark.parametrize("pipelining", [True, False], ids=["program on stdin", "module"])
def test_a_path_built_from_a_variable_is_read_once_more_then_remembered(tmp_path, pipelining):
    files = {"/etc/systemd/system/kubelet.service": "[Service]\nEnvironment=\"ROOT=/data/kubelet\"\n"
                                                    "ExecStart=/usr/bin/kubelet --config=/var/lib/kubelet/config.yaml --root-dir=${ROOT}\n"}
    root = drifted(tmp_path, files, kubelet_root_dir="/data/kubelet")
    result, runs = run(root, pipelining=pipelining)
    assert len(runs) == 2
    assert result["numa_drift"]["checkpoint"]["path"] == root + "/data/kubelet/memory_manager_state"
    assert result["numa_drift"]["verdict"] == "drift_within_bound"
    learned = result["ansible_facts"][action.LEARNED_FACT]
    # Both of kubelet's checkpoints in that root dir, learned in the one more read.
    assert learned == ["raw /data/kubelet/memory_manager_state", "raw /data/kubelet/cpu_manager_state"]
    again, runs = run(root, task_vars={action.LEARNED_FACT: learned}, pipelining=pipelining)
    assert len(runs) == 1 and again["numa_drift"] == result["numa_drift"] and "ansible_facts" not in again


def test_learned_paths_are_bounded_and_only_well_formed_ones_are_read(tmp_path):
    root = drifted(tmp_path)
    learned = ["raw /x/%d" % index for index in range(200)] + ["read /etc/../shadow", "nonsense", 7, "read relative"]
    rules = _snapshot.learned_rules(learned)
    assert len(rules) == _snapshot.MAX_LEARNED and all(rule["read"].startswith("/x/") for rule in rules)
    result, runs = run(root, task_vars={action.LEARNED_FACT: learned})
    assert runs == ["program"] and result["numa_drift"]["verdict"] == "drift_within_bound"


def test_a_bad_bound_fails_naming_the_option(tmp_path):
    result, runs = run(drifted(tmp_path), {"drift_bound": "lots"})
    assert result.get("failed") and result["msg"].startswith("drift_bound: ") and runs == ["program"]


def test_a_node_without_numa_sysfs_fails_as_the_probe_module_does(tmp_path):
    root = drifted(tmp_path)
    for path in sorted(glob.glob(os.path.join(root, "sys/devices/system/node/*")), reverse=True):
        subprocess.run(["rm", "-rf", path], check=True)
    result, _runs = run(root)
    assert result["failed"] is True and result["msg"].startswith("cannot read the node under %s: the node's NUMA memory cannot be read: " % root)
    assert "no node<N> directory under %s/sys/devices/system/node" % root in result["msg"]


def test_an_unknown_option_is_refused_before_anything_is_sent_listing_the_supported_ones(tmp_path):
    result, runs = run(drifted(tmp_path), {"nonsense": 1})
    assert result["failed"] and not runs
    assert result["msg"] == (
        "Unsupported parameters for (nodeops.numa_drift.numa_drift_facts) module: nonsense. Supported parameters include: "
        "drift_bound, kubelet_config, kubelet_config_dir, kubelet_flags, kubelet_release, kubelet_root_dir, policy, read_timeout, "
        "reserved_memory, root, untested_release.")


@pytest.mark.parametrize("args, message", [
    ({"reserved_memory": 5}, "reserved_memory must be a mapping from NUMA node to limits ({0: {memory: 1Gi}}) or a list as kubelet's "
                             "reservedMemory ([{numaNode: 0, limits: {memory: 1Gi}}]), got an integer (5)"),
    ({"reserved_memory": "5"}, "reserved_memory must be a mapping from NUMA node to limits ({0: {memory: 1Gi}}) or a list as kubelet's "
                               "reservedMemory ([{numaNode: 0, limits: {memory: 1Gi}}]), got a string ('5')"),
    ({"reserved_memory": {0: {"memory": ["1Gi"]}}}, "reserved_memory[0] memory: a quantity must be a number or a string, got a list"),
    ({"reserved_memory": [5]}, "reserved_memory: reservedMemory[0] must be a mapping with numaNode and limits, got an integer"),
    ({"kubelet_flags": {"--v": 2}}, "kubelet_flags must be kubelet's command line as a string or a list of strings, got a mapping"),
    ({"policy": {"name": "Static"}}, "policy must be a string, got a mapping"),
    ({"drift_bound": ["128Mi"]}, "drift_bound must be a string, got a list"),
    ({"kubelet_config": ["/etc/kubernetes/kubelet.yaml"]}, "kubelet_config must be a path (a string), got a list"),
    # Ansible would say "argument 'read_timeout' is of type str and we were unable to convert to int".
    ({"read_timeout": "two minutes"}, "read_timeout must be an integer, got a string ('two minutes')"),
])
def test_an_option_of_the_wrong_type_fails_naming_it_and_what_it_takes_before_anything_is_sent(tmp_path, args, message):
    # reserved_memory=5 used to read the node and answer rc 0, verdict kubelet_config_rejected, "got _AnsibleTaggedStr".
    result, runs = run(drifted(tmp_path), args)
    assert result["failed"] and not runs
    assert result["msg"] == message
    assert "_Ansible" not in result["msg"] and "dict" not in result["msg"] and "<class" not in result["msg"] and "of type" not in result["msg"]


def test_a_background_job_is_refused_as_before(tmp_path):
    with pytest.raises(AnsibleActionFail, match="async"):
        run(drifted(tmp_path), async_val=60)


# The controller's Python, the system's, and the oldest Python the collection supports on nodes where pyenv holds one.
INTERPRETERS = sorted({sys.executable} | {path for path in ["/usr/bin/python3"] + glob.glob("/root/.pyenv/versions/3.9*/bin/python3.9")
                                          if os.path.exists(path)})


@pytest.mark.parametrize("interpreter", INTERPRETERS)
def test_the_program_runs_under_the_modules_interpreter_and_environment(tmp_path, interpreter):
    root = drifted(tmp_path)
    node = Node(root, str(tmp_path), interpreter=interpreter)
    result, runs = run(root, node=node)
    expected = probed(root)
    expected["advice"] = result["numa_drift"]["advice"]
    assert runs == ["program"] and result["numa_drift"] == expected
    assert node.commands == ["LANG=C.UTF-8 %s -S" % interpreter] and node.sudoable == [True]  # with the task's become


def test_the_program_never_imports_from_the_directory_it_starts_in(tmp_path):
    """A ``json.py`` (or any module) where the command starts, a user's home under become, is never run as the reader."""
    root = drifted(tmp_path)
    trap = tmp_path / "home"
    trap.mkdir()
    for name in ("json", "re", "os", "types", "base64", "fnmatch", "posixpath", "stat", "errno", "time", "typing"):
        (trap / ("%s.py" % name)).write_text("open(%r, 'w').close()\nraise SystemExit(9)\n" % str(tmp_path / "ran"))
    node = Node(root, str(trap))
    result, _runs = run(root, node=node)
    assert node.commands, "the program on standard input was not what ran"
    assert not result.get("failed") and result["numa_drift"]["verdict"] == probed(root)["verdict"]
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("pipelining", [True, False], ids=["program on stdin", "module"])
def test_an_unknown_interpreter_is_discovered_by_the_module_on_first_contact_and_kept(tmp_path, pipelining):
    """Only that fact: nothing else a reader's result might carry becomes a host fact; the next run pipelines."""
    root = drifted(tmp_path)
    node = Node(root, str(tmp_path))
    node.module_facts = {"discovered_interpreter_python": sys.executable, action.LEARNED_FACT: ["read /etc/shadow"]}
    original_execute = node.execute_module
    plugins = []

    def discovering(module_name, module_args, task_vars, wrap_async=False):
        # what ActionBase._configure_module does when it discovers the interpreter (the module path only)
        plugins[-1]._discovered_interpreter_key, plugins[-1]._discovered_interpreter = "discovered_interpreter_python", sys.executable
        return original_execute(module_name, module_args, task_vars, wrap_async)

    node.execute_module = discovering
    original_init = action.ActionModule.__init__

    def remembering(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        plugins.append(self)

    with mock.patch.object(action.ActionModule, "__init__", remembering):
        result, runs = run(root, node=node, pipelining=pipelining, interpreter_known=False)
    assert runs == ["module"]
    assert result["ansible_facts"] == {"discovered_interpreter_python": sys.executable}
    facts = {"ansible_facts": {"discovered_interpreter_python": sys.executable}}
    again, runs = run(root, task_vars=facts, pipelining=pipelining, interpreter_known=False)
    assert runs == ["program" if pipelining else "module"] and again["numa_drift"] == result["numa_drift"]


def test_a_delegated_task_runs_the_reader_under_the_delegated_hosts_python(tmp_path):
    root = drifted(tmp_path)
    node = Node(root, str(tmp_path))
    delegated = {"ansible_delegated_vars": {"jump-1": {"ansible_python_interpreter": node.interpreter}},
                 "ansible_python_interpreter": "/nonexistent/python"}
    result, runs = run(root, task_vars=delegated, node=node, delegate_to="jump-1")
    assert runs == ["program"] and node.commands == ["LANG=C.UTF-8 %s -S" % node.interpreter]
    assert result["numa_drift"]["verdict"] == "drift_within_bound"


# --------------------------------------------------------------------------- a failing, hostile or silent node


def fake_python(tmp_path, script):
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\ncat > /dev/null\n" + script)
    path.chmod(0o755)
    return str(path)


def node_with(tmp_path, script):
    root = drifted(tmp_path)
    return root, Node(root, str(tmp_path), interpreter=fake_python(tmp_path, script))


def test_a_reader_that_fails_on_the_node_says_its_status_size_and_last_words(tmp_path):
    root, node = node_with(tmp_path, "echo 'Traceback (most recent call last):' >&2\necho 'SyntaxError: invalid syntax' >&2\nexit 1\n")
    result, runs = run(root, node=node)
    assert runs == ["program"] and result["failed"] is True and result["rc"] == 1
    assert result["msg"] == ("the node reader failed (rc 1, 0 bytes on standard output): it exited with status 1; "
                             "the node said: SyntaxError: invalid syntax")
    assert set(result) <= {"failed", "rc", "msg", "changed", "_ansible_no_log"}
    assert "module_stdout" not in result and "module_stderr" not in result and "numa_drift" not in result


def test_what_a_node_read_never_reaches_the_result_when_the_reader_then_fails(tmp_path):
    """An answer followed by a non-zero exit (the interpreter killed at exit), or cut short (an OOM kill)."""
    secret = "K3S_TOKEN=K10-in-the-answer"
    answer = json.dumps({"entries": {"/etc/x": {"text": {"text": secret, "size": len(secret)}}}})
    for script in ("printf '%%s' '%s'\nexit 137\n" % answer, "printf '%%s' '%s'\n" % answer[: len(answer) // 2]):
        root, node = node_with(tmp_path, script)
        result, _runs = run(root, node=node)
        assert result["failed"] is True and "K10-in-the-answer" not in json.dumps(result), result
        assert "bytes on standard output" in result["msg"]


def test_a_nodes_escape_sequences_never_reach_the_terminal(tmp_path):
    """Window-title (OSC 0), clipboard-write (OSC 52) and colour sequences, and bidi overrides, in the node's stderr."""
    said = "\\033]0;owned\\007\\033]52;c;cm0gLXJmIH4=\\007\\033[31mred\\342\\200\\256txt"
    root, node = node_with(tmp_path, "printf '%s\\n' >&2\nexit 2\n" % said)
    result, _runs = run(root, node=node)
    assert result["failed"] is True
    assert not any(ord(char) < 0x20 or 0x7f <= ord(char) < 0xa0 or char == "\u202e" for char in result["msg"]), result["msg"]
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in result["msg"] and "\\u202e" in result["msg"]


def test_a_malformed_answer_is_refused_naming_what_is_wrong_never_quoting_it(tmp_path):
    for entries in ({"relative/path": {"stat": {"kind": "file"}}}, {"/etc/x": {"stat": {"kind": "socket-of-doom"}}},
                    {"/etc/x": {"text": {"text": 5}}}, {"/etc/x": {"names": {"names": "a/../b"}}}, ["not", "a", "map"]):
        root, node = node_with(tmp_path, "printf '%%s' '%s'\n" % json.dumps({"entries": entries}))
        result, _runs = run(root, node=node)
        assert result["failed"] is True and "its answer is malformed" in result["msg"], result["msg"]
        assert "doom" not in result["msg"] or "unknown kind" in result["msg"]


def test_an_answer_larger_than_the_bound_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(_snapshot, "MAX_ANSWER_BYTES", 1000)
    root, node = node_with(tmp_path, "head -c 4000 /dev/zero | tr '\\0' 'x'\n")
    result, _runs = run(root, node=node)
    assert result["failed"] is True
    assert result["msg"].startswith("the node reader failed (rc 0, 4000 bytes on standard output): its answer is larger than 1000 bytes")


def test_a_reader_that_never_answers_fails_the_task_at_its_read_timeout(tmp_path):
    root, node = node_with(tmp_path, "exec sleep 60\n")
    started = time.monotonic()
    result, _runs = run(root, {"read_timeout": 2}, node=node)
    assert time.monotonic() - started < 30
    assert result["failed"] is True and result["msg"] == "the node reader did not answer within 2 s (read_timeout)"


def test_the_time_limit_leaves_a_shorter_task_timeout_alone_and_restores_it():
    fired = []
    previous = action.signal.signal(action.signal.SIGALRM, lambda *_args: fired.append(True))
    try:
        action.signal.setitimer(action.signal.ITIMER_REAL, 5)
        with action._time_limit(60):
            assert 4 < action.signal.getitimer(action.signal.ITIMER_REAL)[0] <= 5
        with action._time_limit(1):
            assert action.signal.getitimer(action.signal.ITIMER_REAL)[0] <= 1
        assert 3 < action.signal.getitimer(action.signal.ITIMER_REAL)[0] <= 5
    finally:
        action.signal.setitimer(action.signal.ITIMER_REAL, 0)
        action.signal.signal(action.signal.SIGALRM, previous)
    assert not fired


def test_an_answer_that_takes_too_long_to_assess_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(action, "ASSESS_SECONDS", 0.2)
    monkeypatch.setattr(_snapshot, "assess", lambda *args: time.sleep(5))
    started = time.monotonic()
    result, _runs = run(drifted(tmp_path))
    assert time.monotonic() - started < 4
    assert result == dict(result, failed=True, msg="the node's answer took more than 0.2 s to assess: refused")


def test_a_node_that_keeps_answering_less_than_was_asked_fails_after_the_last_read(tmp_path, monkeypatch):
    def lacking(*_args):
        raise _snapshot.NotRead("/etc/never-answered", "text")

    monkeypatch.setattr(_snapshot, "assess", lacking)
    result, runs = run(drifted(tmp_path))
    assert len(runs) == action.MAX_ROUNDS and result["failed"] is True
    assert result["msg"].startswith("the node's answers still lack what the probe reads after %d reads" % action.MAX_ROUNDS)


# --- the release of the kubelet that will start ------------------------------------------------------------------


@pytest.mark.parametrize("pipelining", [True, False], ids=["program on stdin", "module"])
def test_a_kubelet_binary_says_its_stamped_release_without_being_run(tmp_path, pipelining):
    root = drifted(tmp_path)
    program = os.path.join(root, "usr/bin/kubelet")
    os.makedirs(os.path.dirname(program), exist_ok=True)
    with open(program, "wb") as handle:
        handle.write(go_image(["v1.35.4"]))
    os.chmod(program, 0o755)  # sections only: it could not run
    result, runs = run(root, pipelining=pipelining)
    assert len(runs) == 1, result
    kubelet = result["numa_drift"]["kubelet"]
    assert (kubelet["version"], kubelet["release"]) == ("v1.35.4", "1.35")
    assert kubelet["release_source"] == "/usr/bin/kubelet: v1.35.4, stamped in the binary (read without running it)"
    assert result["ansible_facts"][action.VERSIONS_FACT]["/usr/bin/kubelet"]["output"] == "v1.35.4"


@pytest.mark.parametrize("pipelining", [True, False], ids=["program on stdin", "module"])
def test_the_kubelet_program_is_asked_its_release_once_then_known_by_its_identity(tmp_path, pipelining):
    root = drifted(tmp_path)
    marker = tmp_path / "asked"
    install_program(root, "/usr/bin/kubelet", version_script(said("kubelet", "v1.35.4"), marker=str(marker)))
    result, runs = run(root, pipelining=pipelining)
    assert len(runs) == 1 and marker.read_text().splitlines() == ["--version"]
    kubelet = result["numa_drift"]["kubelet"]
    assert (kubelet["version"], kubelet["release_source"]) == ("v1.35.4", "/usr/bin/kubelet --version: Kubernetes v1.35.4")
    remembered = result["ansible_facts"][action.VERSIONS_FACT]
    status = os.stat(os.path.join(root, "usr/bin/kubelet"))
    identity = "%d:%d:%d:%d" % (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
    assert remembered == {"/usr/bin/kubelet": {"identity": identity, "output": "v1.35.4", "rc": 0}}
    # Known by its identity: not run again, the same release (the remembered version string is what crosses back).
    again, runs = run(root, task_vars={action.VERSIONS_FACT: remembered}, pipelining=pipelining)
    assert len(runs) == 1 and marker.read_text().splitlines() == ["--version"]
    assert again["numa_drift"]["kubelet"]["version"] == "v1.35.4" and "ansible_facts" not in again
    # ... and the facts say where the release came from (the version string only, not the line the program printed).
    assert again["numa_drift"]["kubelet"]["release_source"] == (
        "/usr/bin/kubelet --version: v1.35.4 (remembered: the same file said it earlier)")
    # An upgraded package is another file: asked again, and the new release remembered.
    install_program(root, "/usr/bin/kubelet", version_script(said("kubelet", "v1.37.2") + "\n", marker=str(marker)))
    upgraded, runs = run(root, task_vars={action.VERSIONS_FACT: remembered}, pipelining=pipelining)
    assert marker.read_text().splitlines() == ["--version", "--version"]
    assert upgraded["numa_drift"]["kubelet"]["version"] == "v1.37.2"
    assert upgraded["ansible_facts"][action.VERSIONS_FACT]["/usr/bin/kubelet"]["output"] == "v1.37.2"


def test_a_remembered_release_keeps_only_well_formed_records_and_the_version_string():
    fact = {"/usr/bin/kubelet": {"identity": "1:2:3:4", "output": "Kubernetes v1.35.4\x1b[31m", "rc": 0},
            "/usr/local/bin/k3s": {"identity": "1:2:3:4; rm -rf /", "output": "v1.35.4", "rc": 0},
            "relative/kubelet": {"identity": "1:2:3:4", "output": "v1.35.4", "rc": 0},
            "/usr/local/bin/kubelet": {"identity": "5:6:7:8", "output": "no version", "rc": 0},
            "/opt/kubelet": {"identity": "5:6:7:8", "output": "v1.36.3", "rc": 1},
            "/bin/kubelet": ["not", "a", "record"]}
    assert _snapshot.known_versions(fact) == {"/usr/bin/kubelet": {"identity": "1:2:3:4", "output": "v1.35.4", "rc": 0}}
    many = {"/p/%d/kubelet" % index: {"identity": "1:1:1:%d" % index, "output": "v1.34.4", "rc": 0} for index in range(50)}
    assert len(_snapshot.known_versions(many)) == _snapshot.MAX_VERSIONS
    assert _snapshot.known_versions("junk") == {} and _snapshot.known_versions(None) == {}


def test_an_operators_release_runs_nothing_on_the_node(tmp_path):
    root = drifted(tmp_path)
    marker = tmp_path / "asked"
    install_program(root, "/usr/bin/kubelet", version_script(said("kubelet", "v1.35.4"), marker=str(marker)))
    result, runs = run(root, {"kubelet_release": "v1.34.4"})
    assert runs == ["program"] and not marker.exists()
    kubelet = result["numa_drift"]["kubelet"]
    assert (kubelet["version"], kubelet["release_source"]) == ("v1.34.4", "option kubelet_release")
    assert "ansible_facts" not in result


def test_a_release_option_that_names_no_release_fails_naming_it(tmp_path):
    result, _runs = run(drifted(tmp_path), {"kubelet_release": "latest"})
    assert result.get("failed") and result["msg"] == "kubelet_release: 'latest' is not a kubelet release such as 1.34 or v1.34.4"
