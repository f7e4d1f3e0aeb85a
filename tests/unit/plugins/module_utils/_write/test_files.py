# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_files: the regular-file reader, the one verified write path (with injected failures), backups, temp clean-up."""

from __future__ import annotations

import errno
import os
import socket
import stat
import time

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import files as _files


def write(path, content=b"data"):
    with open(str(path), "wb") as handle:
        handle.write(content)
    return str(path)


def leftovers(directory):
    return sorted(name for name in os.listdir(str(directory)) if _files.is_our_temp_file(name))


# --- read_regular_file ------------------------------------------------------------------------


def test_reads_a_regular_file_up_to_the_limit(tmp_path):
    path = write(tmp_path / "f", b"12345")
    assert _files.read_regular_file(path, 5) == b"12345"
    with pytest.raises(_files.FileTooLargeError) as raised:
        _files.read_regular_file(path, 4)
    assert str(raised.value) == "%s is larger than 4 bytes" % path
    assert raised.value.errno == errno.EFBIG
    assert _files.read_regular_file(path, 4, truncate=True) == b"1234"


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        _files.read_regular_file(str(tmp_path / "none"), 10)


def _fifo(path):
    os.mkfifo(path)


def _socket(path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.close()


def _dangling(path):
    os.symlink(path + ".gone", path)


def _symlink(path):
    write(path + ".real")
    os.symlink(path + ".real", path)


@pytest.mark.parametrize("make, text", [
    (_fifo, "is a FIFO (named pipe), not a regular file"),
    (_socket, "is a socket, not a regular file"),
    (os.mkdir, "is a directory, not a regular file"),
    (_dangling, "is a dangling symbolic link (to %s.gone; not followed), not a regular file"),
    (_symlink, "is a symbolic link (to %s.real; not followed), not a regular file"),
], ids=["fifo", "socket", "directory", "dangling-symlink", "symlink"])
def test_anything_but_a_regular_file_is_a_named_error_at_once(tmp_path, make, text):
    path = str(tmp_path / "f")
    make(path)
    started = time.monotonic()
    with pytest.raises(_files.NotRegularFileError) as raised:
        _files.read_regular_file(path, 100)
    assert time.monotonic() - started < 1.0
    assert str(raised.value) == "%s %s" % (path, text.replace("%s", path))


def test_a_descriptor_is_blocking_for_the_read(tmp_path):
    with _files.open_regular_file(write(tmp_path / "f")) as handle:
        assert os.get_blocking(handle) is True
        assert os.read(handle, 10) == b"data"


# --- atomic_write -----------------------------------------------------------------------------


def test_atomic_write_replaces_with_mode_and_owner_kept(tmp_path):
    path = write(tmp_path / "checkpoint", b"old")
    if os.geteuid() == 0:
        os.chown(path, 1234, 5678)
    _files.atomic_write(path, b"new")
    assert open(path, "rb").read() == b"new"
    info = os.stat(path)
    assert stat.S_IMODE(info.st_mode) == 0o600
    if os.geteuid() == 0:
        assert (info.st_uid, info.st_gid) == (1234, 5678)
    assert leftovers(tmp_path) == []
    _files.atomic_write(str(tmp_path / "fresh"), b"x", mode=0o640)
    assert stat.S_IMODE(os.stat(str(tmp_path / "fresh")).st_mode) == 0o640


def test_a_symlink_is_replaced_not_followed(tmp_path):
    target = write(tmp_path / "target", b"target")
    link = str(tmp_path / "link")
    os.symlink(target, link)
    _files.atomic_write(link, b"new")
    assert not os.path.islink(link) and open(link, "rb").read() == b"new"
    assert open(target, "rb").read() == b"target"


def failing(exception_on, error_no):
    calls = []

    def fail(*args, **kwargs):
        calls.append(args)
        if len(calls) == exception_on:
            raise OSError(error_no, os.strerror(error_no))
        return REAL[fail.name](*args, **kwargs)

    return fail


REAL = {"fsync": os.fsync, "rename": os.rename}


@pytest.mark.parametrize("name, call, replaced, step", [
    ("rename", 1, False, "the rename"),
    ("fsync", 1, False, "writing a temporary file"),
    ("fsync", 2, True, "syncing and re-reading"),
], ids=["rename", "fsync-of-the-file", "fsync-of-the-directory"])
def test_injected_failures_say_whether_the_file_was_replaced(tmp_path, monkeypatch, name, call, replaced, step):
    path = write(tmp_path / "checkpoint", b"old")
    fail = failing(call, errno.EIO)
    fail.name = name
    monkeypatch.setattr(_files.os, name, fail)
    with pytest.raises(_files.WriteError) as raised:
        _files.atomic_write(path, b"new")
    monkeypatch.undo()
    assert raised.value.replaced is replaced
    assert str(raised.value) == "%s of %s failed: %s" % (step, path, os.strerror(errno.EIO))
    assert open(path, "rb").read() == (b"new" if replaced else b"old")
    assert leftovers(tmp_path) == []


def test_a_re_read_that_differs_is_a_failure_after_the_rename(tmp_path, monkeypatch):
    path = write(tmp_path / "checkpoint", b"old")
    monkeypatch.setattr(_files, "read_regular_file", lambda *args, **kwargs: b"torn")
    with pytest.raises(_files.WriteError) as raised:
        _files.atomic_write(path, b"new")
    assert raised.value.replaced is True
    assert "the re-read of %s failed: the file does not hold the bytes written" % path == str(raised.value)


def test_enospc_while_writing_the_temporary_file(tmp_path, monkeypatch):
    path = write(tmp_path / "checkpoint", b"old")
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, handle):
            self.file = real_fdopen(handle, "wb")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(_files.os, "fdopen", lambda handle, mode: Full(handle))
    with pytest.raises(_files.WriteError) as raised:
        _files.atomic_write(path, b"new")
    assert raised.value.replaced is False and raised.value.errno == errno.ENOSPC
    assert open(path, "rb").read() == b"old"
    assert leftovers(tmp_path) == []


# --- temporary files --------------------------------------------------------------------------


@pytest.mark.parametrize("name, ours", [
    (".memory_manager_state.nodeops-numa-drift.k2j4_x9a.tmp", True),
    (".history.json.nodeops-numa-drift.abcdefgh.tmp", True),
    (".memory_manager_state.tmp1234", False),  # someone else's temp (kubelet's own naming)
    ("memory_manager_state.nodeops-numa-drift.abcdefgh.tmp", False),  # not hidden
    (".x.nodeops-numa-drift.ABC.tmp", False),  # not mkstemp's alphabet
    (".x.nodeops-numa-drift.abc.tmp.bak", False),
])
def test_our_temporary_file_names(name, ours):
    assert _files.is_our_temp_file(name) is ours


def test_the_temp_file_of_a_write_has_our_name(tmp_path, monkeypatch):
    seen = []
    real_rename = os.rename
    monkeypatch.setattr(_files.os, "rename", lambda source, target: (seen.append(os.path.basename(source)), real_rename(source, target)))
    _files.atomic_write(str(tmp_path / "memory_manager_state"), b"x")
    [name] = seen
    assert name.startswith(".memory_manager_state.nodeops-numa-drift.") and _files.is_our_temp_file(name)


def test_remove_stale_temp_files_removes_only_ours(tmp_path):
    ours = write(tmp_path / ".memory_manager_state.nodeops-numa-drift.aaaaaaaa.tmp")
    theirs = write(tmp_path / ".memory_manager_state.tmp99")
    os.mkdir(str(tmp_path / ".dir.nodeops-numa-drift.bbbbbbbb.tmp"))  # not a regular file: left alone
    assert _files.remove_stale_temp_files(str(tmp_path)) == [ours]
    assert os.path.exists(theirs) and not os.path.exists(ours)
    assert _files.remove_stale_temp_files(str(tmp_path / "missing")) == []


# --- backups ----------------------------------------------------------------------------------


def test_backups_are_named_kept_apart_and_chosen_by_reason(tmp_path):
    backup_dir = str(tmp_path / "backups")
    first = _files.write_backup(backup_dir, "memory_manager_state", b"one", "before-repair")
    second = _files.write_backup(backup_dir, "memory_manager_state", b"two", "before-repair")
    kept = _files.write_backup(backup_dir, "memory_manager_state", b"three", "before-restore")
    assert stat.S_IMODE(os.stat(backup_dir).st_mode) == 0o700
    assert os.path.basename(first).startswith("memory_manager_state.") and first.endswith(".before-repair")
    assert second == first + ".2" or (second != first and second.endswith(".before-repair"))  # same second: a counter
    assert _files.backup_reason(second, "memory_manager_state") == "before-repair"
    assert _files.backup_reason(kept, "memory_manager_state") == "before-restore"
    assert _files.backup_reason(kept, "other") is None
    os.utime(first, (1, 1))
    assert _files.backups_of(backup_dir, "memory_manager_state")[0] == first
    assert _files.latest_backup(backup_dir, "memory_manager_state") == kept
    assert _files.latest_backup(backup_dir, "memory_manager_state", ("before-repair", "sidelined")) == second
    assert _files.latest_backup(str(tmp_path / "none"), "memory_manager_state") is None
    assert _files.discard_backup(kept) is None and not os.path.exists(kept)
    assert "No such file" in _files.discard_backup(kept)
