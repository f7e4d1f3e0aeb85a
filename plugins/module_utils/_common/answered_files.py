# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's files as the node reader answered them, held in memory: the engine's :class:`NodeFiles` on the controller.

The node reader (``_node.plan_reader``) records, per node path, what the primitives of :class:`NodeFiles` met
there on the node: ``{"stat": ..., "names": ..., "text": ..., "raw": ...}``. :class:`AnsweredFiles` gives
those records back as the same primitives, so the engine's resolver, refusals and limits run on the
controller exactly as on the node; a symbolic link in the answer resolves here, in memory, never through
the controller's kernel, and nothing of the node is written to the controller's disk.

What the answer lacks raises :class:`NotRead` naming the node path and the operation the engine asked for (the
action plugin reads it so, the whole path at once, and assesses again), except what the kernel would answer from
what the answer holds: under a missing directory nothing is there, under a regular file ``ENOTDIR``, and a name
missing from a listed directory is absent.

A node is untrusted input: :func:`checked_entries` refuses an answer that is not the reader's shape, names a
path that is not a normal absolute node path, or is larger than the bounds below, before anything reads it.
Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import errno
import functools
import os
import posixpath
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TypeVar

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.kinds import kind_of
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import MAX_TEXT_BYTES, NodeFiles, node_join

__all__ = ["NotRead", "MalformedAnswer", "AnsweredFiles", "checked_entries", "MAX_ENTRIES", "MAX_PATH"]

MAX_ENTRIES = 20000  # paths in one answer (a NUMA node's directory alone lists its memory blocks as names)
MAX_PATH = 4096  # PATH_MAX

_PRIMITIVES = {
    "stat": {"kind": str, "target": str, "type": int, "errno": int, "error": str},
    "names": {"names": str, "errno": int, "error": str},
    "text": {"text": str, "size": int, "withheld": str, "binary": bool, "undecodable": str, "errno": int, "error": str,
             "replaced": int},
    "raw": {"data": str, "base64": str, "size": int, "withheld": str, "errno": int, "error": str, "replaced": int},
    "version": {"output": str, "rc": int, "identity": str, "remembered": bool, "stamped": bool, "errno": int, "error": str},
}
_KINDS = ("file", "dir", "link", "absent", "other", "error")


class NotRead(Exception):
    """The answer lacks what the engine asked of ``key`` (``how``: ``stat``, ``names``, ``text`` or ``raw``).

    Not an ``OSError``: nothing in the engine takes it for an answer; the assessment stops and the
    controller reads ``key`` from the node."""

    def __init__(self, key: str, how: str) -> None:
        super().__init__("%s (%s) was not read from the node" % (key, how))
        self.key = key
        self.how = how


_Result = TypeVar("_Result")


def _asked(how: str) -> Callable[[Callable[..., _Result]], Callable[..., _Result]]:
    """An operation of the engine on a node path: what it lacks is asked for as that operation on the whole path."""
    def decorate(operation: Callable[..., _Result]) -> Callable[..., _Result]:
        @functools.wraps(operation)
        def asking(self: "AnsweredFiles", node_path: str, *args: Any, **kwargs: Any) -> _Result:
            try:
                return operation(self, node_path, *args, **kwargs)
            except NotRead:
                raise NotRead(node_join(node_path), how) from None
        return asking
    return decorate


class MalformedAnswer(ValueError):
    """The node's answer is not what the node reader writes (a broken or hostile node)."""


def _check_key(key: Any) -> str:
    if (not isinstance(key, str) or not key.startswith("/") or len(key) > MAX_PATH or "\0" in key
            or posixpath.normpath(key) != key or key.startswith("//")):
        raise MalformedAnswer("a path that is not a normal absolute node path: %r" % (key[:100] if isinstance(key, str) else key,))
    return key


def _check_record(key: str, record: Any) -> Dict[str, Dict[str, Any]]:
    if not isinstance(record, dict) or not record:
        raise MalformedAnswer("%s: an entry that is not a mapping of the reader's records" % key)
    for how, found in record.items():
        fields = _PRIMITIVES.get(how)
        if fields is None or not isinstance(found, dict):
            raise MalformedAnswer("%s: an unknown record %s" % (key, repr(how) if isinstance(how, str) else kind_of(how)))
        for name, value in found.items():
            expected = fields.get(name)
            if expected is None or type(value) is not expected:  # pylint: disable=unidiomatic-typecheck  # bool is no int here
                raise MalformedAnswer("%s: %s: an unknown or mistyped field %s" % (key, how, repr(name) if isinstance(name, str) else kind_of(name)))
    stat = record.get("stat")
    if stat is not None and stat.get("kind") not in _KINDS:
        raise MalformedAnswer("%s: an unknown kind of file" % key)
    names = record.get("names", {}).get("names")
    if names and any(name in (".", "..") or "\0" in name for name in names.split("/")):
        raise MalformedAnswer("%s: a directory listing with a name no directory holds" % key)
    return record


def checked_entries(entries: Any) -> Dict[str, Dict[str, Dict[str, Any]]]:
    """The node's answer (``{node path: records}``) checked to be the reader's shape, or :class:`MalformedAnswer`."""
    if not isinstance(entries, dict):
        raise MalformedAnswer("the answer is not a mapping of node paths")
    if len(entries) > MAX_ENTRIES:
        raise MalformedAnswer("the answer names %d paths, more than %d" % (len(entries), MAX_ENTRIES))
    return {_check_key(key): _check_record(key, record) for key, record in entries.items()}


class AnsweredFiles(NodeFiles):
    """The node's files under ``root`` as the node reader answered them (:func:`checked_entries`)."""

    def __init__(self, root: str, entries: Mapping[str, Mapping[str, Dict[str, Any]]]) -> None:
        super().__init__(root)
        self.entries = entries
        self._listed: Dict[str, frozenset] = {}

    def _record(self, key: str, how: str) -> Dict[str, Any]:
        found = self.entries.get(key, {}).get(how)
        if found is None:
            raise NotRead(key, how)
        return found

    def stat(self, key: str) -> Dict[str, Any]:
        found = self.entries.get(key, {}).get("stat")
        if found is not None:
            return found
        derived = self._derived_stat(key)
        if derived is None:
            raise NotRead(key, "stat")
        return derived

    def _derived_stat(self, key: str) -> Any:
        """What ``lstat`` would say of ``key`` from what the answer holds of its directory, or None."""
        if key == "/":
            return None
        parent, name = posixpath.split(key)
        above = self.entries.get(parent, {}).get("stat") or self._derived_stat(parent)
        if above is None:
            return None
        kind = above.get("kind")
        if kind == "absent":
            return {"kind": "absent"}
        if kind in ("file", "other"):
            return {"kind": "error", "errno": errno.ENOTDIR, "error": os.strerror(errno.ENOTDIR)}
        if kind == "dir" and "names" in self.entries.get(parent, {}).get("names", {}):
            return None if name in self._names_of(parent) else {"kind": "absent"}
        return None

    def _names_of(self, key: str) -> frozenset:
        if key not in self._listed:
            self._listed[key] = frozenset(self.entries[key]["names"]["names"].split("/"))
        return self._listed[key]

    def names(self, key: str) -> Dict[str, Any]:
        return self._record(key, "names")

    def content(self, key: str, text: bool) -> Dict[str, Any]:
        return self._record(key, "text" if text else "raw")

    def version(self, key: str, arguments: Sequence[str], stamped: bool = False) -> Dict[str, Any]:
        return self._record(key, "version")

    # The engine's operations, each asked for whole when the answer lacks a part of it.

    @_asked("stat")
    def resolve(self, node_path: str, follow: bool = True) -> str:
        return NodeFiles.resolve(self, node_path, follow)

    @_asked("stat")
    def kind(self, node_path: str, follow: bool = True) -> str:
        return NodeFiles.kind(self, node_path, follow)

    @_asked("stat")
    def readlink(self, node_path: str) -> Optional[str]:
        return NodeFiles.readlink(self, node_path)

    @_asked("names")
    def listdir(self, node_path: str) -> List[str]:
        return NodeFiles.listdir(self, node_path)

    @_asked("raw")
    def read_bytes(self, node_path: str, limit: int, follow: bool = False, truncate: bool = False) -> bytes:
        return NodeFiles.read_bytes(self, node_path, limit, follow, truncate)

    @_asked("text")
    def read_text(self, node_path: str, limit: int = MAX_TEXT_BYTES) -> str:
        return NodeFiles.read_text(self, node_path, limit)

    @_asked("version")
    def program_version(self, node_path: str) -> Dict[str, Any]:
        return NodeFiles.program_version(self, node_path)
