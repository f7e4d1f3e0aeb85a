# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""File safety for the checkpoint: backups, atomic replacement, and "is kubelet running".

The write follows kubelet's own file store (spec 1: temporary file in the same directory,
fsync, rename) and adds what a repair tool owes (spec 1 [R]): mode 0600, the original
owner kept, the directory fsynced, a backup of the original bytes outside the kubelet
directory. Stdlib only.
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from typing import List, Optional

__all__ = [
    "atomic_write",
    "write_backup",
    "latest_backup",
    "kubelet_processes",
    "fsync_directory",
]

_KUBELET_NAMES = ("kubelet", "k3s", "k3s-agent", "k3s-server", "rke2", "k0s", "kubelite")


def fsync_directory(directory: str) -> None:
    handle = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _owner_of(path: str) -> Optional[os.stat_result]:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def atomic_write(path: str, content: bytes, mode: int = 0o600) -> None:
    """Replace ``path`` with ``content``: temp file beside it, fsync, rename, fsync the directory."""
    directory = os.path.dirname(path) or "."
    previous = _owner_of(path)
    handle, temp_path = tempfile.mkstemp(prefix=".", dir=directory)
    try:
        with os.fdopen(handle, "wb") as temp:
            temp.write(content)
            temp.flush()
            os.fchmod(temp.fileno(), mode)
            if previous is not None and hasattr(os, "fchown"):
                os.fchown(temp.fileno(), previous.st_uid, previous.st_gid)
            os.fsync(temp.fileno())
        os.rename(temp_path, path)
    except BaseException:
        if os.path.exists(temp_path):
            os.unlink(temp_path)
        raise
    fsync_directory(directory)


def write_backup(backup_dir: str, name: str, content: bytes, reason: str) -> str:
    """Write ``content`` to a new, timestamped file in ``backup_dir`` (mode 0700 dir, 0600 file)."""
    os.makedirs(backup_dir, mode=0o700, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    base = os.path.join(backup_dir, "%s.%s.%s" % (name, stamp, reason))
    path, counter = base, 1
    while os.path.exists(path):
        counter += 1
        path = "%s.%d" % (base, counter)
    atomic_write(path, content)
    return path


def latest_backup(backup_dir: str, name: str) -> Optional[str]:
    """The newest backup of ``name`` in ``backup_dir`` (by modification time), if any."""
    try:
        candidates = [os.path.join(backup_dir, entry) for entry in os.listdir(backup_dir) if entry.startswith(name + ".")]
    except FileNotFoundError:
        return None
    files = [path for path in candidates if stat.S_ISREG(os.stat(path).st_mode)]
    return max(files, key=lambda path: (os.stat(path).st_mtime_ns, path)) if files else None


def _process_name(proc_dir: str, pid: str) -> Optional[str]:
    try:
        with open(os.path.join(proc_dir, pid, "cmdline"), "rb") as handle:
            argv0 = handle.read().split(b"\0", 1)[0].decode("utf-8", "replace")
    except OSError:
        return None
    # k3s and rke2 retitle themselves ("/usr/local/bin/k3s server"): the program is the first word.
    return os.path.basename(argv0.split()[0]) if argv0.strip() else None


def kubelet_processes(proc_dir: str = "/proc") -> List[str]:
    """``pid:name`` of every running process whose program is a kubelet (or an all-in-one kubelet)."""
    try:
        pids = [entry for entry in os.listdir(proc_dir) if entry.isdigit()]
    except OSError:
        return []
    found = []
    for pid in sorted(pids, key=int):
        name = _process_name(proc_dir, pid)
        if name in _KUBELET_NAMES:
            found.append("%s:%s" % (pid, name))
    return found
