# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How each distribution's wrapper turns its own options into kubelet's command line.

Pure, stdlib only, Python >= 3.9: the words after the kubelet program, the options of a wrapper's
command line, k3s/RKE2 ``kubelet-arg`` (config files merged in order, then ``extractConfigArgs`` and
``GetArgs``), k0s ``--kubelet-extra-args``, MicroK8s' bash array. Which files each distribution reads
is :mod:`_kubelet.distributions`.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Dict, List, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import node_join
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import Arg

__all__ = [
    "RANCHER_EVICTION_HARD",
    "kubelet_args_of",
    "merge_rancher_config",
    "rancher_kubelet_args",
    "rancher_flag_only_kubelet_args",
    "bash_array_words",
    "k0s_extra_args",
    "runs_kubelet",
]


RANCHER_EVICTION_HARD = "imagefs.available<5%,nodefs.available<5%"


def kubelet_program(command: Sequence[Arg]) -> Optional[str]:
    """The program a command line runs (``kubelet``, ``k3s``, a site's wrapper, never asked anything by that name;
    the kubelet after OpenShift's ``kubenswrapper``), as an absolute node path; None for a relative one. Only the
    program's own word counts: an argument such as ``--root-dir=/var/lib/kubelet`` names no program."""
    words = [word.value for word in command]
    if len(words) > 1 and posixpath.basename(words[0]) == "kubenswrapper":
        words = words[1:]
    program = words[0] if words else ""
    return program if program.startswith("/") else None


def kubelet_args_of(command: Sequence[Arg]) -> List[Arg]:
    """The words after the kubelet program (after ``kubenswrapper /usr/bin/kubelet`` too)."""
    for index, word in enumerate(command):
        if posixpath.basename(word.value) == "kubelet":
            return list(command[index + 1:])
    return list(command[1:])


def _option_value(words: Sequence[str], names: Sequence[str]) -> Optional[str]:
    """The last value of ``--name=value`` / ``--name value`` / ``-n value`` among ``words``."""
    value = None
    for index, word in enumerate(words):
        for name in names:
            if word.startswith(name + "="):
                value = word[len(name) + 1:]
            elif word == name and index + 1 < len(words):
                value = words[index + 1]
    return value


def _option_values(words: Sequence[str], name: str) -> List[str]:
    values = []
    for index, word in enumerate(words):
        if word.startswith(name + "="):
            values.append(word[len(name) + 1:])
        elif word == name and index + 1 < len(words):
            values.append(words[index + 1])
    return values


def _as_list(value: object) -> List[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(item) for item in value]
    return [str(value)]


def merge_rancher_config(documents: Sequence[Tuple[str, Dict[str, object]]], key: str) -> Tuple[List[str], List[str]]:
    """``key`` over k3s/RKE2 config files in order: a later ``key`` replaces, ``key+`` appends.

    Returns ``(values, the files that set them)``.
    """
    values: List[str] = []
    setters: List[str] = []
    for path, document in documents:
        if key in document:
            values, setters = _as_list(document[key]), [path]
        if key + "+" in document:
            values = values + _as_list(document[key + "+"])
            setters = setters + [path]
    return values, setters


def rancher_kubelet_args(
    kubelet_args: Sequence[Arg], managed_dir: str
) -> Tuple[List[Arg], List[Tuple[str, str]], List[str]]:
    """k3s' ``extractConfigArgs`` + ``GetArgs``: ``(kubelet args, drop-in redirects, problems)``.

    ``config``/``config-dir`` are stripped and their targets copied into the managed drop-in
    dir (``10-cli-config.conf``, ``20-cli-config-dir/``); every other ``key=value`` becomes
    ``--key=value``.
    """
    args: List[Arg] = []
    redirects: List[Tuple[str, str]] = []
    problems: List[str] = []
    for item in kubelet_args:
        key, equals, value = item.value.lstrip("-").partition("=")
        if key in ("config", "config-dir"):
            if not value:
                problems.append("%s: value required for kubelet-arg --%s" % (item.origin, key))
                continue
            target = "10-cli-config.conf" if key == "config" else "20-cli-config-dir"
            if not node_join(value).startswith(node_join(managed_dir) + "/"):
                redirects.append((node_join(managed_dir, target), node_join(value)))
            continue
        args.append(Arg("--%s=%s" % (key, value if equals else "true"), item.origin))
    return args, redirects, problems


def rancher_flag_only_kubelet_args(kubelet_args: Sequence[Arg], name: str) -> List[Arg]:
    """k3s/RKE2 before v1.32 (no managed drop-in dir): ``GetArgs`` over the agent's default flags.

    The defaults include ``--eviction-hard=imagefs.available<5%,nodefs.available<5%`` (no
    ``memory.available``: kubelet reserves no eviction memory); a user ``eviction-hard`` replaces
    it; ``config``/``config-dir`` are passed to kubelet as they are (k3s-io/k3s
    pkg/daemons/agent ``kubeletArgs``; docs.k3s.io "Kubelet configuration": files from v1.32 only).
    """
    args = []
    for item in kubelet_args:
        key, equals, value = item.value.lstrip("-").partition("=")
        args.append(Arg("--%s=%s" % (key, value if equals else "true"), item.origin))
    if not any(arg.value.startswith("--eviction-hard=") for arg in args):
        args.insert(0, Arg("--eviction-hard=" + RANCHER_EVICTION_HARD, "%s agent (its default flags)" % name))
    return args


def bash_array_words(text: str, variables: Dict[str, str]) -> Tuple[List[str], Optional[str]]:
    """``declare -a args="($(cat FILE))"``: comments dropped, variables expanded, quotes removed."""
    def expand(match: "re.Match[str]") -> str:
        return variables.get(match.group(1) or match.group(2), "")

    expanded = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", expand, text)
    lexer = shlex.shlex(expanded, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer), None
    except ValueError as error:
        return [], str(error)


def k0s_extra_args(text: str) -> List[str]:
    """k0s' ``flags.Split`` then ``StringMap.Merge``: words split at white space (no quoting), each
    ``--flag=value`` a map key, so a repeated flag keeps only its last value (sorted, as ``ToArgs``)."""
    flags: Dict[str, str] = {}
    for word in text.split():
        name, _equals, value = word.partition("=")
        flags[name] = value
    return ["%s=%s" % (name, flags[name]) for name in sorted(flags)]


def _k0s_controller_runs_kubelet(words: Sequence[str]) -> bool:
    """``--enable-worker`` or ``--single`` (which implies it) on ``k0s controller`` (pkg/config/cli.go)."""
    return any(word in ("--enable-worker", "--enable-worker=true", "--single", "--single=true") for word in words)


def runs_kubelet(command: Sequence[Arg]) -> bool:
    """Whether a command line runs a program named ``kubelet`` (directly or through a wrapper)."""
    return any(posixpath.basename(word.value) == "kubelet" for word in command)
