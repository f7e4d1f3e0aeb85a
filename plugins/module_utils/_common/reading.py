# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one reader of node files (the read half of :mod:`_write.files`).

Every read of a node file goes through :func:`read_regular_file` (or :func:`open_regular_file`),
on a host path made by :func:`_common.paths.under_root` (:func:`read_node_file` does both):
``O_NONBLOCK | O_CLOEXEC`` and ``fstat``, so a FIFO, device, socket or directory is a named
error at once instead of a hang, more than ``limit`` bytes is a named error, and so is any
other ``OSError``, naming the path. One rule for symbolic links: links on the way are
resolved under ``root`` as on the node; a link in the last component is refused
(``O_NOFOLLOW``: the checkpoint, sysfs, procfs, the collection's own state) unless the reader
follows it as kubelet and systemd do (``follow=True``: unit files, drop-ins, environment
files, kubelet's configuration). The probe imports only this half, so the write path,
backups and locks are not shipped with it. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import Iterator, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.paths import accessed, under_root

__all__ = ["NotRegularFileError", "FileTooLargeError", "open_regular_file", "read_regular_file", "read_node_file", "read_node_text",
           "MAX_TEXT_BYTES"]

MAX_TEXT_BYTES = 4 * 1024 * 1024

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
def open_regular_file(path: str, follow: bool = False) -> Iterator[int]:
    """A read-only descriptor of ``path``, which must be a regular file (never blocks).

    Raises ``FileNotFoundError`` when nothing is there, :class:`NotRegularFileError` for a
    symbolic link (dangling or not; unless ``follow``), directory, FIFO, socket or device,
    ``OSError`` otherwise. ``O_NONBLOCK`` makes the open of a FIFO return at once; it is
    cleared before any read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow else os.O_NOFOLLOW)
    accessed(path, "read")
    try:
        handle = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError:
        if not follow:
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


def read_regular_file(path: str, limit: int, truncate: bool = False, follow: bool = False) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    The one reader of node files (sysfs, procfs, kubelet configuration, checkpoint, history).
    Raises ``FileNotFoundError`` when ``path`` does not exist, :class:`NotRegularFileError`
    when it is a symbolic link, directory, FIFO, socket or device (at once: a FIFO never
    blocks), :class:`FileTooLargeError` when it holds more than ``limit`` bytes (with
    ``truncate=True`` the first ``limit`` bytes are returned instead), ``OSError`` for
    anything else (permissions, I/O). Every error's text names the path. ``follow``: a
    symbolic link in the last component is followed (by the kernel) instead of refused.
    """
    with open_regular_file(path, follow) as handle:
        data = _read_at_most(handle, limit if truncate else limit + 1)
    if len(data) > limit:
        raise FileTooLargeError(path, limit)
    return data


def read_node_file(root: str, node_path: str, limit: int, follow: bool = False, truncate: bool = False) -> bytes:
    """:func:`read_regular_file` of the node path ``node_path`` under ``root`` (one resolver, one reader)."""
    return read_regular_file(under_root(root, node_path, follow), limit, truncate, follow)


def read_node_text(root: str, node_path: str, limit: int = MAX_TEXT_BYTES) -> Tuple[Optional[str], Optional[str], bool]:
    """``(text, problem, exists)`` of a configuration file kubelet or systemd reads (a symlink is followed); never raises.

    ``problem`` names the node path: missing, unreadable, not a regular file, too large or
    not UTF-8.
    """
    try:
        data = read_node_file(root, node_path, limit, follow=True)
    except FileNotFoundError:
        return None, "%s does not exist" % node_path, False
    except NotRegularFileError:
        return None, "%s is not a regular file" % node_path, True
    except FileTooLargeError:
        return None, "%s is larger than %d bytes" % (node_path, limit), True
    except OSError as error:
        return None, "cannot read %s: %s" % (node_path, error.strerror or error), True
    try:
        return data.decode("utf-8"), None, True
    except UnicodeDecodeError as error:
        return None, "%s is not UTF-8: %s" % (node_path, error), True
