# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one regular-file reader of node files (the read half of :mod:`_files`).

Reads of node files go through :func:`read_regular_file` (or :func:`open_regular_file`):
``O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC`` and ``fstat``, so a FIFO, device, socket, directory
or symbolic link is a named error at once instead of a hang or a silent follow. The probe
imports only this half, so the write path, backups and locks are not shipped with it.
Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import Iterator, List

__all__ = ["NotRegularFileError", "FileTooLargeError", "open_regular_file", "read_regular_file"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFileError(OSError):
    """``path`` exists but is not a regular file (or is a symbolic link, which is never followed)."""

    def __init__(self, path: str, kind: str) -> None:
        self.text = "%s is %s, not a regular file" % (path, kind)
        super().__init__(errno.EINVAL, self.text, path)
        self.path = path
        self.kind = kind

    def __str__(self) -> str:
        return self.text


class FileTooLargeError(OSError):
    """``path`` holds more bytes than the reader's limit."""

    def __init__(self, path: str, limit: int) -> None:
        self.text = "%s is larger than %d bytes" % (path, limit)
        super().__init__(errno.EFBIG, self.text, path)
        self.path = path

    def __str__(self) -> str:
        return self.text


def _kind_of(mode: int) -> str:
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "a file of type %o" % stat.S_IFMT(mode)


def _symlink_error(path: str) -> NotRegularFileError:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    dangling = "" if os.path.exists(path) else "dangling "
    return NotRegularFileError(path, "a %ssymbolic link (to %s; not followed)" % (dangling, target))


def _raise_if_not_regular(path: str) -> None:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    if stat.S_ISLNK(mode):
        raise _symlink_error(path) from None
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(path, _kind_of(mode)) from None


@contextlib.contextmanager
def open_regular_file(path: str) -> Iterator[int]:
    """A read-only descriptor of ``path``, which must be a regular file (never follows a symlink, never blocks).

    Raises ``FileNotFoundError`` when nothing is there, :class:`NotRegularFileError` for a
    symbolic link (dangling or not), directory, FIFO, socket or device, ``OSError`` otherwise.
    ``O_NONBLOCK`` makes the open of a FIFO return at once; it is cleared before any read.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        handle = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError:
        _raise_if_not_regular(path)  # ELOOP for a symlink, ENXIO for a socket, ...
        raise
    try:
        mode = os.fstat(handle).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, _kind_of(mode))
        os.set_blocking(handle, True)
        yield handle
    finally:
        os.close(handle)


def _read_at_most(handle: int, size: int) -> bytes:
    chunks: List[bytes] = []
    left = size
    while left > 0:
        chunk = os.read(handle, min(left, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_regular_file(path: str, limit: int, truncate: bool = False) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    The one reader of node files (sysfs, procfs, kubelet configuration, checkpoint, history).
    Raises ``FileNotFoundError`` when ``path`` does not exist, :class:`NotRegularFileError`
    when it is a symbolic link, directory, FIFO, socket or device (at once: a FIFO never
    blocks), :class:`FileTooLargeError` when it holds more than ``limit`` bytes (with
    ``truncate=True`` the first ``limit`` bytes are returned instead), ``OSError`` for
    anything else (permissions, I/O). Every error's text names the path.
    """
    with open_regular_file(path) as handle:
        data = _read_at_most(handle, limit if truncate else limit + 1)
    if len(data) > limit:
        raise FileTooLargeError(path, limit)
    return data
