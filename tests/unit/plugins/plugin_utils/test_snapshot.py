# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's side of the probe: a node's snapshot checked, rebuilt, assessed; what it lacked named, never guessed."""

from __future__ import annotations

import ast
import importlib
import json
import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common import paths
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _snapshot
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    guaranteed_pods,
    two_node_boot,
    write_kubelet_node,
)
from ansible_collections.nodeops.numa_drift.tests.unit.snapshot_parity import snapshot_facts

plan_reader = importlib.import_module("ansible_collections.nodeops.numa_drift.plugins.module_utils._node.plan_reader")
ARGUMENTS = dict(kubelet_root_dir=None, kubelet_config=None, kubelet_config_dir=None, kubelet_flags=None, drift_bound="auto",
                 policy=None, reserved_memory=None)


def drifted(tmp_path):
    before = two_node_boot()
    return write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-45260, node1=45260), pods=guaranteed_pods(2, (0,)))


def entries_of(root, plan=None):
    reader = plan_reader.Reader(root, _snapshot.FOLLOW)
    for rule in plan or _snapshot.READ_PLAN:
        reader.gather(rule)
    return json.loads(json.dumps(reader.answer()))


@pytest.mark.parametrize("entries", [
    {"/etc/../root/.ssh/id_rsa": ["f", "x"]},
    {"etc/default/kubelet": ["f", "x"]},
    {"/etc/default/kubelet\0": ["f", "x"]},
    {"/": ["d", []]},
    {"/etc": ["d", "../x"]},
    {"/etc": ["d", "a//b"]},
    {"/etc": ["d", ["a"]]},
    {"/etc": ["z", 1]},
    {"/etc": ["l", "/x\0"]},
    {"/etc": "f"},
    ["/etc"],
])
def test_a_malformed_answer_is_refused(entries):
    with pytest.raises(_snapshot.UnsupportedSnapshot):
        _snapshot.validate(entries)


def test_too_many_entries_are_refused():
    with pytest.raises(_snapshot.UnsupportedSnapshot, match="bounded"):
        _snapshot.validate({"/x%d" % index: ["a"] for index in range(_snapshot.MAX_ENTRIES + 1)})


@pytest.mark.parametrize("kind", [["e", 13, "Permission denied"], ["o", 0o10000]])
def test_what_cannot_be_rebuilt_exactly_is_unsupported(tmp_path, kind):
    with pytest.raises(_snapshot.UnsupportedSnapshot, match="cannot be reproduced"):
        _snapshot.materialize(_snapshot.validate({"/etc": ["d", None], "/etc/x": kind}), str(tmp_path))


def test_coverage_tells_known_absent_unread_listed_and_unknown():
    coverage = _snapshot.Coverage({"/etc": ["d", ["default", "os-release"]], "/etc/os-release": ["r"], "/var": ["a"],
                                   "/run": ["d", None]}, "/tmp/x")
    assert coverage.state("/etc") == "known"
    assert coverage.state("/etc/os-release") == "unread"
    assert coverage.state("/etc/default") == "listed"
    assert coverage.state("/etc/sysconfig") == "absent"
    assert coverage.state("/var/lib/kubelet/config.yaml") == "absent"
    assert coverage.state("/run/k0s") == "unknown"
    assert coverage.state("/opt") == "unknown"
    for path, how in (("/etc/os-release", "walk"), ("/etc/sysconfig/kubelet", "read"), ("/etc", "list")):
        coverage("/tmp/x" + path, how)
    assert coverage.misses == []
    for path, how in (("/etc/os-release", "read"), ("/etc/default", "walk"), ("/run", "list"), ("/opt/x", "read")):
        coverage("/tmp/x" + path, how)
    assert coverage.misses == ["/etc/os-release", "/etc/default", "/run", "/opt/x"]


def test_a_snapshot_is_assessed_as_the_node_is(tmp_path):
    root = drifted(tmp_path)
    facts, rounds = snapshot_facts(root, dict(ARGUMENTS))
    assert rounds == 1 and facts["verdict"] == "drift_within_bound" and facts["repairable"]
    assert facts["checkpoint"]["path"] == root + "/var/lib/kubelet/memory_manager_state"  # the node's root, not the copy's
    assert paths.observe_access(None) is None  # the observer is gone once the assessment ends


def test_a_path_the_snapshot_lacks_is_a_miss_not_an_absence(tmp_path):
    root = drifted(tmp_path)
    entries = entries_of(root)
    del entries["/var/lib/kubelet/memory_manager_state"]
    facts, misses = _snapshot.assess_snapshot(entries, root, dict(ARGUMENTS))
    assert facts is None and misses == ["/var/lib/kubelet/memory_manager_state"]


def test_names_of_a_node_directory_come_from_the_node(tmp_path):
    root = drifted(tmp_path)
    entries = entries_of(root)
    entries["/sys/devices/system/node/node0"][1] += "/memory4242"  # a memory block only the node has
    facts, misses = _snapshot.assess_snapshot(entries, root, dict(ARGUMENTS))
    assert misses == [] and facts is not None
    assert not os.path.exists(os.path.join(root, "sys/devices/system/node/node0/memory4242"))


def test_the_copy_is_removed(tmp_path, monkeypatch):
    made = []
    real = _snapshot.tempfile.mkdtemp
    monkeypatch.setattr(_snapshot.tempfile, "mkdtemp", lambda **kwargs: made.append(real(**kwargs)) or made[-1])
    _snapshot.assess_snapshot(entries_of(drifted(tmp_path)), "/", dict(ARGUMENTS))
    assert made and not os.path.exists(made[0])


def test_rewritten_names_the_nodes_root():
    directory = "/tmp/nodeops-numa-drift-node-abc"
    value = {"path": directory + "/var/lib/kubelet/memory_manager_state", "problems": ["%s is a directory" % directory]}
    assert _snapshot._rewritten(value, directory, "/") == {"path": "/var/lib/kubelet/memory_manager_state", "problems": ["/ is a directory"]}
    assert _snapshot._rewritten(value, directory, "/host/")["path"] == "/host/var/lib/kubelet/memory_manager_state"


def test_the_tasks_options_and_learned_paths_become_rules():
    rules = _snapshot.rules_for(dict(ARGUMENTS, kubelet_config="/etc/k.yaml", kubelet_root_dir="/data/kubelet"), ["/srv/x", 3])
    assert [rule["path"] for rule in rules] == ["/etc/k.yaml", "/data/kubelet/memory_manager_state", "/srv/x"]


def test_a_link_the_kernel_would_follow_out_of_the_copy_is_not_assessed_here(tmp_path):
    root = drifted(tmp_path)
    entries = entries_of(root)
    secret = tmp_path / "controller-secret"
    (secret / "meminfo").parent.mkdir()
    (secret / "meminfo").write_text("Node 0 MemTotal: 1 kB\n")
    # A hostile node: its NUMA node 0 is a link to a directory of the controller's (absolute: the kernel would follow it).
    entries["/sys/devices/system/node/node0"] = ["l", str(secret)]
    opened = []
    real_open = os.open
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", lambda path, *args, **kwargs: opened.append(str(path)) or real_open(path, *args, **kwargs))
        with pytest.raises(_snapshot.UnsupportedSnapshot, match="symbolic link /sys/devices/system/node/node0"):
            _snapshot.assess_snapshot(entries, root, dict(ARGUMENTS))
    assert not any(path.startswith(str(secret)) or "/node0/" in path for path in opened), opened


def test_listings_are_bounded():
    with pytest.raises(_snapshot.UnsupportedSnapshot, match="bounded|more than"):
        _snapshot.validate({"/sys": ["d", "/".join("m%d" % index for index in range(_snapshot.MAX_NAMES + 1))]})


def test_nothing_is_written_through_a_nodes_link(tmp_path):
    outside = tmp_path / "controller"
    (outside / "b").mkdir(parents=True)
    copy = tmp_path / "copy"
    copy.mkdir()
    entries = {"/a": ["l", str(outside)], "/a/b": ["d", None], "/a/b/c": ["f", "written?"], "/etc": ["d", "x"],
               "/etc/x": ["b", "bm90IGJhc2U2NA=="]}
    _snapshot.materialize(_snapshot.validate(entries), str(copy))
    assert os.listdir(str(outside / "b")) == []
    assert os.readlink(str(copy / "a")) == str(outside) and (copy / "etc" / "x").read_bytes() == b"not base64"


def test_malformed_base64_is_refused(tmp_path):
    with pytest.raises(_snapshot.UnsupportedSnapshot, match="malformed"):
        _snapshot.materialize(_snapshot.validate({"/etc": ["d", None], "/etc/x": ["b", "***"]}), str(tmp_path))


def test_the_reader_program_is_the_readers_own_source_and_the_arguments(tmp_path):
    program = _snapshot.reader_program(_snapshot.reader_arguments("/host", [{"path": "/proc/iomem", "limit": 10}]))
    text = program.decode("ascii")
    literal = text.split("json.loads(", 1)[1].split(")\n", 1)[0]
    source, arguments = json.loads(ast.literal_eval(literal))  # the literal the node's Python evaluates
    with open(plan_reader.__file__, encoding="utf-8") as handle:
        assert source == handle.read()
    assert arguments == {"root": "/host", "plan": [{"path": "/proc/iomem", "limit": 10}], "follow": json.loads(json.dumps(_snapshot.FOLLOW))}
    assert text.index('sys.path = [') < text.index("import json")  # the working directory leaves the path first


@pytest.mark.parametrize("stdout", [
    '{"entries": {"/proc": ["d", null]}}',
    'Welcome to node-7\n{"entries": {"/proc": ["d", null]}}\n',
    '{"entries": {"/proc": ["d", null]}}\nlogout\n',
])
def test_the_readers_answer_is_found_among_other_lines(stdout):
    assert _snapshot.reader_entries(0, stdout, "") == ({"/proc": ["d", None]}, {})


@pytest.mark.parametrize("rc, stdout, stderr, said", [
    (1, "", "Traceback (most recent call last):\n  ...\nPermissionError: [Errno 13] denied\n", "PermissionError: [Errno 13] denied"),
    (127, "", "/bin/sh: 1: /usr/bin/python3: not found\n", "/bin/sh: 1: /usr/bin/python3: not found"),
    (0, '{"entries": {"/proc": ["d", null]', "", "its output is not the reader's answer: '{\"entries\": {\"/proc\": [\"d\", null]'"),
    (0, '{"entries": ["not", "a", "mapping"]}', "", "its output is not the reader's answer: '{\"entries\": [\"not\", \"a\", \"mapping\"]}'"),
    (0, "", "", "no output"),
])
def test_a_reader_that_did_not_answer_is_a_failure_with_what_the_node_said(rc, stdout, stderr, said):
    entries, failure = _snapshot.reader_entries(rc, stdout, stderr)
    assert entries is None and failure["failed"] is True and failure["rc"] == rc
    assert failure["msg"] == "the node reader failed (rc %d): %s" % (rc, said)
    assert failure["module_stdout"] == stdout and failure["module_stderr"] == stderr
