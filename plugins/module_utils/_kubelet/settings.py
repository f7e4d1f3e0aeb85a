# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's memory-manager settings: the data model and the parsers of their values.

Pure functions, stdlib only, Python >= 3.9, no Ansible imports.
Nothing here raises on bad input: malformed values and hostile quantities become problem
strings. Where the settings are found and how kubelet merges them is :mod:`_kubelet_config`
(with :mod:`_distributions` and :mod:`_systemd`); kubelet's start-up checks of them are
:mod:`_kubelet_checks`.

``MemoryReservation(numa_node, limits)``: one ``reservedMemory`` entry.
``KubeletFlags``: what a kubelet command line sets (``None`` = not given), with the origin of
each flag. ``KubeletSettings``: the effective settings, where each came from, and problems.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import (
    ByteQuantity,
    QuantityError,
    parse_quantity,
    to_byte_quantity,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, factory
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import bounded_int, load_json

__all__ = [
    "POLICY_NONE",
    "POLICY_STATIC",
    "POLICY_BEST_EFFORT",
    "DEFAULT_ROOT_DIR",
    "DEFAULT_EVICTION_HARD_MEMORY",
    "DRIFT_TOLERANCE_GATE",
    "DRIFT_TOLERANCE_OPTION",
    "MemoryReservation",
    "KubeletFlags",
    "KubeletSettings",
    "go_quote",
    "is_memory_resource",
    "parse_reserved_memory_flag",
    "parse_reserved_memory_config",
    "parse_reserved_memory_override",
    "parse_key_value_flag",
    "parse_eviction_hard_flag",
    "parse_feature_gates_flag",
    "added_gate_problems",
    "parse_kubelet_flags",
    "parse_kubelet_config",
    "effective_reserved_memory",
    "memory_resources",
    "eviction_memory",
    "split_args",
]

POLICY_NONE = "None"
POLICY_STATIC = "Static"
POLICY_BEST_EFFORT = "BestEffort"
KNOWN_POLICIES = (POLICY_NONE, POLICY_STATIC, POLICY_BEST_EFFORT)
# The resources --system-reserved / --kube-reserved accept (cmd/kubelet/app/server.go parseResourceList).
RESERVABLE_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pid")

DEFAULT_ROOT_DIR = "/var/lib/kubelet"
STATE_FILE_NAME = "memory_manager_state"
# Kubelet's DefaultEvictionHard; only the memory signal matters for Node Allocatable memory.
DEFAULT_EVICTION_HARD_MEMORY = "100Mi"
MEMORY_AVAILABLE = "memory.available"
# KEP-6232 (kubernetes#140473, #142121): the gate and the memory manager policy option.
DRIFT_TOLERANCE_GATE = "MemoryManagerDriftTolerance"
DRIFT_TOLERANCE_OPTION = "memory-drift-tolerance"

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1
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
    "v",
)


def go_quote(text: str) -> str:
    """Go's ``%q`` for the plain strings kubelet quotes."""
    out = []
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append("\\x%02x" % ord(char))
        else:
            out.append(char)
    return '"%s"' % "".join(out)


def is_memory_resource(name: str) -> bool:
    # corev1helper.IsHugePageResourceName || name == v1.ResourceMemory
    return name == "memory" or name.startswith("hugepages-")


# --------------------------------------------------------------------------- data


class MemoryReservation(Record, frozen=True):
    """One ``reservedMemory`` entry: a NUMA node and its limits, in the order given."""

    numa_node: int
    limits: Tuple[Tuple[str, ByteQuantity], ...]


class KubeletFlags(Record, frozen=True):
    """What a kubelet command line sets; ``None`` means the flag was not given.

    ``origins`` maps a flag name (``system-reserved``) to where its last occurrence came from.
    """

    root_dir: Optional[str] = None
    config: Optional[str] = None
    config_dir: Optional[str] = None
    policy: Optional[str] = None
    reserved_memory: Optional[Tuple[MemoryReservation, ...]] = None
    system_reserved: Optional[Dict[str, str]] = None
    kube_reserved: Optional[Dict[str, str]] = None
    eviction_hard: Optional[Dict[str, str]] = None
    feature_gates: Optional[Dict[str, bool]] = None
    origins: Dict[str, str] = factory(dict)
    problems: Tuple[str, ...] = ()


class KubeletSettings(Record, frozen=True):
    """Kubelet's effective memory-manager settings, where they came from, and how kubelet runs.

    ``field_sources``: field -> the file, flag or option that set it (``default`` when none).
    ``config_problems``: kubelet's configuration could not be found or read (verdict
    ``kubelet_config_unknown``); ``problems``: values kubelet would reject (``reserved_changed``).
    ``drift_tolerance``: KEP-6232's ``memory-drift-tolerance`` when kubelet has it on (gate on and
    the option not ``off``), else ``None``.
    """

    policy: str
    reserved_memory: Dict[int, Dict[str, int]]
    reserved_memory_entries: Tuple[MemoryReservation, ...]
    system_reserved: Dict[str, int]
    kube_reserved: Dict[str, int]
    eviction_hard_memory: Optional[str]
    root_dir: str
    config_path: Optional[str]
    field_sources: Dict[str, str] = factory(dict)
    sources: Tuple[str, ...] = ()
    problems: Tuple[str, ...] = ()
    distribution: str = "unknown"
    service: Optional[str] = None
    config_dir: Optional[str] = None
    dropins: Tuple[str, ...] = ()
    config_problems: Tuple[str, ...] = ()
    drift_tolerance: Optional[str] = None

    @property
    def state_file(self) -> str:
        """The checkpoint's node path: ``<root dir>/memory_manager_state`` (memorymanager ``memoryManagerStateFileName``)."""
        return posixpath.join(self.root_dir, STATE_FILE_NAME)

    def reserved_bytes(self, numa_node: int, resource: str) -> int:
        """``systemReserved`` kubelet puts in the checkpoint for a node and resource (memorymanager ``getSystemReservedMemory``)."""
        return self.reserved_memory.get(numa_node, {}).get(resource, 0)

    def total_reserved(self, resource: str) -> int:
        return sum(limits.get(resource, 0) for limits in self.reserved_memory.values())


# --------------------------------------------------------------------------- pure parsers


def parse_reserved_memory_flag(value: str) -> Tuple[MemoryReservation, ...]:
    """``--reserved-memory 0:memory=1Gi,hugepages-1Gi=2Gi;1:memory=2Gi`` (kubelet ``ReservedMemoryVar``)."""
    entries = []
    for reservation in value.split(";"):
        node_and_limits = reservation.split(":")
        if len(node_and_limits) != 2:
            raise ValueError(
                "the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], "
                "got %s" % reservation
            )
        node_text, limits_text = node_and_limits
        if not re.match(r"^[+-]?[0-9]+$", node_text):
            raise ValueError("failed to convert the NUMA node ID, exptected integer, got %s" % node_text)
        magnitude = bounded_int(node_text.lstrip("+-"))
        numa_node = _INT32_MAX + 1 if magnitude is None else -magnitude if node_text.startswith("-") else magnitude
        if not _INT32_MIN <= numa_node <= _INT32_MAX:
            raise ValueError("NUMA node ID %s does not fit in 32 bits" % node_text)
        limits = {}
        for limit in limits_text.split(","):
            name_and_quantity = limit.split("=")
            if len(name_and_quantity) != 2:
                raise ValueError("the reserved limit has incorrect value, expected type=quantatity, got %s" % limit)
            name, quantity_text_value = name_and_quantity
            if not is_memory_resource(name):
                raise ValueError("memory type conversion error, unknown type: %s" % go_quote(name))
            try:
                parse_quantity(quantity_text_value, allow_negative=True)
            except QuantityError:
                raise ValueError("failed to parse the quantatity, expected quantatity, got %s" % quantity_text_value)
            quantity, problem = to_byte_quantity(quantity_text_value, "reserved memory %s on NUMA node %d" % (name, numa_node),
                                                 allow_negative=True)
            if quantity is None:
                raise ValueError(problem)
            limits[name] = quantity
        entries.append(MemoryReservation(numa_node, tuple(limits.items())))
    return tuple(entries)


def _limits_from_mapping(limits: object, where: str) -> Tuple[Tuple[Tuple[str, ByteQuantity], ...], List[str]]:
    """``reservedMemory`` limits: kubelet's validation lets a negative quantity through (only zero is refused),
    ``validateReservedMemory`` sums it as it is and ``convertReserved`` keeps it as an int64."""
    if not isinstance(limits, Mapping):
        return (), ["%s: limits must be a mapping of resource to quantity, got %s" % (where, type(limits).__name__)]
    parsed = []
    problems = []
    for name, value in limits.items():
        if not isinstance(name, str):
            problems.append("%s: resource name %r is not a string" % (where, name))
            continue
        quantity, problem = to_byte_quantity(value, "%s %s" % (where, name), allow_negative=True)
        if quantity is None:
            problems.append(problem)
            continue
        parsed.append((name, quantity))
    return tuple(parsed), problems


def parse_reserved_memory_config(value: object) -> Tuple[Tuple[MemoryReservation, ...], List[str]]:
    """``reservedMemory`` of a KubeletConfiguration: ``[{numaNode: 0, limits: {memory: 1Gi}}, ...]``."""
    if value is None:
        return (), []
    if not isinstance(value, list):
        return (), ["reservedMemory must be a list of {numaNode, limits}, got %s" % type(value).__name__]
    entries = []
    problems = []
    for index, item in enumerate(value):
        where = "reservedMemory[%d]" % index
        if not isinstance(item, Mapping):
            problems.append("%s must be a mapping with numaNode and limits, got %s" % (where, type(item).__name__))
            continue
        numa_node = item.get("numaNode")
        if isinstance(numa_node, bool) or not isinstance(numa_node, int):
            problems.append("%s: numaNode must be an integer, got %r" % (where, numa_node))
            continue
        if not _INT32_MIN <= numa_node <= _INT32_MAX:
            problems.append("%s: numaNode %d does not fit in 32 bits" % (where, numa_node))
            continue
        limits, limit_problems = _limits_from_mapping(item.get("limits"), "%s.limits" % where)
        problems.extend(limit_problems)
        entries.append(MemoryReservation(numa_node, limits))
    return tuple(entries), problems


def _override_node_id(key: object) -> Optional[int]:
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return key
    if isinstance(key, str) and re.match(r"^\s*[0-9]+\s*$", key):
        return bounded_int(key.strip())
    return None


def parse_reserved_memory_override(value: object) -> Tuple[Tuple[MemoryReservation, ...], List[str]]:
    """An operator's ``reserved_memory``: ``{0: {memory: 1Gi}}`` (keys may be strings) or the config's list."""
    if isinstance(value, list):
        return parse_reserved_memory_config(value)
    if not isinstance(value, Mapping):
        return (), [
            "reserved_memory must be a mapping like {0: {memory: 1Gi}} or a list like kubelet's reservedMemory, got %s"
            % type(value).__name__
        ]
    entries = []
    problems = []
    for key, limits in value.items():
        numa_node = _override_node_id(key)
        if numa_node is None or numa_node > _INT32_MAX:
            problems.append("reserved_memory: %r is not a NUMA node number" % (key,))
            continue
        parsed, limit_problems = _limits_from_mapping(limits, "reserved_memory[%d]" % numa_node)
        problems.extend(limit_problems)
        entries.append(MemoryReservation(numa_node, parsed))
    return tuple(sorted(entries, key=lambda entry: entry.numa_node)), problems


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


def _flag_name(arg: str) -> Tuple[str, str, str]:
    """``(name, "=", value)`` of ``--name=value``; ``_`` reads as ``-`` (``cliflag.WordSepNormalizeFunc``)."""
    name, equals, value = arg[2:].partition("=")
    return name.replace("_", "-"), equals, value


# Flags some supported kubelet releases no longer know: name -> the first release without it. pflag fails
# at once ("unknown flag"), so the releases disagree about such a command line.
REMOVED_FLAGS = {"pod-infra-container-image": "1.35"}
SUPPORTED_RELEASES = ("1.34", "1.35", "1.36", "1.37")


def _split_releases(first: str) -> Tuple[List[str], List[str]]:
    """The supported releases before ``first`` and from ``first`` on (``1.36`` -> 1.34, 1.35 | 1.36, 1.37)."""
    threshold = tuple(map(int, first.split(".")))
    later = [release for release in SUPPORTED_RELEASES if tuple(map(int, release.split("."))) >= threshold]
    return [release for release in SUPPORTED_RELEASES if release not in later], later


def _releases_disagree(what: str, accepting: List[str], refusing: List[str]) -> str:
    return "%s (kubelet releases disagree: %s accept it, %s refuse to start with it)" % (what, ", ".join(accepting), ", ".join(refusing))


def _removed_flag_problem(name: str) -> Optional[str]:
    removed_in = REMOVED_FLAGS.get(name)
    if removed_in is None:
        return None
    accepting, refusing = _split_releases(removed_in)
    return _releases_disagree("unknown flag: --%s" % name, accepting, refusing)


# Feature gates some supported kubelet releases do not know yet: name -> the first release that knows it.
# Kubelet refuses a gate it does not know, from its command line or its configuration file ("unrecognized
# feature gate"; v1.34 and v1.35 panic while defaulting the file), so the releases disagree about it.
ADDED_GATES = {"PodLevelResourceManagers": "1.36"}


def added_gate_problems(*gate_maps: object) -> List[str]:
    """A problem for each gate of ``ADDED_GATES`` named (on or off) in the ``featureGates`` maps given."""
    named = [name for gates in gate_maps if isinstance(gates, Mapping) for name in gates if name in ADDED_GATES]
    problems = []
    for name in dict.fromkeys(named):
        refusing, accepting = _split_releases(ADDED_GATES[name])
        problems.append(_releases_disagree("unrecognized feature gate: %s" % name, accepting, refusing))
    return problems


def _flag_name_and_value(args: Sequence[str], index: int) -> Tuple[Optional[str], Optional[str], int, Optional[str]]:
    """``(name, value, next index, problem)`` for the flag at ``args[index]`` (pflag long-flag rules)."""
    name, equals, value = _flag_name(args[index])
    removed = _removed_flag_problem(name)
    if removed:
        return None, None, index + (1 if equals or index + 1 >= len(args) else 2), removed
    if name not in _VALUE_FLAGS:
        return None, None, index + 1, None
    if equals:
        return name, value, index + 1, None
    if index + 1 >= len(args):
        return None, None, index + 1, "flag needs an argument: --%s" % name
    return name, args[index + 1], index + 2, None


def parse_kubelet_flags(args: Sequence[str], origins: Optional[Sequence[str]] = None) -> KubeletFlags:
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
        name, value, index, problem = _flag_name_and_value(args, index)
        if problem:
            problems.append(problem)
        if name is None or value is None:
            continue
        try:
            _apply_flag(values, name, value)
        except ValueError as error:
            problems.append("invalid argument %s for %s flag: %s" % (go_quote(value), go_quote("--" + name), error))
            continue
        origin = origins[start] if origins and start < len(origins) else "the command line"
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
        origins=flag_origins,
        problems=tuple(problems),
    )


def _apply_flag(values: Dict[str, Any], name: str, value: str) -> None:
    if name == "reserved-memory":
        if value == "":
            return  # ReservedMemoryVar.Set("") leaves the target alone
        values[name] = values.get(name, ()) + parse_reserved_memory_flag(value)
    elif name in ("system-reserved", "kube-reserved"):
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


def parse_kubelet_config(text: str, require_kind: bool = False) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    """A KubeletConfiguration document (JSON, else YAML as sigs.k8s.io/yaml reads it) as a mapping, or problems."""
    text = text.lstrip("\ufeff")
    try:
        document = load_json(text)
    except ValueError:
        # The YAML reader is imported only for a file that is not JSON (kubelet-config.json nodes never need it).
        from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import load_mapping  # pylint: disable=import-outside-toplevel

        document, problem = load_mapping(text, "KubeletConfiguration mapping")
        if problem:
            return None, [problem]
    if document is None:
        return {}, []
    if not isinstance(document, dict):
        return None, ["the document is a %s, not a KubeletConfiguration mapping" % type(document).__name__]
    kind = document.get("kind")
    if kind is not None and kind != "KubeletConfiguration":
        return None, ["the document is a %r, not a KubeletConfiguration" % (kind,)]
    if require_kind and (kind is None or document.get("apiVersion") is None):
        # A drop-in is decoded by kubelet's codec, which needs both (kubelet-config-file docs).
        return None, ["a drop-in must set apiVersion and kind: KubeletConfiguration"]
    return document, []


def effective_reserved_memory(entries: Iterable[MemoryReservation]) -> Dict[int, Dict[str, int]]:
    """Per node and resource bytes; a later entry overwrites an earlier one (memorymanager ``convertReserved``)."""
    result: Dict[int, Dict[str, int]] = {}
    for entry in entries:
        node = result.setdefault(entry.numa_node, {})
        for name, quantity in entry.limits:
            node[name] = int(quantity)
    return result


def memory_resources(value: object, where: str) -> Tuple[Optional[Dict[str, ByteQuantity]], List[str]]:
    """``memory`` and ``hugepages-*`` of a ``systemReserved``-style map (other resources ignored)."""
    if value is None:
        return None, []
    if not isinstance(value, Mapping):
        return None, ["%s must be a mapping of resource to quantity, got %s" % (where, type(value).__name__)]
    result = {}
    problems = []
    for name, item in value.items():
        if name not in RESERVABLE_RESOURCES:
            # cmd/kubelet/app/server.go parseResourceList: kubelet exits at start.
            problems.append("%s value failed to parse: cannot reserve %s resource (only %s can be reserved)" % (
                where, go_quote(str(name)), ", ".join(RESERVABLE_RESOURCES)))
        if not isinstance(name, str) or not is_memory_resource(name):
            continue
        if not isinstance(item, str):
            problems.append("%s.%s: kubelet expects a string here, got %r" % (where, name, item))
        quantity, problem = to_byte_quantity(item, "%s.%s" % (where, name))
        if quantity is None:
            problems.append(problem)
            continue
        result[name] = quantity
    return result, problems


def eviction_memory(value: object, where: str) -> Tuple[Optional[str], List[str]]:
    """``memory.available`` of an ``evictionHard`` map; ``None`` when the map does not set it."""
    if not isinstance(value, Mapping):
        return None, ["%s must be a mapping of signal to threshold, got %s" % (where, type(value).__name__)]
    threshold = value.get(MEMORY_AVAILABLE)
    if threshold is None:
        return None, []
    if not isinstance(threshold, str):
        return str(threshold), ["%s.%s: kubelet expects a string here, got %r" % (where, MEMORY_AVAILABLE, threshold)]
    return threshold.strip(), []
