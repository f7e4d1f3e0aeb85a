# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adversarial layouts: node trees not in the corpus, built from each distribution's public facts.

Every tree is the drifted node of ``test_distributions`` (40 MiB moved from NUMA node 0 to 1 after
a reboot, kubelet configured with the Static policy and a matching Node Allocatable); only where
the configuration lives changes. With no option but ``root`` the probe must find what kubelet
would run with and say ``drift_within_bound``, or refuse naming the file. Facts and sources:
shared/notes/kubelet-layouts.md and docs/distributions.md.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.support.scenario import GIB, MIB, tree_snapshot
from ansible_collections.nodeops.numa_drift.tests.support.distributions import (
    STATIC,
    STATIC_DROPIN,
    document,
    drifted_node,
)

RESERVED_FLAGS = "--memory-manager-policy=Static --reserved-memory=0:memory=1Gi;1:memory=1Gi --system-reserved=memory=1948Mi"
# Flags without a --config file: kubelet has no default evictionHard, so systemReserved carries the whole 2Gi.
RESERVED_FLAGS_NO_CONFIG = RESERVED_FLAGS.replace("1948Mi", "2Gi")
K3S_MANAGED = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d"
RKE2_MANAGED = "/var/lib/rancher/rke2/agent/etc/kubelet.conf.d"
# k3s' installer (install.sh) and RKE2's packaged units read these, %N being the unit's name.
RANCHER_ENV_LINES = "EnvironmentFile=-/etc/default/%N\nEnvironmentFile=-/etc/sysconfig/%N\n"
K3S_DEFAULTS = document(evictionHard={"imagefs.available": "5%", "nodefs.available": "5%"}, cgroupDriver="systemd")
KUBEADM_DROPIN = (
    "[Service]\n"
    'Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf '
    '--kubeconfig=/etc/kubernetes/kubelet.conf"\n'
    'Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"\n'
    "EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\n"
    "EnvironmentFile=-{extra}\n"
    "ExecStart=\n"
    "ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS\n"
)
KUBEADM_UNIT = "[Unit]\nDescription=kubelet\n[Service]\nExecStart=/usr/bin/kubelet\nRestart=always\n"
KUBEADM_FLAGS = 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock"\n'


def yaml_document(**fields):
    """A KubeletConfiguration written as YAML (block style), the way kubeadm and Kubespray write it."""
    lines = ["apiVersion: kubelet.config.k8s.io/v1beta1", "kind: KubeletConfiguration"]
    for key, value in fields.items():
        lines.append("%s: %s" % (key, json.dumps(value)))
    return "\n".join(lines) + "\n"


def probed(tmp_path, files, root_dir="/var/lib/kubelet"):
    result = probe(HostFiles(drifted_node(tmp_path, files, kubelet_root_dir=root_dir)))
    return result, result.settings


def assert_kubelets_verdict(result, root_dir):
    """What kubelet with the discovered configuration would say of the drifted node."""
    settings = result.settings
    assert settings.config_problems == () and settings.problems == (), (settings.config_problems, settings.problems)
    assert settings.policy == "Static"
    assert settings.reserved_memory == {0: {"memory": GIB}, 1: {"memory": GIB}}
    assert settings.root_dir == root_dir
    assert result.path.endswith(root_dir + "/memory_manager_state") and result.raw
    assert result.assessment.verdict == "drift_within_bound", result.assessment.causes


# --------------------------------------------------------------------------- k3s


def test_k3s_server_with_kubelet_arg_as_a_string(tmp_path):
    # k3s' config file parser turns a scalar value into one --kubelet-arg (pkg/configfilearg/parser.go).
    files = {
        "/etc/systemd/system/k3s.service": "[Service]\nType=notify\n" + RANCHER_ENV_LINES
        + "EnvironmentFile=-/etc/systemd/system/k3s.service.env\nExecStart=/usr/local/bin/k3s \\\n    server \\\n",
        "/etc/systemd/system/k3s.service.env": "K3S_TOKEN=secret\n",
        "/etc/rancher/k3s/config.yaml": "write-kubeconfig-mode: '0644'\nkubelet-arg: config=/etc/rancher/k3s/kubelet.yaml\n",
        "/etc/rancher/k3s/kubelet.yaml": yaml_document(**STATIC_DROPIN),
        K3S_MANAGED + "/00-k3s-defaults.conf": K3S_DEFAULTS,
    }
    result, settings = probed(tmp_path, files)
    assert (settings.distribution, settings.service, settings.config_dir) == ("k3s", "k3s", K3S_MANAGED)
    assert settings.config_path is None  # k3s never passes --config
    assert settings.dropins == (K3S_MANAGED + "/00-k3s-defaults.conf", K3S_MANAGED + "/10-cli-config.conf")
    assert_kubelets_verdict(result, "/var/lib/kubelet")


def test_k3s_data_dir_in_config_yaml_moves_the_managed_drop_in_dir(tmp_path):
    managed = "/srv/k3s/agent/etc/kubelet.conf.d"
    files = {
        "/etc/systemd/system/k3s-agent.service": "[Service]\nExecStart=/usr/local/bin/k3s agent\n",
        "/etc/rancher/k3s/config.yaml": "data-dir: /srv/k3s\nserver: https://10.0.0.1:6443\n",
        managed + "/00-k3s-defaults.conf": K3S_DEFAULTS,
        managed + "/50-numa.conf": document(**STATIC_DROPIN),
        # the default place, stale: must not be read
        K3S_MANAGED + "/50-numa.conf": document(memoryManagerPolicy="None"),
    }
    result, settings = probed(tmp_path, files)
    assert settings.config_dir == managed and settings.dropins[-1] == managed + "/50-numa.conf"
    assert_kubelets_verdict(result, "/var/lib/kubelet")


def test_k3s_data_dir_flag_beats_config_and_a_later_kubelet_arg_replaces_the_list(tmp_path):
    managed = "/data/k3s/agent/etc/kubelet.conf.d"
    files = {
        "/etc/systemd/system/k3s-agent.service": "[Service]\nExecStart=/usr/local/bin/k3s agent --data-dir /data/k3s\n",
        "/etc/rancher/k3s/config.yaml": "data-dir: /srv/k3s\nkubelet-arg:\n  - memory-manager-policy=None\n",
        # a later file's kubelet-arg replaces the list, kubelet-arg+ appends to it (k3s docs "Multiple Config Files")
        "/etc/rancher/k3s/config.yaml.d/10-numa.yaml": "kubelet-arg:\n  - memory-manager-policy=Static\n",
        "/etc/rancher/k3s/config.yaml.d/20-reserved.yml": "kubelet-arg+:\n  - reserved-memory=0:memory=1Gi;1:memory=1Gi\n"
        "  - system-reserved=memory=2Gi\n",
        "/etc/rancher/k3s/config.yaml.d/30-ignored.yaml.bak": "kubelet-arg:\n  - memory-manager-policy=None\n",
        managed + "/00-k3s-defaults.conf": K3S_DEFAULTS,
    }
    result, settings = probed(tmp_path, files)
    assert settings.config_dir == managed
    assert settings.field_sources["policy"].startswith("flag --memory-manager-policy (kubelet-arg in /etc/rancher/k3s/config.yaml.d/10-numa.yaml")
    assert_kubelets_verdict(result, "/var/lib/kubelet")


def test_k3s_user_config_dir_is_read_as_the_agents_sub_directory(tmp_path):
    files = {
        "/etc/systemd/system/k3s-agent.service": "[Service]\nExecStart=/usr/local/bin/k3s agent "
        "--kubelet-arg=config-dir=/etc/rancher/k3s/kubelet.conf.d\n",
        "/etc/rancher/k3s/kubelet.conf.d/50-numa.conf": document(**STATIC),  # with the 100Mi threshold of 60-eviction.conf below
        "/etc/rancher/k3s/kubelet.conf.d/sub/60-eviction.conf": document(evictionHard={"memory.available": "100Mi"}),
        "/etc/rancher/k3s/kubelet.conf.d/README.md": "notes\n",
        K3S_MANAGED + "/00-k3s-defaults.conf": K3S_DEFAULTS,
    }
    result, settings = probed(tmp_path, files)
    copied = K3S_MANAGED + "/20-cli-config-dir"
    assert settings.dropins == (K3S_MANAGED + "/00-k3s-defaults.conf", copied + "/50-numa.conf", copied + "/sub/60-eviction.conf")
    assert_kubelets_verdict(result, "/var/lib/kubelet")


def test_k3s_kubelet_arg_root_dir_moves_the_checkpoint(tmp_path):
    files = {
        "/etc/systemd/system/k3s-agent.service": "[Service]\nExecStart=/usr/local/bin/k3s agent\n",
        "/etc/rancher/k3s/config.yaml": 'kubelet-arg: ["root-dir=/data/kubelet", "config=/etc/rancher/k3s/kubelet.json"]\n',
        "/etc/rancher/k3s/kubelet.json": document(**STATIC_DROPIN),
        K3S_MANAGED + "/00-k3s-defaults.conf": K3S_DEFAULTS,
    }
    result, settings = probed(tmp_path, files, root_dir="/data/kubelet")
    assert settings.field_sources["root_dir"].startswith("flag --root-dir (kubelet-arg in /etc/rancher/k3s/config.yaml")
    assert_kubelets_verdict(result, "/data/kubelet")


def test_k3s_config_file_named_in_the_units_environment_file(tmp_path):
    # install.sh's unit: EnvironmentFile=-/etc/default/%N; K3S_CONFIG_FILE names the config file.
    files = {
        "/etc/systemd/system/k3s-agent.service": "[Service]\n" + RANCHER_ENV_LINES + "ExecStart=/usr/local/bin/k3s agent\n",
        "/etc/default/k3s-agent": "K3S_CONFIG_FILE=/etc/k3s-site/agent.yaml\n",
        "/etc/k3s-site/agent.yaml": "kubelet-arg:\n  - config=/etc/k3s-site/kubelet.yaml\n",
        "/etc/k3s-site/kubelet.yaml": yaml_document(**STATIC_DROPIN),
        "/etc/rancher/k3s/config.yaml": "kubelet-arg:\n  - memory-manager-policy=None\n",  # not read: the env names another
        K3S_MANAGED + "/00-k3s-defaults.conf": K3S_DEFAULTS,
    }
    result, settings = probed(tmp_path, files)
    assert "/etc/default/k3s-agent" in settings.sources
    assert_kubelets_verdict(result, "/var/lib/kubelet")


def test_k3s_before_v1_32_passes_everything_as_flags(tmp_path):
    # No managed drop-in dir: the agent passes config= as --config and its default
    # --eviction-hard=imagefs.available<5%,nodefs.available<5% (no memory.available: no eviction memory).
    config = {**STATIC, "systemReserved": {"memory": "2Gi"}}  # Node Allocatable without the 100Mi threshold
    files = {
        "/etc/systemd/system/k3s-agent.service": "[Service]\nExecStart=/usr/local/bin/k3s agent\n",
        "/etc/rancher/k3s/config.yaml": "kubelet-arg:\n  - config=/etc/rancher/k3s/kubelet.yaml\n",
        "/etc/rancher/k3s/config.yaml.d/50-Numa.YAML": "kubelet-arg+:\n  - v=2\n",
        "/etc/rancher/k3s/config.yaml.d/60-dir.yaml/README": "a directory k3s skips\n",
        "/etc/rancher/k3s/kubelet.yaml": yaml_document(**config),
    }
    result, settings = probed(tmp_path, files)
    assert (settings.distribution, settings.config_dir, settings.config_path) == ("k3s", None, "/etc/rancher/k3s/kubelet.yaml")
    assert settings.eviction_hard_memory is None
    assert "/etc/rancher/k3s/config.yaml.d/50-Numa.YAML" in settings.sources
    assert settings.field_sources["eviction_hard"] == "flag --eviction-hard (k3s agent (its default flags))"
    assert_kubelets_verdict(result, "/var/lib/kubelet")


def test_k3s_before_v1_32_a_user_eviction_hard_replaces_the_agents(tmp_path):
    files = {
        "/etc/systemd/system/k3s-agent.service": "[Service]\nExecStart=/usr/local/bin/k3s agent\n",
        "/etc/rancher/k3s/config.yaml": "kubelet-arg:\n  - config=/etc/rancher/k3s/kubelet.yaml\n"
        "  - eviction-hard=memory.available<100Mi,nodefs.available<5%\n",
        "/etc/rancher/k3s/kubelet.yaml": yaml_document(**STATIC),
    }
    result, settings = probed(tmp_path, files)
    assert settings.eviction_hard_memory == "100Mi"
    assert_kubelets_verdict(result, "/var/lib/kubelet")


# --------------------------------------------------------------------------- RKE2


def rke2_unit(kind):
    return (
        "[Unit]\nDescription=Rancher Kubernetes Engine v2 (%s)\n[Service]\nType=notify\n" % kind
        + RANCHER_ENV_LINES
        + "EnvironmentFile=-/usr/local/lib/systemd/system/%N.env\nKillMode=process\n"
        "ExecStartPre=-/sbin/modprobe overlay\nExecStart=/usr/local/bin/rke2 " + kind + "\n"
        "[Install]\nWantedBy=multi-user.target\n"
    )


def rke2_server_files():
    # The tarball installs both units under /usr/local/lib/systemd/system; only the enabled one runs.
    return {
        "/usr/local/lib/systemd/system/rke2-server.service": rke2_unit("server"),
        "/usr/local/lib/systemd/system/rke2-agent.service": rke2_unit("agent"),
        "/usr/local/lib/systemd/system/rke2-server.env": "HOME=/root\n",
        "/usr/local/lib/systemd/system/rke2-agent.env": "HOME=/root\n",
        "/etc/rancher/rke2/config.yaml": "token: x\nkubelet-arg:\n  - config=/etc/rancher/rke2/kubelet-numa.yaml\n",
        "/etc/rancher/rke2/kubelet-numa.yaml": yaml_document(**STATIC_DROPIN),
        RKE2_MANAGED + "/00-rke2-defaults.conf": document(cgroupDriver="systemd"),
    }


def test_rke2_server_node_runs_kubelet_under_the_enabled_unit(tmp_path):
    files = rke2_server_files()
    root = drifted_node(tmp_path, files)
    wants = os.path.join(root, "etc/systemd/system/multi-user.target.wants")
    os.makedirs(wants)
    os.symlink("/usr/local/lib/systemd/system/rke2-server.service", os.path.join(wants, "rke2-server.service"))
    result = probe(HostFiles(root))
    settings = result.settings
    assert (settings.distribution, settings.service, settings.config_dir) == ("rke2", "rke2-server", RKE2_MANAGED)
    assert settings.dropins == (RKE2_MANAGED + "/00-rke2-defaults.conf", RKE2_MANAGED + "/10-cli-config.conf")
    assert_kubelets_verdict(result, "/var/lib/kubelet")


def test_rke2_rpm_agent_with_config_file_from_sysconfig(tmp_path):
    files = {
        "/usr/lib/systemd/system/rke2-agent.service": rke2_unit("agent"),
        "/etc/sysconfig/rke2-agent": 'RKE2_CONFIG_FILE="/etc/rke2-site.yaml"\n',
        "/etc/rke2-site.yaml": "server: https://10.0.0.1:9345\nkubelet-arg:\n"
        + "".join("  - %s\n" % flag.lstrip("-") for flag in RESERVED_FLAGS_NO_CONFIG.split()),
        RKE2_MANAGED + "/00-rke2-defaults.conf": document(cgroupDriver="systemd"),
    }
    result, settings = probed(tmp_path, files)
    assert (settings.distribution, settings.service) == ("rke2", "rke2-agent")
    assert settings.field_sources["policy"].startswith("flag --memory-manager-policy (kubelet-arg in /etc/rke2-site.yaml")
    assert_kubelets_verdict(result, "/var/lib/kubelet")


# --------------------------------------------------------------------------- k0s


def test_k0s_controller_with_worker_reads_the_run_dir_config(tmp_path):
    # k0s >= v1.32.1 writes kubelet's config to <run dir>/kubelet/config.yaml, run dir /run/k0s for root
    # (k0sproject/k0s pkg/component/worker/kubelet.go Init, pkg/config/cfgvars.go).
    files = {
        "/etc/systemd/system/k0scontroller.service": "[Service]\nExecStart=/usr/local/bin/k0s controller "
        "--config=/etc/k0s/k0s.yaml --enable-worker=true --no-taints=true\n",
        "/run/k0s/kubelet/config.yaml": yaml_document(**STATIC),
    }
    result, settings = probed(tmp_path, files, root_dir="/var/lib/k0s/kubelet")
    assert (settings.distribution, settings.service) == ("k0s", "k0scontroller")
    assert settings.config_path == "/run/k0s/kubelet/config.yaml"
    assert_kubelets_verdict(result, "/var/lib/k0s/kubelet")


def test_k0s_kubelet_root_dir_flag_and_custom_data_dir(tmp_path):
    # `k0s install worker --data-dir ... --kubelet-root-dir ...` (cfgvars.go: KubeletRootDir, default <data dir>/kubelet).
    files = {
        "/etc/systemd/system/k0sworker.service": "[Service]\nExecStart=/usr/local/bin/k0s worker --data-dir=/srv/k0s "
        "--kubelet-root-dir=/mnt/kubelet --token-file=/etc/k0s/token\n",
        "/run/k0s/kubelet/config.yaml": yaml_document(**STATIC),
    }
    result, settings = probed(tmp_path, files, root_dir="/mnt/kubelet")
    assert settings.service == "k0sworker"
    assert_kubelets_verdict(result, "/mnt/kubelet")


def test_k0s_legacy_config_under_a_custom_data_dir(tmp_path):
    # k0s < v1.32.1: <data dir>/kubelet-config.yaml, root dir <data dir>/kubelet.
    files = {
        "/etc/systemd/system/k0sworker.service": "[Service]\nExecStart=/usr/local/bin/k0s worker --data-dir /srv/k0s\n",
        "/srv/k0s/kubelet-config.yaml": yaml_document(**STATIC),
    }
    result, settings = probed(tmp_path, files, root_dir="/srv/k0s/kubelet")
    assert settings.config_path == "/srv/k0s/kubelet-config.yaml"
    assert_kubelets_verdict(result, "/srv/k0s/kubelet")


def test_k0s_extra_args_are_a_map_the_last_value_of_a_flag_wins(tmp_path):
    # flags.Split + StringMap.Merge: each --flag=value is a map key, so a repeated flag keeps its last value.
    files = {
        "/etc/systemd/system/k0sworker.service": "[Service]\nExecStart=/usr/local/bin/k0s worker "
        '"--kubelet-extra-args=--reserved-memory=0:memory=5Gi --reserved-memory=0:memory=1Gi;1:memory=1Gi '
        '--memory-manager-policy=Static --system-reserved=memory=1948Mi"\n',
        "/run/k0s/kubelet/config.yaml": yaml_document(cgroupDriver="systemd"),
    }
    result, settings = probed(tmp_path, files, root_dir="/var/lib/k0s/kubelet")
    assert_kubelets_verdict(result, "/var/lib/k0s/kubelet")


# --------------------------------------------------------------------------- MicroK8s


def test_microk8s_config_file_named_in_args_with_quotes_and_comments(tmp_path):
    files = {
        "/var/snap/microk8s/current/args/kubelet": "# kubelet args\n"
        "--kubeconfig=${SNAP_DATA}/credentials/kubelet.config\n"
        "--cert-dir=${SNAP_DATA}/certs\n"
        '--root-dir="${SNAP_COMMON}/var/lib/kubelet"\n'
        "--config=${SNAP_DATA}/args/kubelet-config.yaml   # memory manager settings live there\n"
        "--node-labels='microk8s.io/cluster=true,node.kubernetes.io/microk8s-worker=microk8s-worker'\n"
        "--eviction-hard=\"memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi\"\n",
        "/var/snap/microk8s/current/args/kubelet-config.yaml": yaml_document(**STATIC),
    }
    root_dir = "/var/snap/microk8s/common/var/lib/kubelet"
    result, settings = probed(tmp_path, files, root_dir=root_dir)
    assert (settings.distribution, settings.service) == ("microk8s", "snap.microk8s.daemon-kubelite")
    assert settings.config_path == "/var/snap/microk8s/current/args/kubelet-config.yaml"
    assert settings.eviction_hard_memory == "100Mi"
    assert_kubelets_verdict(result, root_dir)


# --------------------------------------------------------------------------- EKS


def al2023_files(environment):
    return {
        "/etc/systemd/system/kubelet.service": "[Unit]\nDescription=Kubernetes Kubelet\n[Service]\nSlice=runtime.slice\n"
        "EnvironmentFile=/etc/eks/kubelet/environment\nExecStartPre=/sbin/iptables -P FORWARD ACCEPT -w 5\n"
        "ExecStart=/usr/bin/kubelet $NODEADM_KUBELET_ARGS\nRestart=on-failure\n",
        "/etc/eks/kubelet/environment": environment,
        "/etc/kubernetes/kubelet/config.json": json.dumps(
            {
                "apiVersion": "kubelet.config.k8s.io/v1beta1",
                "kind": "KubeletConfiguration",
                "evictionHard": {"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%"},
                "kubeReserved": {"cpu": "70m", "ephemeral-storage": "1Gi", "memory": "893Mi"},
                "maxPods": 58,
            },
            indent=4,
        ),
    }


def test_eks_al2023_user_flags_and_an_early_nodeadm_drop_in_name(tmp_path):
    files = al2023_files(
        "KUBELET_CONFIG_DROPIN_DIR_ALPHA=on\nNODEADM_KUBELET_ARGS=--node-ip=10.0.0.5 --cloud-provider=external "
        "--config=/etc/kubernetes/kubelet/config.json --config-dir=/etc/kubernetes/kubelet/config.json.d "
        "--hostname-override=ip-10-0-0-5 --memory-manager-policy=Static"  # nodeadm writes no final newline (environment.go)
    )
    dropins = "/etc/kubernetes/kubelet/config.json.d"
    files[dropins + "/00-nodeadm.conf"] = json.dumps(
        dict(json.loads(document()), kubeReserved={"memory": "0"}, reservedMemory=STATIC["reservedMemory"], systemReserved={"memory": "1948Mi"})
    )
    files[dropins + "/site/90-local.conf"] = document(systemReserved={"memory": "1948Mi"})
    result, settings = probed(tmp_path, files)
    assert (settings.distribution, settings.service) == ("eks-al2023", "kubelet")
    assert (settings.config_path, settings.config_dir) == ("/etc/kubernetes/kubelet/config.json", dropins)
    assert settings.dropins == (dropins + "/00-nodeadm.conf", dropins + "/site/90-local.conf")
    assert settings.kube_reserved == {"memory": 0}  # key-wise over config.json's 893Mi
    assert settings.field_sources["policy"].startswith("flag --memory-manager-policy")
    assert_kubelets_verdict(result, "/var/lib/kubelet")


def test_eks_al2_bootstrap_drop_ins_with_single_quoted_environment(tmp_path):
    files = {
        "/etc/systemd/system/kubelet.service": "[Unit]\nDescription=Kubernetes Kubelet\n[Service]\n"
        "ExecStartPre=/sbin/iptables -P FORWARD ACCEPT -w 5\n"
        "ExecStart=/usr/bin/kubelet \\\n    --config /etc/kubernetes/kubelet/kubelet-config.json \\\n"
        "    --kubeconfig /var/lib/kubelet/kubeconfig \\\n"
        "    --container-runtime-endpoint unix:///run/containerd/containerd.sock \\\n"
        "    $KUBELET_ARGS \\\n    $KUBELET_EXTRA_ARGS\n",
        "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf": "[Service]\n"
        "Environment='KUBELET_ARGS=--node-ip=10.0.0.5 --v=2'\n",
        "/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf": "[Service]\n"
        "Environment='KUBELET_EXTRA_ARGS=" + RESERVED_FLAGS + "'\n",
        "/etc/kubernetes/kubelet/kubelet-config.json": json.dumps(
            dict(json.loads(document()), kubeReserved={"memory": "0"}, evictionHard={"memory.available": "100Mi", "nodefs.available": "10%"})
        ),
        "/etc/eks/bootstrap.sh": "#!/usr/bin/env bash\n",
    }
    result, settings = probed(tmp_path, files)
    assert (settings.distribution, settings.service) == ("eks-al2", "kubelet")
    assert settings.config_path == "/etc/kubernetes/kubelet/kubelet-config.json"
    assert settings.field_sources["reserved_memory"].startswith("flag --reserved-memory (KUBELET_EXTRA_ARGS from")
    assert_kubelets_verdict(result, "/var/lib/kubelet")


# --------------------------------------------------------------------------- OpenShift


def openshift_files(node_sizing, extra_exec=""):
    return {
        "/etc/os-release": 'NAME="Red Hat Enterprise Linux CoreOS"\nID="rhcos"\nVERSION_ID="4.18"\n',
        "/etc/systemd/system/kubelet.service": "[Unit]\nDescription=Kubernetes Kubelet\n[Service]\nType=notify\n"
        "ExecStartPre=/bin/mkdir --parents /etc/kubernetes/manifests\n"
        "EnvironmentFile=/etc/os-release\nEnvironmentFile=-/etc/kubernetes/kubelet-workaround\n"
        "EnvironmentFile=-/etc/kubernetes/kubelet-env\nEnvironmentFile=/etc/node-sizing.env\n"
        'Environment="KUBELET_LOG_LEVEL=2"\n'
        "ExecStart=/usr/local/bin/kubenswrapper \\\n    /usr/bin/kubelet \\\n      --config=/etc/kubernetes/kubelet.conf \\\n"
        "      --bootstrap-kubeconfig=/etc/kubernetes/kubeconfig \\\n      --kubeconfig=/var/lib/kubelet/kubeconfig \\\n"
        "      --node-labels=node-role.kubernetes.io/worker,node.openshift.io/os_id=${ID} \\\n" + extra_exec
        + "      --system-reserved=cpu=${SYSTEM_RESERVED_CPU},memory=${SYSTEM_RESERVED_MEMORY},ephemeral-storage=${SYSTEM_RESERVED_ES} \\\n"
        "      --v=${KUBELET_LOG_LEVEL}\n",
        "/etc/node-sizing.env": node_sizing,
        "/etc/node-sizing-enabled.env": "NODE_SIZING_ENABLED=false\nSYSTEM_RESERVED_MEMORY=1Gi\n",
        "/etc/kubernetes/kubelet.conf": json.dumps(dict(json.loads(document()), **{**STATIC, "systemReserved": {"memory": "500Mi"}})),
    }


def test_openshift_decimal_node_sizing_and_worker_config_dir(tmp_path):
    # 1948Mi written as a decimal Gi quantity, as auto node sizing may write it; the worker pool's --config-dir.
    files = openshift_files(
        "SYSTEM_RESERVED_MEMORY=1.90234375Gi\nSYSTEM_RESERVED_CPU=0.08\nSYSTEM_RESERVED_ES=1Gi\n",
        "      --config-dir=/etc/openshift/kubelet.conf.d \\\n",
    )
    files["/etc/openshift/kubelet.conf.d/99-site.conf"] = document(kubeReserved={"memory": "0"})
    result, settings = probed(tmp_path, files)
    assert (settings.distribution, settings.service) == ("openshift", "kubelet")
    assert (settings.config_path, settings.config_dir) == ("/etc/kubernetes/kubelet.conf", "/etc/openshift/kubelet.conf.d")
    assert settings.system_reserved == {"memory": 1948 * MIB}
    assert_kubelets_verdict(result, "/var/lib/kubelet")


def test_openshift_missing_node_sizing_env_is_refused_naming_it(tmp_path):
    files = openshift_files("")
    del files["/etc/node-sizing.env"]
    root = drifted_node(tmp_path, files)
    before = tree_snapshot(root)
    result = probe(HostFiles(root))
    assert result.assessment.verdict == "kubelet_config_unknown" and not result.assessment.repairable
    assert any("/etc/node-sizing.env" in cause.message for cause in result.assessment.causes)
    assert tree_snapshot(root) == before


# --------------------------------------------------------------------------- Kubespray


def test_kubespray_custom_flags_in_continued_lines_and_tab_indented_unit(tmp_path):
    files = {
        "/etc/systemd/system/kubelet.service": "[Unit]\nDescription=Kubernetes Kubelet Server\n[Service]\n"
        "EnvironmentFile=-/etc/kubernetes/kubelet.env\nExecStartPre=-/bin/mkdir -p /var/lib/kubelet/volume-plugins\n"
        "ExecStart=/usr/local/bin/kubelet \\\n\t\t$KUBE_LOGTOSTDERR \\\n\t\t$KUBE_LOG_LEVEL \\\n\t\t$KUBELET_API_SERVER \\\n"
        "\t\t$KUBELET_ADDRESS \\\n\t\t$KUBELET_PORT \\\n\t\t$KUBELET_HOSTNAME \\\n\t\t$KUBELET_ARGS \\\n\t\t$DOCKER_SOCKET \\\n"
        "\t\t$KUBELET_NETWORK_PLUGIN \\\n\t\t$KUBELET_VOLUME_PLUGIN \\\n\t\t$KUBELET_CLOUDPROVIDER\nRestart=always\n",
        "/etc/kubernetes/kubelet.env": 'KUBE_LOGTOSTDERR="--logtostderr=true"\nKUBE_LOG_LEVEL="--v=2"\n'
        'KUBELET_ADDRESS="--node-ip=10.0.0.5"\nKUBELET_HOSTNAME="--hostname-override=node1"\n\n'
        'KUBELET_ARGS="--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \\\n'
        "--config=/etc/kubernetes/kubelet-config.yaml \\\n--kubeconfig=/etc/kubernetes/kubelet.conf \\\n"
        "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock \\\n"
        '--runtime-cgroups=/system.slice/containerd.service \\\n  ' + RESERVED_FLAGS + ' "\n'
        'KUBELET_CLOUDPROVIDER=""\n\nPATH=/usr/local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n',
        "/etc/kubernetes/kubelet-config.yaml": yaml_document(memoryManagerPolicy="None", systemReserved={"memory": "3Gi"}),
    }
    result, settings = probed(tmp_path, files)
    assert (settings.distribution, settings.service) == ("kubespray", "kubelet")
    assert settings.config_path == "/etc/kubernetes/kubelet-config.yaml"
    assert_kubelets_verdict(result, "/var/lib/kubelet")


# --------------------------------------------------------------------------- kubeadm and systemd


def test_kubeadm_rpm_sysconfig_moves_the_root_dir(tmp_path):
    files = {
        "/usr/lib/systemd/system/kubelet.service": KUBEADM_UNIT,
        "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf": KUBEADM_DROPIN.format(extra="/etc/sysconfig/kubelet"),
        "/var/lib/kubelet/kubeadm-flags.env": KUBEADM_FLAGS,
        "/etc/sysconfig/kubelet": "KUBELET_EXTRA_ARGS=--root-dir=/data/kubelet\n",
        "/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--root-dir=/wrong\n",  # not read by the rpm drop-in
        "/var/lib/kubelet/config.yaml": yaml_document(**STATIC),
    }
    result, settings = probed(tmp_path, files, root_dir="/data/kubelet")
    assert (settings.distribution, settings.service) == ("kubeadm", "kubelet")
    assert settings.config_path == "/var/lib/kubelet/config.yaml"  # --config is explicit: not under the root dir
    assert_kubelets_verdict(result, "/data/kubelet")


def test_kubeadm_old_deb_layout_with_systemctl_edit_override(tmp_path):
    files = {
        "/lib/systemd/system/kubelet.service": KUBEADM_UNIT,
        "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf": KUBEADM_DROPIN.format(extra="/etc/default/kubelet"),
        # `systemctl edit kubelet` writes override.conf; sorted after 10-kubeadm.conf, it resets ExecStart.
        "/etc/systemd/system/kubelet.service.d/override.conf": "### Editing /etc/systemd/system/kubelet.service.d/override.conf\n"
        "[Service]\nEnvironment=\"KUBELET_ROOT=/data/kubelet\"\nExecStart=\n"
        "ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS --config=/etc/kubernetes/kubelet-site.json "
        "--root-dir=${KUBELET_ROOT} $KUBELET_EXTRA_ARGS\n",
        "/etc/default/kubelet": 'KUBELET_EXTRA_ARGS="--config-dir=/etc/kubernetes/kubelet.conf.d"\n',
        "/var/lib/kubelet/config.yaml": yaml_document(memoryManagerPolicy="None"),
        "/etc/kubernetes/kubelet-site.json": json.dumps(dict(json.loads(document()), memoryManagerPolicy="None")),
        "/etc/kubernetes/kubelet.conf.d/50-numa.conf": yaml_document(**STATIC),
        "/etc/kubernetes/kubelet.conf.d/50-numa.conf~": yaml_document(memoryManagerPolicy="None"),
    }
    result, settings = probed(tmp_path, files, root_dir="/data/kubelet")
    assert settings.config_path == "/etc/kubernetes/kubelet-site.json"
    assert settings.config_dir == "/etc/kubernetes/kubelet.conf.d"
    assert settings.dropins == ("/etc/kubernetes/kubelet.conf.d/50-numa.conf",)
    assert settings.field_sources["root_dir"].startswith("flag --root-dir (ExecStart of /etc/systemd/system/kubelet.service.d/override.conf")
    assert_kubelets_verdict(result, "/data/kubelet")


def test_unit_in_etc_shadows_usr_lib_and_run_drop_in_shadows_the_same_name(tmp_path):
    files = {
        "/usr/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --root-dir=/wrong\n",
        "/etc/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --config=/etc/kubernetes/k.yaml $EXTRA\n",
        "/usr/lib/systemd/system/kubelet.service.d/20-extra.conf": "[Service]\nEnvironment=EXTRA=--memory-manager-policy=None\n",
        "/run/systemd/system/kubelet.service.d/20-extra.conf": "[Service]\nEnvironment=EXTRA=--memory-manager-policy=Static\n",
        "/etc/kubernetes/k.yaml": yaml_document(**{**STATIC, "memoryManagerPolicy": "None"}),
    }
    result, settings = probed(tmp_path, files)
    assert settings.field_sources["policy"].startswith("flag --memory-manager-policy (EXTRA from /run/systemd/system/kubelet.service.d/20-extra.conf")
    assert_kubelets_verdict(result, "/var/lib/kubelet")


def test_config_dir_named_inside_the_config_file_is_not_read(tmp_path):
    # --config-dir is a flag only (KubeletFlags.KubeletDropinConfigDirectory); a configDir key in the file is unknown.
    files = {
        "/usr/lib/systemd/system/kubelet.service": KUBEADM_UNIT,
        "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf": KUBEADM_DROPIN.format(extra="/etc/default/kubelet"),
        "/var/lib/kubelet/config.yaml": yaml_document(configDir="/etc/kubernetes/kubelet.conf.d", **STATIC),
        "/etc/kubernetes/kubelet.conf.d/50-none.conf": yaml_document(memoryManagerPolicy="None"),
    }
    result, settings = probed(tmp_path, files)
    assert settings.config_dir is None and settings.dropins == ()
    assert_kubelets_verdict(result, "/var/lib/kubelet")


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "name, content, named",
    [
        ("60-bad.conf", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nreservedMemory: [\n", "60-bad.conf"),
        ("60-latin1.conf", b"kind: KubeletConfiguration\n# caf\xe9\n", "60-latin1.conf"),
        ("60-nokind.conf", '{"memoryManagerPolicy": "None"}\n', "60-nokind.conf"),
    ],
)
def test_bad_drop_in_under_eks_is_refused_naming_the_file(tmp_path, name, content, named):
    files = al2023_files(
        "NODEADM_KUBELET_ARGS=--config=/etc/kubernetes/kubelet/config.json --config-dir=/etc/kubernetes/kubelet/config.json.d\n"
    )
    files["/etc/kubernetes/kubelet/config.json.d/40-nodeadm.conf"] = document(kubeReserved={"memory": "0"}, **STATIC)
    root = drifted_node(tmp_path, files)
    path = os.path.join(root, "etc/kubernetes/kubelet/config.json.d", name)
    with open(path, "wb") as handle:
        handle.write(content if isinstance(content, bytes) else content.encode())
    before = tree_snapshot(root)
    result = probe(HostFiles(root))
    assert result.assessment.verdict == "kubelet_config_unknown" and not result.assessment.repairable
    assert any(named in cause.message for cause in result.assessment.causes), result.assessment.causes
    assert tree_snapshot(root) == before


def test_unterminated_quote_in_an_env_file_is_refused_naming_file_and_line(tmp_path):
    files = {
        "/usr/lib/systemd/system/kubelet.service": KUBEADM_UNIT,
        "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf": KUBEADM_DROPIN.format(extra="/etc/default/kubelet"),
        "/etc/default/kubelet": '# site flags\nKUBELET_EXTRA_ARGS="--memory-manager-policy=Static\n',
        "/var/lib/kubelet/config.yaml": yaml_document(**STATIC),
    }
    result, _settings = probed(tmp_path, files)
    assert result.assessment.verdict == "kubelet_config_unknown"
    assert any("/etc/default/kubelet" in cause.message and "line 2" in cause.message for cause in result.assessment.causes)


def test_unreadable_unit_drop_in_is_refused_naming_it(tmp_path):
    files = {
        "/usr/lib/systemd/system/kubelet.service": KUBEADM_UNIT,
        "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf": KUBEADM_DROPIN.format(extra="/etc/default/kubelet"),
        "/var/lib/kubelet/config.yaml": yaml_document(**STATIC),
    }
    root = drifted_node(tmp_path, files)
    os.mkfifo(os.path.join(root, "usr/lib/systemd/system/kubelet.service.d/20-site.conf"))  # not a regular file
    result = probe(HostFiles(root))
    assert result.assessment.verdict == "kubelet_config_unknown"
    assert any("20-site.conf" in cause.message for cause in result.assessment.causes)


def test_k0s_controller_without_a_worker_is_refused_not_guessed(tmp_path):
    files = {
        "/etc/systemd/system/k0scontroller.service": "[Service]\nExecStart=/usr/local/bin/k0s controller --config=/etc/k0s/k0s.yaml\n",
        "/run/k0s/kubelet/config.yaml": yaml_document(**STATIC),
    }
    result, settings = probed(tmp_path, files, root_dir="/var/lib/k0s/kubelet")
    assert result.assessment.verdict == "kubelet_config_unknown"
    assert any("runs no kubelet" in cause.message for cause in result.assessment.causes)
