# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A systemd service's command line as systemd builds it, read from unit files on a node.

Implements the parts of systemd that decide kubelet's argv (systemd.unit(5),
systemd.service(5), systemd.exec(5)):

* the unit is the first ``<name>.service`` found in the search path below; a unit linked to
  ``/dev/null`` is masked; drop-ins are ``<name>.service.d/*.conf`` of every directory of the
  path, a file name shadowing the same name in later directories, all applied in file-name
  order after the unit;
* lines ending in a backslash continue; ``#`` and ``;`` start comments; an empty
  ``ExecStart=``, ``Environment=`` or ``EnvironmentFile=`` resets what came before;
* ``Environment=`` words are ``KEY=value`` with systemd quoting; ``EnvironmentFile=`` files
  (``-`` prefix: may be missing) override them, in order;
* ``ExecStart=`` words are unquoted and C-unescaped; ``$NAME`` as a word of its own becomes
  the variable's value split at white space, ``${NAME}`` (anywhere in a word) its exact
  value; ``$$`` is a ``$`` and ``%%`` a ``%``.

The syntax (lines, words, environment, expansion) is :mod:`_kubelet.unitfile`, pure; this file finds the
unit and its drop-ins and reads them (:func:`load_service`). Problems that
would leave the argv unknown (an unreadable drop-in, an unterminated quote) name the file
and line. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import (
    NodeFiles,
    list_dir,
    node_join,
    read_node_text,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import (
    Arg,
    expand_command,
    expand_specifiers,
    parse_env_lines,
    parse_environment_assignments,
    parse_unit_lines,
    split_words,
)

__all__ = [
    "UNIT_DIRS",
    "ServiceDefinition",
    "read_env_file",
    "find_unit",
    "find_dropins",
    "load_service",
    "UNIT_FOLLOWS",
]

# systemd's system unit search path, highest precedence first (the directories the issue and
# systemd.unit(5) name; /lib is /usr/lib's old place on non-merged-usr systems).
UNIT_DIRS = (
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/local/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
)


# The node reader's follow of a unit's text (_node.plan_reader): the environment files it names, %n and %N of the
# unit expanded (k3s' and RKE2's EnvironmentFile=-/etc/default/%N); they are read with the service's own follows.
UNIT_FOLLOWS: Dict[str, Dict[str, Any]] = {
    "environment-file": {"pattern": r"^[ \t]*EnvironmentFile[ \t]*=[ \t]*-?[ \t]*(/\S+)", "unit_specifiers": True,
                         "then": [{"read": "{}"}]},
    # The program an ExecStart= runs kubelet with (after OpenShift's kubenswrapper): asked its release.
    "exec-program": {"pattern": r"^[ \t]*ExecStart[ \t]*=[ \t]*[-@:+!]*(?:\S*/kubenswrapper[ \t]+)?(/[^\s\"';]*/(?:kubelet|k3s|rke2|k0s))(?=[\s\"';]|$)",
                     "then": [{"version": "{}"}]},
}


class ServiceDefinition(Record, frozen=True):
    """A service's unit, drop-ins, command and environment, as systemd would run it."""

    name: str
    unit_path: Optional[str]
    dropins: Tuple[str, ...]
    command: Tuple[Arg, ...]
    environment: Dict[str, Arg]
    env_files: Tuple[str, ...]
    problems: Tuple[str, ...]

    @property
    def found(self) -> bool:
        return self.unit_path is not None


# --------------------------------------------------------------------------- reading units


def find_unit(files: NodeFiles, name: str) -> Tuple[Optional[str], List[str]]:
    """The node path of unit ``name`` (e.g. ``kubelet.service``), highest precedence first."""
    for directory in UNIT_DIRS:
        node_path = node_join(directory, name)
        if files.readlink(node_path) == "/dev/null":
            return None, ["%s is masked (linked to /dev/null)" % node_path]
        if files.isfile(node_path):
            return node_path, []
    return None, []


def find_dropins(files: NodeFiles, name: str) -> Tuple[List[str], List[str]]:
    """``<name>.d/*.conf`` node paths in systemd's order: by file name, earlier directories shadowing."""
    chosen: Dict[str, str] = {}
    problems = []
    for directory in UNIT_DIRS:
        dropin_dir = node_join(directory, name + ".d")
        entries, problem = list_dir(files, dropin_dir, dropin_dir)
        if problem:
            problems.append(problem)
        for entry in entries or ():
            if entry.endswith(".conf") and entry not in chosen:
                chosen[entry] = node_join(dropin_dir, entry)
    return [chosen[entry] for entry in sorted(chosen)], problems


class _ServiceBuilder:
    def __init__(self, unit_name: str = "") -> None:
        self.unit_name = unit_name
        self.exec_start: Optional[Tuple[List[str], str]] = None
        self.environment: List[Tuple[str, str, str]] = []
        self.env_files: List[Tuple[str, str]] = []
        self.problems: List[str] = []

    def apply(self, node_path: str, text: str) -> None:
        settings, problems = parse_unit_lines(text, node_path)
        self.problems.extend(problems)
        for section, key, value, line in settings:
            if section != "Service":
                continue
            where = "%s:%d" % (node_path, line)
            if key == "ExecStart":
                self._exec_start(value, where)
            elif key == "Environment":
                self._environment(value, where)
            elif key == "EnvironmentFile":
                # systemd resolves specifiers in the path (EnvironmentFile=-/etc/default/%N of k3s and RKE2).
                self.env_files = [] if not value else self.env_files + [(expand_specifiers(value, self.unit_name), where)]

    def _exec_start(self, value: str, where: str) -> None:
        if not value:
            self.exec_start = None  # an empty assignment resets the list
            return
        words, problem = split_words(value)
        if problem:
            self.problems.append("%s: ExecStart: %s" % (where, problem))
            return
        if words:
            words[0] = words[0].lstrip("-@:+!")
        self.exec_start = (words, "ExecStart of " + where)

    def _environment(self, value: str, where: str) -> None:
        if not value:
            self.environment = []
            return
        assignments, problems = parse_environment_assignments(value)
        self.problems.extend("%s: Environment: %s" % (where, problem) for problem in problems if "unterminated" in problem)
        self.environment.extend((key, item, where) for key, item in assignments)


def read_env_file(files: NodeFiles, node_path: str) -> Tuple[Optional[Dict[str, Arg]], List[str], bool]:
    """``(variables, problems, exists)`` of an environment file, each variable with the line it is set on
    (``/var/lib/kubelet/kubeadm-flags.env:1``: the line to fix); ``variables`` is ``None`` when it cannot be read
    (then ``problems`` holds why). Every problem names the file."""
    text, problem, exists = read_node_text(files, node_path)
    if text is None:
        return None, [problem or node_path], exists
    variables, problems = parse_env_lines(text)
    return ({key: Arg(value, "%s:%d" % (node_path, line)) for key, (value, line) in variables.items()},
            ["%s: %s" % (node_path, item) for item in problems], True)


def _read_env_files(files: NodeFiles, env_files: Sequence[Tuple[str, str]], environment: Dict[str, Arg]) -> Tuple[List[str], List[str]]:
    read, problems = [], []
    for value, where in env_files:
        optional = value.startswith("-")
        node_path = value.lstrip("-").strip()
        variables, file_problems, exists = read_env_file(files, node_path)
        if variables is None:
            if exists or not optional:
                problems.extend("%s: EnvironmentFile %s" % (where, problem) for problem in file_problems)
            continue
        problems.extend(file_problems)
        environment.update(variables)
        read.append(node_path)
    return read, problems


def load_service(files: NodeFiles, name: str) -> ServiceDefinition:
    """Unit ``name`` (``kubelet.service``) with its drop-ins, environment and expanded ``ExecStart``."""
    unit_path, problems = find_unit(files, name)
    if unit_path is None:
        return ServiceDefinition(name, None, (), (), {}, (), tuple(problems))
    dropins, problems = find_dropins(files, name)
    builder = _ServiceBuilder(name)
    builder.problems.extend(problems)
    for node_path in [unit_path] + dropins:
        text, problem, _exists = read_node_text(files, node_path)
        if text is None:
            builder.problems.append(problem)
            continue
        builder.apply(node_path, text)
    environment = {key: Arg(item, origin) for key, item, origin in builder.environment}
    env_files, env_problems = _read_env_files(files, builder.env_files, environment)
    builder.problems.extend(env_problems)
    command: List[Arg] = []
    if builder.exec_start is not None:
        words, origin = builder.exec_start
        command = expand_command(words, environment, origin, name)
    return ServiceDefinition(name, unit_path, tuple(dropins), tuple(command), environment, tuple(env_files), tuple(builder.problems))
