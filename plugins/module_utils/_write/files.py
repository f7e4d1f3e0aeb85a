# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""File safety for kubelet's files: the one verified write path, the one regular-file reader, backups.

The write follows kubelet's own file store (``FileStore.Write``: temporary file in the same directory,
fsync, rename) and adds what a repair tool owes (docs/safety.md): mode 0600, the original
owner kept, the directory fsynced, the file re-read and compared, a backup of the
original bytes outside the kubelet directory. Every file this collection writes on a node
(checkpoint, backups, the repair history) goes through :func:`atomic_write`.

Our temporary files are named ``.<name>.nodeops-numa-drift.<random>.tmp`` so that a run
killed between the write and the rename leaves a file that the next run (under the node
lock) recognises and removes (:func:`remove_stale_temp_files`); nothing else is touched.

Reads of node files go through :func:`read_regular_file` (or :func:`open_regular_file`),
which live in :mod:`_common.node_files` (the probe imports only that half) and are re-exported here.
Stdlib only.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time
from typing import List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import (
    FileTooLargeError,
    NotRegularFileError,
    open_regular_file,
    read_regular_file,
)

__all__ = [
    "TEMP_MARK",
    "NotRegularFileError",
    "FileTooLargeError",
    "WriteError",
    "open_regular_file",
    "read_regular_file",
    "atomic_write",
    "remove_stale_temp_files",
    "is_our_temp_file",
    "backup_name_prefix",
    "write_backup",
    "discard_backup",
    "backups_of",
    "backup_reason",
    "latest_backup",
    "kubelet_processes",
    "fsync_directory",
]

TEMP_MARK = ".nodeops-numa-drift."
_TEMP_SUFFIX = ".tmp"
# mkstemp's random part: 8 characters of [a-z0-9_] (CPython); accept any length of that alphabet.
_OUR_TEMP = re.compile(r"^\..+" + re.escape(TEMP_MARK) + r"[a-z0-9_]+" + re.escape(_TEMP_SUFFIX) + r"$")
_BACKUP = re.compile(r"^(.+)\.[0-9]{8}T[0-9]{6}Z\.([a-z-]+)(?:\.[0-9]+)?$")
_KUBELET_NAMES = ("kubelet", "k3s", "k3s-agent", "k3s-server", "rke2", "k0s", "kubelite")


class WriteError(OSError):
    """A write through :func:`atomic_write` failed; ``replaced`` says whether ``path`` was already renamed over."""

    def __init__(self, path: str, step: str, cause: OSError, replaced: bool) -> None:
        self.text = "%s of %s failed: %s" % (step, path, cause.strerror or cause)
        super().__init__(cause.errno, self.text, path)
        self.path = path
        self.step = step
        self.replaced = replaced

    def __str__(self) -> str:
        return self.text


def fsync_directory(directory: str) -> None:
    handle = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _owner_of(path: str) -> Optional[os.stat_result]:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def is_our_temp_file(name: str) -> bool:
    """Whether ``name`` (a file name, no directory) is a temporary file of :func:`atomic_write`."""
    return bool(_OUR_TEMP.match(name))


def _write_temp(directory: str, name: str, content: bytes, mode: int, previous: Optional[os.stat_result]) -> str:
    handle, temp_path = tempfile.mkstemp(prefix="." + name + TEMP_MARK, suffix=_TEMP_SUFFIX, dir=directory)
    try:
        with os.fdopen(handle, "wb") as temp:
            temp.write(content)
            temp.flush()
            os.fchmod(temp.fileno(), mode)
            if previous is not None and hasattr(os, "fchown"):
                os.fchown(temp.fileno(), previous.st_uid, previous.st_gid)
            os.fsync(temp.fileno())
    except BaseException:
        _unlink_quietly(temp_path)
        raise
    return temp_path


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def atomic_write(path: str, content: bytes, mode: int = 0o600) -> None:
    """Replace ``path`` with ``content``, verified.

    Temporary file beside it (``.<name>.nodeops-numa-drift.<random>.tmp``), fsync, rename,
    fsync of the directory, then a re-read through :func:`read_regular_file` compared with
    ``content``. The owner of the file it replaces is kept. On failure raises
    :class:`WriteError`: ``replaced`` false means ``path`` is untouched (and the temporary
    file removed), true means the rename happened and ``path`` may not hold ``content``.
    """
    directory = os.path.dirname(path) or "."
    previous = _owner_of(path)
    try:
        temp_path = _write_temp(directory, os.path.basename(path), content, mode, previous)
    except OSError as error:
        raise WriteError(path, "writing a temporary file", error, replaced=False) from error
    try:
        os.rename(temp_path, path)
    except OSError as error:
        _unlink_quietly(temp_path)
        raise WriteError(path, "the rename", error, replaced=False) from error
    except BaseException:
        _unlink_quietly(temp_path)
        raise
    try:
        fsync_directory(directory)
        written = read_regular_file(path, len(content))
    except OSError as error:
        raise WriteError(path, "syncing and re-reading", error, replaced=True) from error
    if written != content:
        raise WriteError(path, "the re-read", OSError(errno.EIO, "the file does not hold the bytes written"), replaced=True)


def remove_stale_temp_files(directory: str) -> List[str]:
    """Remove the temporary files a killed :func:`atomic_write` left in ``directory``; the removed paths.

    Only names matching our pattern are touched, and only regular files. Call it while
    holding the node lock, so that no other run of ours is writing there.
    """
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    removed = []
    for name in sorted(names):
        path = os.path.join(directory, name)
        if is_our_temp_file(name) and stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)
            removed.append(path)
    if removed:
        fsync_directory(directory)
    return removed


def backup_name_prefix(name: str) -> str:
    return name + "."


def write_backup(backup_dir: str, name: str, content: bytes, reason: str) -> str:
    """Write ``content`` to a new file ``<name>.<UTC stamp>.<reason>[.N]`` in ``backup_dir`` (dir 0700, file 0600)."""
    os.makedirs(backup_dir, mode=0o700, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    base = os.path.join(backup_dir, "%s%s.%s" % (backup_name_prefix(name), stamp, reason))
    path, counter = base, 1
    while os.path.lexists(path):
        counter += 1
        path = "%s.%d" % (base, counter)
    atomic_write(path, content)
    return path


def discard_backup(path: str) -> Optional[str]:
    """Remove a backup that turned out to be unneeded (nothing was changed); the error text if that failed."""
    try:
        os.unlink(path)
        fsync_directory(os.path.dirname(path) or ".")
    except OSError as error:
        return str(error)
    return None


def backups_of(backup_dir: str, name: str) -> List[str]:
    """Every backup of ``name`` in ``backup_dir`` (regular files only), oldest first (mtime, then name)."""
    try:
        entries = os.listdir(backup_dir)
    except FileNotFoundError:
        return []
    found = []
    for entry in entries:
        path = os.path.join(backup_dir, entry)
        if not entry.startswith(backup_name_prefix(name)):
            continue
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(info.st_mode):
            found.append((info.st_mtime_ns, entry, path))
    return [path for _mtime, _entry, path in sorted(found)]


def backup_reason(path: str, name: str) -> Optional[str]:
    """The ``<reason>`` of a backup file name written by :func:`write_backup` (None for other names)."""
    match = _BACKUP.match(os.path.basename(path))
    return match.group(2) if match and match.group(1) == name else None


def latest_backup(backup_dir: str, name: str, reasons: Optional[Tuple[str, ...]] = None) -> Optional[str]:
    """The newest backup of ``name`` in ``backup_dir`` (by modification time, then name), if any.

    With ``reasons``, only backups written for one of them count (e.g. the originals kept
    before a repair or a sideline, not the copies kept before a restore).
    """
    found = [path for path in backups_of(backup_dir, name) if reasons is None or backup_reason(path, name) in reasons]
    return found[-1] if found else None


_CMDLINE_BYTES = 64 * 1024  # the program is the first NUL-terminated word


def _process_name(proc_dir: str, pid: str) -> Optional[str]:
    try:
        argv0 = read_regular_file(os.path.join(proc_dir, pid, "cmdline"), _CMDLINE_BYTES, truncate=True).split(b"\0", 1)[0].decode("utf-8", "replace")
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
