# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's refusals of its configuration before any manager is built: a ``--config`` field of the wrong JSON type
(``_kubelet.decode``) and the feature gates' locks and dependencies (``_kubelet.gates``). The texts are the ones the
kubelet judge reads from kubelet's own code (tests/kubelet_judge/test_kubelet_judge_cpu_probe.py)."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet import gates
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import load_kubelet_settings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.decode import dropins_error, load_error, merge_patch, type_error
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.gate_dependencies import DEPENDENCIES, LOCKED, SPECS
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import build_node_tree

WHERE = "Go struct field KubeletConfiguration"


@pytest.mark.parametrize("document, error", [
    ({"cpuManagerPolicyOptions": {"full-pcpus-only": True}}, "json: cannot unmarshal bool into %s.cpuManagerPolicyOptions of type string" % WHERE),
    ({"cpuManagerPolicyOptions": {"full-pcpus-only": 1}}, "json: cannot unmarshal number into %s.cpuManagerPolicyOptions of type string" % WHERE),
    ({"cpuManagerPolicyOptions": ["full-pcpus-only"]}, "json: cannot unmarshal array into %s.cpuManagerPolicyOptions of type map[string]string" % WHERE),
    ({"reservedSystemCPUs": 0}, "json: cannot unmarshal number into %s.reservedSystemCPUs of type string" % WHERE),
    ({"topologyManagerScope": True}, "json: cannot unmarshal bool into %s.topologyManagerScope of type string" % WHERE),
    ({"kubeReserved": {"cpu": 1}}, "json: cannot unmarshal number into %s.kubeReserved of type string" % WHERE),
    ({"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}, "reservedSystemCPUs": "0", "kubeReserved": None}, None),
    ({"maxPods": "many"}, None),  # a field the CPU and topology managers do not read: not judged here
])
def test_a_field_of_the_wrong_type_is_kubelets_decode_error(document, error):
    assert type_error(document, json_file=True) == error


def test_the_first_wrong_type_is_in_the_order_kubelets_decoder_meets_it():
    """A JSON file is decoded in its own order; YAML is converted with its keys sorted first."""
    document = {"topologyManagerPolicy": 1, "cpuManagerPolicy": True}
    assert "topologyManagerPolicy" in (type_error(document, json_file=True) or "")
    assert "cpuManagerPolicy of type string" in (type_error(document, json_file=False) or "")


def test_a_yaml_true_as_an_option_value_is_refused_with_kubelets_words(tmp_path):
    root = build_node_tree(tmp_path, kubelet_config={"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"},
                                                     "cpuManagerPolicyOptions": {"full-pcpus-only": True}})
    settings = load_kubelet_settings(HostFiles(str(root)), kubelet_release="1.36.3")
    assert settings.cpu.decode_error == load_error("/var/lib/kubelet/config.yaml", "json: cannot unmarshal bool into %s.cpuManagerPolicyOptions "
                                                   "of type string" % WHERE)
    assert settings.cpu.decode_error.startswith("failed to load kubelet config file, path: /var/lib/kubelet/config.yaml, error: failed to load "
                                                "Kubelet config file /var/lib/kubelet/config.yaml, error failed to decode: json: cannot")


def test_merge_patch_is_rfc_7386():
    assert merge_patch({"a": {"b": "1", "c": "2"}, "d": "x"}, {"a": {"b": None, "e": "3"}, "d": {"f": None}}) == {"a": {"c": "2", "e": "3"}, "d": {}}
    assert merge_patch({"a": "1"}, ["list"]) == ["list"]


MERGED = "failed to merge kubelet configs: failed to unmarshal merged JSON into kubelet configuration: json: cannot unmarshal "


def test_drop_ins_are_merged_before_their_types_are_checked():
    assert dropins_error([{"cpuManagerPolicyOptions": {"full-pcpus-only": True}}]) == (
        MERGED + "bool into %s.cpuManagerPolicyOptions of type string" % WHERE)
    # Sorted keys of the merged document: reservedSystemCPUs before topologyManagerScope, whichever drop-in came first.
    assert dropins_error([{"topologyManagerScope": ["pod"]}, {"reservedSystemCPUs": 0}]) == MERGED + "number into %s.reservedSystemCPUs of type string" % WHERE
    assert dropins_error([{"cpuManagerPolicyOptions": {"a": True}}, {"cpuManagerPolicyOptions": {"a": "true"}}]) is None  # replaced
    assert dropins_error([{"cpuManagerPolicyOptions": 5}, {"cpuManagerPolicyOptions": None}]) is None  # removed
    assert dropins_error([{"evictionHard": 5, "kind": "KubeletConfiguration"}]) is None  # not a field the CPU or topology manager reads


def test_a_drop_in_is_refused_after_the_config_file(tmp_path):
    dropin = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicyOptions: {full-pcpus-only: true}\n"
    root = build_node_tree(tmp_path, kubelet_config={"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}},
                           extra_files={"/etc/k/conf.d/50-cpu.conf": dropin})
    flags = ["--config=/var/lib/kubelet/config.yaml", "--config-dir=/etc/k/conf.d"]
    settings = load_kubelet_settings(HostFiles(str(root)), flags=flags, kubelet_release="1.36.3")
    assert settings.cpu.decode_error == MERGED + "bool into %s.cpuManagerPolicyOptions of type string" % WHERE
    root = build_node_tree(tmp_path / "both", kubelet_config={"cpuManagerPolicy": 1}, extra_files={"/etc/k/conf.d/50-cpu.conf": dropin})
    settings = load_kubelet_settings(HostFiles(str(root)), flags=flags, kubelet_release="1.36.3")
    assert settings.cpu.decode_error.startswith("failed to load kubelet config file")  # kubelet loads --config first


def test_the_tables_are_kubelets():
    """Spot checks of the generated tables against pkg/features/kube_features.go at each release."""
    assert DEPENDENCIES[34] == {}  # component-base v0.34 has no dependencies
    assert "PodLevelResourceManagers" not in DEPENDENCIES[35]
    assert DEPENDENCIES[36]["PodLevelResourceManagers"] == ("PodLevelResources",)
    assert DEPENDENCIES[37]["PodLevelResourceManagers"] == ("PodLevelResources",)
    assert SPECS[37]["GenericWorkload"] == (False, "beta") and SPECS[36]["GenericWorkload"] == (False, "alpha")
    assert SPECS[36]["PodLevelResourceManagers"] == (False, "alpha") and SPECS[37]["PodLevelResourceManagers"] == (False, "beta")
    assert LOCKED[35]["InPlacePodVerticalScaling"] is True


@pytest.mark.parametrize("named, minor, errors", [
    ({"PodLevelResourceManagers": True, "PodLevelResources": False}, 36, [
        "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are disabled: [PodLevelResources]",
        "PodLevelResourceManagers is enabled, but depends on features that are disabled: [PodLevelResources]"]),
    ({"PodLevelResourceManagers": True}, 36, []),  # PodLevelResources is on by default (beta)
    ({"AllAlpha": True}, 36, []),  # every alpha gate's dependencies are on or alpha too
    ({"AllAlpha": True, "GenericWorkload": True}, 37, []),
    ({"AllAlpha": True}, 34, []),  # v1.34: no dependencies at all
])
def test_dependencies_as_component_base_checks_them(named, minor, errors):
    assert gates.dependency_errors(named, minor) == errors


def test_all_alpha_at_1_37_turns_on_alpha_gates_that_need_the_beta_gate_generic_workload():
    errors = gates.dependency_errors({"AllAlpha": True}, 37)
    assert errors and all(error.endswith("depends on features that are disabled: [GenericWorkload]") for error in errors), errors
    assert "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]" in errors


def test_the_three_checks_in_kubelets_order_and_words():
    bad = {"PodLevelResourceManagers": True, "PodLevelResources": False}
    assert gates.gates_refused(bad, {}, bad, 36).startswith("failed to set feature gates from initial flags-based config: [")
    assert gates.gates_refused({}, bad, bad, 36).startswith(
        "kubelet panics: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: [")
    # The command line's gates are checked alone first (PodLevelResources off there turns off what v1.36 has on), then
    # with the file's over them while the codec sets its defaults.
    assert gates.gates_refused({"PodLevelResources": False}, {"PodLevelResources": True}, {"PodLevelResources": True}, 36) == (
        "failed to set feature gates from initial flags-based config: InPlacePodLevelResourcesVerticalScaling is enabled, but depends on "
        "features that are disabled: [PodLevelResources]")
    assert gates.gates_refused({"PodLevelResourceManagers": True}, {"PodLevelResources": False}, bad, 36).startswith(
        "kubelet panics: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: [")
    assert gates.gates_refused({}, {}, {}, 37) is None
    assert gates.aggregate(["one"]) == "one" and gates.aggregate(["one", "two"]) == "[one, two]"


def test_a_locked_gate_set_to_its_other_value_is_refused_before_the_dependencies():
    named = {"InPlacePodVerticalScalingExclusiveCPUs": True, "InPlacePodVerticalScaling": False}
    assert gates.locked_errors(named, 35) == ["cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true"]
    assert gates.gates_refused({}, named, named, 35) == ("kubelet panics: failed to merge global and in-flight KubeletConfiguration while "
                                                         "setting defaults, error: cannot set feature gate InPlacePodVerticalScaling to false, "
                                                         "feature is locked to true")
    assert gates.locked_errors({"InPlacePodVerticalScaling": True}, 35) == []


def test_kubelets_order_the_command_lines_gates_before_the_file_then_validation():
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.start import config_refusal  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import CpuManagerSettings  # pylint: disable=import-outside-toplevel

    bad = {"PodLevelResourceManagers": True, "PodLevelResources": False}
    decode = load_error("/etc/kubelet.yaml", "json: cannot unmarshal bool into %s.cpuManagerPolicyOptions of type string" % WHERE)
    cpu = CpuManagerSettings(decode_error=decode, flag_gates=bad, topology_manager_policy="numa-aware")
    assert config_refusal(cpu, bad, 36).startswith(gates.FLAGS_PREFIX)  # checked before the file is read
    cpu = CpuManagerSettings(decode_error=decode, file_gates=bad, topology_manager_policy="numa-aware")
    assert config_refusal(cpu, bad, 36) == decode  # the file is decoded before its defaults are set
    cpu = CpuManagerSettings(file_gates=bad, topology_manager_policy="numa-aware")
    assert config_refusal(cpu, bad, 36).startswith(gates.DEFAULTS_PANIC_PREFIX)  # then validation
    assert config_refusal(CpuManagerSettings(topology_manager_policy="numa-aware"), {}, 36).startswith(
        "failed to validate kubelet configuration, error: invalid configuration: topologyManagerPolicy")
    assert config_refusal(CpuManagerSettings(), {}, 36) is None
