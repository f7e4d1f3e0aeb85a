# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Distribution-shaped node trees (kubelet-layouts.md), for the unit tests, the kubelet judge and the parity test.

Each tree is a node just after a KASLR reboot (40 MiB moved from node 0 to node 1) whose
kubelet is configured with the Static policy the way that distribution configures it
(:data:`LAYOUTS`: files, distribution, service, kubelet root dir; :func:`drifted_node` builds one).
"""

from __future__ import annotations

import json

from ansible_collections.nodeops.numa_drift.tests.support.nodetree import OMIT
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    KIB,
    MIB,
    kubelet_config,
    two_node_boot,
    uniform_reserved,
    write_kubelet_node,
)

RESERVED = uniform_reserved([0, 1])
STATIC = kubelet_config(RESERVED)  # memoryManagerPolicy Static, reservedMemory, systemReserved
# Without a --config file kubelet has no default evictionHard (loadConfigFile sets it): Node Allocatable
# is systemReserved alone, so the drop-ins of k3s and RKE2 reserve the whole 2Gi there.
STATIC_DROPIN = {**STATIC, "systemReserved": {"memory": "2Gi"}}
KIND = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}


def document(**fields):
    return json.dumps(dict(KIND, **fields)) + "\n"


def drifted_node(tmp_path, files, kubelet_root_dir="/var/lib/kubelet"):
    recorded = two_node_boot()
    current = recorded.moved(node0=-40 * MIB // KIB, node1=40 * MIB // KIB)
    return write_kubelet_node(
        str(tmp_path), recorded, current, config=OMIT, kubelet_root_dir=kubelet_root_dir, extra_files=files
    )


def k3s_files():
    return {
        "/etc/systemd/system/k3s-agent.service": "[Service]\nExecStart=/usr/local/bin/k3s \\\n    agent \\\n",
        "/etc/rancher/k3s/config.yaml": 'server: https://10.0.0.1:6443\nkubelet-arg:\n  - "read-only-port=0"\n',
        "/etc/rancher/k3s/config.yaml.d/50-numa.yaml": 'kubelet-arg+:\n  - "config=/etc/rancher/k3s/kubelet-numa.yaml"\n',
        "/etc/rancher/k3s/kubelet-numa.yaml": document(**STATIC_DROPIN),
        "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/00-k3s-defaults.conf": document(
            evictionHard={"imagefs.available": "5%", "nodefs.available": "5%"}, cgroupDriver="systemd"
        ),
    }


LAYOUTS = {
    "k3s": (k3s_files(), "k3s", "k3s-agent", "/var/lib/kubelet"),
    "rke2": (
        {
            "/usr/local/lib/systemd/system/rke2-agent.service": "[Service]\nExecStart=/usr/local/bin/rke2 agent\n",
            "/var/lib/rancher/rke2/agent/etc/kubelet.conf.d/00-rke2-defaults.conf": document(cgroupDriver="systemd"),
            "/var/lib/rancher/rke2/agent/etc/kubelet.conf.d/50-numa.conf": document(**STATIC_DROPIN),
        },
        "rke2", "rke2-agent", "/var/lib/kubelet",
    ),
    "k0s": (
        {
            "/etc/systemd/system/k0sworker.service": '[Service]\nExecStart=/usr/local/bin/k0s worker --token-file=/etc/k0s/token '
            '"--kubelet-extra-args=--node-ip=10.0.0.5 --v=2"\n',
            "/var/lib/k0s/kubelet-config.yaml": document(**STATIC),
        },
        "k0s", "k0sworker", "/var/lib/k0s/kubelet",
    ),
    "microk8s": (
        {
            "/var/snap/microk8s/current/args/kubelet": "--kubeconfig=${SNAP_DATA}/credentials/kubelet.config\n"
            "--root-dir=${SNAP_COMMON}/var/lib/kubelet\n"
            '--eviction-hard="memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi"\n'
            "# memory manager\n--memory-manager-policy=Static\n--reserved-memory '0:memory=1Gi;1:memory=1Gi'\n"
            "--system-reserved=memory=1948Mi\n",
        },
        "microk8s", "snap.microk8s.daemon-kubelite", "/var/snap/microk8s/common/var/lib/kubelet",
    ),
    "eks-al2023": (
        {
            "/etc/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=/etc/eks/kubelet/environment\n"
            "ExecStart=/usr/bin/kubelet $NODEADM_KUBELET_ARGS\n",
            "/etc/eks/kubelet/environment": "NODEADM_KUBELET_ARGS=--node-ip=10.0.0.5 --config=/etc/kubernetes/kubelet/config.json "
            "--config-dir=/etc/kubernetes/kubelet/config.json.d --cloud-provider=external\nKUBELET_CONFIG_DROPIN_DIR_ALPHA=on\n",
            "/etc/kubernetes/kubelet/config.json": document(
                evictionHard={"memory.available": "100Mi", "nodefs.available": "10%"}, kubeReserved={"memory": "893Mi"}
            ),
            "/etc/kubernetes/kubelet/config.json.d/40-nodeadm.conf": document(kubeReserved={"memory": "0"}, **STATIC),
        },
        "eks-al2023", "kubelet", "/var/lib/kubelet",
    ),
    "eks-al2": (
        {
            # amazon-eks-ami templates/al2/runtime/kubelet.service: space-separated values, then the drop-ins' variables.
            "/etc/systemd/system/kubelet.service": "[Unit]\nDescription=Kubernetes Kubelet\n[Service]\n"
            "ExecStartPre=/sbin/iptables -P FORWARD ACCEPT -w 5\n"
            "ExecStart=/usr/bin/kubelet --config /etc/kubernetes/kubelet/kubelet-config.json --kubeconfig /var/lib/kubelet/kubeconfig \\\n"
            "    --container-runtime-endpoint unix:///run/containerd/containerd.sock $KUBELET_ARGS $KUBELET_EXTRA_ARGS\nRestart=always\n",
            # bootstrap.sh writes both drop-ins; --kubelet-extra-args lands in KUBELET_EXTRA_ARGS.
            "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf": "[Service]\n"
            "Environment='KUBELET_ARGS=--node-ip=10.0.0.5 "
            "--v=2 --hostname-override=ip-10-0-0-5.ec2.internal --cloud-provider=external'\n",
            "/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf": "[Service]\n"
            "Environment='KUBELET_EXTRA_ARGS=--memory-manager-policy=Static --reserved-memory 0:memory=1Gi;1:memory=1Gi "
            "--kube-reserved memory=893Mi --system-reserved memory=1055Mi'\n",
            "/etc/kubernetes/kubelet/kubelet-config.json": document(
                evictionHard={"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%"},
                kubeReserved={"cpu": "70m", "ephemeral-storage": "1Gi", "memory": "442Mi"},
                cgroupDriver="systemd",
            ),
        },
        "eks-al2", "kubelet", "/var/lib/kubelet",
    ),
    "openshift": (
        {
            "/etc/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=/etc/node-sizing.env\n"
            'Environment="KUBELET_LOG_LEVEL=2"\n'
            "EnvironmentFile=-/etc/kubernetes/kubelet-env\n"
            "ExecStart=/usr/local/bin/kubenswrapper /usr/bin/kubelet --config=/etc/kubernetes/kubelet.conf \\\n"
            "      --system-reserved=cpu=${SYSTEM_RESERVED_CPU},memory=${SYSTEM_RESERVED_MEMORY} --v=${KUBELET_LOG_LEVEL}\n",
            "/etc/node-sizing.env": "SYSTEM_RESERVED_MEMORY=1948Mi\nSYSTEM_RESERVED_CPU=500m\n",
            # kubelet.conf's own systemReserved is wrong on purpose: the flag wins.
            "/etc/kubernetes/kubelet.conf": document(**{**STATIC, "systemReserved": {"memory": "9Gi"}}),
        },
        "openshift", "kubelet", "/var/lib/kubelet",
    ),
    "kubespray": (
        {
            "/etc/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=-/etc/kubernetes/kubelet.env\n"
            "ExecStart=/usr/local/bin/kubelet $KUBE_LOG_LEVEL $KUBELET_ARGS $KUBELET_CLOUDPROVIDER\n",
            "/etc/kubernetes/kubelet.env": 'KUBE_LOG_LEVEL="--v=2"\nKUBELET_ARGS="--bootstrap-kubeconfig=/etc/kubernetes/bootstrap.conf \\\n'
            '--config=/etc/kubernetes/kubelet-config.yaml \\\n--kubeconfig=/etc/kubernetes/kubelet.conf"\n',
            "/etc/kubernetes/kubelet-config.yaml": document(**STATIC),
        },
        "kubespray", "kubelet", "/var/lib/kubelet",
    ),
    "kubeadm-config-dir": (
        {
            "/usr/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet\n",
            "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf": "[Service]\n"
            'Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"\n'
            "EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nEnvironmentFile=-/etc/default/kubelet\n"
            "ExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS\n",
            "/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--config-dir=/etc/kubernetes/kubelet.conf.d\n",
            "/var/lib/kubelet/config.yaml": document(memoryManagerPolicy="None", reservedMemory=[{"numaNode": 0, "limits": {"memory": "9Gi"}}]),
            "/etc/kubernetes/kubelet.conf.d/100-a.conf": document(reservedMemory=[{"numaNode": 0, "limits": {"memory": "5Gi"}}]),
            "/etc/kubernetes/kubelet.conf.d/20-b.conf": document(**STATIC),  # lexical: after 100-a, its list wins
            "/etc/kubernetes/kubelet.conf.d/20-b.conf.bak": document(memoryManagerPolicy="None"),
            "/etc/kubernetes/kubelet.conf.d/README": "not a drop-in\n",
        },
        "kubeadm", "kubelet", "/var/lib/kubelet",
    ),
}


# --- the release of the kubelet that starts ------------------------------------------------------------------

# kubeadm's deb/rpm layout as a cluster first built before 1.27 has it: kubeadm-flags.env still names the pause
# image (kubeadm stopped writing it on init/join in 1.27 and removes it only on `kubeadm upgrade` to 1.35).
PAUSE_IMAGE = "--pod-infra-container-image=registry.k8s.io/pause:3.9"
KUBEADM_UNIT = {
    "/usr/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet\nRestart=always\n",
    "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf": "[Service]\n"
    'Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf '
    '--kubeconfig=/etc/kubernetes/kubelet.conf"\n'
    'Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"\n'
    "EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nEnvironmentFile=-/etc/default/kubelet\n"
    "ExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS\n",
}


def kubeadm_flags_files(pause_image: bool = True):
    flags = "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock" + (" " + PAUSE_IMAGE if pause_image else "")
    return dict(KUBEADM_UNIT, **{
        "/var/lib/kubelet/kubeadm-flags.env": 'KUBELET_KUBEADM_ARGS="%s"\n' % flags,
        "/var/lib/kubelet/config.yaml": document(**STATIC),
    })


def with_pause_image(layout):
    """``layout``'s files with the pause-image flag where that distribution's tooling puts it: EKS AL2's
    bootstrap in KUBELET_ARGS, Kubespray's kubelet.env, a kubeadm-flags.env."""
    files = dict(LAYOUTS[layout][0])
    if layout == "eks-al2":
        name = "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf"
        files[name] = files[name].replace("--cloud-provider=external'", "--cloud-provider=external %s'" % PAUSE_IMAGE.replace(
            "registry.k8s.io/pause:3.9", "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5"))
    elif layout == "kubespray":
        name = "/etc/kubernetes/kubelet.env"
        files[name] = files[name].replace('KUBELET_ARGS="', 'KUBELET_ARGS="%s \\\n' % PAUSE_IMAGE)
    elif layout == "kubeadm-flags":
        files = kubeadm_flags_files(pause_image=True)
    else:
        raise ValueError("no pause-image placement for %s" % layout)
    return files


# Where the pause-image flag lives in each layout that carries it (what the verdict must name).
PAUSE_IMAGE_FILES = {
    "kubeadm-flags": "/var/lib/kubelet/kubeadm-flags.env",
    "eks-al2": "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf",
    "kubespray": "/etc/kubernetes/kubelet.env",
}
LAYOUTS["kubeadm-flags"] = (kubeadm_flags_files(pause_image=False), "kubeadm", "kubelet", "/var/lib/kubelet")
# One patch release per supported minor release: what each program says it is.
VERSIONS = ("v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2")


def released_node(tmp_path, layout, version, files=None):
    """A drifted node of ``layout`` whose program (or MicroK8s' snap.yaml) says ``version``."""
    from ansible_collections.nodeops.numa_drift.tests.support.programs import install_release  # pylint: disable=import-outside-toplevel

    layout_files, _distribution, _service, root_dir = LAYOUTS[layout]
    root = drifted_node(tmp_path, layout_files if files is None else files, kubelet_root_dir=root_dir)
    install_release(root, layout, version)
    return root
