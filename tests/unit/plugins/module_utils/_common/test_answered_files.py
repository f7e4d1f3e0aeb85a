# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_common/answered_files.py: a node's answer checked before anything reads it, replayed
as the node's files in memory, what it lacks asked for whole, what the kernel would say derived only where it is sure."""

from __future__ import annotations

import errno
import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.answered_files import (
    MAX_ENTRIES,
    AnsweredFiles,
    MalformedAnswer,
    NotRead,
    checked_entries,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import NotRegularFileError


@pytest.mark.parametrize("entries, words", [
    ({"/etc/../root/.ssh/id_rsa": {"stat": {"kind": "file"}}}, "not a normal absolute node path"),
    ({"etc/default/kubelet": {"stat": {"kind": "file"}}}, "not a normal absolute node path"),
    ({"/etc/default/kubelet\0": {"stat": {"kind": "file"}}}, "not a normal absolute node path"),
    ({"//etc": {"stat": {"kind": "dir"}}}, "not a normal absolute node path"),
    ({"/" + "x" * 5000: {"stat": {"kind": "file"}}}, "not a normal absolute node path"),
    ({"/etc": {"names": {"names": "../x"}}}, "a name no directory holds"),
    ({"/etc": {"names": {"names": "a/./b"}}}, "a name no directory holds"),
    ({"/etc": {"names": {"names": ["a"]}}}, "mistyped field 'names'"),
    ({"/etc": {"stat": {"kind": "socket"}}}, "an unknown kind of file"),
    ({"/etc": {"stat": {"kind": "link", "target": 7}}}, "mistyped field 'target'"),
    ({"/etc": {"raw": {"size": True}}}, "mistyped field 'size'"),
    ({"/etc": {"text": {"shell": "rm -rf /"}}}, "unknown or mistyped field 'shell'"),
    ({"/etc": {"exec": {}}}, "an unknown record 'exec'"),
    ({"/etc": "f"}, "not a mapping of the reader's records"),
    ({"/etc": {}}, "not a mapping of the reader's records"),
    (["/etc"], "not a mapping of node paths"),
    ({"/p%d" % index: {"stat": {"kind": "absent"}} for index in range(MAX_ENTRIES + 1)}, "more than %d" % MAX_ENTRIES),
])
def test_a_malformed_answer_is_refused_naming_what_is_wrong(entries, words):
    with pytest.raises(MalformedAnswer, match=words.replace("(", r"\(").replace(")", r"\)")):
        checked_entries(entries)


def test_a_link_resolves_in_memory_never_through_this_machines_kernel():
    files = AnsweredFiles("/host", checked_entries({
        "/etc": {"stat": {"kind": "dir"}},
        "/etc/passwd": {"stat": {"kind": "link", "target": "/etc/shadow"}},
        "/etc/shadow": {"stat": {"kind": "absent"}},
    }))
    assert os.path.exists("/etc/passwd")  # on this machine
    assert files.resolve("/etc/passwd") == "/etc/shadow" and not files.exists("/etc/passwd")
    assert files.host_path("/etc/passwd") == "/host/etc/shadow"


def test_what_the_kernel_would_say_is_derived_only_where_it_is_sure():
    files = AnsweredFiles("/", checked_entries({
        "/etc": {"stat": {"kind": "dir"}, "names": {"names": "default/hosts"}},
        "/etc/hosts": {"stat": {"kind": "file"}},
        "/opt": {"stat": {"kind": "absent"}},
        "/etc/default": {"stat": {"kind": "dir"}},
    }))
    assert files.kind("/etc/missing") == "absent"  # not in the directory's names
    assert files.kind("/opt/a/b/c") == "absent"  # under a missing directory
    assert files.stat("/etc/hosts/x") == {"kind": "error", "errno": errno.ENOTDIR, "error": os.strerror(errno.ENOTDIR)}
    with pytest.raises(NotRead) as raised:
        files.kind("/etc/default/kubelet")  # a directory never listed: not known
    assert (raised.value.key, raised.value.how) == ("/etc/default/kubelet", "stat")


@pytest.mark.parametrize("operation, how", [
    (lambda files: files.read_text("/etc/default/kubelet"), "text"),
    (lambda files: files.read_bytes("/etc/default/kubelet", 10), "raw"),
    (lambda files: files.listdir("/etc/default/kubelet"), "names"),
    (lambda files: files.readlink("/etc/default/kubelet"), "stat"),
])
def test_what_the_answer_lacks_is_asked_for_as_the_engines_operation_on_the_whole_path(operation, how):
    files = AnsweredFiles("/", checked_entries({"/etc": {"stat": {"kind": "dir"}}}))
    with pytest.raises(NotRead) as raised:
        operation(files)
    assert (raised.value.key, raised.value.how) == ("/etc/default/kubelet", how)
    assert not isinstance(raised.value, OSError)  # the engine never takes it for an answer


def test_a_file_read_another_way_than_the_node_read_it_is_asked_for_again():
    files = AnsweredFiles("/", checked_entries({"/etc": {"stat": {"kind": "dir"}}, "/etc/x": {"stat": {"kind": "file"}, "raw": {"data": "a", "size": 1}}}))
    assert files.read_bytes("/etc/x", 1) == b"a"
    with pytest.raises(NotRead, match="text"):
        files.read_text("/etc/x")


def test_a_replaced_file_is_no_regular_file():
    files = AnsweredFiles("/", checked_entries({"/etc": {"stat": {"kind": "dir"}}, "/etc/x": {"stat": {"kind": "file"}, "raw": {"replaced": 0o010000}}}))
    with pytest.raises(NotRegularFileError, match="a FIFO"):
        files.read_bytes("/etc/x", 10)
