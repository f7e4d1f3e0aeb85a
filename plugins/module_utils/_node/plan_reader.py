# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node's side of the controller's probe: the files a read plan names, as they are (no engine, stdlib only).

Knows nothing of kubelet: it resolves node paths under a root one component at a time (symbolic links as
the node resolves them, never above the root) and records what each component is, a regular file's bytes
(at most a limit and one byte more), a directory's entry names, a link's target; it follows the paths the
files it read name when the controller's patterns say so.

The controller sends this file's text to the node's Python on standard input where Ansible pipelines
modules (``plugins/plugin_utils/_snapshot.py``: :func:`read_plan` is all it calls), else the
``__node_read`` module runs it: so it imports the standard library only, and nothing at all of this collection.
"""

from __future__ import annotations

import base64
import errno
import fnmatch
import os
import posixpath
import re
import stat

MAX_SYMLINKS = 40  # path_resolution(7)
MAX_FOLLOW_DEPTH = 3
MAX_ENTRIES = 20000
MAX_TOTAL_BYTES = 64 * 1024 * 1024
WILDCARDS = re.compile(r"[*?\[]")
ALTERNATIVES = re.compile(r"\{([^{}]*)\}")


def alternatives(pattern):
    """``pattern`` with its first ``{a,b}`` group (and then the others) spelled out: ``/x/{a,b}`` -> ``/x/a``, ``/x/b``."""
    match = ALTERNATIVES.search(pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[:match.start()], pattern[match.end():]
    return [spelled for choice in match.group(1).split(",") for spelled in alternatives(head + choice + tail)]


class Reader(object):
    """The node's paths as they are, keyed by node path (each component's parent already resolved)."""

    def __init__(self, root, follow=()):
        self.root = root or "/"
        self.follow = [(re.compile(expression, re.MULTILINE), suffixes) for expression, suffixes in follow]
        self.entries = {}
        self.total = 0

    def host(self, node_path):
        return os.path.join(self.root, node_path.lstrip("/"))

    def resolve(self, node_path, follow=True):
        """The resolved node path of ``node_path`` (None when a component is missing or not a directory)."""
        resolved = []
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
            key = "/" + "/".join(resolved + [part])
            entry = self.lstat(key)
            if entry[0] == "l" and (pending or follow):
                links += 1
                if links > MAX_SYMLINKS:
                    return None
                if entry[1].startswith("/"):
                    resolved = []
                pending.extend(p for p in reversed(entry[1].split("/")) if p)
                continue
            if pending and entry[0] != "d":
                return None
            resolved.append(part)
        return "/" + "/".join(resolved)

    def lstat(self, key):
        if key in self.entries:
            return self.entries[key]
        try:
            mode = os.lstat(self.host(key)).st_mode
        except OSError as error:
            entry = ["a"] if error.errno in (errno.ENOENT, errno.ENOTDIR) else ["e", error.errno, error.strerror]
        else:
            if stat.S_ISLNK(mode):
                entry = ["l", os.readlink(self.host(key))]
            elif stat.S_ISDIR(mode):
                entry = ["d", None]
            elif stat.S_ISREG(mode):
                entry = ["r"]  # a regular file, not read
            else:
                entry = ["o", stat.S_IFMT(mode)]
        self.entries[key] = entry
        return entry

    def read(self, key, limit):
        """The file's bytes (at most ``limit`` + 1), recorded; None when it is not a regular file or cannot be read."""
        entry = self.entries.get(key)
        if entry is None or entry[0] not in ("r", "f", "b"):
            return None
        if entry[0] != "r":
            return decoded(entry)
        allowed = MAX_TOTAL_BYTES - self.total
        try:
            data = read_regular(self.host(key), min(limit, allowed) + 1)
        except OSError as error:
            self.entries[key] = ["e", error.errno, error.strerror or str(error)]
            return None
        if data is None:  # replaced by something else since it was looked at
            self.entries[key] = ["o", 0]
            return None
        if len(data) > allowed:
            self.entries[key] = ["e", errno.EFBIG, "more than %d bytes read in all" % MAX_TOTAL_BYTES]
            return None
        self.total += len(data)
        try:
            self.entries[key] = ["f", data.decode("utf-8")]
        except UnicodeDecodeError:
            self.entries[key] = ["b", base64.b64encode(data).decode("ascii")]
        return data

    def answer(self):
        """The entries as they travel: a directory's names joined by ``/`` (the one character no name holds), one
        string instead of thousands (a NUMA node lists every memory block)."""
        return {key: ["d", "/".join(entry[1])] if entry[0] == "d" and entry[1] is not None else entry
                for key, entry in self.entries.items()}

    def listdir(self, key):
        entry = self.entries.get(key)
        if entry is None or entry[0] != "d":
            return []
        if entry[1] is None:
            try:
                entry[1] = sorted(os.listdir(self.host(key)))
            except OSError as error:
                self.entries[key] = ["e", error.errno, error.strerror]
                return []
        return entry[1]

    def expand(self, pattern):
        """Node paths matching ``pattern`` (wildcards in components), resolved up to their last component."""
        found = ["/"]
        parts = [part for part in pattern.split("/") if part]
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            following = []
            for base in found:
                if WILDCARDS.search(part):
                    directory = self.resolve(base)
                    if directory is None:
                        continue
                    names = [name for name in self.listdir(directory) if fnmatch.fnmatchcase(name, part)]
                else:
                    names = [part]
                following.extend(posixpath.join(base, name) for name in names)
            found = following if last else [p for p in (self.resolve(p) for p in following) if p]
        return found

    def gather(self, rule, path=None, depth=0):
        """Read what ``rule`` names (``path``: one of its directories' entries or a followed path, ``depth`` levels down)."""
        if len(self.entries) > MAX_ENTRIES or depth > MAX_FOLLOW_DEPTH:
            return
        limit = int(rule.get("limit", 4 * 1024 * 1024))
        named = [found for pattern in alternatives(rule["path"]) for found in self.expand(pattern)] if path is None else [path]
        for node_path in named:
            resolved = self.resolve(node_path)
            if resolved is None:
                continue
            entry = self.lstat(resolved)
            if entry[0] == "d":
                names = self.listdir(resolved)
                if rule.get("entries"):
                    for name in names:
                        if fnmatch.fnmatchcase(name, rule["entries"]) or self.lstat(posixpath.join(resolved, name))[0] == "d":
                            self.gather(rule, posixpath.join(resolved, name), depth + 1)
                continue
            data = self.read(resolved, limit) if limit else None
            if data is None:
                continue
            text = data.decode("utf-8", "replace")
            for expression, suffixes in self.follow if rule.get("follow") else ():
                for match in expression.finditer(text):
                    mentioned = match.group(1)
                    if mentioned.startswith("/"):
                        for suffix in suffixes or ("",):
                            self.gather(rule, posixpath.normpath(mentioned + suffix), depth + 1)


def read_plan(root, plan, follow=()):
    """What every rule of ``plan`` names on the node under ``root``, as the entries travel (:meth:`Reader.answer`)."""
    reader = Reader(root, follow)
    for rule in plan:
        reader.gather(rule)
    return reader.answer()


def read_regular(path, size):
    """At most ``size`` bytes of the regular file ``path`` (read until end of file: procfs answers in pages); None when it
    is not a regular file. Never follows a link in the last component, never blocks on a FIFO."""
    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        chunks = []
        while size > 0:
            chunk = os.read(handle, min(size, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(handle)


def decoded(entry):
    return entry[1].encode("utf-8") if entry[0] == "f" else base64.b64decode(entry[1])
