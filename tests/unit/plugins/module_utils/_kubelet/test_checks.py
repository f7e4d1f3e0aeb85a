# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/checks.py: kubelet's start-up checks, with kubelet's own messages."""

from __future__ import annotations

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import ByteQuantity
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.allocatable import node_allocatable_reservation
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.checks import (
    node_allocatable_errors,
    policy_errors,
    reserved_memory_config_errors,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import MemoryReservation
from ansible_collections.nodeops.numa_drift.tests.unit.plugins.module_utils._kubelet.test_config import G19_CONFIG, G19_RESERVED, GiB, settings_for

GIB = 1024 ** 3


def test_policy_names_are_case_sensitive_and_per_platform():
    assert policy_errors("None") == [] and policy_errors("Static") == []
    assert policy_errors("static") == ['unknown policy: "static"']
    assert policy_errors("") == ['unknown policy: ""']
    assert policy_errors("BestEffort") == ['policy "BestEffort" is not available for platform "linux"']
    assert policy_errors("BestEffort", "windows") == []
    assert policy_errors("BestEffort", platform="windows") == []  # by keyword too, as callers pass it
    assert policy_errors("Static", "windows") == ['policy "Static" is not available on Windows']
    assert policy_errors("Static", platform="windows") == ['policy "Static" is not available on Windows']


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


# --------------------------------------------------------------------------- through load_kubelet_settings


def test_g19_configuration_satisfies_node_allocatable(tmp_path):
    settings = settings_for(tmp_path, G19_CONFIG)
    assert node_allocatable_errors(settings, [0, 1], 269885206528) == []
    allocatable, problems = node_allocatable_reservation(settings, 269885206528)
    assert problems == [] and allocatable == {"memory": 2 * G19_RESERVED}
    assert allocatable["memory"].kube_text == "8448Mi"


def test_sum_mismatch_has_kubelets_exact_text(tmp_path):
    config = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}, {"numaNode": 1, "limits": {"memory": "1Gi"}}],
        "systemReserved": {"memory": "1Gi"},
    }
    assert node_allocatable_errors(settings_for(tmp_path, config), [0, 1], 64 * GiB) == [
        'the total amount "2Gi" of type "memory" is not equal to the value "1124Mi" determined by Node Allocatable feature'
    ]


def test_hugepage_reservation_without_node_allocatable_counterpart(tmp_path):
    config = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi", "hugepages-1Gi": "2Gi"}}],
        "systemReserved": {"memory": "1Gi"},
    }
    assert node_allocatable_errors(settings_for(tmp_path, config), [0], 64 * GiB) == [
        'the total amount "2Gi" of type "hugepages-1Gi" is not equal to the value "0" determined by Node Allocatable feature'
    ]


def test_hugepage_system_reserved_counts_only_for_sizes_in_capacity(tmp_path):
    config = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
        "systemReserved": {"memory": "1Gi", "hugepages-2Mi": "64Mi"},
    }
    settings = settings_for(tmp_path, config)
    assert node_allocatable_errors(settings, [0], 64 * GiB, hugepage_resources=["hugepages-1Gi"]) == []
    assert node_allocatable_errors(settings, [0], 64 * GiB, hugepage_resources=["hugepages-2Mi"]) == [
        'the total amount "0" of type "hugepages-2Mi" is not equal to the value "64Mi" determined by Node Allocatable feature'
    ]


def test_decimal_quantities_print_as_kubelet_prints_them(tmp_path):
    config = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1G"}}],
        "systemReserved": {"memory": "500M"},
        "evictionHard": {"memory.available": "100M"},
    }
    assert node_allocatable_errors(settings_for(tmp_path, config), [0], 64 * GiB) == [
        'the total amount "1G" of type "memory" is not equal to the value "600M" determined by Node Allocatable feature'
    ]


def test_mixed_formats_take_the_first_non_zero_addend_format(tmp_path):
    config = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
        "systemReserved": {"memory": "1Gi"},
        "kubeReserved": {"memory": "100M"},
    }
    # 1Gi + 100M + 100Mi is no whole number of KiB: BinarySI prints the plain integer
    assert node_allocatable_errors(settings_for(tmp_path, config), [0], 64 * GiB) == [
        'the total amount "1Gi" of type "memory" is not equal to the value "1278599424" determined by Node Allocatable feature'
    ]


def test_unknown_numa_node_has_kubelets_exact_text(tmp_path):
    config = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "50Mi"}}, {"numaNode": 2, "limits": {"memory": "50Mi"}}],
    }
    assert node_allocatable_errors(settings_for(tmp_path, config), [0, 1], 64 * GiB) == [
        "the reserved memory configuration references a NUMA node 2 that does not exist on this machine"
    ]


def test_static_without_reserved_memory(tmp_path):
    settings = settings_for(tmp_path, {"memoryManagerPolicy": "Static", "evictionHard": {}})
    assert node_allocatable_errors(settings, [0], 64 * GiB) == ["[memorymanager] you should specify the system reserved memory"]
    settings = settings_for(tmp_path, {"memoryManagerPolicy": "Static"})
    assert node_allocatable_errors(settings, [0], 64 * GiB) == [
        'the total amount "0" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable feature',
        "[memorymanager] you should specify the system reserved memory",
    ]


def test_policy_none_does_not_validate_reservations(tmp_path):
    config = {"reservedMemory": [{"numaNode": 7, "limits": {"memory": "1Gi"}}]}
    assert node_allocatable_errors(settings_for(tmp_path, config), [0], 64 * GiB) == []


def test_unknown_policy_is_reported_alone(tmp_path):
    settings = settings_for(tmp_path, {"memoryManagerPolicy": "static"})
    assert node_allocatable_errors(settings, [0], 64 * GiB) == ['unknown policy: "static"']


def test_config_validation_errors_apply_to_every_policy(tmp_path):
    config = {
        "reservedMemory": [
            {"numaNode": 0, "limits": {"memory": "1Gi", "cpu": "1"}},
            {"numaNode": 0, "limits": {"memory": "0"}},
        ]
    }
    settings = settings_for(tmp_path, config)
    expected = [
        'invalid configuration: the limit type "cpu" for NUMA node 0 is not supported, only '
        "[memory hugepages-<HugePageSize>] is accepted",
        'invalid configuration: reserved memory may not be zero for NUMA node 0 and resource "memory"',
        'invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and resource "memory"',
    ]
    assert reserved_memory_config_errors(settings.reserved_memory_entries) == expected
    assert node_allocatable_errors(settings, [0], 64 * GiB) == expected


def test_duplicates_sum_in_validation_but_overwrite_per_node(tmp_path):
    config = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}, {"numaNode": 0, "limits": {"memory": "2Gi"}}],
        "systemReserved": {"memory": "2972Mi"},
    }
    settings = settings_for(tmp_path, config)
    assert settings.reserved_memory == {0: {"memory": 2 * GiB}}
    errors = node_allocatable_errors(settings, [0], 64 * GiB)
    assert errors == [
        'invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and resource "memory"'
    ]  # 1Gi + 2Gi = 3Gi = 2972Mi + 100Mi: the sum check itself passes


def test_eviction_percentage_in_the_allocatable_check(tmp_path):
    config = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1717986944"}}],
        "evictionHard": {"memory.available": "10%"},
    }
    settings = settings_for(tmp_path, config)
    assert node_allocatable_errors(settings, [0], 16 * GiB) == []
    assert node_allocatable_errors(settings, [0], 32 * GiB) == [
        'the total amount "1717986944" of type "memory" is not equal to the value "3435973888" determined by Node '
        "Allocatable feature"
    ]
