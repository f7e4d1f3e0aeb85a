# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's memory-manager settings, from its config file and flags, and its start-up checks.

Stdlib only (PyYAML when importable), Python >= 3.9, no Ansible imports. Nothing here raises
on bad input: unreadable files, malformed values and hostile quantities become problem
strings in the result.

Where each setting comes from, lowest to highest precedence (as in kubelet, where the
command line wins over ``--config``):

1. kubelet defaults: policy ``None``, no reserved memory, ``evictionHard`` ``memory.available``
   ``100Mi`` when the whole map is unset, root dir ``/var/lib/kubelet``;
2. the KubeletConfiguration file (``--config``, else ``<root dir>/config.yaml``);
3. kubelet flags: given explicitly, else read from ``/var/lib/kubelet/kubeadm-flags.env``
   (``KUBELET_KUBEADM_ARGS``) and ``/etc/default/kubelet`` / ``/etc/sysconfig/kubelet``
   (``KUBELET_EXTRA_ARGS``), in the order kubeadm's systemd drop-in expands them;
4. explicit overrides from the operator (``policy``, ``reserved_memory``).

Every path is a path on the node, read under the ``root`` prefix.

Public API
----------

``ByteQuantity(int)``
    A number of bytes that remembers the ``resource.Quantity`` format it was written in
    (``BinarySI``, ``DecimalSI``, ``DecimalExponent``); ``kube_text`` is how kubelet
    prints it. Compares and hashes as a plain ``int``.

``MemoryReservation(numa_node, limits)`` (frozen)
    One ``reservedMemory`` entry; ``limits`` is a tuple of ``(resource, ByteQuantity)``.

``KubeletFlags(root_dir, config, config_dir, policy, reserved_memory, system_reserved, kube_reserved, eviction_hard, problems)`` (frozen)
    What a kubelet command line sets (``None`` = not given).

``KubeletSettings(policy, reserved_memory, reserved_memory_entries, system_reserved, kube_reserved,
eviction_hard_memory, root_dir, config_path, field_sources, sources, problems)`` (frozen)
    ``reserved_memory`` is ``{numa node: {resource: bytes}}`` after later entries overwrite
    earlier ones (spec 5.5 item 4); ``system_reserved``/``kube_reserved`` keep only ``memory``
    and ``hugepages-*``; ``eviction_hard_memory`` is the raw ``memory.available`` threshold
    (``"100Mi"``, ``"10%"``) or ``None``; ``root_dir``/``config_path`` are node paths (not
    prefixed with ``root``); ``field_sources`` says where each value came from.
    Helpers: ``state_file``, ``reserved_bytes(node, resource)``, ``total_reserved(resource)``.

Pure parsers:

``parse_reserved_memory_flag(value) -> Tuple[MemoryReservation, ...]`` (``ValueError`` with kubelet's text)
``parse_reserved_memory_config(value) -> Tuple[Tuple[MemoryReservation, ...], List[str]]``
``parse_reserved_memory_override(value) -> Tuple[Tuple[MemoryReservation, ...], List[str]]``
``parse_key_value_flag(value) -> Dict[str, str]`` (``ValueError``)
``parse_eviction_hard_flag(value) -> Dict[str, str]`` (``ValueError``)
``parse_kubelet_flags(args) -> KubeletFlags``
``parse_env_file(text) -> Dict[str, str]``
``parse_kubelet_config(text) -> Tuple[Optional[dict], List[str]]``
``effective_reserved_memory(entries) -> Dict[int, Dict[str, int]]``
``memory_resources(mapping, where) -> Tuple[Optional[Dict[str, ByteQuantity]], List[str]]``
``to_byte_quantity(value, what) -> Tuple[Optional[ByteQuantity], Optional[str]]``
``quantity_text(num_bytes, quantity_format) -> str`` (``resource.Quantity.String()``)
``split_args(text) -> Tuple[List[str], List[str]]``

Loader (the only function doing I/O):

``load_kubelet_settings(root="/", kubelet_root_dir=None, config_path=None, flags=None, policy=None,
reserved_memory=None, read_env_files=None) -> KubeletSettings``

Kubelet's start-up checks:

``policy_errors(policy, platform="linux") -> List[str]``
``reserved_memory_config_errors(entries) -> List[str]``
``eviction_hard_memory_reservation(threshold, memory_capacity_bytes) -> Tuple[Optional[ByteQuantity], Optional[str]]``
``node_allocatable_reservation(settings, memory_capacity_bytes, hugepage_resources=None) -> Tuple[Dict[str, ByteQuantity], List[str]]``
``node_allocatable_errors(settings, numa_node_ids, memory_capacity_bytes, hugepage_resources=None, platform="linux") -> List[str]``
"""

from __future__ import annotations

import json
import math
import os
import posixpath
import re
import shlex
import struct
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ansible_collections.nodeops.numa_drift.plugins.module_utils._quantity import (
    QuantityError,
    format_binary_quantity,
    parse_quantity,
)

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the node
    yaml = None

__all__ = [
    "POLICY_NONE",
    "POLICY_STATIC",
    "POLICY_BEST_EFFORT",
    "DEFAULT_ROOT_DIR",
    "DEFAULT_EVICTION_HARD_MEMORY",
    "PYYAML_MISSING",
    "ByteQuantity",
    "MemoryReservation",
    "KubeletFlags",
    "KubeletSettings",
    "parse_reserved_memory_flag",
    "parse_reserved_memory_config",
    "parse_reserved_memory_override",
    "parse_key_value_flag",
    "parse_eviction_hard_flag",
    "parse_kubelet_flags",
    "parse_env_file",
    "parse_kubelet_config",
    "effective_reserved_memory",
    "memory_resources",
    "to_byte_quantity",
    "quantity_text",
    "split_args",
    "load_kubelet_settings",
    "policy_errors",
    "reserved_memory_config_errors",
    "eviction_hard_memory_reservation",
    "node_allocatable_reservation",
    "node_allocatable_errors",
]

POLICY_NONE = "None"
POLICY_STATIC = "Static"
POLICY_BEST_EFFORT = "BestEffort"
KNOWN_POLICIES = (POLICY_NONE, POLICY_STATIC, POLICY_BEST_EFFORT)

DEFAULT_ROOT_DIR = "/var/lib/kubelet"
DEFAULT_CONFIG_NAME = "config.yaml"
STATE_FILE_NAME = "memory_manager_state"
# Kubelet's DefaultEvictionHard; only the memory signal matters for Node Allocatable memory.
DEFAULT_EVICTION_HARD_MEMORY = "100Mi"
MEMORY_AVAILABLE = "memory.available"

KUBEADM_FLAGS_FILE = "/var/lib/kubelet/kubeadm-flags.env"
EXTRA_ARGS_FILES = ("/etc/default/kubelet", "/etc/sysconfig/kubelet")
# kubeadm's drop-in: ExecStart=... $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS (later wins).
FLAG_VARIABLES = ("KUBELET_KUBEADM_ARGS", "KUBELET_EXTRA_ARGS")

PYYAML_MISSING = (
    "PyYAML is not installed on this node: install python3-yaml or pass policy and reserved_memory explicitly"
)

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1
_INT64_MAX = 2 ** 63 - 1
_MAX_CONFIG_BYTES = 4 * 1024 * 1024
_VALUE_FLAGS = (
    "reserved-memory",
    "root-dir",
    "config",
    "config-dir",
    "memory-manager-policy",
    "system-reserved",
    "kube-reserved",
    "eviction-hard",
)
_GO_FLOAT = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
_DECIMAL_SUFFIXES = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"


# --------------------------------------------------------------------------- quantities


class ByteQuantity(int):
    """Bytes plus the ``resource.Quantity`` format kubelet keeps for printing them."""

    format = DECIMAL_SI

    def __new__(cls, value: int, quantity_format: str = DECIMAL_SI) -> "ByteQuantity":
        self = super().__new__(cls, value)
        self.format = quantity_format
        return self

    def __repr__(self) -> str:
        return "ByteQuantity(%d, %r)" % (int(self), self.format)

    @property
    def kube_text(self) -> str:
        return quantity_text(int(self), self.format)


def _decimal_mantissa(value: int) -> Tuple[int, int]:
    """``(mantissa, exponent)`` with exponent a multiple of 3 (``int64Amount.AsCanonicalBytes``)."""
    if value == 0:
        return 0, 0
    exponent = 0
    while value % 10 == 0:
        value //= 10
        exponent += 1
    while exponent % 3:
        value *= 10
        exponent -= 1
    return value, exponent


def quantity_text(value: int, quantity_format: str) -> str:
    """``resource.Quantity.String()`` for an integer number of bytes in a given format."""
    if quantity_format == BINARY_SI and abs(value) >= 1024:
        sign = "-" if value < 0 else ""
        return sign + format_binary_quantity(abs(value))
    mantissa, exponent = _decimal_mantissa(value)
    if quantity_format == DECIMAL_EXPONENT:
        return "%d%s" % (mantissa, "e%d" % exponent if exponent else "")
    # DecimalSI, and BinarySI below 1024 ("preserves the 1000 format for smaller numbers").
    if exponent in _DECIMAL_SUFFIXES:
        return "%d%s" % (mantissa, _DECIMAL_SUFFIXES[exponent])
    return "%d" % value


def _quantity_format(value: object) -> str:
    """The format ``resource.ParseQuantity`` gives a valid quantity."""
    if not isinstance(value, str):
        return DECIMAL_SI  # a JSON/YAML number
    text = value.strip()
    if text.endswith("i"):
        return BINARY_SI
    if re.search(r"[eE][+-]?[0-9]+$", text):
        return DECIMAL_EXPONENT
    return DECIMAL_SI


def to_byte_quantity(value: object, what: str) -> Tuple[Optional[ByteQuantity], Optional[str]]:
    """A non-negative quantity that fits kubelet's int64, or ``(None, problem)``."""
    if isinstance(value, float) and math.isfinite(value):
        value = repr(value)
    try:
        parsed = parse_quantity(value)
    except QuantityError as error:
        return None, "%s: %s" % (what, error)
    if parsed > _INT64_MAX:
        return None, "%s: %r does not fit in a signed 64-bit integer (kubelet cannot use it)" % (what, value)
    return ByteQuantity(parsed, _quantity_format(value)), None


def _go_quote(text: str) -> str:
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


def _is_memory_resource(name: str) -> bool:
    # corev1helper.IsHugePageResourceName || name == v1.ResourceMemory
    return name == "memory" or name.startswith("hugepages-")


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class MemoryReservation:
    """One ``reservedMemory`` entry: a NUMA node and its limits, in the order given."""

    numa_node: int
    limits: Tuple[Tuple[str, ByteQuantity], ...]


@dataclass(frozen=True)
class KubeletFlags:
    """What a kubelet command line sets; ``None`` means the flag was not given."""

    root_dir: Optional[str] = None
    config: Optional[str] = None
    config_dir: Optional[str] = None
    policy: Optional[str] = None
    reserved_memory: Optional[Tuple[MemoryReservation, ...]] = None
    system_reserved: Optional[Dict[str, str]] = None
    kube_reserved: Optional[Dict[str, str]] = None
    eviction_hard: Optional[Dict[str, str]] = None
    problems: Tuple[str, ...] = ()


@dataclass(frozen=True)
class KubeletSettings:
    """Kubelet's effective memory-manager settings and where they came from."""

    policy: str
    reserved_memory: Dict[int, Dict[str, int]]
    reserved_memory_entries: Tuple[MemoryReservation, ...]
    system_reserved: Dict[str, int]
    kube_reserved: Dict[str, int]
    eviction_hard_memory: Optional[str]
    root_dir: str
    config_path: Optional[str]
    field_sources: Dict[str, str] = field(default_factory=dict)
    sources: Tuple[str, ...] = ()
    problems: Tuple[str, ...] = ()

    @property
    def state_file(self) -> str:
        """The checkpoint's node path: ``<root dir>/memory_manager_state`` (spec 1)."""
        return posixpath.join(self.root_dir, STATE_FILE_NAME)

    def reserved_bytes(self, numa_node: int, resource: str) -> int:
        """``systemReserved`` kubelet puts in the checkpoint for a node and resource (spec 5.1)."""
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
        numa_node = int(node_text)
        if not _INT32_MIN <= numa_node <= _INT32_MAX:
            raise ValueError("NUMA node ID %s does not fit in 32 bits" % node_text)
        limits = {}
        for limit in limits_text.split(","):
            name_and_quantity = limit.split("=")
            if len(name_and_quantity) != 2:
                raise ValueError("the reserved limit has incorrect value, expected type=quantatity, got %s" % limit)
            name, quantity_text_value = name_and_quantity
            if not _is_memory_resource(name):
                raise ValueError("memory type conversion error, unknown type: %s" % _go_quote(name))
            try:
                parse_quantity(quantity_text_value, allow_negative=True)
            except QuantityError:
                raise ValueError("failed to parse the quantatity, expected quantatity, got %s" % quantity_text_value)
            quantity, problem = to_byte_quantity(quantity_text_value, "reserved memory %s on NUMA node %d" % (name, numa_node))
            if quantity is None:
                raise ValueError(problem)
            limits[name] = quantity
        entries.append(MemoryReservation(numa_node, tuple(limits.items())))
    return tuple(entries)


def _limits_from_mapping(limits: object, where: str) -> Tuple[Tuple[Tuple[str, ByteQuantity], ...], List[str]]:
    if not isinstance(limits, Mapping):
        return (), ["%s: limits must be a mapping of resource to quantity, got %s" % (where, type(limits).__name__)]
    parsed = []
    problems = []
    for name, value in limits.items():
        if not isinstance(name, str):
            problems.append("%s: resource name %r is not a string" % (where, name))
            continue
        quantity, problem = to_byte_quantity(value, "%s %s" % (where, name))
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
        return int(key)
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


def parse_key_value_flag(value: str) -> Dict[str, str]:
    """``--system-reserved memory=1Gi,cpu=500m`` (``cliflag.MapStringString``)."""
    result = {}
    for pair in value.split(","):
        pair = pair.strip()
        if not pair:
            continue
        key, equals, item = pair.partition("=")
        if not equals:
            raise ValueError("malformed pair, expect string=string")
        result[key.strip()] = item.strip()
    return result


def parse_eviction_hard_flag(value: str) -> Dict[str, str]:
    """``--eviction-hard memory.available<100Mi,nodefs.available<10%`` (``LangleSeparatedMapStringString``)."""
    result = {}
    for pair in value.split(","):
        if not pair:
            continue
        key, angle, item = pair.partition("<")
        if not angle:
            raise ValueError("malformed pair, expect string<string")
        result[key.strip()] = item.strip()
    return result


def _flag_name_and_value(args: Sequence[str], index: int) -> Tuple[Optional[str], Optional[str], int, Optional[str]]:
    """``(name, value, next index, problem)`` for the flag at ``args[index]`` (pflag long-flag rules)."""
    arg = args[index]
    name, equals, value = arg[2:].partition("=")
    if name not in _VALUE_FLAGS:
        return None, None, index + 1, None
    if equals:
        return name, value, index + 1, None
    if index + 1 >= len(args):
        return None, None, index + 1, "flag needs an argument: --%s" % name
    return name, args[index + 1], index + 2, None


def parse_kubelet_flags(args: Sequence[str]) -> KubeletFlags:
    """The memory-related flags of a kubelet command line; other flags are ignored.

    Scalar flags: the last one wins. ``--reserved-memory``: every occurrence appends.
    Map flags: the first occurrence replaces the config file's map, later ones add keys.
    """
    values: Dict[str, Any] = {}
    problems = []
    index = 0
    while index < len(args):
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
            problems.append("invalid argument %s for %s flag: %s" % (_go_quote(value), _go_quote("--" + name), error))
    return KubeletFlags(
        root_dir=values.get("root-dir"),
        config=values.get("config"),
        config_dir=values.get("config-dir"),
        policy=values.get("memory-manager-policy"),
        reserved_memory=values.get("reserved-memory"),
        system_reserved=values.get("system-reserved"),
        kube_reserved=values.get("kube-reserved"),
        eviction_hard=values.get("eviction-hard"),
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
    else:
        values[name] = value


def split_args(text: str) -> Tuple[List[str], List[str]]:
    """Split a command line the way a shell would; on unbalanced quotes fall back to whitespace."""
    try:
        return shlex.split(text), []
    except ValueError as error:
        return text.split(), ["cannot split kubelet flags %r: %s" % (text[:80], error)]


def parse_env_file(text: str) -> Dict[str, str]:
    """``KEY=VALUE`` lines of a systemd ``EnvironmentFile`` (quotes removed, comments skipped)."""
    variables = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        key, equals, raw = stripped.partition("=")
        key = key.strip()
        if not equals or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
            continue
        try:
            variables[key] = " ".join(shlex.split(raw))
        except ValueError:
            variables[key] = raw.strip().strip("\"'")
    return variables


def parse_kubelet_config(text: str) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    """A KubeletConfiguration document (JSON, else YAML through PyYAML) as a mapping, or problems."""
    text = text.lstrip("\ufeff")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        if yaml is None:
            return None, [PYYAML_MISSING]
        try:
            document = yaml.safe_load(text)
        except (yaml.YAMLError, ValueError, RecursionError) as error:
            return None, ["not valid YAML: %s" % " ".join(str(error).split())[:300]]
    if document is None:
        return {}, []
    if not isinstance(document, dict):
        return None, ["the document is a %s, not a KubeletConfiguration mapping" % type(document).__name__]
    kind = document.get("kind")
    if kind is not None and kind != "KubeletConfiguration":
        return None, ["the document is a %r, not a KubeletConfiguration" % (kind,)]
    return document, []


def effective_reserved_memory(entries: Iterable[MemoryReservation]) -> Dict[int, Dict[str, int]]:
    """Per node and resource bytes; a later entry overwrites an earlier one (spec 5.5 item 4)."""
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
        if not isinstance(name, str) or not _is_memory_resource(name):
            continue
        if not isinstance(item, str):
            problems.append("%s.%s: kubelet expects a string here, got %r" % (where, name, item))
        quantity, problem = to_byte_quantity(item, "%s.%s" % (where, name))
        if quantity is None:
            problems.append(problem)
            continue
        result[name] = quantity
    return result, problems


def _eviction_memory(value: object, where: str) -> Tuple[Optional[str], List[str]]:
    """``memory.available`` of an ``evictionHard`` map; ``None`` when the map does not set it."""
    if not isinstance(value, Mapping):
        return None, ["%s must be a mapping of signal to threshold, got %s" % (where, type(value).__name__)]
    threshold = value.get(MEMORY_AVAILABLE)
    if threshold is None:
        return None, []
    if not isinstance(threshold, str):
        return str(threshold), ["%s.%s: kubelet expects a string here, got %r" % (where, MEMORY_AVAILABLE, threshold)]
    return threshold.strip(), []


# --------------------------------------------------------------------------- the loader


def _under_root(root: str, node_path: str) -> str:
    return os.path.join(root or "/", node_path.lstrip("/"))


def _read_text(path: str) -> Tuple[Optional[str], Optional[str], bool]:
    """``(text, problem, exists)``; never raises."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None, "%s does not exist" % path, False
    except OSError as error:
        return None, "cannot read %s: %s" % (path, error.strerror or error), True
    if len(data) > _MAX_CONFIG_BYTES:
        return None, "%s is larger than %d bytes" % (path, _MAX_CONFIG_BYTES), True
    try:
        return data.decode("utf-8"), None, True
    except UnicodeDecodeError as error:
        return None, "%s is not UTF-8: %s" % (path, error), True


def _flags_from_env_files(root: str) -> Tuple[List[str], List[str], List[str]]:
    """Kubelet args from kubeadm's and the distribution's environment files: (args, sources, problems)."""
    variables: Dict[str, str] = {}
    sources = []
    problems = []
    for node_path in (KUBEADM_FLAGS_FILE,) + EXTRA_ARGS_FILES:
        text, problem, exists = _read_text(_under_root(root, node_path))
        if text is None:
            if exists:
                problems.append(problem)
            continue
        found = parse_env_file(text)
        names = [name for name in FLAG_VARIABLES if name in found]
        if names:
            sources.append("flags: %s (%s)" % (node_path, ", ".join(names)))
        variables.update((name, found[name]) for name in names)
    args = []
    for name in FLAG_VARIABLES:
        args.extend(variables.get(name, "").split())
    return args, sources, problems


def _explicit_flag_args(flags: object) -> Tuple[List[str], List[str]]:
    if isinstance(flags, str):
        return split_args(flags)
    if isinstance(flags, (list, tuple)):
        args = [arg for arg in flags if isinstance(arg, str)]
        problems = ["kubelet flag %r is not a string" % (arg,) for arg in flags if not isinstance(arg, str)]
        return args, problems
    return [], ["flags must be a list of arguments or a string, got %s" % type(flags).__name__]


def _load_config_document(
    root: str, config_path: str, explicit: bool
) -> Tuple[Optional[Dict[str, Any]], List[str], List[str]]:
    text, problem, exists = _read_text(_under_root(root, config_path))
    if text is None:
        if not exists and not explicit:
            return None, ["config: %s not found (kubelet defaults apply)" % config_path], []
        return None, ["config: %s not read" % config_path], ["kubelet config: %s" % problem]
    document, problems = parse_kubelet_config(text)
    return document, ["config: %s" % config_path], ["kubelet config %s: %s" % (config_path, item) for item in problems]


@dataclass
class _Builder:
    """Mutable scratch state of ``load_kubelet_settings``; frozen into ``KubeletSettings`` at the end."""

    policy: str = POLICY_NONE
    entries: Tuple[MemoryReservation, ...] = ()
    system_reserved: Dict[str, ByteQuantity] = field(default_factory=dict)
    kube_reserved: Dict[str, ByteQuantity] = field(default_factory=dict)
    eviction_hard_memory: Optional[str] = DEFAULT_EVICTION_HARD_MEMORY
    field_sources: Dict[str, str] = field(
        default_factory=lambda: {
            "policy": "default",
            "reserved_memory": "default",
            "system_reserved": "default",
            "kube_reserved": "default",
            "eviction_hard": "default",
        }
    )
    problems: List[str] = field(default_factory=list)


def _apply_config(builder: _Builder, document: Mapping[str, Any]) -> None:
    problems = builder.problems
    if "memoryManagerPolicy" in document and document["memoryManagerPolicy"] is not None:
        policy = document["memoryManagerPolicy"]
        if isinstance(policy, str):
            builder.policy = policy or POLICY_NONE  # v1beta1 defaulting: "" -> None
            builder.field_sources["policy"] = "config"
        else:
            problems.append("kubelet config: memoryManagerPolicy must be a string, got %r" % (policy,))
    if document.get("reservedMemory") is not None:
        entries, entry_problems = parse_reserved_memory_config(document["reservedMemory"])
        problems.extend("kubelet config: %s" % item for item in entry_problems)
        builder.entries = entries
        builder.field_sources["reserved_memory"] = "config"
    for key, attribute in (("systemReserved", "system_reserved"), ("kubeReserved", "kube_reserved")):
        resources, resource_problems = memory_resources(document.get(key), key)
        problems.extend("kubelet config: %s" % item for item in resource_problems)
        if resources is not None:
            setattr(builder, attribute, resources)
            builder.field_sources[attribute] = "config"
    eviction = document.get("evictionHard")
    if eviction is not None:
        threshold, eviction_problems = _eviction_memory(eviction, "evictionHard")
        problems.extend("kubelet config: %s" % item for item in eviction_problems)
        # A set evictionHard replaces kubelet's defaults, unless mergeDefaultEvictionSettings.
        if threshold is None and document.get("mergeDefaultEvictionSettings") is True:
            threshold = DEFAULT_EVICTION_HARD_MEMORY
        builder.eviction_hard_memory = threshold
        builder.field_sources["eviction_hard"] = "config"


def _apply_flags(builder: _Builder, flags: KubeletFlags) -> None:
    problems = builder.problems
    problems.extend("kubelet flags: %s" % item for item in flags.problems)
    if flags.policy is not None:
        builder.policy = flags.policy
        builder.field_sources["policy"] = "flags"
    if flags.reserved_memory is not None:
        builder.entries = flags.reserved_memory
        builder.field_sources["reserved_memory"] = "flags"
    for attribute, flag in (("system_reserved", "system-reserved"), ("kube_reserved", "kube-reserved")):
        value = getattr(flags, attribute)
        if value is not None:
            resources, resource_problems = memory_resources(value, "--" + flag)
            problems.extend("kubelet flags: %s" % item for item in resource_problems)
            setattr(builder, attribute, resources or {})
            builder.field_sources[attribute] = "flags"
    if flags.eviction_hard is not None:
        builder.eviction_hard_memory = flags.eviction_hard.get(MEMORY_AVAILABLE)
        builder.field_sources["eviction_hard"] = "flags"
    if flags.config_dir:
        problems.append(
            "kubelet flags: --config-dir %s is not read; pass policy and reserved_memory explicitly if its "
            "drop-ins set them" % flags.config_dir
        )


def _apply_overrides(builder: _Builder, policy: object, reserved_memory: object) -> List[str]:
    sources = []
    if policy is not None:
        if isinstance(policy, str):
            builder.policy = policy
            builder.field_sources["policy"] = "override"
            sources.append("policy: explicit override")
        else:
            builder.problems.append("policy override must be a string, got %r" % (policy,))
    if reserved_memory is not None:
        entries, problems = parse_reserved_memory_override(reserved_memory)
        builder.problems.extend(problems)
        builder.entries = entries
        builder.field_sources["reserved_memory"] = "override"
        sources.append("reserved_memory: explicit override")
    return sources


def load_kubelet_settings(
    root: str = "/",
    kubelet_root_dir: Optional[str] = None,
    config_path: Optional[str] = None,
    flags: Union[None, str, Sequence[str]] = None,
    policy: Optional[str] = None,
    reserved_memory: Union[None, Mapping[Any, Any], Sequence[Any]] = None,
    read_env_files: Optional[bool] = None,
) -> KubeletSettings:
    """Kubelet's effective memory-manager settings on the node under ``root``.

    ``kubelet_root_dir``/``config_path``: node paths chosen by the operator; ``None`` means
    "from the flags, else kubelet's default". ``flags``: the kubelet command line; when
    given, the environment files are not read unless ``read_env_files`` is true (so flags
    taken from the running process are not applied twice).
    """
    root = os.fspath(root) or "/"
    sources: List[str] = []
    flag_problems: List[str] = []
    args: List[str] = []
    if read_env_files if read_env_files is not None else flags is None:
        args, sources, flag_problems = _flags_from_env_files(root)
    if flags is not None:
        explicit_args, explicit_problems = _explicit_flag_args(flags)
        args.extend(explicit_args)
        flag_problems.extend("kubelet flags: %s" % item for item in explicit_problems)
        sources.append("flags: given explicitly")
    parsed_flags = parse_kubelet_flags(args)

    builder = _Builder()
    builder.problems.extend(flag_problems)
    root_dir = kubelet_root_dir or parsed_flags.root_dir or DEFAULT_ROOT_DIR
    builder.field_sources["root_dir"] = "option" if kubelet_root_dir else "flags" if parsed_flags.root_dir else "default"
    explicit_config = config_path or parsed_flags.config
    effective_config = explicit_config or posixpath.join(root_dir, DEFAULT_CONFIG_NAME)
    builder.field_sources["config_path"] = "option" if config_path else "flags" if parsed_flags.config else "default"

    document, config_sources, config_problems = _load_config_document(root, effective_config, bool(explicit_config))
    sources.extend(config_sources)
    builder.problems.extend(config_problems)
    if document:
        _apply_config(builder, document)
    _apply_flags(builder, parsed_flags)
    sources.extend(_apply_overrides(builder, policy, reserved_memory))

    return KubeletSettings(
        policy=builder.policy,
        reserved_memory=effective_reserved_memory(builder.entries),
        reserved_memory_entries=builder.entries,
        system_reserved=dict(builder.system_reserved),
        kube_reserved=dict(builder.kube_reserved),
        eviction_hard_memory=builder.eviction_hard_memory,
        root_dir=root_dir,
        config_path=effective_config,
        field_sources=dict(builder.field_sources),
        sources=tuple(sources),
        problems=tuple(builder.problems),
    )


# --------------------------------------------------------------------------- kubelet's checks


def policy_errors(policy: str, platform: str = "linux") -> List[str]:
    """Memory manager construction: policy names are case-sensitive (spec 5.5, first table)."""
    if policy == POLICY_NONE:
        return []
    if policy == POLICY_STATIC:
        return ["policy %s is not available on Windows" % _go_quote(policy)] if platform == "windows" else []
    if policy == POLICY_BEST_EFFORT:
        if platform == "windows":
            return []
        return ["policy %s is not available for platform %s" % (_go_quote(policy), _go_quote(platform))]
    return ["unknown policy: %s" % _go_quote(policy)]


def reserved_memory_config_errors(entries: Sequence[MemoryReservation]) -> List[str]:
    """Kubelet's config validation of ``reservedMemory`` (``validateReservedMemoryConfiguration``)."""
    errors = []
    seen: Dict[int, set] = {}
    for entry in entries:
        node_seen = seen.setdefault(entry.numa_node, set())
        for name, quantity in entry.limits:
            if not _is_memory_resource(name):
                errors.append(
                    "invalid configuration: the limit type %s for NUMA node %d is not supported, only "
                    "[memory hugepages-<HugePageSize>] is accepted" % (_go_quote(name), entry.numa_node)
                )
            if int(quantity) == 0:
                errors.append(
                    "invalid configuration: reserved memory may not be zero for NUMA node %d and resource %s"
                    % (entry.numa_node, _go_quote(name))
                )
            if name in node_seen:
                errors.append(
                    "invalid configuration: the reserved memory has a duplicate value for NUMA node %d and resource %s"
                    % (entry.numa_node, _go_quote(name))
                )
            node_seen.add(name)
    return errors


def _float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def eviction_hard_memory_reservation(
    threshold: Optional[str], memory_capacity_bytes: Optional[int]
) -> Tuple[Optional[ByteQuantity], Optional[str]]:
    """Bytes a ``memory.available`` hard threshold reserves (kubelet ``hardEvictionReservation``).

    ``(None, None)``: no threshold; ``(None, problem)``: kubelet would reject it or it
    cannot be resolved. Percentages are ``float32`` in kubelet and resolve against the
    node's memory capacity (``/proc/meminfo`` ``MemTotal``).
    """
    if threshold is None:
        return None, None
    value = threshold.strip()
    if value.endswith("%"):
        if value in ("0%", "100%"):
            return None, None  # kubelet ignores 0% and 100%
        number = value.rstrip("%")
        if not _GO_FLOAT.match(number):
            return None, "eviction threshold %s: strconv.ParseFloat: parsing %s: invalid syntax" % (
                MEMORY_AVAILABLE,
                _go_quote(number),
            )
        try:
            percentage = _float32(_float32(float(number)) / 100)
        except OverflowError:
            return None, "eviction percentage threshold %s must be <= 100%%: %s" % (MEMORY_AVAILABLE, value)
        if percentage < 0:
            return None, "eviction percentage threshold %s must be >= 0%%: %s" % (MEMORY_AVAILABLE, value)
        if percentage > 1:
            return None, "eviction percentage threshold %s must be <= 100%%: %s" % (MEMORY_AVAILABLE, value)
        if memory_capacity_bytes is None:
            return None, "cannot resolve evictionHard %s %s without the node's memory capacity" % (
                MEMORY_AVAILABLE,
                value,
            )
        return ByteQuantity(int(float(memory_capacity_bytes) * percentage), BINARY_SI), None
    try:
        parsed = parse_quantity(value, allow_negative=True)
    except QuantityError as error:
        return None, "eviction threshold %s: %s" % (MEMORY_AVAILABLE, error)
    if parsed <= 0:
        return None, "eviction threshold %s must be positive: %s" % (MEMORY_AVAILABLE, value)
    return ByteQuantity(parsed, _quantity_format(value)), None


def _sum_keeping_format(quantities: Iterable[Optional[ByteQuantity]]) -> ByteQuantity:
    """``Quantity.Add`` chain from a zero: the format is the first non-zero addend's."""
    total = 0
    quantity_format = DECIMAL_SI
    for quantity in quantities:
        if quantity is None:
            continue
        if total == 0:
            quantity_format = quantity.format
        total += int(quantity)
    return ByteQuantity(total, quantity_format)


def node_allocatable_reservation(
    settings: KubeletSettings,
    memory_capacity_bytes: Optional[int],
    hugepage_resources: Optional[Iterable[str]] = None,
) -> Tuple[Dict[str, ByteQuantity], List[str]]:
    """Kubelet's ``GetNodeAllocatableReservation`` for memory resources (spec 5.5 item 3).

    Only resources in the node's capacity count: ``memory`` and the machine's hugepage sizes
    (``hugepage_resources``; ``None`` = every ``hugepages-*`` named in the settings). Zero
    reservations are omitted, as kubelet omits them.
    """
    eviction, problem = eviction_hard_memory_reservation(settings.eviction_hard_memory, memory_capacity_bytes)
    problems = [problem] if problem else []
    if hugepage_resources is None:
        hugepage_resources = [
            name for name in set(settings.system_reserved) | set(settings.kube_reserved) if name.startswith("hugepages-")
        ]
    result = {}
    for resource in ["memory"] + sorted(set(hugepage_resources)):
        total = _sum_keeping_format(
            [
                settings.system_reserved.get(resource),
                settings.kube_reserved.get(resource),
                eviction if resource == "memory" else None,
            ]
        )
        if int(total):
            result[resource] = total
    return result, problems


def _reserved_memory_sums(entries: Sequence[MemoryReservation]) -> Dict[str, ByteQuantity]:
    """Sum per resource over every entry, duplicates included (``validateReservedMemory``)."""
    sums: Dict[str, ByteQuantity] = {}
    for entry in entries:
        for name, quantity in entry.limits:
            if name in sums:
                # q.Add(accumulated): a zero addend takes the accumulated format.
                quantity_format = quantity.format if int(quantity) else sums[name].format
                sums[name] = ByteQuantity(int(quantity) + int(sums[name]), quantity_format)
            else:
                sums[name] = quantity
    return sums


def node_allocatable_errors(
    settings: KubeletSettings,
    numa_node_ids: Iterable[int],
    memory_capacity_bytes: Optional[int],
    hugepage_resources: Optional[Iterable[str]] = None,
    platform: str = "linux",
) -> List[str]:
    """Every error kubelet would raise at start about the memory manager configuration.

    Kubelet stops at the first; this lists them all, each in kubelet's words: config
    validation of ``reservedMemory``, the policy name, then for ``Static`` the NUMA node
    references, the Node Allocatable equality per resource (spec 5.5) and a non-zero sum of
    reserved ``memory``. Policy ``None`` validates nothing beyond the config.
    """
    errors = reserved_memory_config_errors(settings.reserved_memory_entries)
    name_errors = policy_errors(settings.policy, platform)
    if name_errors or settings.policy == POLICY_NONE:
        return errors + name_errors

    known_nodes = set(numa_node_ids)
    for node in dict.fromkeys(entry.numa_node for entry in settings.reserved_memory_entries):
        if node not in known_nodes:
            errors.append(
                "the reserved memory configuration references a NUMA node %d that does not exist on this machine" % node
            )

    allocatable, problems = node_allocatable_reservation(settings, memory_capacity_bytes, hugepage_resources)
    errors.extend(problems)
    reserved_sums = _reserved_memory_sums(settings.reserved_memory_entries)
    for resource in sorted(set(reserved_sums) | {name for name in allocatable if _is_memory_resource(name)}):
        reserved = reserved_sums.get(resource, ByteQuantity(0))
        expected = allocatable.get(resource, ByteQuantity(0))
        if problems and resource == "memory":
            continue  # the eviction part is unknown; the problem above says why
        if int(reserved) != int(expected):
            errors.append(
                "the total amount %s of type %s is not equal to the value %s determined by Node Allocatable feature"
                % (_go_quote(reserved.kube_text), _go_quote(resource), _go_quote(expected.kube_text))
            )

    # policy_static.go NewPolicyStatic: per-node map after overwrites, memory only.
    if sum(limits.get("memory", 0) for limits in settings.reserved_memory.values()) <= 0:
        errors.append("[memorymanager] you should specify the system reserved memory")
    return errors
