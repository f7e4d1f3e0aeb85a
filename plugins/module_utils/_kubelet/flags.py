# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's command line: the memory-related flags as pflag and component-base parse them, the flags
and feature gates that differ by release (judged at the release of the kubelet that will start, or at every
supported release when it is unknown: ``_kubelet.release``), and splitting a command line into words.

Pure functions, stdlib only, Python >= 3.9. Nothing here raises on bad input: a flag kubelet
would refuse becomes a problem string in kubelet's words.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.reserved import parse_reserved_memory_flag
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import UNKNOWN, KubeletRelease, release_key, split_releases
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import CPU_STATE_FILE_NAME, STATE_FILE_NAME, KubeletFlags, go_quote

__all__ = [
    "REMOVED_FLAGS",
    "ADDED_GATES",
    "parse_key_value_flag",
    "parse_eviction_hard_flag",
    "parse_feature_gates_flag",
    "added_gate_problems",
    "parse_kubelet_flags",
    "split_args",
    "FOLLOWED_PATH",
    "path_flag",
    "KUBELET_FOLLOWS",
]


_VALUE_FLAGS = (
    "reserved-memory",
    "root-dir",
    "config",
    "config-dir",
    "memory-manager-policy",
    "system-reserved",
    "kube-reserved",
    "eviction-hard",
    "feature-gates",
    "cpu-manager-policy",
    "cpu-manager-policy-options",
    "reserved-cpus",
    "topology-manager-policy",
    "topology-manager-scope",
    "topology-manager-policy-options",
    "v",
)


def _pairs(value: str, separator: str, trim_pair: bool, missing: str) -> Iterable[Tuple[str, str]]:
    """The ``key<separator>value`` pairs of a comma-separated map flag, as component-base's
    cliflag map types split them (``missing % {"key": key}``: the error of a pair without separator)."""
    for pair in value.split(","):
        if trim_pair:
            pair = pair.strip()
        if not pair:
            continue
        key, found, item = pair.partition(separator)
        if not found:
            raise ValueError(missing % {"key": key})
        yield key.strip(), item.strip()


def parse_key_value_flag(value: str) -> Dict[str, str]:
    """``--system-reserved memory=1Gi,cpu=500m`` (``cliflag.MapStringString``)."""
    return dict(_pairs(value, "=", True, "malformed pair, expect string=string"))


def parse_eviction_hard_flag(value: str) -> Dict[str, str]:
    """``--eviction-hard memory.available<100Mi,nodefs.available<10%`` (``LangleSeparatedMapStringString``:
    pairs are not trimmed before the empty check)."""
    return dict(_pairs(value, "<", False, "malformed pair, expect string<string"))


def parse_feature_gates_flag(value: str) -> Dict[str, bool]:
    """``--feature-gates A=true,B=false`` (``cliflag.MapStringBool``)."""
    result = {}
    for key, item in _pairs(value, "=", True, "missing bool value for %(key)s"):
        lowered = item.lower()
        if lowered not in ("1", "t", "true", "0", "f", "false"):
            raise ValueError("invalid value of %s: %s, err: strconv.ParseBool: parsing %s: invalid syntax" % (key, item, go_quote(item)))
        result[key] = lowered in ("1", "t", "true")
    return result


# The node reader's follows of kubelet's path flags (_node.plan_reader): what --config, --config-dir and --root-dir
# name, read as the engine reads it (kubelet's configuration file, its drop-in directory, the checkpoint). A path
# may start with a variable the file's reader expands (MicroK8s' ${SNAP_DATA}).
FOLLOWED_PATH = r"""["']?([/$][^\s"';,\]]*)"""


def path_flag(names: str) -> str:
    """A follow's pattern: the path after one of the flags ``names`` (a regex alternation), ``=`` or blanks between."""
    return r"(?<![\w-])(?:%s)(?:=|[ \t]+)" % names + FOLLOWED_PATH


KUBELET_FOLLOWS: Dict[str, Dict[str, Any]] = {
    "kubelet-config": {"pattern": path_flag("--config"), "then": [{"read": "{}", "follow": []}]},
    "kubelet-config-dir": {"pattern": path_flag("--config-dir"), "then": [{"walk": "{}", "follow": []}]},
    "kubelet-root-dir": {"pattern": path_flag("--root-dir"),
                         "then": [{"read": "{}/" + STATE_FILE_NAME, "raw": True}, {"read": "{}/" + CPU_STATE_FILE_NAME, "raw": True}]},
}


def _flag_name(arg: str) -> Tuple[str, str, str]:
    """``(name, "=", value)`` of ``--name=value``; ``_`` reads as ``-`` (``cliflag.WordSepNormalizeFunc``)."""
    name, equals, value = arg[2:].partition("=")
    return name.replace("_", "-"), equals, value


# Flags some supported kubelet releases no longer know: name -> the first release without it. pflag fails at once
# (kubelet 1.35+: "failed to parse kubelet flag: unknown flag: --pod-infra-container-image", kubernetes#133779).
REMOVED_FLAGS = {"pod-infra-container-image": "1.35"}
# Feature gates some supported kubelet releases do not know yet: name -> the first release that knows it. Kubelet
# refuses a gate it does not know, from its command line or its configuration file ("unrecognized feature gate";
# v1.34 and v1.35 panic while defaulting the file).
ADDED_GATES = {"PodLevelResourceManagers": "1.36"}


def _releases_disagree(what: str, accepting: Sequence[str], refusing: Sequence[str]) -> str:
    return "%s (kubelet releases disagree: %s accept it, %s refuse to start with it)" % (what, ", ".join(accepting), ", ".join(refusing))


def _removed_flag_problem(name: str, origin: str, release: KubeletRelease) -> Optional[str]:
    """Kubelet's words for a flag its release no longer knows, with the file to fix; all releases' when unknown."""
    removed_in = REMOVED_FLAGS.get(name)
    if removed_in is None:
        return None
    accepting, refusing = split_releases(removed_in)
    if not release.known:
        return _releases_disagree("unknown flag: --%s" % name, accepting, refusing)
    if release_key(release.release) < release_key(removed_in):
        return None
    return "failed to parse kubelet flag: unknown flag: --%s (%s has no such flag since %s; remove it where it is set: %s)" % (
        name, release.name, removed_in, origin)


def added_gate_problems(release: KubeletRelease, *gate_maps: object) -> List[str]:
    """A problem for each gate of ``ADDED_GATES`` named (on or off) in the ``featureGates`` maps given that the
    release does not know yet; every release's view when it is unknown."""
    named = [name for gates in gate_maps if isinstance(gates, Mapping) for name in gates if name in ADDED_GATES]
    problems = []
    for name in dict.fromkeys(named):
        refusing, accepting = split_releases(ADDED_GATES[name])
        if not release.known:
            problems.append(_releases_disagree("unrecognized feature gate: %s" % name, accepting, refusing))
        elif release_key(release.release) < release_key(ADDED_GATES[name]):
            problems.append("unrecognized feature gate: %s (%s does not know it: it came in %s)" % (name, release.name, ADDED_GATES[name]))
    return problems


def _flag_name_and_value(args: Sequence[str], index: int, origin: str,
                         release: KubeletRelease) -> Tuple[Optional[str], Optional[str], int, Optional[str]]:
    """``(name, value, next index, problem)`` for the flag at ``args[index]`` (pflag long-flag rules)."""
    name, equals, value = _flag_name(args[index])
    removed = _removed_flag_problem(name, origin, release)
    if removed:
        return None, None, index + (1 if equals or index + 1 >= len(args) else 2), removed
    if name in REMOVED_FLAGS:
        return None, None, index + (1 if equals or index + 1 >= len(args) else 2), None
    if name not in _VALUE_FLAGS:
        return None, None, index + 1, None
    if equals:
        return name, value, index + 1, None
    if index + 1 >= len(args):
        return None, None, index + 1, "flag needs an argument: --%s" % name
    return name, args[index + 1], index + 2, None


def parse_kubelet_flags(args: Sequence[str], origins: Optional[Sequence[str]] = None, release: KubeletRelease = UNKNOWN) -> KubeletFlags:
    """The memory-related flags of a kubelet command line; other flags are ignored.

    Scalar flags: the last one wins. ``--reserved-memory``: every occurrence appends.
    Map flags: the first occurrence replaces the config's map, later ones add keys
    (``kubeletConfigFlagPrecedence`` re-parses the command line over the merged config).
    ``origins``: where each word of ``args`` came from, for ``KubeletFlags.origins``.
    """
    values: Dict[str, Any] = {}
    flag_origins: Dict[str, str] = {}
    problems = []
    index = 0
    while index < len(args):
        start = index
        arg = args[index]
        if arg == "--":
            break
        if not arg.startswith("--"):
            index += 1
            continue
        origin = origins[start] if origins and start < len(origins) else "the command line"
        name, value, index, problem = _flag_name_and_value(args, index, origin, release)
        if problem:
            problems.append(problem)
        if name is None or value is None:
            continue
        try:
            _apply_flag(values, name, value)
        except ValueError as error:
            problems.append("invalid argument %s for %s flag: %s" % (go_quote(value), go_quote("--" + name), error))
            continue
        flag_origins[name] = "flag --%s (%s)" % (name, origin)
    return KubeletFlags(
        root_dir=values.get("root-dir"),
        config=values.get("config"),
        config_dir=values.get("config-dir"),
        policy=values.get("memory-manager-policy"),
        reserved_memory=values.get("reserved-memory"),
        system_reserved=values.get("system-reserved"),
        kube_reserved=values.get("kube-reserved"),
        eviction_hard=values.get("eviction-hard"),
        feature_gates=values.get("feature-gates"),
        cpu_policy=values.get("cpu-manager-policy"),
        cpu_policy_options=values.get("cpu-manager-policy-options"),
        reserved_cpus=values.get("reserved-cpus"),
        topology_policy=values.get("topology-manager-policy"),
        topology_scope=values.get("topology-manager-scope"),
        topology_policy_options=values.get("topology-manager-policy-options"),
        origins=flag_origins,
        problems=tuple(problems),
    )


def _apply_flag(values: Dict[str, Any], name: str, value: str) -> None:
    if name == "reserved-memory":
        if value == "":
            return  # ReservedMemoryVar.Set("") leaves the target alone
        values[name] = values.get(name, ()) + parse_reserved_memory_flag(value)
    elif name in ("system-reserved", "kube-reserved", "cpu-manager-policy-options", "topology-manager-policy-options"):
        values[name] = {**values.get(name, {}), **parse_key_value_flag(value)}
    elif name == "eviction-hard":
        values[name] = {**values.get(name, {}), **parse_eviction_hard_flag(value)}
    elif name == "feature-gates":
        values[name] = {**values.get(name, {}), **parse_feature_gates_flag(value)}
    elif name == "v":
        # klog's Level.Set: strconv.ParseUint(value, 10, 32); kubelet exits on a bad value (e.g. an unset
        # variable in "--v=${KUBELET_LOG_LEVEL}").
        if not re.match(r"^[0-9]+$", value) or int(value) >= 2 ** 32:
            raise ValueError("strconv.ParseUint: parsing %s: invalid syntax" % go_quote(value))
    else:
        values[name] = value


def split_args(text: str) -> Tuple[List[str], List[str]]:
    """Split a command line the way a shell would; on unbalanced quotes fall back to whitespace."""
    try:
        return shlex.split(text), []
    except ValueError as error:
        return text.split(), ["cannot split kubelet flags %r: %s" % (text[:80], error)]
