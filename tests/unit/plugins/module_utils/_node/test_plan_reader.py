# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``_node.plan_reader`` (what ``__node_read`` runs): what it records of a node under a root, and what it never does
(follow out of root, block, read past a limit)."""

from __future__ import annotations

import base64
import errno
import importlib
import os

import pytest

plan_reader = importlib.import_module("ansible_collections.nodeops.numa_drift.plugins.module_utils._node.plan_reader")


def write(root, path, data=b""):
    host = os.path.join(str(root), path.lstrip("/"))
    os.makedirs(os.path.dirname(host), exist_ok=True)
    with open(host, "wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)
    return host


def gathered(root, *rules, follow=()):
    reader = plan_reader.Reader(str(root), follow)
    for rule in rules:
        reader.gather(rule)
    return reader.entries


def test_a_file_is_read_with_each_directory_on_the_way(tmp_path):
    write(tmp_path, "/etc/default/kubelet", "KUBELET_EXTRA_ARGS=--v=2\n")
    entries = gathered(tmp_path, {"path": "/etc/default/kubelet"})
    assert entries == {"/etc": ["d", None], "/etc/default": ["d", None], "/etc/default/kubelet": ["f", "KUBELET_EXTRA_ARGS=--v=2\n"]}


def test_nothing_there_is_recorded_once_at_the_first_missing_component(tmp_path):
    entries = gathered(tmp_path, {"path": "/etc/rancher/k3s/config.yaml"})
    assert entries == {"/etc": ["a"]}


def test_a_link_is_resolved_under_root_never_on_this_machine(tmp_path):
    write(tmp_path, "/usr/lib/systemd/system/kubelet.service", "[Service]\n")
    os.symlink("usr/lib", str(tmp_path / "lib"))
    os.symlink("/etc/passwd", str(tmp_path / "escape"))  # absolute: the node's /etc/passwd, under root
    entries = gathered(tmp_path, {"path": "/lib/systemd/system/kubelet.service"}, {"path": "/escape"})
    assert entries["/lib"] == ["l", "usr/lib"]
    assert entries["/usr/lib/systemd/system/kubelet.service"] == ["f", "[Service]\n"]
    assert entries["/escape"] == ["l", "/etc/passwd"] and entries["/etc"] == ["a"]  # not this machine's /etc


def test_dot_dot_never_climbs_above_root(tmp_path):
    write(tmp_path, "/etc/os-release", "ID=debian\n")
    entries = gathered(tmp_path, {"path": "/../../../etc/os-release"})
    assert entries["/etc/os-release"] == ["f", "ID=debian\n"]


def test_a_link_loop_ends(tmp_path):
    os.symlink("b", str(tmp_path / "a"))
    os.symlink("a", str(tmp_path / "b"))
    assert gathered(tmp_path, {"path": "/a/x"}) == {"/a": ["l", "b"], "/b": ["l", "a"]}


def test_a_read_stops_one_byte_past_its_limit(tmp_path):
    write(tmp_path, "/proc/iomem", "x" * 100)
    assert gathered(tmp_path, {"path": "/proc/iomem", "limit": 10})["/proc/iomem"] == ["f", "x" * 11]
    assert gathered(tmp_path, {"path": "/proc/iomem", "limit": 0})["/proc/iomem"] == ["r"]  # only that it is there


def test_bytes_that_are_not_utf8_come_back_in_base64(tmp_path):
    write(tmp_path, "/var/lib/kubelet/memory_manager_state", b"\xff\x00{")
    entry = gathered(tmp_path, {"path": "/var/lib/kubelet/memory_manager_state"})["/var/lib/kubelet/memory_manager_state"]
    assert entry[0] == "b" and base64.b64decode(entry[1]) == b"\xff\x00{"


def test_a_fifo_is_recorded_never_opened(tmp_path):
    os.makedirs(str(tmp_path / "etc"))
    os.mkfifo(str(tmp_path / "etc" / "os-release"))
    entry = gathered(tmp_path, {"path": "/etc/os-release"})["/etc/os-release"]
    assert entry[0] == "o"  # a writer-less FIFO would block a reader forever


def test_an_unreadable_file_is_an_error_entry(tmp_path, monkeypatch):
    write(tmp_path, "/etc/default/kubelet", "X=1\n")
    real_open = os.open

    def refusing(path, *args, **kwargs):
        if str(path).endswith("/etc/default/kubelet"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(plan_reader.os, "open", refusing)
    assert gathered(tmp_path, {"path": "/etc/default/kubelet"})["/etc/default/kubelet"] == ["e", errno.EACCES, "Permission denied"]


def test_wildcards_and_alternatives_list_the_directories_they_search(tmp_path):
    for node in (0, 1):
        write(tmp_path, "/sys/devices/system/node/node%d/meminfo" % node, "Node %d MemTotal: 1 kB\n" % node)
        write(tmp_path, "/sys/devices/system/node/node%d/cpulist" % node, "0-3\n")
    write(tmp_path, "/sys/devices/system/node/online", "0-1\n")
    entries = gathered(tmp_path, {"path": "/sys/devices/system/node/node*/{meminfo,cpulist}"})
    assert entries["/sys/devices/system/node"] == ["d", ["node0", "node1", "online"]]
    assert sorted(key for key in entries if key.endswith(("meminfo", "cpulist"))) == [
        "/sys/devices/system/node/node0/cpulist", "/sys/devices/system/node/node0/meminfo",
        "/sys/devices/system/node/node1/cpulist", "/sys/devices/system/node/node1/meminfo"]
    assert "/sys/devices/system/node/online" not in entries  # listed, not read


def test_alternatives_spell_out_every_combination():
    assert plan_reader.alternatives("/{a,b}/{x,y}.service") == ["/a/x.service", "/a/y.service", "/b/x.service", "/b/y.service"]
    assert plan_reader.alternatives("/plain") == ["/plain"]


def test_a_directory_rule_reads_its_matching_entries_and_sub_directories(tmp_path):
    write(tmp_path, "/etc/kubernetes/kubelet.conf.d/50-numa.conf", "{}")
    write(tmp_path, "/etc/kubernetes/kubelet.conf.d/README", "not read")
    write(tmp_path, "/etc/kubernetes/kubelet.conf.d/site/90-local.conf", "{}")
    entries = gathered(tmp_path, {"path": "/etc/kubernetes/kubelet.conf.d", "entries": "*.conf"})
    assert entries["/etc/kubernetes/kubelet.conf.d"] == ["d", ["50-numa.conf", "README", "site"]]
    assert entries["/etc/kubernetes/kubelet.conf.d/50-numa.conf"] == ["f", "{}"]
    assert entries["/etc/kubernetes/kubelet.conf.d/site/90-local.conf"] == ["f", "{}"]
    assert entries["/etc/kubernetes/kubelet.conf.d/README"] == ["r"]  # looked at (a directory?), not read


def test_follow_reads_the_paths_a_file_names_with_their_suffixes(tmp_path):
    write(tmp_path, "/etc/default/kubelet", "KUBELET_EXTRA_ARGS=--root-dir=/data/kubelet --config /etc/k.yaml\n")
    write(tmp_path, "/data/kubelet/memory_manager_state", "{}")
    write(tmp_path, "/etc/k.yaml", "kind: KubeletConfiguration\n")
    follow = [[r"--root-dir[= ](/\S+)", ["/memory_manager_state"]], [r"--config[= ](/\S+)", []]]
    entries = gathered(tmp_path, {"path": "/etc/default/kubelet", "follow": True}, follow=follow)
    assert entries["/data/kubelet/memory_manager_state"] == ["f", "{}"]
    assert entries["/etc/k.yaml"] == ["f", "kind: KubeletConfiguration\n"]
    assert "/data/kubelet/memory_manager_state" not in gathered(tmp_path, {"path": "/etc/default/kubelet"}, follow=follow)


def test_follow_ends_after_a_few_steps(tmp_path):
    for index in range(6):
        write(tmp_path, "/etc/step%d" % index, "--config=/etc/step%d\n" % (index + 1))
    entries = gathered(tmp_path, {"path": "/etc/step0", "follow": True}, follow=[[r"--config=(/\S+)", []]])
    assert "/etc/step%d" % plan_reader.MAX_FOLLOW_DEPTH in entries and "/etc/step%d" % (plan_reader.MAX_FOLLOW_DEPTH + 1) not in entries


@pytest.mark.parametrize("limit", [plan_reader.MAX_ENTRIES])
def test_the_number_of_entries_is_bounded(tmp_path, limit):
    directory = tmp_path / "etc" / "many"
    directory.mkdir(parents=True)
    for index in range(50):
        (directory / ("f%d.conf" % index)).write_text("x")
    reader = plan_reader.Reader(str(tmp_path))
    reader.entries.update({"/pad%d" % index: ["a"] for index in range(limit - 10)})
    reader.gather({"path": "/etc/many", "entries": "*"})
    assert len(reader.entries) < limit + 50 and sum(key.startswith("/etc/many/") for key in reader.entries) < 50


def test_a_file_served_in_pages_is_read_to_its_end(tmp_path, monkeypatch):
    write(tmp_path, "/proc/iomem", "a" * 10000)
    real_read = os.read
    monkeypatch.setattr(plan_reader.os, "read", lambda handle, size: real_read(handle, min(size, 4096)))  # as procfs does
    assert gathered(tmp_path, {"path": "/proc/iomem"})["/proc/iomem"] == ["f", "a" * 10000]


def test_the_read_budget_ends_in_an_error_entry_never_a_short_file(tmp_path, monkeypatch):
    write(tmp_path, "/var/lib/kubelet/memory_manager_state", "{" + " " * 148 + "}")
    monkeypatch.setattr(plan_reader, "MAX_TOTAL_BYTES", 100)
    entry = gathered(tmp_path, {"path": "/var/lib/kubelet/memory_manager_state", "limit": 200})["/var/lib/kubelet/memory_manager_state"]
    assert entry[0] == "e" and entry[1] == errno.EFBIG
