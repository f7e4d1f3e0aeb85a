# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/flags.py: kubelet's map flags and command line as pflag parses them."""

from __future__ import annotations

import json

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import load_kubelet_settings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import from_option
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.flags import (
    parse_eviction_hard_flag,
    parse_key_value_flag,
    parse_kubelet_flags,
)
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import build_node_tree


def test_key_value_flag():
    assert parse_key_value_flag("memory=1Gi, cpu=500m,,") == {"memory": "1Gi", "cpu": "500m"}
    assert parse_key_value_flag("") == {}
    with pytest.raises(ValueError, match="malformed pair, expect string=string"):
        parse_key_value_flag("memory")


def test_eviction_hard_flag():
    assert parse_eviction_hard_flag("memory.available<100Mi,nodefs.available<10%") == {
        "memory.available": "100Mi",
        "nodefs.available": "10%",
    }
    with pytest.raises(ValueError, match="malformed pair, expect string<string"):
        parse_eviction_hard_flag("memory.available=100Mi")


def test_kubelet_flags_in_every_form():
    flags = parse_kubelet_flags(
        [
            "/usr/bin/kubelet",
            "--root-dir",
            "/data/kubelet",
            "--memory-manager-policy=None",
            "--reserved-memory",
            "0:memory=1Gi",
            "--register-node",
            "--reserved-memory=1:memory=2Gi;2:memory=3Gi",
            "--memory-manager-policy",
            "Static",
            "--system-reserved=memory=1Gi,cpu=1",
            "--system-reserved",
            "memory=2Gi",
            "--kube-reserved=memory=512Mi",
            "--eviction-hard=memory.available<500Mi",
            "--config=/etc/kubernetes/kubelet.yaml",
            "-v=2",
        ]
    )
    assert flags.problems == ()
    assert flags.root_dir == "/data/kubelet"
    assert flags.policy == "Static"  # last one wins
    assert [entry.numa_node for entry in flags.reserved_memory] == [0, 1, 2]  # every occurrence appends
    assert flags.system_reserved == {"memory": "2Gi", "cpu": "1"}  # later occurrences add keys
    assert flags.kube_reserved == {"memory": "512Mi"}
    assert flags.eviction_hard == {"memory.available": "500Mi"}
    assert flags.config == "/etc/kubernetes/kubelet.yaml"


def test_kubelet_flags_stop_at_double_dash_and_report_missing_values():
    flags = parse_kubelet_flags(["--root-dir=/a", "--", "--root-dir=/b"])
    assert flags.root_dir == "/a"
    flags = parse_kubelet_flags(["--root-dir=/a", "--reserved-memory"])
    assert flags.reserved_memory is None
    assert flags.problems == ("flag needs an argument: --reserved-memory",)


def test_kubelet_flags_report_bad_values_like_pflag():
    flags = parse_kubelet_flags(["--reserved-memory=0:cpu=1", "--system-reserved", "memory"])
    assert flags.problems == (
        'invalid argument "0:cpu=1" for "--reserved-memory" flag: memory type conversion error, unknown type: "cpu"',
        'invalid argument "memory" for "--system-reserved" flag: malformed pair, expect string=string',
    )


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
    settings = load_kubelet_settings(HostFiles(root), flags=flags)
    assert settings.problems == (
        "unrecognized feature gate: PodLevelResourceManagers (kubelet releases disagree: 1.36, 1.37 accept it, 1.34, 1.35 "
        "refuse to start with it)",
    )


def test_feature_gates_every_supported_release_knows_are_no_problem(tmp_path):
    root = build_node_tree(tmp_path, kubelet_config={"memoryManagerPolicy": "None", "featureGates": {"PodLevelResources": True}})
    assert load_kubelet_settings(HostFiles(root)).problems == ()


# --- judged at the release of the kubelet that will start -----------------------------------------------------


def _release(version):
    return from_option(version)


@pytest.mark.parametrize("version", ["v1.34.0", "v1.34.4", "1.34"])
def test_a_removed_flag_is_no_problem_for_a_release_that_still_has_it(version):
    flags = parse_kubelet_flags(["--pod-infra-container-image=pause:3.5", "--memory-manager-policy=Static"], release=_release(version))
    assert flags.problems == () and flags.policy == "Static"


@pytest.mark.parametrize("version, named", [("v1.35.4", "kubelet v1.35.4"), ("1.36", "kubelet v1.36"), ("v1.37.2", "kubelet v1.37.2")])
def test_a_removed_flag_is_that_releases_refusal_in_kubelets_words_naming_where_it_is_set(version, named):
    args = ["--v=2", "--pod-infra-container-image", "pause:3.5", "--memory-manager-policy=Static"]
    origins = ["ExecStart of /usr/lib/systemd/system/kubelet.service:3"] + ["KUBELET_KUBEADM_ARGS from /var/lib/kubelet/kubeadm-flags.env:1"] * 3
    flags = parse_kubelet_flags(args, origins, release=_release(version))
    assert flags.problems == (
        "failed to parse kubelet flag: unknown flag: --pod-infra-container-image (%s has no such flag since 1.35; remove it "
        "where it is set: KUBELET_KUBEADM_ARGS from /var/lib/kubelet/kubeadm-flags.env:1)" % named,
    )
    assert "releases disagree" not in flags.problems[0]
    # The flag's value is skipped as pflag skips it: the next flag is still read.
    assert flags.policy == "Static"


@pytest.mark.parametrize("version, problem", [
    ("v1.34.4", "unrecognized feature gate: PodLevelResourceManagers (kubelet v1.34.4 does not know it: it came in 1.36)"),
    ("v1.35.4", "unrecognized feature gate: PodLevelResourceManagers (kubelet v1.35.4 does not know it: it came in 1.36)"),
    ("v1.36.3", None),
    ("v1.37.2", None),
])
def test_a_feature_gate_is_judged_at_the_release_that_starts(tmp_path, version, problem):
    root = build_node_tree(tmp_path, kubelet_config={"memoryManagerPolicy": "None", "featureGates": {"PodLevelResourceManagers": True}})
    settings = load_kubelet_settings(HostFiles(root), kubelet_release=version)
    assert settings.problems == ((problem,) if problem else ())
    assert settings.release.version == version and settings.release.source == "option kubelet_release"
