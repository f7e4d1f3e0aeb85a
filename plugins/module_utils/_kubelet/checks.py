# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's start-up checks of the memory manager configuration, each in kubelet's words.

Pure functions over :class:`_kubelet.KubeletSettings` (kubelet's memorymanager ``NewManager``,
``validateReservedMemory``, ``getSystemReservedMemory``): the policy name, the
``reservedMemory`` config validation, and the equality kubelet requires between the reserved
memory and Node Allocatable (whose reservation :mod:`_kubelet.allocatable` computes). Stdlib only,
Python >= 3.9.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import (
    POLICY_BEST_EFFORT,
    POLICY_NONE,
    POLICY_STATIC,
    KubeletSettings,
    MemoryReservation,
    go_quote,
    is_memory_resource,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.allocatable import node_allocatable_reservation
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import (
    BINARY_SI,
    ByteQuantity,
    converts_to_int64,
)

__all__ = [
    "policy_errors",
    "reserved_memory_config_errors",
    "node_allocatable_errors",
    "configuration_rejections",
    "CONFIG_FIELD_NAMES",
]

# KubeletSettings field -> kubelet's configuration field, for messages naming what to fix.
CONFIG_FIELD_NAMES = {
    "policy": "memoryManagerPolicy",
    "reserved_memory": "reservedMemory",
    "system_reserved": "systemReserved",
    "kube_reserved": "kubeReserved",
    "eviction_hard": "evictionHard",
}
_ALLOCATABLE_FIELDS = ("reserved_memory", "system_reserved", "kube_reserved", "eviction_hard")
CONVERT_ERROR = "could not covert a variable of type Quantity to int64"  # kubelet's spelling


def policy_errors(policy: str, platform: str = "linux") -> List[str]:
    """Memory manager construction: policy names are case-sensitive (memorymanager ``NewManager``)."""
    if policy == POLICY_NONE:
        return []
    if policy == POLICY_STATIC:
        return ["policy %s is not available on Windows" % go_quote(policy)] if platform == "windows" else []
    if policy == POLICY_BEST_EFFORT:
        if platform == "windows":
            return []
        return ["policy %s is not available for platform %s" % (go_quote(policy), go_quote(platform))]
    return ["unknown policy: %s" % go_quote(policy)]


def reserved_memory_config_errors(entries: Sequence[MemoryReservation]) -> List[str]:
    """Kubelet's config validation of ``reservedMemory`` (``validateReservedMemoryConfiguration``)."""
    errors = []
    seen: Dict[int, set] = {}
    for entry in entries:
        node_seen = seen.setdefault(entry.numa_node, set())
        for name, quantity in entry.limits:
            if not is_memory_resource(name):
                errors.append(
                    "invalid configuration: the limit type %s for NUMA node %d is not supported, only "
                    "[memory hugepages-<HugePageSize>] is accepted" % (go_quote(name), entry.numa_node)
                )
            if int(quantity) == 0:
                errors.append(
                    "invalid configuration: reserved memory may not be zero for NUMA node %d and resource %s"
                    % (entry.numa_node, go_quote(name))
                )
            if name in node_seen:
                errors.append(
                    "invalid configuration: the reserved memory has a duplicate value for NUMA node %d and resource %s"
                    % (entry.numa_node, go_quote(name))
                )
            node_seen.add(name)
    return errors


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

    The messages of :func:`configuration_rejections`, without the fields they come from.
    """
    return [message for message, _fields in configuration_rejections(
        settings, numa_node_ids, memory_capacity_bytes, hugepage_resources, platform
    )]


def _unconvertible(entries: Sequence[MemoryReservation]) -> List[Tuple[str, Tuple[str, ...]]]:
    """``convertReserved``: every limit goes through ``Quantity.AsInt64``; kubelet fails on the first that does not."""
    found = []
    for entry in entries:
        for name, quantity in entry.limits:
            text = getattr(quantity, "text", None)
            if text is not None and not converts_to_int64(text):
                found.append((
                    "%s (reservedMemory NUMA node %d %s: %s is not a whole number kubelet can keep as an int64; "
                    "write it without a fraction, e.g. in Mi or Ki)" % (CONVERT_ERROR, entry.numa_node, name, go_quote(text)),
                    ("reserved_memory",),
                ))
    return found


def _over_capacity(settings: KubeletSettings, memory_capacity_bytes: Optional[int]) -> List[Tuple[str, Tuple[str, ...]]]:
    """``validateNodeAllocatable`` (container manager start, any policy): reservation <= capacity.

    Only ``memory`` can be over: hugepages cannot be reserved in ``systemReserved``/``kubeReserved``.
    The capacity prints as cadvisor's ``MemoryCapacity`` quantity (``BinarySI``).
    """
    if memory_capacity_bytes is None:
        return []
    allocatable, problems = node_allocatable_reservation(settings, memory_capacity_bytes, ())
    reservation = allocatable.get("memory")
    if problems or reservation is None or int(reservation) <= memory_capacity_bytes:
        return []
    capacity = ByteQuantity(memory_capacity_bytes, BINARY_SI)
    return [(
        "invalid Node Allocatable configuration. Resource %s has a reservation of %s but capacity of %s. "
        "Expected capacity >= reservation." % (go_quote("memory"), reservation.kube_text, capacity.kube_text),
        ("system_reserved", "kube_reserved", "eviction_hard"),
    )]


def configuration_rejections(
    settings: KubeletSettings,
    numa_node_ids: Iterable[int],
    memory_capacity_bytes: Optional[int],
    hugepage_resources: Optional[Iterable[str]] = None,
    platform: str = "linux",
) -> List[Tuple[str, Tuple[str, ...]]]:
    """``(error, settings fields it comes from)`` for every error kubelet would raise at start.

    Kubelet stops at the first; this lists them all, each in kubelet's words: config
    validation of ``reservedMemory`` (``validateReservedMemoryConfiguration``), the policy name
    (``NewManager``), then for ``Static`` the NUMA node references and the Node Allocatable
    equality per resource (``validateReservedMemory``), the int64 conversion
    (``convertReserved``) and a non-zero sum of reserved ``memory`` (``NewPolicyStatic``).
    Policy ``None`` validates nothing beyond the config. None of these reads the checkpoint.
    """
    rejections = [(error, ("reserved_memory",)) for error in reserved_memory_config_errors(settings.reserved_memory_entries)]
    rejections.extend(_over_capacity(settings, memory_capacity_bytes))
    name_errors = policy_errors(settings.policy, platform)
    if name_errors or settings.policy == POLICY_NONE:
        return rejections + [(error, ("policy",)) for error in name_errors]

    known_nodes = set(numa_node_ids)
    for node in dict.fromkeys(entry.numa_node for entry in settings.reserved_memory_entries):
        if node not in known_nodes:
            rejections.append((
                "the reserved memory configuration references a NUMA node %d that does not exist on this machine" % node,
                ("reserved_memory",),
            ))

    allocatable, problems = node_allocatable_reservation(settings, memory_capacity_bytes, hugepage_resources)
    rejections.extend((problem, ("eviction_hard",)) for problem in problems)
    reserved_sums = _reserved_memory_sums(settings.reserved_memory_entries)
    for resource in sorted(set(reserved_sums) | {name for name in allocatable if is_memory_resource(name)}):
        reserved = reserved_sums.get(resource, ByteQuantity(0))
        expected = allocatable.get(resource, ByteQuantity(0))
        if problems and resource == "memory":
            continue  # the eviction part is unknown; the problem above says why
        if int(reserved) != int(expected):
            rejections.append((
                "the total amount %s of type %s is not equal to the value %s determined by Node Allocatable feature"
                % (go_quote(reserved.kube_text), go_quote(resource), go_quote(expected.kube_text)),
                _ALLOCATABLE_FIELDS,
            ))
    rejections.extend(_unconvertible(settings.reserved_memory_entries))

    # policy_static.go NewPolicyStatic: per-node map after overwrites, memory only.
    if sum(limits.get("memory", 0) for limits in settings.reserved_memory.values()) <= 0:
        rejections.append(("[memorymanager] you should specify the system reserved memory", ("reserved_memory",)))
    return rejections
