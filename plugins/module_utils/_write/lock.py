# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node lock: every run that writes kubelet's files on a node (module, role, guard) holds it.

An exclusive ``flock(2)`` on ``<root>/var/lib/nodeops-numa-drift/lock``. The kernel drops it
when the holder exits, however it exits (kill -9 included), so a stale lock cannot exist.
The file holds the holder's pid (for messages) and is removed when the lock is released.
Stdlib only.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from typing import Iterator

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import node_join, under_root

__all__ = ["STATE_DIR", "TOPOLOGY_RECORD_FILE", "LockTimeout", "lock_path", "node_lock"]

STATE_DIR = "var/lib/nodeops-numa-drift"
TOPOLOGY_RECORD_FILE = STATE_DIR + "/cpu_topology.json"  # the CPU topology record (_cpu.topology_record)
_POLL_SECONDS = 0.05


class LockTimeout(OSError):
    """Another run held the node lock for longer than the timeout."""

    def __init__(self, path: str, timeout: float, holder: str) -> None:
        text = (
            "another run of nodeops.numa_drift (%s) held the node lock %s for more than %g s: "
            "nothing was touched; run again when it has finished" % (holder, path, timeout)
        )
        self.text = text
        super().__init__(errno.EWOULDBLOCK, text, path)

    def __str__(self) -> str:
        return self.text


def lock_path(root: str) -> str:
    return under_root(root, node_join(STATE_DIR, "lock"), follow=False)


def _holder(handle: int) -> str:
    try:
        text = os.pread(handle, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return "pid %s" % text if text.isdigit() else "pid unknown"


def _acquire(handle: int, path: str, wait: float, timeout: float) -> None:
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
        if time.monotonic() >= deadline:
            raise LockTimeout(path, timeout, _holder(handle))
        time.sleep(_POLL_SECONDS)


def _still_the_lock_file(handle: int, path: str) -> bool:
    """Whether ``path`` still names the file ``handle`` locked (a releasing holder unlinks it)."""
    try:
        current = os.lstat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(handle)
    return (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino)


def _open_and_lock(path: str, deadline: float, timeout: float) -> int:
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    while True:
        handle = os.open(path, flags, 0o600)
        try:
            _acquire(handle, path, max(deadline - time.monotonic(), 0), timeout)
            if _still_the_lock_file(handle, path):
                return handle
        except BaseException:
            os.close(handle)
            raise
        os.close(handle)  # the holder we waited for removed it: lock the new one


@contextlib.contextmanager
def node_lock(path: str, timeout: float = 30) -> Iterator[None]:
    """Hold the exclusive lock ``path`` (created with its directory, 0700/0600) for the ``with`` body.

    The holder removes the file when it releases the lock, so a finished run leaves nothing;
    a waiter that then holds the removed file's lock notices and locks the new one. A file a
    killed run left is simply locked and reused. Raises :class:`LockTimeout` after ``timeout``
    seconds of waiting, ``OSError`` when the lock file cannot be created (read-only file system).
    """
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    handle = _open_and_lock(path, time.monotonic() + max(timeout, 0), timeout)
    try:
        os.ftruncate(handle, 0)
        os.pwrite(handle, ("%d\n" % os.getpid()).encode("ascii"), 0)
        yield
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(handle)
