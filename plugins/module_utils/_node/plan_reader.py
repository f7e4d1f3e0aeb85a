# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node's side of the controller's probe: read what a read plan names, through the engine's own :class:`HostFiles`.

The engine's discovery declares what it reads (``_probe.read_plan``: units, drop-in directories, environment and
configuration files, the checkpoints, sysfs and procfs, and which paths named in those files are followed);
:func:`read_plan` reads exactly that on the node with the same :class:`~_common.node_files.NodeFiles` methods
the engine calls, and records every primitive they met (:class:`Recorder`): that record is the answer, which the
controller replays (``_common.answered_files``). So nothing crosses that the engine would not read itself, text
passes ``_common.credentials`` (keys, certificates and kubeconfigs withheld, credential values redacted), a
directory crosses as its names only, and a followed path is read once (a memo), within a time and size budget.

A rule is a mapping: ``{"read": PATH}`` (text; ``"raw": true`` for sysfs, procfs and checkpoints),
``{"list": DIR, "entries": [GLOB...]}`` (names, and the text of the entries matching a glob; ``"nocase"``),
``{"walk": DIR}`` (kubelet's ``--config-dir``: every ``*.conf`` down the tree, as ``filepath.WalkDir``),
``{"stat": PATH}`` (what is there) or ``{"version": PATH}`` (what the program that runs kubelet says of its
release; not run again when it is the program the controller already knows, by its identity). PATH may hold
``{a,b}`` alternatives and wildcards in its components (``"literal": true``: taken as written).
``"follow": [NAME...]``: the follows (``{"pattern": regex with one group, "then": [rules with {} for the path]}``)
to apply to a text read by the rule. ``{"when": regex, "then": [RULE...]}`` applies its rules only when a text read
before it in this answer matches (the CPUs' cache files, read only where a configuration names the option kubelet
picks by them).

The controller sends this file's text, with ``_common.node_files`` and ``_common.credentials``, to the node's
Python on standard input (``plugins/plugin_utils/_snapshot.py``), else the ``__node_read`` module runs it:
the standard library only.
"""

from __future__ import annotations

import errno
import fnmatch
import posixpath
import re
import time

TYPE_CHECKING = False  # the node reader imports no more than it runs: typing is for the annotations only
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import (
    READ_LIMIT,
    HostFiles,
    NotTextError,
    node_join,
    program_identity,
    program_release,
)

__all__ = ["read_plan", "followed_rules", "filled", "Recorder", "MAX_FOLLOW_DEPTH", "MAX_NESTING", "SENT_BYTES", "SECONDS"]

MAX_FOLLOW_DEPTH = 4
MAX_NESTING = 64  # a --config-dir tree deeper than this is not walked (the engine refuses it too)
SENT_BYTES = 6 * 1024 * 1024  # file content and names in one answer: the checkpoint's 4 MiB, and more than any node's texts
READ_BYTES = 256 * 1024 * 1024  # bytes read from the node's files for one answer (a zero-filled file crosses as its size)
SECONDS = 20.0
MAX_PATHS = 20000
VERBS = ("read", "list", "walk", "stat", "version")
WILDCARDS = re.compile(r"[*?\[]")
ALTERNATIVES = re.compile(r"\{([^{}]*)\}")
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def alternatives(pattern: str) -> List[str]:
    """``pattern`` with its ``{a,b}`` groups spelled out: ``/x/{a,b}`` -> ``/x/a``, ``/x/b``."""
    match = ALTERNATIVES.search(pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[:match.start()], pattern[match.end():]
    return [spelled for choice in match.group(1).split(",") for spelled in alternatives(head + choice + tail)]


class Recorder(HostFiles):
    """:class:`HostFiles` that records every primitive it answers, per node path, within a budget."""

    def __init__(self, root: str, seconds: float = SECONDS, known: Optional[Mapping[str, Mapping[str, Any]]] = None) -> None:
        super().__init__(root)
        self.known = dict(known or {})
        self.entries: Dict[str, Dict[str, Dict[str, Any]]] = {}
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.sent_budget = self.sent_left = SENT_BYTES
        self.read_left = READ_BYTES

    def _spent(self) -> Optional[Dict[str, Any]]:
        if time.monotonic() > self.deadline:
            return {"errno": errno.ETIME, "error": "not read: the node reader's %g s were spent" % self.seconds}
        if len(self.entries) >= MAX_PATHS:
            return {"errno": errno.EFBIG, "error": "not read: the node reader's %d paths were spent" % MAX_PATHS}
        return None

    def _recorded(self, key: str, how: str, answer: Any) -> Dict[str, Any]:
        record = self.entries.get(key)
        if record is not None and how in record:
            return record[how]
        spent = self._spent()
        found = answer() if spent is None else (dict(spent, kind="error") if how == "stat" else spent)
        if record is not None or len(self.entries) < MAX_PATHS:  # past the paths' budget: answered, not recorded
            self.entries.setdefault(key, {})[how] = found
        return found

    def stat(self, key: str) -> Dict[str, Any]:
        return self._recorded(key, "stat", lambda: HostFiles.stat(self, key))

    def names(self, key: str) -> Dict[str, Any]:
        return self._recorded(key, "names", lambda: self._budgeted(HostFiles.names(self, key)))

    def content(self, key: str, text: bool) -> Dict[str, Any]:
        return self._recorded(key, "text" if text else "raw", lambda: self._budgeted(HostFiles.content(self, key, text)))

    def version(self, key: str, arguments: Sequence[str], stamped: bool = False) -> Dict[str, Any]:
        return self._recorded(key, "version", lambda: self._known_version(key) or self._program_release(key, arguments, stamped))

    def _program_release(self, key: str, arguments: Sequence[str], stamped: bool) -> Dict[str, Any]:
        """The program's release read from its file, or the program asked within what is left of the reader's time (at
        most its own limit)."""
        return program_release(self.host(key), arguments, stamped, max(self.deadline - time.monotonic(), 0.0))

    def _known_version(self, key: str) -> Optional[Dict[str, Any]]:
        """What the controller already knows this program says, when it is the same program (its identity)."""
        known = self.known.get(key)
        try:
            same = isinstance(known, dict) and known.get("identity") == program_identity(self.host(key))
        except OSError:
            return None
        if not same:
            return None
        return dict({name: known[name] for name in ("output", "rc", "identity") if name in known}, remembered=True)

    def _budgeted(self, found: Dict[str, Any]) -> Dict[str, Any]:
        sent = sum(len(found.get(name, "")) for name in ("text", "data", "base64", "names"))
        self.read_left -= int(found.get("size", 0))
        if sent > self.sent_left or self.read_left < 0:
            return {"errno": errno.EFBIG, "error": "not read: the node reader's %d bytes were spent" % self.sent_budget}
        self.sent_left -= sent
        return found


class Walker(object):
    """Applies read rules to a :class:`Recorder`; each (verb, path) once."""

    def __init__(self, files: Recorder, follows: Mapping[str, Mapping[str, Any]]) -> None:
        self.files = files
        self.follows = follows
        self.done: set = set()

    def run(self, rule: Mapping[str, Any], depth: int = 0) -> None:
        if "when" in rule:
            if self._read_mentions(str(rule["when"])):
                for then in rule.get("then", ()):
                    self.run(then, depth)
            return
        verb = next((name for name in VERBS if name in rule), None)
        if verb is None or depth > MAX_FOLLOW_DEPTH:
            return
        pattern = str(rule[verb])
        for path in [pattern] if rule.get("literal") else self.expand(pattern):
            memo = (verb, path, bool(rule.get("raw")), tuple(rule.get("entries", ())), tuple(rule.get("follow", ())))
            if memo in self.done:
                continue
            self.done.add(memo)
            getattr(self, "_" + verb)(rule, path, depth)

    def _read_mentions(self, pattern: str) -> bool:
        """Whether a text this answer holds so far matches ``pattern``."""
        found = _compiled(pattern)
        return any(found.search(record["text"]["text"]) for record in self.files.entries.values() if "text" in record.get("text", {}))

    def expand(self, pattern: str) -> List[str]:
        """Node paths matching ``pattern``: alternatives spelled out, wildcards matched against the node's listings."""
        found: List[str] = []
        for spelled in alternatives(pattern):
            found.extend(self._matching(spelled))
        return list(dict.fromkeys(found))

    def _matching(self, pattern: str) -> List[str]:
        found = ["/"]
        for part in [part for part in pattern.split("/") if part]:
            if not WILDCARDS.search(part):
                found = [posixpath.join(base, part) for base in found]
                continue
            matched = []
            for base in found:
                matched.extend(posixpath.join(base, name) for name in self._names(base) if fnmatch.fnmatchcase(name, part))
            found = matched
        return found

    def _names(self, directory: str) -> List[str]:
        try:
            return self.files.listdir(directory)
        except OSError:
            return []

    def _read(self, rule: Mapping[str, Any], path: str, depth: int) -> None:
        try:
            if rule.get("raw"):
                self.files.read_bytes(path, READ_LIMIT, follow=False, truncate=True)
                return
            text = self.files.read_text(path)
        except (OSError, NotTextError):
            return  # recorded as it is: the engine meets the same error on the controller
        self._follow(rule, path, text, depth)

    def _list(self, rule: Mapping[str, Any], path: str, depth: int) -> None:
        globs = [str(glob) for glob in rule.get("entries", ())]
        nocase = bool(rule.get("nocase"))
        for name in self._names(path):
            if any(fnmatch.fnmatchcase(name.lower() if nocase else name, glob) for glob in globs):
                self.run(dict(_inherited(rule), read=node_join(path, name), literal=True), depth)

    def _walk(self, rule: Mapping[str, Any], path: str, depth: int, nesting: int = 1) -> None:
        """kubelet's ``--config-dir``: ``filepath.WalkDir`` (lexical, into sub-directories, links not followed),
        the text of every ``*.conf`` (``filepath.Ext``)."""
        if nesting > MAX_NESTING:
            return
        for name in self._names(path):
            entry = node_join(path, name)
            if self.files.kind(entry, follow=False) == "dir":
                self._walk(rule, entry, depth, nesting + 1)
            elif name.endswith(".conf"):
                self.run(dict(_inherited(rule), read=entry, literal=True), depth)

    def _stat(self, rule: Mapping[str, Any], path: str, depth: int) -> None:
        self.files.kind(path)

    def _version(self, rule: Mapping[str, Any], path: str, depth: int) -> None:
        try:
            self.files.program_version(path)
        except OSError:
            return  # recorded as it is

    def _follow(self, rule: Mapping[str, Any], path: str, text: str, depth: int) -> None:
        """The paths ``text`` names that the rule's follows read next."""
        for followed in followed_rules(self.follows, rule.get("follow", ()), text, path, rule.get("variables")):
            self.run(followed, depth + 1)


def followed_rules(follows: Mapping[str, Mapping[str, Any]], names: Iterable[str], text: str, read_from: str = "",
                   variables: Optional[Mapping[str, str]] = None) -> List[Dict[str, Any]]:
    """The rules the follows ``names`` make of the paths ``text`` (read from ``read_from``) names: each ``{}`` of a
    follow's rules becomes the path; a rule without ``follow`` of its own follows what the text was followed with."""
    names = list(names)
    rules: List[Dict[str, Any]] = []
    for name in names:
        spec = follows.get(name)
        if spec is None:
            continue
        for match in _compiled(str(spec["pattern"])).finditer(text):
            found = next((group for group in match.groups() if group), None)
            for mentioned in _mentioned(found or "", spec, read_from, variables):
                rules.extend(filled(spec.get("then", ()), mentioned, names))
    return rules


_PATTERNS: Dict[str, "re.Pattern[str]"] = {}


def _compiled(pattern: str) -> "re.Pattern[str]":
    if pattern not in _PATTERNS:
        _PATTERNS[pattern] = re.compile(pattern, re.MULTILINE)
    return _PATTERNS[pattern]


def _inherited(rule: Mapping[str, Any]) -> Dict[str, Any]:
    return {key: rule[key] for key in ("raw", "follow", "variables") if key in rule}


def filled(templates: Iterable[Mapping[str, Any]], path: str, follow: Iterable[str] = ()) -> List[Dict[str, Any]]:
    """``templates`` (a follow's rules) for the node path ``path``: each ``{}`` becomes it, taken as written; a rule
    without ``follow`` of its own gets ``follow``."""
    rules = []
    for template in templates:
        rule = dict(template)
        for verb in VERBS:
            if verb in rule:
                rule[verb] = node_join(str(rule[verb]).replace("{}", path))
        rule.setdefault("follow", list(follow))
        rule["literal"] = True
        rules.append(rule)
    return rules


def _mentioned(path: str, spec: Mapping[str, Any], read_from: str, variables: Optional[Mapping[str, str]]) -> Iterable[str]:
    """The absolute node path a follow found: the file's variables expanded (MicroK8s' ``${SNAP_DATA}``), and
    systemd's ``%n``/``%N`` of the unit (or drop-in) it was read from."""
    if variables:
        path = VARIABLE.sub(lambda match: str(variables.get(match.group(1) or match.group(2), match.group(0))), path)
    if spec.get("unit_specifiers") and "%" in path:
        unit = _unit_of(read_from)
        path = path.replace("%n", unit).replace("%N", unit.rsplit(".", 1)[0]).replace("%%", "%")
    return [path] if path.startswith("/") and "$" not in path else []


def _unit_of(path: str) -> str:
    """The unit a unit file or drop-in belongs to: ``x.service`` of ``.../x.service`` and ``.../x.service.d/y.conf``."""
    directory, name = posixpath.split(path)
    parent = posixpath.basename(directory)
    return parent[:-2] if parent.endswith(".d") else name


def read_plan(root: str, plan: Sequence[Mapping[str, Any]], follows: Optional[Mapping[str, Mapping[str, Any]]] = None,
              seconds: float = SECONDS, known: Optional[Mapping[str, Mapping[str, Any]]] = None) -> Dict[str, Dict[str, Dict[str, Any]]]:
    """What every rule of ``plan`` meets on the node under ``root``: ``{node path: {primitive: record}}``; ``known``:
    what the controller already knows programs say of their release (``{node path: version record}``)."""
    files = Recorder(root, seconds, known)
    walker = Walker(files, follows or {})
    for rule in plan:
        walker.run(rule)
    return files.entries
