# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node paths read through a ``root`` prefix (docs/safety.md: every path the engine reads).

A node path (``/var/lib/kubelet/config.yaml``) is what kubelet and systemd see; the host
path is where this process finds it: the same path under ``root`` (``/host`` when the node
is mounted there, a temp dir in tests). This module is the one place that joins them.
Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import os
import posixpath
import stat
from typing import List, Optional, Tuple

__all__ = ["under_root", "node_join", "read_node_text", "list_node_dir", "MAX_TEXT_BYTES"]

MAX_TEXT_BYTES = 4 * 1024 * 1024


def node_join(*parts: str) -> str:
    """Join node path parts and normalise ``..`` so the result stays an absolute node path."""
    return posixpath.normpath(posixpath.join("/", *parts))


def under_root(root: str, node_path: str) -> str:
    """The host path of ``node_path``, confined under ``root`` (``..`` cannot climb out)."""
    return os.path.join(root or "/", node_join(node_path).lstrip("/"))


def read_node_text(root: str, node_path: str, limit: int = MAX_TEXT_BYTES) -> Tuple[Optional[str], Optional[str], bool]:
    """``(text, problem, exists)`` of a node file; never raises.

    ``problem`` names the node path: missing, unreadable, not a regular file, too large or
    not UTF-8.
    """
    path = under_root(root, node_path)
    try:
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        handle = os.open(path, flags)
    except FileNotFoundError:
        return None, "%s does not exist" % node_path, False
    except OSError as error:
        return None, "cannot read %s: %s" % (node_path, error.strerror or error), True
    try:
        if not _is_regular(handle):
            return None, "%s is not a regular file" % node_path, True
        with os.fdopen(handle, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    except OSError as error:
        return None, "cannot read %s: %s" % (node_path, error.strerror or error), True
    finally:
        os.close(handle)
    if len(data) > limit:
        return None, "%s is larger than %d bytes" % (node_path, limit), True
    try:
        return data.decode("utf-8"), None, True
    except UnicodeDecodeError as error:
        return None, "%s is not UTF-8: %s" % (node_path, error), True


def _is_regular(handle: int) -> bool:
    return stat.S_ISREG(os.fstat(handle).st_mode)


def list_node_dir(root: str, node_path: str) -> Tuple[Optional[List[str]], Optional[str]]:
    """Sorted entry names of a node directory, ``(None, None)`` when it does not exist."""
    try:
        return sorted(os.listdir(under_root(root, node_path))), None
    except FileNotFoundError:
        return None, None
    except NotADirectoryError:
        return None, "%s is not a directory" % node_path
    except OSError as error:
        return None, "cannot list %s: %s" % (node_path, error.strerror or error)
