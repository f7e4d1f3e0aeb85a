# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/checks.py: kubelet's start-up checks, with kubelet's own messages."""

from __future__ import annotations

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import ByteQuantity
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.checks import policy_errors, reserved_memory_config_errors
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import MemoryReservation

GIB = 1024 ** 3


def test_policy_names_are_case_sensitive_and_per_platform():
    assert policy_errors("None") == [] and policy_errors("Static") == []
    assert policy_errors("static") == ['unknown policy: "static"']
    assert policy_errors("BestEffort") == ['policy "BestEffort" is not available for platform "linux"']
    assert policy_errors("BestEffort", "windows") == []
    assert policy_errors("Static", "windows") == ['policy "Static" is not available on Windows']


def test_reserved_memory_validation_as_kubelet_validates_it():
    good = [MemoryReservation(0, (("memory", ByteQuantity(GIB)), ("hugepages-1Gi", ByteQuantity(GIB)))),
            MemoryReservation(1, (("memory", ByteQuantity(GIB)),))]
    assert reserved_memory_config_errors(good) == []
    bad = [MemoryReservation(0, (("cpu", ByteQuantity(1)), ("memory", ByteQuantity(0)))),
           MemoryReservation(0, (("memory", ByteQuantity(GIB)),))]
    assert reserved_memory_config_errors(bad) == [
        'invalid configuration: the limit type "cpu" for NUMA node 0 is not supported, only [memory hugepages-<HugePageSize>] is accepted',
        'invalid configuration: reserved memory may not be zero for NUMA node 0 and resource "memory"',
        'invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and resource "memory"',
    ]
