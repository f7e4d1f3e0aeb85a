# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's side of the probe: the reader's program, its answer checked and assessed in memory; what it lacked
named, never guessed; a failure told without what the node sent."""

from __future__ import annotations

import ast
import base64
import builtins
import json
import os
import subprocess
import sys
import zlib

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.answered_files import NotRead
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe, read_plan
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _snapshot
from ansible_collections.nodeops.numa_drift.tests.support.node_answer import sent
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    guaranteed_pods,
    two_node_boot,
    write_kubelet_node,
)

ARGUMENTS = dict(kubelet_root_dir=None, kubelet_config=None, kubelet_config_dir=None, kubelet_flags=None, drift_bound="auto",
                 policy=None, reserved_memory=None)


def drifted(tmp_path):
    before = two_node_boot()
    return write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-45260, node1=45260), pods=guaranteed_pods(2, (0,)))


def test_an_answer_is_assessed_in_memory_as_the_node_is(tmp_path, monkeypatch):
    root = drifted(tmp_path)
    rules, follows = read_plan({})
    answer = sent(root, rules, follows)
    # Nothing is written anywhere while the answer is assessed: every open for writing is noted (a look at /tmp would
    # also see what other processes write there meanwhile).
    writes = []
    real_open, real_os_open = builtins.open, os.open

    def noting_open(file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax+"):
            writes.append(file)
        return real_open(file, mode, *args, **kwargs)

    def noting_os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC):
            writes.append(path)
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", noting_open)
    monkeypatch.setattr(os, "open", noting_os_open)
    facts = _snapshot.assess(answer, root, ARGUMENTS)
    monkeypatch.undo()
    assert writes == []
    assert facts == json.loads(json.dumps(assessment_facts(probe(HostFiles(root)))))


def test_a_path_the_answer_lacks_is_asked_for_never_taken_as_absent(tmp_path):
    root = drifted(tmp_path)
    rules, follows = read_plan({})
    lacking = [rule for rule in rules if "memory_manager_state" not in str(rule.get("read"))]
    with pytest.raises(NotRead) as raised:
        _snapshot.assess(sent(root, lacking, follows), root, ARGUMENTS)
    assert (raised.value.key, raised.value.how) == ("/var/lib/kubelet/memory_manager_state", "raw")
    assert _snapshot.rule_for(raised.value) == {"read": "/var/lib/kubelet/memory_manager_state", "raw": True, "literal": True, "follow": []}
    assert _snapshot.remembered(raised.value) == "raw /var/lib/kubelet/memory_manager_state"
    assert _snapshot.learned_rules([_snapshot.remembered(raised.value)]) == [_snapshot.rule_for(raised.value)]


def test_the_reader_program_carries_the_readers_own_sources_and_the_arguments():
    arguments = _snapshot.reader_arguments("/host", [{"read": "/proc/iomem", "raw": True}], {"f": {"pattern": "x", "then": []}})
    text = _snapshot.reader_program(arguments).decode("ascii")
    literals = text.split("modules, arguments = unpacked(", 1)[1].split("\n", 1)[0].rstrip(")").split("), unpacked(")
    # what the node's Python evaluates
    modules, decoded = [json.loads(zlib.decompress(base64.b64decode(ast.literal_eval(literal)))) for literal in literals]
    assert [name.rsplit(".", 1)[1] for name, _source in modules] == ["credentials", "stamp", "node_files", "plan_reader"]
    for (name, source), module in zip(modules, _snapshot.READER_MODULES):
        with open(module.__file__, encoding="utf-8") as handle:
            assert name == module.__name__ and source == handle.read()
    assert decoded == arguments
    assert text.index("sys.path = [") < text.index("import base64")  # the working directory leaves the path first


def test_the_reader_modules_import_nothing_but_the_standard_library_and_one_another():
    """The node has no collection and no Ansible: the program carries every module it needs."""
    names = {module.__name__ for module in _snapshot.READER_MODULES}
    for module in _snapshot.READER_MODULES:
        tree = ast.parse(open(module.__file__, encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(("ansible", "ansible_collections")):
                assert node.module in names, (module.__name__, node.module)
            if isinstance(node, ast.Import):
                assert not any(alias.name.startswith("ansible") for alias in node.names), module.__name__


def test_the_program_runs_in_a_bare_python_and_answers(tmp_path):
    root = drifted(tmp_path)
    rules, follows = read_plan({})
    program = _snapshot.reader_program(_snapshot.reader_arguments(root, rules, follows))
    ran = subprocess.run([sys.executable, "-I", "-S", "-"], input=program, capture_output=True, check=True, cwd=str(tmp_path))
    entries, failure = _snapshot.reader_answer(0, ran.stdout.decode(), "")
    assert failure == {} and entries == sent(root, rules, follows)


@pytest.mark.parametrize("stdout", [
    '{"entries": {"/proc": {"stat": {"kind": "dir"}}}}',
    'Welcome to node-7\n{"entries": {"/proc": {"stat": {"kind": "dir"}}}}\n',
    '{"entries": {"/proc": {"stat": {"kind": "dir"}}}}\nlogout\n',
])
def test_the_readers_answer_is_found_among_other_lines(stdout):
    assert _snapshot.reader_answer(0, stdout, "") == ({"/proc": {"stat": {"kind": "dir"}}}, {})


@pytest.mark.parametrize("rc, stdout, stderr, what, said", [
    (1, "", "Traceback (most recent call last):\n  ...\nPermissionError: [Errno 13] denied\n", "it exited with status 1",
     "; the node said: PermissionError: [Errno 13] denied"),
    (127, "", "/bin/sh: 1: /usr/bin/python3: not found\n", "it exited with status 127", "; the node said: /bin/sh: 1: /usr/bin/python3: not found"),
    (0, '{"entries": {"/etc/token": {"text": {"text": "K10secret"', "", "its output is not the reader's answer", ""),
    (0, '{"entries": ["K10secret", "mapping"]}', "", "its answer is malformed: the answer is not a mapping of node paths", ""),
    (0, "", "", "it wrote nothing", ""),
    (137, '{"entries": {"/etc/token": {"text": {"text": "K10secret"}}}}', "Killed\n", "it exited with status 137", "; the node said: Killed"),
])
def test_a_reader_that_did_not_answer_is_a_failure_that_never_quotes_the_answer(rc, stdout, stderr, what, said):
    entries, failure = _snapshot.reader_answer(rc, stdout, stderr)
    assert entries is None and failure == {
        "failed": True, "rc": rc, "msg": "the node reader failed (rc %d, %d bytes on standard output): %s%s" % (rc, len(stdout), what, said)}
    assert "K10secret" not in json.dumps(failure)


def test_the_answers_size_is_counted_in_bytes_as_sent(monkeypatch):
    monkeypatch.setattr(_snapshot, "MAX_ANSWER_BYTES", 250)
    wide = '{"entries": {"/etc/x": {"text": {"text": "%s"}}}}' % ("\u00e9" * 80)  # 127 characters, 207 bytes
    assert _snapshot.reader_answer(0, wide, "")[1] == {}
    wider = '{"entries": {"/etc/x": {"text": {"text": "%s"}}}}' % ("\u00e9" * 110)  # 157 characters, 267 bytes
    assert "its answer is larger than 250 bytes" in _snapshot.reader_answer(0, wider, "")[1]["msg"]


def test_escaped_keeps_text_and_shows_every_control_character():
    assert _snapshot.escaped("plain words: ok") == "plain words: ok"
    assert _snapshot.escaped("\x1b]52;c;eA==\x07\x9b\u202e") == "\\x1b]52;c;eA==\\x07\\x9b\\u202e"
    assert _snapshot.escaped("x" * 400) == "x" * 300 + "..."


def test_the_module_paths_answer_is_checked_the_same_way():
    assert _snapshot.module_answer({"entries": {"/proc": {"stat": {"kind": "dir"}}}}) == ({"/proc": {"stat": {"kind": "dir"}}}, {})
    entries, failure = _snapshot.module_answer({"failed": True, "rc": 1, "msg": "boom \x1b[2J", "module_stdout": "K10secret"})
    assert entries is None and failure == {"failed": True, "rc": 1, "msg": "the node reader module failed: boom \\x1b[2J"}
    _entries, failure = _snapshot.module_answer({"entries": {"relative": {}}})
    assert failure["msg"].startswith("the node reader module's answer is malformed: ")
