# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's Node Allocatable reservation for memory resources, as kubelet computes it.

Pure functions over :class:`_kubelet.KubeletSettings`: the bytes a ``memory.available`` hard eviction
threshold reserves (kubelet ``hardEvictionReservation``) and the reservation per memory resource
(``GetNodeAllocatableReservation``: system + kube reserved + that threshold), each sum keeping the
format kubelet prints it in. The checks that compare it with the reserved memory are
:mod:`_kubelet.checks`. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import re
import struct
from typing import Dict, Iterable, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import (
    MEMORY_AVAILABLE,
    KubeletSettings,
    go_quote,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import (
    BINARY_SI,
    DECIMAL_SI,
    ByteQuantity,
    QuantityError,
    parse_quantity,
    quantity_format,
)

__all__ = [
    "eviction_hard_memory_reservation",
    "node_allocatable_reservation",
]

_GO_FLOAT = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


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
                go_quote(number),
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
    return ByteQuantity(parsed, quantity_format(value)), None


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
    """Kubelet's ``GetNodeAllocatableReservation`` for memory resources (pkg/kubelet/cm/node_container_manager_linux.go).

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
