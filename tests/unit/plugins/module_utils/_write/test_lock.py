# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_write/lock.py: the node lock."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import lock


def test_the_lock_is_private_names_its_holder_and_is_removed_on_release(tmp_path):
    path = lock.lock_path(str(tmp_path))
    assert path == os.path.join(str(tmp_path), "var/lib/nodeops-numa-drift/lock")
    with lock.node_lock(path, timeout=1):
        assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        with open(path, encoding="ascii") as handle:
            assert handle.read() == "%d\n" % os.getpid()
    assert not os.path.exists(path)


def test_a_second_holder_waits_then_times_out_naming_the_first(tmp_path):
    path = lock.lock_path(str(tmp_path))
    held, release = threading.Event(), threading.Event()

    def holder():
        with lock.node_lock(path, timeout=1):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        with pytest.raises(lock.LockTimeout) as raised:
            with lock.node_lock(path, timeout=0.3):
                pytest.fail("the lock was taken twice")
        assert "held the node lock %s for more than 0.3 s" % path in str(raised.value)
        assert "(pid %d)" % os.getpid() in str(raised.value) and "nothing was touched" in str(raised.value)
    finally:
        release.set()
        thread.join(10)
    with lock.node_lock(path, timeout=1):  # released: free again
        pass


def test_a_lock_file_left_by_a_killed_run_is_reused(tmp_path):
    path = lock.lock_path(str(tmp_path))
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="ascii") as handle:
        handle.write("99999\n")
    with lock.node_lock(path, timeout=1):
        with open(path, encoding="ascii") as handle:
            assert handle.read() == "%d\n" % os.getpid()
    assert not os.path.exists(path)
