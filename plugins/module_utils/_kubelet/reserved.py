# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's reserved memory values: ``--reserved-memory``, ``reservedMemory``, an operator's override,
the ``systemReserved``-style maps and ``evictionHard``'s ``memory.available``.

Pure functions, stdlib only, Python >= 3.9. Malformed values become problem strings (the flag's parser
raises ``ValueError`` in kubelet's words, as pflag reports it).
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.kinds import kind_of
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import (
    ByteQuantity,
    QuantityError,
    parse_quantity,
    to_byte_quantity,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import bounded_int
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import (
    MEMORY_AVAILABLE,
    RESERVABLE_RESOURCES,
    MemoryReservation,
    go_quote,
    is_memory_resource,
)

__all__ = [
    "parse_reserved_memory_flag",
    "parse_reserved_memory_config",
    "parse_reserved_memory_override",
    "effective_reserved_memory",
    "memory_resources",
    "eviction_memory",
]

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


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
        return (), ["%s: limits must be a mapping of resource to quantity, got %s" % (where, kind_of(limits))]
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
        return (), ["reservedMemory must be a list of {numaNode, limits}, got %s" % kind_of(value)]
    entries = []
    problems = []
    for index, item in enumerate(value):
        where = "reservedMemory[%d]" % index
        if not isinstance(item, Mapping):
            problems.append("%s must be a mapping with numaNode and limits, got %s" % (where, kind_of(item)))
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
            % kind_of(value)
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
        return None, ["%s must be a mapping of resource to quantity, got %s" % (where, kind_of(value))]
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
        return None, ["%s must be a mapping of signal to threshold, got %s" % (where, kind_of(value))]
    threshold = value.get(MEMORY_AVAILABLE)
    if threshold is None:
        return None, []
    if not isinstance(threshold, str):
        return str(threshold), ["%s.%s: kubelet expects a string here, got %r" % (where, MEMORY_AVAILABLE, threshold)]
    return threshold.strip(), []
