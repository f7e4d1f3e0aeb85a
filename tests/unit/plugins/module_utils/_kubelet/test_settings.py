# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/settings.py: config file, flags, overrides, start-up checks."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import (
    KubeletSettings,
    MemoryReservation,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.flags import parse_kubelet_flags
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.allocatable import (
    eviction_hard_memory_reservation,
    node_allocatable_reservation,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.checks import (
    node_allocatable_errors,
    policy_errors,
    reserved_memory_config_errors,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import load_kubelet_settings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import ByteQuantity, quantity_text
from ansible_collections.nodeops.numa_drift.tests.unit.plugins.module_utils.nodetree import build_node_tree

MiB = 1024 * 1024
GiB = 1024 * MiB

# The machine of spec 10 (G19-G21): 4429185024 B = 4224Mi of memory reserved on each node.
G19_RESERVED = 4429185024
G19_CONFIG = {
    "memoryManagerPolicy": "Static",
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "4224Mi"}}, {"numaNode": 1, "limits": {"memory": "4224Mi"}}],
    # 2 x 4224Mi = 8348Mi systemReserved + 100Mi default hard eviction
    "systemReserved": {"memory": "8348Mi", "cpu": "500m"},
}

YAML_CONFIG = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# the memory manager
memoryManagerPolicy: Static
reservedMemory:
  - numaNode: 0
    limits:
      memory: 1Gi
      hugepages-1Gi: 2Gi
  - numaNode: 1
    limits:
      memory: 1536Mi
systemReserved:
  cpu: "1"
  memory: 2Gi
  hugepages-1Gi: 2Gi
kubeReserved:
  memory: 312Mi
  ephemeral-storage: 1Gi
evictionHard:
  memory.available: 200Mi
  nodefs.available: "10%"
"""


GIB_BYTES = 1024 ** 3


def settings_for(tmp_path, config=None, **kwargs):
    root = build_node_tree(tmp_path, kubelet_config=config) if config is not None else build_node_tree(tmp_path)
    return load_kubelet_settings(root, **kwargs)


# --------------------------------------------------------------------------- quantities


@pytest.mark.parametrize(
    "value, quantity_format, text",
    [
        (GiB, "BinarySI", "1Gi"),
        (1124 * MiB, "BinarySI", "1124Mi"),
        (1500, "BinarySI", "1500"),
        (1000, "BinarySI", "1k"),  # |x| < 1024: printed as DecimalSI
        (0, "BinarySI", "0"),
        (10 ** 9, "DecimalSI", "1G"),
        (1500 * 10 ** 6, "DecimalSI", "1500M"),
        (GiB, "DecimalSI", "1073741824"),
        (10 ** 9, "DecimalExponent", "1e9"),
        (123, "DecimalExponent", "123"),
    ],
)
def test_quantity_text_matches_resource_quantity_string(value, quantity_format, text):
    assert quantity_text(value, quantity_format) == text
    assert ByteQuantity(value, quantity_format).kube_text == text


def test_byte_quantity_is_an_int():
    quantity = ByteQuantity(GiB, "BinarySI")
    assert quantity == GiB and {"memory": quantity} == {"memory": GiB}
    assert quantity + 1 == GiB + 1
    assert repr(quantity) == "ByteQuantity(1073741824, 'BinarySI')"


# --------------------------------------------------------------------------- loading


def test_defaults_when_nothing_is_configured(tmp_path):
    settings = settings_for(tmp_path)
    assert settings.policy == "None"
    assert settings.field_sources["policy"] == "default"
    assert settings.reserved_memory == {} and settings.reserved_memory_entries == ()
    assert settings.system_reserved == {} and settings.kube_reserved == {}
    assert settings.eviction_hard_memory is None  # kubelet sets its default thresholds only with a --config file
    assert settings.root_dir == "/var/lib/kubelet"
    assert settings.config_path == "/var/lib/kubelet/config.yaml"
    assert settings.state_file == "/var/lib/kubelet/memory_manager_state"
    assert settings.problems == ()
    # Nothing names a kubelet configuration: no verdict may be built on invented defaults.
    assert settings.distribution == "unknown" and settings.service is None
    assert len(settings.config_problems) == 1 and "no kubelet configuration found" in settings.config_problems[0]


def test_yaml_config(tmp_path):
    settings = settings_for(tmp_path, YAML_CONFIG)
    # cmd/kubelet/app/server.go parseResourceList: cpu, memory, ephemeral-storage and pid only.
    assert settings.problems == (
        'kubelet config: systemReserved value failed to parse: cannot reserve "hugepages-1Gi" resource '
        "(only cpu, memory, ephemeral-storage, pid can be reserved)",
    )
    assert settings.policy == "Static" and settings.field_sources["policy"] == "/var/lib/kubelet/config.yaml"
    assert settings.distribution == "kubeadm" and settings.config_problems == ()
    assert settings.reserved_memory == {0: {"memory": GiB, "hugepages-1Gi": 2 * GiB}, 1: {"memory": 1536 * MiB}}
    assert settings.system_reserved == {"memory": 2 * GiB, "hugepages-1Gi": 2 * GiB}  # cpu is not memory
    assert settings.kube_reserved == {"memory": 312 * MiB}
    assert settings.eviction_hard_memory == "200Mi"
    assert settings.reserved_bytes(1, "memory") == 1536 * MiB and settings.reserved_bytes(1, "hugepages-1Gi") == 0
    assert settings.total_reserved("memory") == 2560 * MiB
    assert "/var/lib/kubelet/config.yaml" in settings.sources


def test_json_config(tmp_path):
    settings = settings_for(tmp_path, G19_CONFIG)
    assert settings.problems == ()
    assert settings.policy == "Static"
    assert settings.reserved_memory == {0: {"memory": G19_RESERVED}, 1: {"memory": G19_RESERVED}}
    assert settings.system_reserved == {"memory": 8348 * MiB}


def test_yaml_outside_the_subset_is_a_clear_problem_naming_file_and_line(tmp_path):
    text = YAML_CONFIG.replace("memoryManagerPolicy: Static", "memoryManagerPolicy: &policy Static")
    line = text.splitlines().index("memoryManagerPolicy: &policy Static") + 1
    settings = settings_for(tmp_path, text)
    # Kubelet may well read an anchor: the probe does not claim it would not start.
    assert settings.config_problems == (
        "kubelet --config: /var/lib/kubelet/config.yaml: line %d: anchors (&) are not supported "
        "(the probe reads a subset of YAML: pass the kubelet options explicitly)" % line,
    )
    assert settings.policy == "None"  # nothing was read


def test_yaml_outside_the_subset_with_explicit_values(tmp_path):
    text = YAML_CONFIG.replace("memoryManagerPolicy: Static", "memoryManagerPolicy: !!str Static")
    settings = settings_for(tmp_path, text, policy="Static", reserved_memory={0: {"memory": "1Gi"}})
    assert settings.policy == "Static" and settings.reserved_memory == {0: {"memory": GiB}}
    # The file's other reservations stay unknown: the configuration is still refused as unknown.
    assert len(settings.config_problems) == 1 and "tags (!) are not supported" in settings.config_problems[0]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("- memoryManagerPolicy: Static\n", "is a list, not a KubeletConfiguration mapping"),
        ("just words\n", "is a str, not a KubeletConfiguration mapping"),
        ("memoryManagerPolicy: [Static\n", "not valid YAML"),
        ('{"kind": "Pod", "memoryManagerPolicy": "Static"}', "'Pod', not a KubeletConfiguration"),
        ("a: 1\n---\nb: 2\n", "line 2: more than one document is not supported"),
        ("memoryManagerPolicy: .inf\n", "not valid YAML: line 1: .inf cannot be converted to JSON"),
    ],
)
def test_bad_config_documents_are_problems(tmp_path, text, fragment):
    settings = settings_for(tmp_path, text)
    assert len(settings.config_problems) == 1 and fragment in settings.config_problems[0]
    assert "/var/lib/kubelet/config.yaml" in settings.config_problems[0]
    assert settings.problems == () and settings.policy == "None"


def test_empty_config_file_is_refused_as_kubelet_refuses_it(tmp_path):
    # kubeletconfig/configfiles Load: "no configuration is an error" - kubelet does not start on defaults.
    settings = settings_for(tmp_path, "")
    assert settings.config_problems and 'kubelet config file "/var/lib/kubelet/config.yaml" was empty' in settings.config_problems[0]


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


def test_alias_bomb_is_refused_at_once(tmp_path):
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    for index in range(1, 9):
        bomb += "%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n" % ((chr(97 + index),) * 2 + (chr(96 + index),) * 9)
    bomb += "memoryManagerPolicy: Static\n"
    settings = settings_for(tmp_path, bomb)
    assert settings.policy == "None"
    assert len(settings.config_problems) == 1 and "config.yaml: line 1: anchors (&) are not supported" in settings.config_problems[0]


def test_oversized_config_file_is_refused(tmp_path):
    settings = settings_for(tmp_path, "#" * (4 * 1024 * 1024 + 10))
    assert len(settings.config_problems) == 1 and "is larger than" in settings.config_problems[0]


def test_explicit_config_that_is_missing_is_a_problem(tmp_path):
    settings = settings_for(tmp_path, config_path="/etc/kubernetes/kubelet.yaml")
    assert settings.config_path == "/etc/kubernetes/kubelet.yaml"
    assert len(settings.config_problems) == 1 and "/etc/kubernetes/kubelet.yaml does not exist" in settings.config_problems[0]


def test_config_path_that_is_a_directory_is_a_problem(tmp_path):
    root = build_node_tree(tmp_path)
    os.makedirs(os.path.join(root, "var/lib/kubelet/config.yaml"))
    settings = load_kubelet_settings(root)
    assert len(settings.config_problems) == 1 and "not a regular file" in settings.config_problems[0]


def test_unreadable_config_file_is_a_problem(tmp_path):
    root = build_node_tree(tmp_path, kubelet_config=G19_CONFIG)
    path = os.path.join(root, "var/lib/kubelet/config.yaml")
    with open(path, "wb") as handle:
        handle.write(b"memoryManagerPolicy: \xff\xfe\n")
    settings = load_kubelet_settings(root)
    assert len(settings.config_problems) == 1 and "not UTF-8" in settings.config_problems[0]


# --------------------------------------------------------------------------- eviction defaults


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


# --------------------------------------------------------------------------- flags and precedence


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


def test_flags_as_a_single_string_with_quotes(tmp_path):
    settings = settings_for(
        tmp_path, flags='--memory-manager-policy Static --reserved-memory "0:memory=1Gi;1:memory=2Gi" --root-dir=/srv/k'
    )
    assert settings.policy == "Static"
    assert settings.reserved_memory == {0: {"memory": GiB}, 1: {"memory": 2 * GiB}}
    assert settings.root_dir == "/srv/k" and settings.state_file == "/srv/k/memory_manager_state"


def test_unbalanced_quotes_in_flags_are_a_problem(tmp_path):
    settings = settings_for(tmp_path, flags='--memory-manager-policy "Static')
    assert any("cannot split kubelet flags" in problem for problem in settings.problems)


def test_non_string_flags_are_problems(tmp_path):
    settings = settings_for(tmp_path, flags=["--memory-manager-policy=Static", 5])
    assert settings.policy == "Static"
    assert settings.problems == ("kubelet flags: kubelet flag 5 is not a string",)
    assert settings_for(tmp_path, flags={"a": 1}).problems == (
        "kubelet flags: flags must be a list of arguments or a string, got dict",
    )


def test_flags_from_kubeadm_and_distribution_env_files(tmp_path):
    root = build_node_tree(
        tmp_path,
        kubelet_config=G19_CONFIG,
        kubeadm_flags="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --memory-manager-policy=None",
        extra_args="--memory-manager-policy=Static --reserved-memory 0:memory=5Gi",
    )
    settings = load_kubelet_settings(root)
    assert settings.policy == "Static"  # KUBELET_EXTRA_ARGS come after KUBELET_KUBEADM_ARGS
    assert settings.reserved_memory == {0: {"memory": 5 * GiB}}
    assert settings.sources[:2] == ("/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet")
    assert settings.field_sources["policy"] == "flag --memory-manager-policy (KUBELET_EXTRA_ARGS from /etc/default/kubelet)"


def test_flags_from_sysconfig(tmp_path):
    root = build_node_tree(tmp_path, extra_args="--root-dir=/data/kubelet", extra_args_file="/etc/sysconfig/kubelet")
    settings = load_kubelet_settings(root)
    assert settings.root_dir == "/data/kubelet"
    assert settings.field_sources["root_dir"] == "flag --root-dir (KUBELET_EXTRA_ARGS from /etc/sysconfig/kubelet)"
    assert settings.config_path == "/data/kubelet/config.yaml"


def test_explicit_flags_replace_the_discovered_command_line(tmp_path):
    root = build_node_tree(tmp_path, kubeadm_flags="--reserved-memory=0:memory=2Gi")
    assert load_kubelet_settings(root).reserved_memory_entries == (MemoryReservation(0, (("memory", 2 * GiB),)),)
    explicit = ["--reserved-memory=0:memory=1Gi"]
    assert load_kubelet_settings(root, flags=explicit).reserved_memory_entries == (
        MemoryReservation(0, (("memory", GiB),)),
    )


def test_root_dir_flag_moves_the_default_config(tmp_path):
    root = build_node_tree(
        tmp_path, kubelet_config=G19_CONFIG, kubelet_config_path="/data/kubelet/config.yaml"
    )
    settings = load_kubelet_settings(root, flags=["--root-dir", "/data/kubelet"])
    assert settings.policy == "Static" and settings.config_path == "/data/kubelet/config.yaml"


def test_config_flag_names_the_config(tmp_path):
    root = build_node_tree(tmp_path, kubelet_config=G19_CONFIG, kubelet_config_path="/etc/kubernetes/kubelet.yaml")
    settings = load_kubelet_settings(root, flags=["--config=/etc/kubernetes/kubelet.yaml"])
    assert settings.policy == "Static"
    assert settings.field_sources["config_path"] == "flag --config (option kubelet_flags)"


def test_option_root_dir_beats_the_flag(tmp_path):
    settings = settings_for(tmp_path, flags=["--root-dir=/a"], kubelet_root_dir="/b")
    assert settings.root_dir == "/b" and settings.field_sources["root_dir"] == "option kubelet_root_dir"


def test_missing_config_dir_flag_target_is_a_config_problem(tmp_path):
    settings = settings_for(tmp_path, flags=["--config-dir=/etc/kubernetes/kubelet.conf.d"])
    assert settings.config_dir == "/etc/kubernetes/kubelet.conf.d"
    assert settings.config_problems == (
        "kubelet --config-dir /etc/kubernetes/kubelet.conf.d does not exist (kubelet would not start)",
    )


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


def test_bad_overrides_are_problems(tmp_path):
    settings = settings_for(tmp_path, policy=["Static"], reserved_memory="0:memory=1Gi")
    assert settings.policy == "None"
    assert len(settings.problems) == 2


# --------------------------------------------------------------------------- kubelet's start-up checks


def test_policy_names_are_case_sensitive():
    assert policy_errors("None") == [] and policy_errors("Static") == []
    assert policy_errors("static") == ['unknown policy: "static"']
    assert policy_errors("") == ['unknown policy: ""']
    assert policy_errors("BestEffort") == ['policy "BestEffort" is not available for platform "linux"']
    assert policy_errors("BestEffort", platform="windows") == []
    assert policy_errors("Static", platform="windows") == ['policy "Static" is not available on Windows']


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


# --------------------------------------------------------------------------- eviction reservation


def test_eviction_percentage_is_float32_of_capacity():
    # float32(10)/100 = 13421773 / 2**27, so 10% of 16 GiB is 1717986944, not 1717986918
    reservation, problem = eviction_hard_memory_reservation("10%", 16 * GiB)
    assert problem is None
    assert reservation == 1717986944 and reservation.format == "BinarySI"


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


@pytest.mark.parametrize("value, accepted", [("2", True), ("0", True), ("", False), ("two", False), ("-1", False), ("4294967296", False)])
def test_log_level_flag_kubelet_cannot_parse_is_a_problem(value, accepted):
    # klog Level.Set: strconv.ParseUint(value, 10, 32); "--v=${UNSET}" makes kubelet exit before anything else.
    flags = parse_kubelet_flags(["--v=" + value])
    if accepted:
        assert flags.problems == ()
    else:
        assert flags.problems == ('invalid argument "%s" for "--v" flag: strconv.ParseUint: parsing "%s": invalid syntax' % (value, value),)


@pytest.mark.parametrize("args", [["--pod-infra-container-image=pause:3.5"], ["--pod-infra-container-image", "pause:3.5", "--v=2"]])
def test_a_flag_kubelet_1_35_no_longer_knows_is_a_problem_naming_the_releases(args):
    # pflag "unknown flag" from 1.35 on (v1.34.4 still defines it): the supported releases disagree.
    flags = parse_kubelet_flags(args + ["--memory-manager-policy=Static"])
    assert flags.problems == (
        "unknown flag: --pod-infra-container-image (kubelet releases disagree: 1.34 accept it, 1.35, 1.36, 1.37 "
        "refuse to start with it)",
    )
    assert flags.policy == "Static"


def test_merge_default_eviction_settings_in_a_drop_in_adds_nothing(tmp_path):
    # loadConfigFile merges kubelet's default thresholds only for the --config file's own flag; drop-ins are
    # merged after it and never bring the defaults back.
    dropin = json.dumps({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                         "mergeDefaultEvictionSettings": True, "evictionHard": {"nodefs.available": "5%"}})
    root = build_node_tree(tmp_path, kubelet_config={"evictionHard": {"imagefs.available": "5%"}},
                           extra_files={"/etc/kubernetes/kubelet.conf.d/50-eviction.conf": dropin})
    settings = load_kubelet_settings(root, config_dir="/etc/kubernetes/kubelet.conf.d")
    assert settings.dropins == ("/etc/kubernetes/kubelet.conf.d/50-eviction.conf",)
    assert settings.eviction_hard_memory is None


@pytest.mark.parametrize("where", ["config", "flag", "dropin"])
@pytest.mark.parametrize("enabled", [True, False])
def test_a_feature_gate_kubelet_1_34_does_not_know_is_a_problem_naming_the_releases(tmp_path, where, enabled):
    # SetFromMap refuses a gate the release does not define, on or off (v1.34/v1.35 panic while defaulting the
    # config file); PodLevelResourceManagers exists from 1.36 (kubelet's own TestCheckpointStateRestore turns it on).
    gate = {"PodLevelResourceManagers": enabled}
    dropin = json.dumps({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "featureGates": gate})
    root = build_node_tree(tmp_path, kubelet_config={"memoryManagerPolicy": "None", **({"featureGates": gate} if where == "config" else {})},
                           extra_files={"/etc/kubernetes/kubelet.conf.d/50-gates.conf": dropin} if where == "dropin" else None)
    flags = ["--config=/var/lib/kubelet/config.yaml"]
    flags += ["--feature-gates=PodLevelResourceManagers=%s" % str(enabled).lower()] if where == "flag" else []
    flags += ["--config-dir=/etc/kubernetes/kubelet.conf.d"] if where == "dropin" else []
    settings = load_kubelet_settings(root, flags=flags)
    assert settings.problems == (
        "unrecognized feature gate: PodLevelResourceManagers (kubelet releases disagree: 1.36, 1.37 accept it, 1.34, 1.35 "
        "refuse to start with it)",
    )


def test_feature_gates_every_supported_release_knows_are_no_problem(tmp_path):
    root = build_node_tree(tmp_path, kubelet_config={"memoryManagerPolicy": "None", "featureGates": {"PodLevelResources": True}})
    assert load_kubelet_settings(root).problems == ()
