# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one resolver of node paths under ``root`` (docs/safety.md: every path the engine reads or writes).

A node path (``/var/lib/kubelet/config.yaml``) is what kubelet and systemd see; the host
path is where this process finds it: the same path under ``root`` (``/host`` when the node
is mounted there, a temp dir in tests). :func:`under_root` is the one place that makes one.
Symbolic links met on the way are resolved as the node resolves them: an absolute target is
a node path, so it continues from ``root`` (not from this machine's ``/``), a relative one
from the link's directory, and ``..`` never climbs above ``root`` (as at the node's ``/``).
At ``root`` ``/`` the node is this machine: the node path is the host path and the kernel
resolves it. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import errno
import os
import posixpath
from typing import Callable, List, Optional, Tuple

__all__ = ["MAX_SYMLINKS", "under_root", "node_join", "list_dir", "list_node_dir", "observe_access", "accessed"]

MAX_SYMLINKS = 40  # the kernel's limit on links in one resolution (path_resolution(7), ELOOP beyond)

_observer: Optional[Callable[[str, str], Optional[List[str]]]] = None


def observe_access(observer: Optional[Callable[[str, str], Optional[List[str]]]]) -> Optional[Callable[[str, str], Optional[List[str]]]]:
    """Have ``observer(host_path, how)`` told of every host path the engine looks up (``walk``), lists (``list``) or
    reads (``read``); returns the previous observer. Only the controller's assessment of a node's snapshot sets one
    (plugin_utils/_snapshot.py: it learns which node paths the snapshot lacked, and answers a listing with the
    node's own names); on a node there is none.
    """
    global _observer  # pylint: disable=global-statement
    previous, _observer = _observer, observer
    return previous


def accessed(host_path: str, how: str) -> Optional[List[str]]:
    """Tell the observer, if any, that the engine is about to look up, list or read ``host_path``; a listing's
    names when the observer has them (the node's snapshot)."""
    return None if _observer is None else _observer(host_path, how)


def node_join(*parts: str) -> str:
    """Join node path parts and normalise ``..`` so the result stays an absolute node path."""
    return posixpath.normpath(posixpath.join("/", *parts))


def _is_host_root(root: str) -> bool:
    return os.path.normpath(root or "/") == "/"


def _resolve(root: str, node_path: str, follow: bool) -> str:
    """``node_path`` with every symbolic link on the way resolved under ``root`` (the last one only if ``follow``).

    A missing component ends the resolution (the rest is taken as written: nothing is there
    to follow). More than :data:`MAX_SYMLINKS` links is ``OSError(ELOOP)``, as on the node
    (no path that the host would resolve outside ``root`` is ever returned).
    """
    resolved: List[str] = []
    pending = [part for part in reversed(node_path.split("/")) if part]
    links = 0
    while pending:
        part = pending.pop()
        if part == ".":
            continue
        if part == "..":
            if resolved:
                resolved.pop()
            continue
        candidate = os.path.join(root, *resolved, part)
        accessed(candidate, "walk")
        if not pending and not follow:
            resolved.append(part)
            break
        try:
            target = os.readlink(candidate)
        except OSError:  # not a link, or nothing there
            resolved.append(part)
            continue
        links += 1
        if links > MAX_SYMLINKS:
            raise OSError(errno.ELOOP, "%s: too many levels of symbolic links under %s" % (node_path, root), node_path)
        if target.startswith("/"):
            resolved = []
        pending.extend(part for part in reversed(target.split("/")) if part)
    return os.path.join(root, *resolved)


def under_root(root: str, node_path: str, follow: bool = True) -> str:
    """The host path of ``node_path``, confined under ``root``, symbolic links resolved as on the node.

    ``follow=False`` leaves a symbolic link in the last component as it is (the reader then
    refuses it: the checkpoint, sysfs, the collection's state files); directories on the way
    are always followed.
    """
    path = node_join(node_path)
    if _is_host_root(root):
        return path
    return _resolve(root, path, follow)


def list_dir(path: str, shown: str) -> Tuple[Optional[List[str]], Optional[str]]:
    """Sorted entry names of the directory at host ``path``: the one lister of the engine.

    One rule for every caller: a symbolic link to a directory is listed (``os.listdir`` follows it; the
    links inside a root were already resolved by :func:`under_root`), ``(None, None)`` when nothing is
    there, ``(None, problem)`` when it is not a directory or cannot be listed; ``shown`` names it in the
    problem (the node path, or what kubelet calls it).
    """
    names = accessed(path, "list")
    try:
        return sorted(os.listdir(path) if names is None else names), None
    except FileNotFoundError:
        return None, None
    except NotADirectoryError:
        return None, "%s is not a directory" % shown
    except OSError as error:
        return None, "cannot list %s: %s" % (shown, error.strerror or error)


def list_node_dir(root: str, node_path: str) -> Tuple[Optional[List[str]], Optional[str]]:
    """Sorted entry names of a node directory, ``(None, None)`` when it does not exist (:func:`list_dir`)."""
    return list_dir(under_root(root, node_path), node_path)
