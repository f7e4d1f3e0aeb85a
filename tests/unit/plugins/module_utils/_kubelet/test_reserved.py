# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/reserved.py: --reserved-memory, reservedMemory, an operator's override, per-node bytes."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import MemoryReservation
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.reserved import (
    effective_reserved_memory,
    parse_reserved_memory_config,
    parse_reserved_memory_flag,
    parse_reserved_memory_override,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import ByteQuantity

MiB = 1024 * 1024
GiB = 1024 * MiB
GIB_BYTES = 1024 ** 3


def test_reserved_memory_flag():
    entries = parse_reserved_memory_flag("0:memory=1Gi,hugepages-1Gi=2Gi;1:memory=2Gi")
    assert entries == (
        MemoryReservation(0, (("memory", GiB), ("hugepages-1Gi", 2 * GiB))),
        MemoryReservation(1, (("memory", 2 * GiB),)),
    )
    assert entries[0].limits[0][1].format == "BinarySI"


@pytest.mark.parametrize(
    "value, message",
    [
        (
            "0memory=1Gi",
            "the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got 0memory=1Gi",
        ),
        (
            "0:memory=1Gi;",
            "the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got ",
        ),
        ("x:memory=1Gi", "failed to convert the NUMA node ID, exptected integer, got x"),
        ("0:memory", "the reserved limit has incorrect value, expected type=quantatity, got memory"),
        ("0:cpu=1", 'memory type conversion error, unknown type: "cpu"'),
        ("0:memory=lots", "failed to parse the quantatity, expected quantatity, got lots"),
    ],
)
def test_reserved_memory_flag_errors_use_kubelet_text(value, message):
    with pytest.raises(ValueError) as error:
        parse_reserved_memory_flag(value)
    assert str(error.value) == message


def test_reserved_memory_keeps_negative_values_and_refuses_oversized_ones():
    # Kubelet's ReservedMemoryVar.Set and its config validation let a negative quantity through (only zero is
    # refused): validateReservedMemory sums it as it is, convertReserved keeps it as an int64.
    (entry,) = parse_reserved_memory_flag("0:memory=-1Gi")
    assert entry.limits == (("memory", -GIB_BYTES),)
    entries, problems = parse_reserved_memory_config([{"numaNode": 1, "limits": {"memory": "-512Mi"}}])
    assert problems == [] and int(entries[0].limits[0][1]) == -512 * 1024 * 1024
    with pytest.raises(ValueError, match="signed 64-bit"):
        parse_reserved_memory_flag("0:memory=8Ei")


def test_reserved_memory_config_list():
    entries, problems = parse_reserved_memory_config(
        [{"numaNode": 0, "limits": {"memory": "1Gi", "hugepages-2Mi": 1073741824}}, {"numaNode": 1, "limits": {}}]
    )
    assert problems == []
    assert entries == (MemoryReservation(0, (("memory", GiB), ("hugepages-2Mi", GiB))), MemoryReservation(1, ()))
    assert entries[0].limits[1][1].format == "DecimalSI"  # a JSON number


@pytest.mark.parametrize(
    "value, fragment",
    [
        ("0:memory=1Gi", "reservedMemory must be a list"),
        ([["numaNode", 0]], "reservedMemory[0] must be a mapping"),
        ([{"numaNode": "0", "limits": {"memory": "1Gi"}}], "numaNode must be an integer, got '0'"),
        ([{"numaNode": True, "limits": {"memory": "1Gi"}}], "numaNode must be an integer"),
        ([{"numaNode": 2 ** 40, "limits": {"memory": "1Gi"}}], "does not fit in 32 bits"),
        ([{"numaNode": 0, "limits": ["memory"]}], "limits must be a mapping"),
        ([{"numaNode": 0, "limits": {"memory": "-9Ei"}}], "signed 64-bit"),
        ([{"numaNode": 0, "limits": {"memory": "99999999999Ei"}}], "does not fit in 64 bits"),
        ([{"numaNode": 0, "limits": {"memory": 2 ** 63}}], "signed 64-bit"),
        ([{"numaNode": 0, "limits": {"memory": True}}], "boolean"),
        ([{"numaNode": 0, "limits": {"memory": float("inf")}}], "got a number"),
        ([{"numaNode": 0, "limits": {"memory": "1 Gi"}}], "is not a Kubernetes quantity"),
    ],
)
def test_reserved_memory_config_hostile_values_are_problems(value, fragment):
    entries, problems = parse_reserved_memory_config(value)
    assert len(problems) == 1 and fragment in problems[0]
    assert all(-(2 ** 63) <= quantity < 2 ** 63 for entry in entries for _name, quantity in entry.limits)


def test_reserved_memory_override_dict_with_string_keys():
    entries, problems = parse_reserved_memory_override({"1": {"memory": "2Gi"}, 0: {"memory": 1073741824}})
    assert problems == []
    assert [(entry.numa_node, dict(entry.limits)) for entry in entries] == [(0, {"memory": GiB}), (1, {"memory": 2 * GiB})]


def test_reserved_memory_override_rejects_bad_shapes():
    assert parse_reserved_memory_override("0:memory=1Gi")[1][0].startswith("reserved_memory must be a mapping")
    entries, problems = parse_reserved_memory_override({"zero": {"memory": "1Gi"}, 1: {"memory": "1Gi"}})
    assert [entry.numa_node for entry in entries] == [1]
    assert problems == ["reserved_memory: 'zero' is not a NUMA node number"]


def test_later_reservation_overwrites_earlier_per_node():
    entries = (
        MemoryReservation(0, (("memory", ByteQuantity(GiB)),)),
        MemoryReservation(0, (("memory", ByteQuantity(2 * GiB)), ("hugepages-1Gi", ByteQuantity(GiB)))),
    )
    assert effective_reserved_memory(entries) == {0: {"memory": 2 * GiB, "hugepages-1Gi": GiB}}
