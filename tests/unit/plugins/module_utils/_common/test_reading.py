# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_common/reading.py: the one reader of node files and its one rule for symlinks."""

from __future__ import annotations

import os
import time

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common import reading


def write(root, node_path, data=b"x"):
    path = os.path.join(str(root), node_path.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


def test_a_regular_file_is_read_up_to_its_limit(tmp_path):
    write(tmp_path, "/proc/iomem", b"0123456789")
    assert reading.read_node_file(str(tmp_path), "/proc/iomem", 10) == b"0123456789"
    with pytest.raises(reading.FileTooLargeError, match="is larger than 9 bytes"):
        reading.read_node_file(str(tmp_path), "/proc/iomem", 9)
    assert reading.read_node_file(str(tmp_path), "/proc/iomem", 4, truncate=True) == b"0123"
    with pytest.raises(FileNotFoundError):
        reading.read_node_file(str(tmp_path), "/proc/missing", 10)


def test_a_fifo_is_refused_at_once_followed_or_not(tmp_path):
    os.makedirs(str(tmp_path / "etc"))
    os.mkfifo(str(tmp_path / "etc" / "fifo"))
    for follow in (False, True):
        started = time.monotonic()
        with pytest.raises(reading.NotRegularFileError) as raised:
            reading.read_node_file(str(tmp_path), "/etc/fifo", 100, follow=follow)
        assert raised.value.kind == "a FIFO (named pipe)" and time.monotonic() - started < 5
    assert reading.read_node_text(str(tmp_path), "/etc/fifo") == (None, "/etc/fifo is not a regular file", True)


def test_a_symlink_is_refused_unless_followed_and_followed_under_root(tmp_path):
    write(tmp_path, "/lib/systemd/system/kubelet.service", b"[Service]\n")
    os.makedirs(str(tmp_path / "etc/systemd/system"))
    os.symlink("/lib/systemd/system/kubelet.service", str(tmp_path / "etc/systemd/system/kubelet.service"))
    with pytest.raises(reading.NotRegularFileError) as raised:
        reading.read_node_file(str(tmp_path), "/etc/systemd/system/kubelet.service", 100)
    assert "symbolic link (to /lib/systemd/system/kubelet.service; not followed)" in str(raised.value)
    # Followed as systemd follows it: the absolute target is a node path, read under root.
    assert reading.read_node_file(str(tmp_path), "/etc/systemd/system/kubelet.service", 100, follow=True) == b"[Service]\n"
    assert reading.read_node_text(str(tmp_path), "/etc/systemd/system/kubelet.service") == ("[Service]\n", None, True)


def test_read_node_text_names_the_node_path_in_every_problem(tmp_path):
    root = str(tmp_path)
    write(tmp_path, "/etc/big", b"a" * 11)
    write(tmp_path, "/etc/latin1", b"caf\xe9\n")
    os.makedirs(str(tmp_path / "etc/dir"))
    os.symlink("/nowhere", str(tmp_path / "etc/dangling"))
    assert reading.read_node_text(root, "/etc/missing") == (None, "/etc/missing does not exist", False)
    assert reading.read_node_text(root, "/etc/dangling") == (None, "/etc/dangling does not exist", False)
    assert reading.read_node_text(root, "/etc/big", limit=10) == (None, "/etc/big is larger than 10 bytes", True)
    assert reading.read_node_text(root, "/etc/dir") == (None, "/etc/dir is not a regular file", True)
    text, problem, exists = reading.read_node_text(root, "/etc/latin1")
    assert text is None and exists and problem.startswith("/etc/latin1 is not UTF-8: ")
