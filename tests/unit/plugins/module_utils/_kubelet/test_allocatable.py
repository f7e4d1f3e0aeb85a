# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/allocatable.py: the bytes kubelet's memory.available hard eviction
threshold reserves (hardEvictionReservation, float32 percentages of capacity) and the Node Allocatable reservation."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.allocatable import eviction_hard_memory_reservation
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.checks import node_allocatable_errors
from ansible_collections.nodeops.numa_drift.tests.unit.plugins.module_utils._kubelet.test_config import GiB, MiB, settings_for


def test_eviction_percentage_is_float32_of_capacity():
    # float32(10)/100 = 13421773 / 2**27, so 10% of 16 GiB is 1717986944, not 1717986918
    reservation, problem = eviction_hard_memory_reservation("10%", 16 * GiB)
    assert problem is None
    assert reservation == 1717986944 and reservation.format == "BinarySI"


@pytest.mark.parametrize(
    "threshold, expected",
    [
        ("100Mi", 100 * MiB),
        ("1G", 10 ** 9),
        ("0%", None),
        ("100%", None),
        (None, None),
    ],
)
def test_eviction_reservation_values(threshold, expected):
    assert eviction_hard_memory_reservation(threshold, 16 * GiB) == (expected, None)


@pytest.mark.parametrize(
    "threshold, message",
    [
        ("150%", "eviction percentage threshold memory.available must be <= 100%: 150%"),
        ("-5%", "eviction percentage threshold memory.available must be >= 0%: -5%"),
        ("0", "eviction threshold memory.available must be positive: 0"),
        ("ten%", 'eviction threshold memory.available: strconv.ParseFloat: parsing "ten": invalid syntax'),
    ],
)
def test_eviction_reservation_rejections(threshold, message):
    assert eviction_hard_memory_reservation(threshold, 16 * GiB) == (None, message)


def test_eviction_percentage_without_capacity_is_a_problem(tmp_path):
    reservation, problem = eviction_hard_memory_reservation("5%", None)
    assert reservation is None and "without the node's memory capacity" in problem
    settings = settings_for(
        tmp_path,
        {
            "memoryManagerPolicy": "Static",
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
            "evictionHard": {"memory.available": "5%"},
        },
    )
    assert node_allocatable_errors(settings, [0], None) == [problem]
