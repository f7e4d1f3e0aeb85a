# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/settings.py: the records (MemoryReservation, KubeletFlags, KubeletSettings
and its derived values), Go's %q quoting and which resources are memory."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import (
    KubeletFlags,
    KubeletSettings,
    MemoryReservation,
    go_quote,
    is_memory_resource,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.checks import node_allocatable_errors
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import ByteQuantity

MiB = 1024 * 1024
GiB = 1024 * MiB


def test_settings_can_be_built_directly():
    settings = KubeletSettings(
        policy="Static",
        reserved_memory={0: {"memory": GiB}},
        reserved_memory_entries=(MemoryReservation(0, (("memory", ByteQuantity(GiB, "BinarySI")),)),),
        system_reserved={"memory": ByteQuantity(924 * MiB, "BinarySI")},
        kube_reserved={},
        eviction_hard_memory="100Mi",
        root_dir="/var/lib/kubelet",
        config_path=None,
    )
    assert node_allocatable_errors(settings, [0], 8 * GiB) == []


@pytest.mark.parametrize("text, quoted", [
    ("static", '"static"'),
    ("", '""'),
    ('say "hi"', '"say \\"hi\\""'),  # strconv.Quote escapes the quote and the backslash
    ("a\\b", '"a\\\\b"'),
    ("a\nb\tc", '"a\\nb\\tc"'),  # named escapes
    ("\a\b\f\r\v", '"\\a\\b\\f\\r\\v"'),  # strconv.appendEscapedRune names these five too
    ("\x01\x7f", '"\\x01\\x7f"'),  # other control bytes and DEL: \x and two lower-case hex digits
    ("hugepages-1Gi", '"hugepages-1Gi"'),
])
def test_go_quote_is_percent_q_of_the_strings_kubelet_quotes(text, quoted):
    assert go_quote(text) == quoted


@pytest.mark.parametrize("name, memory", [
    ("memory", True),
    ("hugepages-2Mi", True),
    ("hugepages-1Gi", True),
    ("cpu", False),
    ("Memory", False),  # resource names are case-sensitive
    ("ephemeral-storage", False),
])
def test_memory_resources_are_memory_and_hugepages(name, memory):
    # corev1helper.IsHugePageResourceName(name) || name == v1.ResourceMemory
    assert is_memory_resource(name) is memory


def test_a_settings_record_defaults_what_only_discovery_sets():
    settings = KubeletSettings(
        policy="Static",
        reserved_memory={0: {"memory": GiB, "hugepages-1Gi": 2 * GiB}, 1: {"memory": 512 * MiB}},
        reserved_memory_entries=(),
        system_reserved={},
        kube_reserved={},
        eviction_hard_memory=None,
        root_dir="/data/kubelet",
        config_path=None,
    )
    # What a settings record defaults to when only the required fields are given.
    assert (settings.distribution, settings.service, settings.drift_tolerance, settings.problems) == ("unknown", None, None, ())


def test_flags_record_means_not_given_by_none():
    flags = KubeletFlags()
    assert all(getattr(flags, name) is None for name in (
        "root_dir", "config", "config_dir", "policy", "reserved_memory", "system_reserved", "kube_reserved",
        "eviction_hard", "feature_gates"))
    assert flags.origins == {} and flags.problems == ()
    # Each record gets its own origins map (a factory, not one shared dict).
    assert KubeletFlags().origins is not flags.origins
