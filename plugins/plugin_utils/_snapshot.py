# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe on the controller: a node's files as the read plan found them, assessed by the engine here.

The node runs ``_node.plan_reader`` (no engine: it resolves and reads what :data:`READ_PLAN` names and
records each path as it is): :func:`reader_program` is what its Python reads on standard input where
Ansible pipelines modules, :func:`reader_entries` what the action plugin makes of its answer. Here the
snapshot becomes a directory tree (:func:`materialize`) and the unchanged engine probes it as a node
mounted at that directory. Every path the engine looks
up, lists or reads is checked against the snapshot (``_common.paths.observe_access``): a path the
snapshot does not know is a *miss*, and the assessment is not used; the action plugin reads the
missed paths and assesses again. A snapshot that cannot be reproduced exactly (an unreadable file,
a device, a socket) is *unsupported*: the action plugin then runs the probe module on the node.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import posixpath
import shutil
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible.module_utils.json_utils import _filter_non_json_lines

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import MAX_CHECKPOINT_BYTES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common import paths
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.reading import MAX_TEXT_BYTES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node import plan_reader
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import MAX_READ_BYTES as MAX_SYSFS_BYTES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts

MAX_ENTRIES = 20000
MAX_NAMES = 200000  # directory entry names in all listings (a NUMA node's directory lists its memory blocks)
MAX_BYTES = 64 * 1024 * 1024
# Each file is read up to the largest limit the engine reads with, and one byte more: the engine then applies its
# own limit to the copy exactly as to the node's file (a file over it is "larger than", never silently cut).
SCRATCH = "/dev/shm"
LIMIT = max(MAX_CHECKPOINT_BYTES, MAX_TEXT_BYTES, MAX_SYSFS_BYTES)
SYSTEMD_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
                "/lib/systemd/system")
UNITS = ("kubelet", "k3s", "k3s-agent", "rke2-server", "rke2-agent", "k0sworker", "k0scontroller",
         "snap.microk8s.daemon-kubelite")
_PATH = r"""["']?(/[^\s"'$;,\]]+)"""


def _flag(name: str, *suffixes: str) -> list:
    """A follow pattern: the path after ``--name`` (``=`` or blanks) or ``name=`` (k3s' kubelet-arg), then ``suffixes``."""
    return [r"(?:--|\b)%s(?:=|[ \t]+)%s" % (name, _PATH), list(suffixes)]


FOLLOW: List[list] = [
    [r"^\s*EnvironmentFile\s*=\s*-?\s*(/\S+)", []],
    [r"(?:K3S|RKE2)_CONFIG_FILE=" + _PATH, ["", ".d"]],
    [r"^\s*data-dir:\s*" + _PATH, ["/agent", "/agent/etc/kubelet.conf.d"]],
    _flag("config"),
    _flag("config-dir"),
    _flag("root-dir", "/memory_manager_state"),
    _flag("data-dir", "/agent", "/agent/etc/kubelet.conf.d", "/kubelet-config.yaml", "/kubelet/memory_manager_state"),
]
_TEXT = {"limit": LIMIT, "entries": "*", "follow": True}
READ_PLAN: List[Dict[str, Any]] = [
    # sysfs and procfs (_node.sysfs, _node.iomem)
    {"path": "/proc/iomem", "limit": LIMIT},
    {"path": "/proc/meminfo", "limit": LIMIT},
    {"path": "/sys/devices/system/memory/block_size_bytes", "limit": LIMIT},
    {"path": "/sys/devices/system/node/*", "limit": LIMIT},
    {"path": "/sys/devices/system/node/node*/{meminfo,cpulist}", "limit": LIMIT},
    {"path": "/sys/devices/system/node/node*/hugepages", "limit": LIMIT},
    {"path": "/sys/devices/system/node/node*/hugepages/hugepages-*/*_hugepages", "limit": LIMIT},
    # the boot guard (_output.facts.guard_view)
    {"path": "/usr/local/libexec/nodeops-numa-drift/numa-drift-guard", "limit": 0},
    {"path": "/var/lib/nodeops-numa-drift/guard.json", "limit": LIMIT},
    # kubelet's services (_kubelet.systemd, _kubelet.launch)
    {"path": "/etc/systemd/system/*.{wants,requires}/{%s}.service" % ",".join(UNITS), "limit": 0},
    {"path": "/etc/os-release", "limit": LIMIT},
    {"path": "/etc/eks/bootstrap.sh", "limit": 0},
    dict(_TEXT, path="{%s}/{%s}.service" % (",".join(SYSTEMD_DIRS), ",".join(UNITS))),
    dict(_TEXT, path="{%s}/{%s}.service.d" % (",".join(SYSTEMD_DIRS), ",".join(UNITS)), entries="*.conf"),
    dict(_TEXT, path="{%s}/{%s}{,.service}.env" % (",".join(SYSTEMD_DIRS), ",".join(UNITS))),  # EnvironmentFile=%N.env
    # kubelet's flags and configuration (_kubelet.distributions, _kubelet.wrapped, _kubelet.config)
    dict(_TEXT, path="/etc/{default,sysconfig}/{kubelet,k3s*,rke2*}"),
    dict(_TEXT, path="/etc/{eks/kubelet/environment,node-sizing*.env,kubernetes/kubelet/*,rancher/*/config.yaml*}"),
    dict(_TEXT, path="/var/lib/{kubelet/kubeadm-flags.env,kubelet/config.yaml,rancher/*/agent/etc/kubelet.conf.d}"),
    dict(_TEXT, path="{/var/lib/k0s/kubelet-config.yaml,/run/k0s/kubelet/config.yaml,/var/snap/microk8s/current/args/kubelet*}"),
    # the checkpoints (memoryManagerStateFileName under each distribution's root dir)
    {"path": "{/var/lib,/var/lib/k0s,/var/snap/microk8s/common/var/lib}/kubelet/memory_manager_state", "limit": LIMIT},
]


# What the node's Python reads on standard input: the reader's source and the arguments of read_plan travel as one
# JSON literal, and the working directory leaves sys.path before anything is imported (as in Ansible's own wrapper:
# a json.py where the command starts is never run).
_PROGRAM = """import sys
sys.path = [entry for entry in sys.path if entry not in ("", ".")]
import json
source, arguments = json.loads(%r)
namespace = {"__name__": "plan_reader"}
exec(compile(source, "plan_reader.py", "exec"), namespace)
sys.stdout.write(json.dumps({"entries": namespace["read_plan"](**arguments)}))
"""


@functools.lru_cache(maxsize=1)
def _reader_source() -> str:
    with open(plan_reader.__file__, encoding="utf-8") as handle:
        return handle.read()


def reader_arguments(root: str, plan: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """The arguments of ``plan_reader.read_plan`` (the ``__node_read`` module's options): ``plan`` under ``root``, with :data:`FOLLOW`."""
    return {"root": root, "plan": list(plan), "follow": FOLLOW}


def reader_program(arguments: Mapping[str, Any]) -> bytes:
    """The node reader as one Python program for the node's interpreter (its standard input), run with ``arguments``."""
    return (_PROGRAM % json.dumps([_reader_source(), dict(arguments)])).encode("ascii")


def reader_entries(rc: int, stdout: str, stderr: str) -> Tuple[Optional[Dict[str, Any]], Dict[str, Any]]:
    """``(entries, {})`` from the reader program's run, or ``(None, a failed task result)`` saying what the node said.

    Lines around the JSON object (a login banner, a shell's greeting) are ignored, as Ansible ignores them around a
    module's result."""
    try:
        answer = json.loads(_filter_non_json_lines(stdout, objects_only=True)[0])
    except ValueError:
        answer = None
    if rc == 0 and isinstance(answer, dict) and isinstance(answer.get("entries"), dict):
        return answer["entries"], {}
    said = stderr.strip().splitlines() or ["its output is not the reader's answer: %r" % stdout.strip()[:200] if stdout.strip() else "no output"]
    return None, {"failed": True, "rc": rc, "module_stdout": stdout, "module_stderr": stderr,
                  "msg": "the node reader failed (rc %s): %s" % (rc, said[-1])}


class UnsupportedSnapshot(ValueError):
    """The snapshot cannot be reproduced here exactly (the probe must run on the node)."""


def _check_key(key: Any) -> str:
    if not isinstance(key, str) or not key.startswith("/") or "\0" in key or posixpath.normpath(key) != key or key == "/":
        raise UnsupportedSnapshot("the node returned a path that is not a normal node path: %r" % (key,))
    return key


def validate(entries: Any) -> Dict[str, list]:
    """The node's answer, bounded and well-formed (a node's answer is never trusted), with directory listings as lists."""
    if not isinstance(entries, dict) or len(entries) > MAX_ENTRIES:
        raise UnsupportedSnapshot("the node's answer is not a bounded mapping of paths")
    checked: Dict[str, list] = {}
    total = names = 0
    for key, entry in entries.items():
        _check_key(key)
        if not isinstance(entry, list) or not entry or entry[0] not in ("f", "b", "d", "l", "a", "r", "o", "e"):
            raise UnsupportedSnapshot("%s: unknown entry %r" % (key, entry))
        if entry[0] in ("f", "b", "l", "d") and entry[1:] != [None]:
            if len(entry) != 2 or not isinstance(entry[1], str) or (entry[0] in ("l", "d") and "\0" in entry[1]):
                raise UnsupportedSnapshot("%s: malformed entry" % key)
            total += len(entry[1])
        if entry[0] == "d" and entry[1] is not None:
            listing = entry[1].split("/") if entry[1] else []
            if not all(name and name not in (".", "..") for name in listing):
                raise UnsupportedSnapshot("%s: malformed directory listing" % key)
            names += len(listing)
            entry = ["d", listing]
        checked[key] = entry
    if total > MAX_BYTES or names > MAX_NAMES:
        raise UnsupportedSnapshot("the node's answer holds more than %d bytes or %d names" % (MAX_BYTES, MAX_NAMES))
    return checked


def _content(key: str, entry: list) -> bytes:
    if entry[0] == "f":
        return entry[1].encode("utf-8", "surrogatepass")
    try:
        return base64.b64decode(entry[1], validate=True)
    except ValueError as error:
        raise UnsupportedSnapshot("%s: malformed entry (%s)" % (key, error)) from error


def materialize(entries: Mapping[str, list], directory: str) -> None:
    """The snapshot as a tree under ``directory`` (a directory's listing is the node's: :class:`Coverage` answers it).

    An entry is written only inside a directory made here (never through a link, never twice), so nothing a
    node answers can write outside ``directory``.
    """
    made = {"/"}
    for key in sorted(entries, key=lambda k: k.count("/")):
        entry, host = entries[key], directory + key
        kind = entry[0]
        if kind in ("e", "o"):
            raise UnsupportedSnapshot("%s cannot be reproduced on the controller (%s)" % (key, entry[1:]))
        if posixpath.dirname(key) not in made:
            continue  # under a link, a file or nothing: the engine never looks it up through this key
        if kind == "d":
            os.mkdir(host, 0o700)
            made.add(key)
        elif kind == "l":
            os.symlink(entry[1], host)
        elif kind in ("f", "b"):
            with open(host, "xb") as handle:
                handle.write(_content(key, entry))
        elif kind == "r":
            open(host, "xb").close()


class Coverage(object):
    """The observer: which node paths the engine touched that the snapshot does not know."""

    def __init__(self, entries: Mapping[str, list], directory: str) -> None:
        self.entries = entries
        self.directory = directory
        self.misses: List[str] = []
        self.escapes: List[str] = []
        self.answers: Dict[Tuple[str, str], Optional[List[str]]] = {}

    def state(self, key: str) -> str:
        """``known``, ``absent``, ``unread`` (a regular file, its bytes not read), ``listed`` (a name only) or ``unknown``."""
        entry = self.entries.get(key)
        if entry is not None:
            return {"a": "absent", "r": "unread"}.get(entry[0], "known")
        parent, name = posixpath.split(key)
        up = self.entries.get(parent)
        if parent == "/" or up is None:
            return "absent" if parent != "/" and self.state(parent) == "absent" else "unknown"
        if up[0] == "d":
            return "unknown" if up[1] is None else ("listed" if name in up[1] else "absent")
        return "absent" if up[0] in ("a", "f", "b", "r") else "unknown"

    def through_link(self, key: str, how: str) -> Optional[str]:
        """The node's symbolic link the kernel would follow here to list or read ``key``, if any.

        The engine's resolver never hands the kernel a path through a link (``_common.paths.under_root``), but a
        path joined on to a resolved directory (a NUMA node's files) is opened as it is: on the controller a link
        there would lead out of the copy, so such an assessment is not made here (the probe module runs on the node).
        """
        while key != "/":
            entry = self.entries.get(key)
            if entry is not None and entry[0] == "l" and how in ("list", "read"):
                return key
            key = posixpath.dirname(key)
        return None

    def __call__(self, host_path: str, how: str) -> Optional[List[str]]:
        answer = self.answers.get((host_path, how), self)
        if answer is self:
            answer = self.answers[(host_path, how)] = self.answer(host_path, how)
        return answer

    def answer(self, host_path: str, how: str) -> Optional[List[str]]:
        """What the observer says of one look-up, list or read (the same for every repeat in one assessment)."""
        if not host_path.startswith(self.directory + "/"):
            return None
        key = host_path[len(self.directory):]
        link = self.through_link(key, how)
        if link is not None:
            self.escapes.append(link)
            raise UnsupportedSnapshot("the engine would follow the node's symbolic link %s on the controller" % link)
        state = self.state(key)
        entry = self.entries.get(key)
        if how == "walk":
            ok = state in ("known", "absent", "unread")
        elif how == "list":
            ok = state in ("absent", "unread") or (state == "known" and (entry[0] != "d" or entry[1] is not None))
        else:
            ok = state in ("known", "absent")
        if not ok and key not in self.misses:
            self.misses.append(key)
        return entry[1] if how == "list" and entry is not None and entry[0] == "d" else None


def _rewritten(value: Any, directory: str, root: str) -> Any:
    """``value`` with the snapshot's directory named as the node's root again."""
    text = json.dumps(value)
    prefix = "" if posixpath.normpath(root) == "/" else posixpath.normpath(root)
    text = text.replace(json.dumps(directory)[1:-1] + "/", json.dumps(prefix)[1:-1] + "/")
    text = text.replace(json.dumps(directory)[1:-1], json.dumps(prefix or "/")[1:-1])
    return json.loads(text)


def _scratch() -> Optional[str]:
    """Memory-backed ``/dev/shm`` where there is one (the copy is small and lives for milliseconds), else the temp dir."""
    return SCRATCH if os.path.isdir(SCRATCH) and os.access(SCRATCH, os.W_OK | os.X_OK) else None


def assess_snapshot(entries: Mapping[str, list], root: str, arguments: Mapping[str, Any]) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    """``(numa_drift facts, [])``, or ``(None, missed node paths)`` when the snapshot lacked what the engine looked at."""
    directory = tempfile.mkdtemp(prefix="nodeops-numa-drift-node-", dir=_scratch())
    try:
        entries = validate(entries)
        materialize(entries, directory)
        coverage = Coverage(entries, directory)
        previous = paths.observe_access(coverage)
        try:
            facts = assessment_facts(probe(**dict(arguments, root=directory)))
        finally:
            paths.observe_access(previous)
        if coverage.escapes:  # even where the engine caught the exception: it never opened the path
            raise UnsupportedSnapshot("the engine would follow the node's symbolic link %s on the controller" % coverage.escapes[0])
        if coverage.misses:
            return None, coverage.misses
        return _rewritten(facts, directory, root), []
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def rules_for(arguments: Mapping[str, Any], learned: Sequence[str]) -> List[Dict[str, Any]]:
    """Read rules for what the task's options name and for the paths earlier runs on this host learned."""
    rules = [dict(_TEXT, path=arguments[name]) for name in ("kubelet_config", "kubelet_config_dir") if arguments.get(name)]
    if arguments.get("kubelet_root_dir"):
        rules.append({"path": posixpath.join(arguments["kubelet_root_dir"], "memory_manager_state"), "limit": LIMIT})
    # a learned path is read as it is (a directory listed, not its entries: one more round finds the entry it needs)
    return rules + [{"path": path, "limit": LIMIT, "follow": True} for path in learned if isinstance(path, str) and path.startswith("/")]
