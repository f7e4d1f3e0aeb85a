# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Distribution-shaped node trees probed with no option but ``root`` (kubelet-layouts.md).

Each tree is a node just after a KASLR reboot (40 MiB moved from node 0 to node 1) whose
kubelet is configured with the Static policy the way that distribution configures it; the
probe must find the configuration, the checkpoint and the service by itself and say
``drift_within_bound``, as kubelet with that configuration would judge the drift.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.distributions import discover_kubelet
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.systemd import load_service
from ansible_collections.nodeops.numa_drift.tests.support.distributions import (  # noqa: F401  pylint: disable=unused-import
    KIND,
    LAYOUTS,
    RESERVED,
    STATIC,
    STATIC_DROPIN,
    document,
    drifted_node,
    k3s_files,
)
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import OMIT  # noqa: F401  pylint: disable=unused-import
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (  # noqa: F401  pylint: disable=unused-import
    GIB,
    KIB,
    MIB,
    kubelet_config,
    two_node_boot,
    uniform_reserved,
    write_kubelet_node,
)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_probe_finds_kubelet_on_every_distribution(tmp_path, name):
    files, distribution, service, root_dir = LAYOUTS[name]
    root = drifted_node(tmp_path, files, kubelet_root_dir=root_dir)
    result = probe(HostFiles(root))
    settings = result.settings
    assert (settings.distribution, settings.service, settings.root_dir) == (distribution, service, root_dir)
    assert settings.config_problems == () and settings.problems == ()
    assert settings.policy == "Static" and settings.reserved_memory == {0: {"memory": GIB}, 1: {"memory": GIB}}
    assert result.path == os.path.join(root, root_dir.lstrip("/"), "memory_manager_state") and result.raw
    assert result.assessment.verdict == "drift_within_bound", result.assessment.causes


def test_k3s_config_arg_is_read_as_the_agents_copy(tmp_path):
    settings = probe(HostFiles(drifted_node(tmp_path, k3s_files()))).settings
    managed = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d"
    assert settings.config_dir == managed
    assert settings.dropins == (managed + "/00-k3s-defaults.conf", managed + "/10-cli-config.conf")
    assert settings.field_sources["policy"] == managed + "/10-cli-config.conf (from /etc/rancher/k3s/kubelet-numa.yaml)"
    assert settings.eviction_hard_memory is None  # no --config file: kubelet has no default thresholds


def test_openshift_flag_beats_the_config_file(tmp_path):
    settings = probe(HostFiles(drifted_node(tmp_path, LAYOUTS["openshift"][0]))).settings
    assert settings.system_reserved == {"memory": 1948 * MIB}
    assert settings.field_sources["system_reserved"].startswith("flag --system-reserved (ExecStart of /etc/systemd/system/kubelet.service")
    assert "SYSTEM_RESERVED_MEMORY from /etc/node-sizing.env" in settings.field_sources["system_reserved"]


def test_eks_al2_flags_come_from_the_drop_ins_environment(tmp_path):
    settings = probe(HostFiles(drifted_node(tmp_path, LAYOUTS["eks-al2"][0]))).settings
    extra = "/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf"
    assert settings.config_path == "/etc/kubernetes/kubelet/kubelet-config.json"
    assert extra in settings.field_sources["policy"] and extra in settings.field_sources["reserved_memory"]
    # The first --kube-reserved replaces the file's whole map (cpu and ephemeral-storage go too).
    assert settings.kube_reserved == {"memory": 893 * MIB} and settings.system_reserved == {"memory": 1055 * MIB}
    assert settings.eviction_hard_memory == "100Mi"


def test_kubeadm_drop_ins_lexical_order_and_ignored_names(tmp_path):
    settings = probe(HostFiles(drifted_node(tmp_path, LAYOUTS["kubeadm-config-dir"][0]))).settings
    assert settings.dropins == ("/etc/kubernetes/kubelet.conf.d/100-a.conf", "/etc/kubernetes/kubelet.conf.d/20-b.conf")
    assert settings.field_sources["reserved_memory"] == "/etc/kubernetes/kubelet.conf.d/20-b.conf"


def test_unreadable_drop_in_is_kubelet_config_unknown_and_touches_nothing(tmp_path):
    files = dict(LAYOUTS["rke2"][0])
    files["/var/lib/rancher/rke2/agent/etc/kubelet.conf.d/60-bad.conf"] = "memoryManagerPolicy: [Static\n"
    root = drifted_node(tmp_path, files)
    result = probe(HostFiles(root))
    assert result.assessment.verdict == "kubelet_config_unknown"
    assert any("60-bad.conf" in cause.message for cause in result.assessment.causes)
    assert not result.assessment.repairable


def test_unit_override_resets_exec_start(tmp_path):
    files = dict(LAYOUTS["kubespray"][0])
    files["/etc/systemd/system/kubelet.service.d/99-override.conf"] = (
        "[Service]\nExecStart=\nExecStart=/usr/local/bin/kubelet $KUBELET_ARGS --root-dir=/data/kubelet\n"
    )
    root = drifted_node(tmp_path, files, kubelet_root_dir="/data/kubelet")
    result = probe(HostFiles(root))
    assert result.settings.root_dir == "/data/kubelet"
    assert result.assessment.verdict == "drift_within_bound"


def test_kep_6232_tolerance_on_means_hands_off(tmp_path):
    files = dict(LAYOUTS["kubespray"][0])
    files["/etc/kubernetes/kubelet-config.yaml"] = document(
        featureGates={"MemoryManagerDriftTolerance": True}, memoryManagerPolicyOptions={"memory-drift-tolerance": "auto"}, **STATIC
    )
    result = probe(HostFiles(drifted_node(tmp_path, files)))
    assert result.settings.drift_tolerance == "auto"
    assert result.assessment.verdict == "kubelet_tolerates" and not result.assessment.repairable


def test_no_configuration_at_all_is_refused_not_guessed(tmp_path):
    recorded = two_node_boot()
    root = write_kubelet_node(str(tmp_path), recorded, recorded.moved(node0=-4096, node1=4096), config=OMIT)
    result = probe(HostFiles(root))
    assert result.assessment.verdict == "kubelet_config_unknown"
    assert result.settings.distribution == "unknown"


def test_discovery_of_a_masked_unit_falls_back(tmp_path):
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "etc/systemd/system"))
    os.symlink("/dev/null", os.path.join(root, "etc/systemd/system/kubelet.service"))
    assert not load_service(HostFiles(root), "kubelet.service").found
    assert discover_kubelet(HostFiles(root)).distribution == "unknown"
