# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/wrapped.py: what MicroK8s, k0s, k3s and RKE2 read to start kubelet, each
profile called directly on a node tree (the probe's view of the same layouts: test_distributions(_audit).py)."""

from __future__ import annotations

import os

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.wrapped import (
    K0S_RUN_CONFIG,
    K3S,
    RKE2,
    _k0s,
    _k0s_config,
    _microk8s,
    _rancher,
    _rancher_documents,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.wrappers import RANCHER_EVICTION_HARD
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import build_node_tree

MICROK8S_ARGS = "/var/snap/microk8s/current/args/kubelet"
K3S_MANAGED = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d"


def node(tmp_path, files, dirs=()):
    root = build_node_tree(tmp_path, extra_files=files)
    for directory in dirs:
        os.makedirs(os.path.join(root, directory.lstrip("/")), exist_ok=True)
    return root


def values(launch):
    return [arg.value for arg in launch.args]


# --------------------------------------------------------------------------- MicroK8s


def test_microk8s_reads_its_args_file_as_bash_does(tmp_path):
    # The snap's kubelite runs: declare -a args="($(cat $SNAP_DATA/args/kubelet))".
    root = node(tmp_path, {MICROK8S_ARGS: '--config=${SNAP_DATA}/args/kubelet.yaml\n# comment\n--root-dir="$SNAP_COMMON/var/lib/kubelet"\n'})
    launch = _microk8s(HostFiles(root))
    assert (launch.distribution, launch.service) == ("microk8s", "snap.microk8s.daemon-kubelite")
    assert values(launch) == ["--config=/var/snap/microk8s/current/args/kubelet.yaml", "--root-dir=/var/snap/microk8s/common/var/lib/kubelet"]
    assert {arg.origin for arg in launch.args} == {MICROK8S_ARGS}
    assert launch.sources == (MICROK8S_ARGS,) and launch.problems == ()


def test_microk8s_is_absent_without_its_args_file_and_a_broken_one_is_a_problem_naming_it(tmp_path):
    assert _microk8s(HostFiles(node(tmp_path / "none", {}))) is None
    launch = _microk8s(HostFiles(node(tmp_path / "broken", {MICROK8S_ARGS: '--config="/x\n'})))
    assert launch.args == () and launch.problems == (MICROK8S_ARGS + ": No closing quotation",)


# --------------------------------------------------------------------------- k0s


def test_k0s_worker_gets_its_root_dir_and_run_dir_config_from_the_data_dir(tmp_path):
    unit = "/etc/systemd/system/k0sworker.service"
    root = node(tmp_path, {unit: "[Service]\nExecStart=/usr/local/bin/k0s worker --data-dir=/srv/k0s "
                                 "--kubelet-extra-args='--v=2 --max-pods=50 --v=4'\n"})
    launch = _k0s(HostFiles(root))
    assert (launch.distribution, launch.service) == ("k0s", "k0sworker")
    # <data dir>/kubelet is the default root dir (cfgvars.go); the extra args are a map, sorted, last value winning.
    assert values(launch) == ["--root-dir=/srv/k0s/kubelet", "--config=" + K0S_RUN_CONFIG, "--max-pods=50", "--v=4"]
    assert launch.args[0].origin == "k0s k0sworker (data dir /srv/k0s)"
    assert launch.args[2].origin == "--kubelet-extra-args of " + unit
    assert launch.sources == (unit,) and launch.problems == ()


def test_k0s_kubelet_root_dir_flag_moves_the_root_dir(tmp_path):
    root = node(tmp_path, {"/etc/systemd/system/k0sworker.service":
                           "[Service]\nExecStart=/usr/local/bin/k0s worker --kubelet-root-dir /data/kubelet\n"})
    assert values(_k0s(HostFiles(root)))[:1] == ["--root-dir=/data/kubelet"]


def test_k0s_config_is_the_run_dir_one_unless_only_the_legacy_file_exists(tmp_path):
    # k0s >= v1.32.1 writes /run/k0s/kubelet/config.yaml at every start; before, <data dir>/kubelet-config.yaml.
    assert _k0s_config(HostFiles(node(tmp_path / "neither", {})), "/var/lib/k0s") == K0S_RUN_CONFIG
    legacy = node(tmp_path / "legacy", {"/var/lib/k0s/kubelet-config.yaml": "{}"})
    assert _k0s_config(HostFiles(legacy), "/var/lib/k0s") == "/var/lib/k0s/kubelet-config.yaml"
    both = node(tmp_path / "both", {"/var/lib/k0s/kubelet-config.yaml": "{}", K0S_RUN_CONFIG: "{}"})
    assert _k0s_config(HostFiles(both), "/var/lib/k0s") == K0S_RUN_CONFIG


def test_k0s_controller_without_a_worker_is_a_problem_and_no_unit_is_none(tmp_path):
    unit = "/etc/systemd/system/k0scontroller.service"
    launch = _k0s(HostFiles(node(tmp_path / "controller", {unit: "[Service]\nExecStart=/usr/local/bin/k0s controller\n"})))
    assert launch.problems == (unit + ": k0s controller without --enable-worker or --single runs no kubelet",)
    assert _k0s(HostFiles(node(tmp_path / "none", {}))) is None


# --------------------------------------------------------------------------- k3s and RKE2


def test_rancher_flavours_differ_only_in_names_and_places():
    assert (K3S.units, K3S.config_file, K3S.data_dir, K3S.config_env) == (
        ("k3s-agent", "k3s"), "/etc/rancher/k3s/config.yaml", "/var/lib/rancher/k3s", "K3S_CONFIG_FILE")
    assert (RKE2.units, RKE2.config_file, RKE2.data_dir, RKE2.config_env) == (
        ("rke2-agent", "rke2-server"), "/etc/rancher/rke2/config.yaml", "/var/lib/rancher/rke2", "RKE2_CONFIG_FILE")


def test_rancher_documents_are_the_config_file_then_its_d_dir_yaml_files_in_order(tmp_path):
    root = node(tmp_path, {
        "/etc/rancher/k3s/config.yaml": "kubelet-arg: [a=1]\n",
        "/etc/rancher/k3s/config.yaml.d/20-b.YML": "kubelet-arg+: [b=2]\n",  # the suffix is matched case-insensitively
        "/etc/rancher/k3s/config.yaml.d/10-a.yaml": "data-dir: /srv/k3s\n",
        "/etc/rancher/k3s/config.yaml.d/30-c.yaml.bak": "kubelet-arg: [c=3]\n",
        "/etc/rancher/k3s/config.yaml.d/40-d.yaml/x": "",  # a directory is skipped
    })
    documents, sources, problems = _rancher_documents(HostFiles(root), "/etc/rancher/k3s/config.yaml")
    assert documents == [("/etc/rancher/k3s/config.yaml", {"kubelet-arg": ["a=1"]}),
                         ("/etc/rancher/k3s/config.yaml.d/10-a.yaml", {"data-dir": "/srv/k3s"}),
                         ("/etc/rancher/k3s/config.yaml.d/20-b.YML", {"kubelet-arg+": ["b=2"]})]
    assert sources == [path for path, _document in documents] and problems == []


def test_rancher_documents_name_a_file_that_is_not_yaml(tmp_path):
    root = node(tmp_path, {"/etc/rancher/rke2/config.yaml.d/50-bad.yaml": "kubelet-arg: [a\n"})
    documents, sources, problems = _rancher_documents(HostFiles(root), "/etc/rancher/rke2/config.yaml")
    assert documents == [] and sources == []  # the missing config.yaml itself is no problem
    assert len(problems) == 1 and problems[0].startswith("/etc/rancher/rke2/config.yaml.d/50-bad.yaml: not valid YAML")


def test_k3s_agent_with_the_managed_dir_reads_it_first_and_redirects_config(tmp_path):
    unit = "/etc/systemd/system/k3s-agent.service"
    root = node(tmp_path, {
        unit: "[Service]\nExecStart=/usr/local/bin/k3s agent --kubelet-arg=max-pods=50\n",
        "/etc/rancher/k3s/config.yaml": "kubelet-arg:\n  - config=/etc/rancher/k3s/kubelet.yaml\n",
    }, dirs=[K3S_MANAGED])
    launch = _rancher(HostFiles(root), K3S)
    assert (launch.distribution, launch.service) == ("k3s", "k3s-agent")
    assert values(launch) == ["--config-dir=" + K3S_MANAGED, "--max-pods=50"]
    assert launch.args[1].origin == "--kubelet-arg of " + unit
    assert launch.dropin_redirects == ((K3S_MANAGED + "/10-cli-config.conf", "/etc/rancher/k3s/kubelet.yaml"),)
    assert launch.sources == (unit, "/etc/rancher/k3s/config.yaml") and launch.problems == ()


def test_rke2_before_v1_32_passes_flags_and_its_config_file_can_come_from_the_environment(tmp_path):
    unit = "/usr/local/lib/systemd/system/rke2-agent.service"
    root = node(tmp_path, {
        unit: "[Service]\nEnvironment=RKE2_CONFIG_FILE=/etc/custom/rke2.yaml\nExecStart=/usr/local/bin/rke2 agent\n",
        "/etc/custom/rke2.yaml": "kubelet-arg: [reserved-memory=0:memory=1Gi]\n",
        "/etc/rancher/rke2/config.yaml": "kubelet-arg: [ignored=1]\n",  # not read: the environment names another file
    })
    launch = _rancher(HostFiles(root), RKE2)  # no managed drop-in dir: an agent older than v1.32
    assert values(launch) == ["--eviction-hard=" + RANCHER_EVICTION_HARD, "--reserved-memory=0:memory=1Gi"]
    assert launch.args[1].origin == "kubelet-arg in /etc/custom/rke2.yaml"
    assert launch.dropin_redirects == () and launch.sources == (unit, "/etc/custom/rke2.yaml")


def test_rancher_without_unit_or_files_is_absent_and_with_files_only_is_its_first_unit(tmp_path):
    assert _rancher(HostFiles(node(tmp_path / "none", {})), K3S) is None
    root = node(tmp_path / "files", {"/etc/rancher/k3s/config.yaml": "data-dir: /srv/k3s\n"}, dirs=["/srv/k3s/agent/etc/kubelet.conf.d"])
    launch = _rancher(HostFiles(root), K3S)
    # data-dir from the config file moves the managed drop-in dir.
    assert (launch.service, values(launch)) == ("k3s-agent", ["--config-dir=/srv/k3s/agent/etc/kubelet.conf.d"])
