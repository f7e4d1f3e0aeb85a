# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/layers.py: kubelet's configuration layers (defaults, a defaulted --config
file, --config-dir drop-ins as JSON merge patches), the command line's flags over them, the operator's overrides
over all, and KEP-6232's drift tolerance; directly, and through load_kubelet_settings where a layer comes from a file."""

from __future__ import annotations

import json

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import OptionError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import load_kubelet_settings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.layers import (
    DEFAULT_EVICTION_HARD,
    ConfigLayers,
    defaulted_config_file,
    drift_tolerance,
    kubelet_defaults,
    merge_dropin,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import KubeletFlags
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import build_node_tree
from ansible_collections.nodeops.numa_drift.tests.unit.plugins.module_utils._kubelet.test_config import G19_CONFIG, GiB, settings_for

CONFIG = "/var/lib/kubelet/config.yaml"
DROPIN = "/etc/kubernetes/kubelet.conf.d/50-numa.conf"
GATE_ON = {"MemoryManagerDriftTolerance": True}


# --------------------------------------------------------------------------- the layers, directly


def test_kubelet_defaults_are_policy_none_no_gates_and_no_eviction_hard():
    # options.NewKubeletConfiguration(): evictionHard is set by loadConfigFile only, when a file is loaded.
    layers = kubelet_defaults()
    assert layers.document == {"memoryManagerPolicy": "None", "featureGates": {}}
    assert layers.source_of("memoryManagerPolicy") == "default" and layers.source_of("evictionHard") == "default"


def test_a_config_file_replaces_the_defaults_and_is_defaulted():
    layers = defaulted_config_file({"memoryManagerPolicy": "", "systemReserved": {"memory": "1Gi", "cpu": "1"},
                                    "cgroupDriver": "systemd"}, CONFIG)
    # SetDefaults: "" -> None; loadConfigFile: no evictionHard -> kubelet's whole default map; other fields are not kept.
    assert layers.document == {"memoryManagerPolicy": "None", "systemReserved": {"memory": "1Gi", "cpu": "1"},
                               "evictionHard": DEFAULT_EVICTION_HARD}
    assert layers.document["evictionHard"] is not DEFAULT_EVICTION_HARD  # a copy: later layers may change it
    assert layers.source_of("memoryManagerPolicy") == "default"
    assert layers.source_of("systemReserved", ["memory"]) == CONFIG and layers.source_of("evictionHard", ["memory.available"]) == "default"
    assert "featureGates" not in layers.document  # the file replaced the defaults' empty map


def test_a_config_files_own_merge_flag_adds_the_default_thresholds_it_does_not_set():
    merged = defaulted_config_file({"evictionHard": {"memory.available": "1Gi"}, "mergeDefaultEvictionSettings": True}, CONFIG)
    assert merged.document["evictionHard"] == dict(DEFAULT_EVICTION_HARD, **{"memory.available": "1Gi"})
    assert merged.source_of("evictionHard", ["memory.available"]) == CONFIG
    assert merged.source_of("evictionHard", ["nodefs.available"]) == "default"
    kept = defaulted_config_file({"evictionHard": {"nodefs.available": "5%"}}, CONFIG)
    assert kept.document["evictionHard"] == {"nodefs.available": "5%"}  # without the flag the file's map replaces kubelet's


def test_a_drop_in_is_a_json_merge_patch_maps_key_by_key_lists_whole_nulls_ignored():
    layers = defaulted_config_file({"memoryManagerPolicy": "Static", "systemReserved": {"memory": "1Gi", "cpu": "1"},
                                    "reservedMemory": [{"numaNode": 0}, {"numaNode": 1}]}, CONFIG)
    merge_dropin(layers, {"systemReserved": {"memory": "2Gi", "cpu": None}, "reservedMemory": [{"numaNode": 1}],
                          "memoryManagerPolicy": None, "kubeReserved": {"memory": "128Mi"}}, DROPIN)
    assert layers.document["systemReserved"] == {"memory": "2Gi", "cpu": "1"}  # a null value changes nothing
    assert layers.document["reservedMemory"] == [{"numaNode": 1}]  # a list is replaced whole
    assert layers.document["memoryManagerPolicy"] == "Static"  # a null field changes nothing
    assert layers.document["kubeReserved"] == {"memory": "128Mi"}
    assert layers.source_of("systemReserved", ["memory"]) == DROPIN and layers.source_of("systemReserved", ["cpu"]) == CONFIG
    assert layers.source_of("reservedMemory") == DROPIN and layers.source_of("memoryManagerPolicy") == CONFIG


def test_source_of_a_map_is_the_last_named_key_that_was_set_else_the_field():
    layers = ConfigLayers()
    layers.set_whole("systemReserved", {"memory": "1Gi"}, CONFIG)
    merge_dropin(layers, {"systemReserved": {"hugepages-2Mi": "0"}}, DROPIN)
    assert layers.source_of("systemReserved", ["memory"]) == CONFIG
    assert layers.source_of("systemReserved", ["memory", "hugepages-2Mi"]) == DROPIN
    assert layers.source_of("systemReserved", ["cpu"]) == DROPIN  # the field's own source: the last layer that touched it
    assert layers.source_of("kubeReserved") == "default"


@pytest.mark.parametrize("config_gates, flag_gates, options, policy, tolerance", [
    (GATE_ON, None, None, "Static", "auto"),  # kubernetes#142121: the option defaults to auto
    (GATE_ON, None, {"memory-drift-tolerance": "128Mi"}, "Static", "128Mi"),
    (GATE_ON, None, {"memory-drift-tolerance": " off "}, "Static", None),
    (GATE_ON, None, None, "None", None),  # only the Static policy has the option
    ({}, GATE_ON, None, "Static", "auto"),  # the command line's gate, when the config names none
    # the command line's gates win over the configuration's, gate by gate (server.go kubeletConfigFlagPrecedence)
    ({"MemoryManagerDriftTolerance": False}, GATE_ON, None, "Static", "auto"),
    (GATE_ON, {"MemoryManagerDriftTolerance": False}, None, "Static", None),
    (GATE_ON, {"SomeOtherGate": False}, None, "Static", "auto"),  # the configuration's other gates are put back
    ({"MemoryManagerDriftTolerance": "true"}, None, None, "Static", None),  # not a bool: not taken as the gate (kubelet cannot decode it)
    ({}, None, None, "Static", None),
])
def test_drift_tolerance_is_kep_6232s_gate_and_option(config_gates, flag_gates, options, policy, tolerance):
    layers = kubelet_defaults()
    layers.set_whole("featureGates", config_gates, CONFIG)
    if options is not None:
        layers.set_whole("memoryManagerPolicyOptions", options, CONFIG)
    assert drift_tolerance(layers, KubeletFlags(feature_gates=flag_gates), policy) == tolerance


# --------------------------------------------------------------------------- through load_kubelet_settings


def test_a_config_file_without_eviction_hard_gets_kubelets_default_threshold(tmp_path):
    settings = settings_for(tmp_path, "memoryManagerPolicy: None\n")
    assert settings.problems == () and settings.policy == "None" and settings.eviction_hard_memory == "100Mi"


@pytest.mark.parametrize(
    "config, fragment",
    [
        ({"memoryManagerPolicy": 5}, "memoryManagerPolicy must be a string"),
        ({"systemReserved": "memory=1Gi"}, "systemReserved must be a mapping"),
        ({"systemReserved": {"memory": "-2Gi"}}, "is negative"),
        ({"evictionHard": ["memory.available<1Gi"]}, "evictionHard must be a mapping"),
        ({"reservedMemory": {"numaNode": 0}}, "reservedMemory must be a list"),
    ],
)
def test_hostile_config_values_are_problems(tmp_path, config, fragment):
    settings = settings_for(tmp_path, config)
    assert len(settings.problems) == 1 and fragment in settings.problems[0]
    assert settings.problems[0].startswith("kubelet config: ")


def test_number_where_kubelet_wants_a_string_is_reported_but_read(tmp_path):
    settings = settings_for(tmp_path, {"systemReserved": {"memory": 1073741824}})
    assert settings.system_reserved == {"memory": GiB}
    assert settings.problems == ("kubelet config: systemReserved.memory: kubelet expects a string here, got 1073741824",)


def test_eviction_hard_without_memory_replaces_the_default(tmp_path):
    settings = settings_for(tmp_path, {"evictionHard": {"nodefs.available": "10%"}})
    assert settings.eviction_hard_memory is None


def test_eviction_hard_empty_map_replaces_the_default(tmp_path):
    assert settings_for(tmp_path, {"evictionHard": {}}).eviction_hard_memory is None


def test_merge_default_eviction_settings_keeps_100mi(tmp_path):
    config = {"evictionHard": {"nodefs.available": "10%"}, "mergeDefaultEvictionSettings": True}
    assert settings_for(tmp_path, config).eviction_hard_memory == "100Mi"


def test_null_eviction_hard_is_unset(tmp_path):
    assert settings_for(tmp_path, {"evictionHard": None}).eviction_hard_memory == "100Mi"


def test_eviction_hard_flag_replaces_config_map(tmp_path):
    config = {"evictionHard": {"memory.available": "1Gi"}}
    assert settings_for(tmp_path, config, flags=["--eviction-hard=nodefs.available<5%"]).eviction_hard_memory is None
    assert settings_for(tmp_path, config, flags="--eviction-hard memory.available<2Gi").eviction_hard_memory == "2Gi"


def test_merge_default_eviction_settings_in_a_drop_in_adds_nothing(tmp_path):
    # loadConfigFile merges kubelet's default thresholds only for the --config file's own flag; drop-ins are
    # merged after it and never bring the defaults back.
    dropin = json.dumps({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                         "mergeDefaultEvictionSettings": True, "evictionHard": {"nodefs.available": "5%"}})
    root = build_node_tree(tmp_path, kubelet_config={"evictionHard": {"imagefs.available": "5%"}},
                           extra_files={"/etc/kubernetes/kubelet.conf.d/50-eviction.conf": dropin})
    settings = load_kubelet_settings(HostFiles(root), config_dir="/etc/kubernetes/kubelet.conf.d")
    assert settings.dropins == ("/etc/kubernetes/kubelet.conf.d/50-eviction.conf",)
    assert settings.eviction_hard_memory is None


def test_flags_override_the_config_file(tmp_path):
    flags = [
        "--memory-manager-policy=None",
        "--reserved-memory=0:memory=3Gi",
        "--system-reserved=cpu=1",
        "--kube-reserved=memory=1Gi",
    ]
    settings = settings_for(tmp_path, G19_CONFIG, flags=flags)
    assert settings.problems == ()
    assert settings.policy == "None" and settings.field_sources["policy"] == "flag --memory-manager-policy (option kubelet_flags)"
    assert settings.reserved_memory == {0: {"memory": 3 * GiB}}  # the flag's list replaces the file's
    assert settings.system_reserved == {}  # the flag's map replaces the file's
    assert settings.kube_reserved == {"memory": GiB}
    assert settings.field_sources["reserved_memory"] == "flag --reserved-memory (option kubelet_flags)"


def test_overrides_beat_flags_and_config(tmp_path):
    settings = settings_for(
        tmp_path,
        G19_CONFIG,
        flags=["--memory-manager-policy=None", "--reserved-memory=0:memory=3Gi"],
        policy="Static",
        reserved_memory={"1": {"memory": "2Gi"}},
    )
    assert settings.policy == "Static"
    assert settings.reserved_memory == {1: {"memory": 2 * GiB}}
    assert settings.field_sources["policy"] == "option policy"
    assert settings.field_sources["reserved_memory"] == "option reserved_memory"


def test_override_in_config_list_form(tmp_path):
    settings = settings_for(tmp_path, reserved_memory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}])
    assert settings.reserved_memory == {0: {"memory": GiB}}


def test_empty_override_clears_reserved_memory(tmp_path):
    settings = settings_for(tmp_path, G19_CONFIG, reserved_memory={})
    assert settings.reserved_memory == {}


def test_bad_overrides_fail_naming_each_option_and_what_it_takes(tmp_path):
    with pytest.raises(OptionError) as raised:
        settings_for(tmp_path, policy=["Static"], reserved_memory="0:memory=1Gi")
    assert str(raised.value) == (
        "policy must be a string (Static, None or BestEffort), got a list; reserved_memory must be a mapping from NUMA node "
        "to limits ({0: {memory: 1Gi}}) or a list as kubelet's reservedMemory ([{numaNode: 0, limits: {memory: 1Gi}}]), "
        "got a string ('0:memory=1Gi')")
