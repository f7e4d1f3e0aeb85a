# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Distribution-shaped sandbox nodes: the files each distribution leaves on a node, and kubelet's argv.

A shape has two halves that are written independently, on purpose:

* ``files``: what the distribution's installer and wrapper leave on the node (units, wrapper
  config files, KubeletConfiguration files and drop-ins) - what ``numa_drift_facts`` must read to
  find kubelet's configuration, checkpoint and service with no option but ``root``;
* ``kubelet_argv``: the command line that distribution's wrapper really gives kubelet, written by
  hand from the public facts (``../shared/notes/kubelet-layouts.md``), not computed by the
  collection's discovery code. The kubelet stand-in gets it after ``--`` and reads its
  configuration from it as kubelet does; when the probe's discovery and this argv disagree, the
  stand-in and the probe disagree and the fleet tests fail.

``unit`` is the service that runs kubelet there (the sandbox's systemd stand-in answers to that
name only); ``root_dir`` is kubelet's ``--root-dir`` (where the checkpoint is).

CLI (stdlib only; molecule's fast tier lays a k3s agent out in a container with it)::

    python3 tests/sandbox/distros.py files k3s --reserved-mib 100,100 --out DIR   # DIR stands for the node's /
    python3 tests/sandbox/distros.py argv k3s --reserved-mib 100,100              # kubelet's argv, JSON
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

KIND = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
MIB = 1024 * 1024


@dataclass(frozen=True)
class Shape:
    """One distribution's layout on a sandbox node."""

    distribution: str  # kubelet.distribution the probe must report
    unit: str  # the service running kubelet (kubelet.service the probe must report, without .service)
    root_dir: str  # kubelet --root-dir
    config_path: Optional[str]  # kubelet.config_path the probe must report (None: no --config file)
    config_dir: Optional[str]  # kubelet.config_dir the probe must report (None: no --config-dir)
    files: Callable[[Mapping[str, object]], Dict[str, str]]  # node path -> text, from the Static KubeletConfiguration
    kubelet_argv: Callable[[Mapping[str, object]], Tuple[str, ...]]  # what the wrapper runs kubelet with
    about: str


def kubelet_document(fields: Mapping[str, object]) -> str:
    return json.dumps(dict(KIND, **fields), indent=2, sort_keys=True) + "\n"


def quantity(value: object) -> str:
    """A byte count as kubelet flags take it (``1948Mi``, or plain bytes)."""
    number = int(str(value))
    return "%dMi" % (number // MIB) if number % MIB == 0 else str(number)


def reserved_memory_flag(config: Mapping[str, object]) -> str:
    """``--reserved-memory`` value: ``0:memory=1Gi;1:memory=1Gi`` (semicolon between NUMA nodes)."""
    entries = config["reservedMemory"]
    assert isinstance(entries, list)
    return ";".join(
        "%d:%s" % (entry["numaNode"], ",".join("%s=%s" % (res, quantity(size)) for res, size in sorted(entry["limits"].items())))
        for entry in entries
    )


def system_reserved_flag(config: Mapping[str, object]) -> str:
    reserved = config["systemReserved"]
    assert isinstance(reserved, dict)
    return ",".join("%s=%s" % (res, quantity(size)) for res, size in sorted(reserved.items()))


# --------------------------------------------------------------------------- k3s agent

K3S_MANAGED = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d"
K3S_NUMA_CONFIG = "/etc/rancher/k3s/kubelet-numa.yaml"


def k3s_files(config: Mapping[str, object]) -> Dict[str, str]:
    # k3s runs kubelet with --config-dir only: kubelet then has no default evictionHard (loadConfigFile sets it
    # only for a --config file), so the memory manager's config sets the 100Mi threshold its systemReserved assumes.
    numa = kubelet_document({**config, "evictionHard": {"memory.available": "100Mi"}})
    return {
        # The unit k3s' install.sh writes for an agent (trimmed).
        "/etc/systemd/system/k3s-agent.service": "[Unit]\nDescription=Lightweight Kubernetes\nAfter=network-online.target\n\n"
        "[Service]\nType=notify\nEnvironmentFile=-/etc/default/k3s-agent\nEnvironmentFile=-/etc/systemd/system/k3s-agent.service.env\n"
        "KillMode=process\nDelegate=yes\nRestart=always\nRestartSec=5s\nExecStart=/usr/local/bin/k3s \\\n    agent \\\n\n"
        "[Install]\nWantedBy=multi-user.target\n",
        "/etc/systemd/system/k3s-agent.service.env": "K3S_TOKEN=sandbox-token\nK3S_URL=https://127.0.0.1:6443\n",
        "/etc/rancher/k3s/config.yaml": "server: https://127.0.0.1:6443\nnode-label:\n  - sandbox.nodeops.io/distribution=k3s\n"
        "kubelet-arg:\n  - \"read-only-port=0\"\n",
        # A config.yaml.d fragment appends the memory manager's KubeletConfiguration (kubelet-arg+).
        "/etc/rancher/k3s/config.yaml.d/50-numa.yaml": "kubelet-arg+:\n  - \"config=%s\"\n" % K3S_NUMA_CONFIG,
        K3S_NUMA_CONFIG: numa,
        # What the agent wrote at its last start: its defaults, and its copy of config= (10-cli-config.conf).
        K3S_MANAGED + "/00-k3s-defaults.conf": kubelet_document({
            "cgroupDriver": "systemd", "failSwapOn": False, "evictionHard": {"imagefs.available": "5%", "nodefs.available": "5%"},
            "evictionMinimumReclaim": {"imagefs.available": "10%", "nodefs.available": "10%"},
        }),
        K3S_MANAGED + "/10-cli-config.conf": numa,
    }


def k3s_argv(config: Mapping[str, object]) -> Tuple[str, ...]:
    # k3s agent: its managed --config-dir, its own flags, then every kubelet-arg as --key=value;
    # --root-dir is kubelet's default (/var/lib/kubelet) for a rootful agent.
    return (
        "--config-dir=" + K3S_MANAGED,
        "--kubeconfig=/var/lib/rancher/k3s/agent/kubelet.kubeconfig",
        "--containerd=/run/k3s/containerd/containerd.sock",
        "--node-labels=sandbox.nodeops.io/distribution=k3s",
        "--read-only-port=0",
    )


# --------------------------------------------------------------------------- k0s worker

K0S_DATA = "/var/lib/k0s"


def k0s_files(config: Mapping[str, object]) -> Dict[str, str]:
    # The worker profile's kubelet-config.yaml holds the memory manager; its systemReserved is the
    # profile's old value: --kubelet-extra-args on the unit overrides it (a flag wins over the file).
    profile = dict(config, systemReserved={"memory": "9Gi"})
    return {
        "/etc/systemd/system/k0sworker.service": "[Unit]\nDescription=k0s - Zero Friction Kubernetes\n"
        "ConditionFileIsExecutable=/usr/local/bin/k0s\nAfter=network-online.target\n\n"
        "[Service]\nStartLimitInterval=5\nStartLimitBurst=10\nExecStart=/usr/local/bin/k0s worker --token-file=/etc/k0s/k0stoken "
        "\"--kubelet-extra-args=--system-reserved=%s --v=2\"\nRestartSec=10\nDelegate=yes\nKillMode=process\nRestart=always\n\n"
        "[Install]\nWantedBy=multi-user.target\n" % system_reserved_flag(config),
        "/etc/k0s/k0stoken": "sandbox-join-token\n",
        K0S_DATA + "/kubelet-config.yaml": kubelet_document(profile),
    }


def k0s_argv(config: Mapping[str, object]) -> Tuple[str, ...]:
    # k0s worker: --root-dir and --config in its data dir, then --kubelet-extra-args split like a shell.
    return (
        "--root-dir=%s/kubelet" % K0S_DATA,
        "--config=%s/kubelet-config.yaml" % K0S_DATA,
        "--kubeconfig=%s/kubelet.conf" % K0S_DATA,
        "--containerd=/run/k0s/containerd.sock",
        "--system-reserved=" + system_reserved_flag(config),
        "--v=2",
    )


# --------------------------------------------------------------------------- MicroK8s

SNAP_DATA = "/var/snap/microk8s/current"
SNAP_COMMON = "/var/snap/microk8s/common"


def microk8s_files(config: Mapping[str, object]) -> Dict[str, str]:
    return {
        "/etc/systemd/system/snap.microk8s.daemon-kubelite.service": "[Unit]\nDescription=Service for snap application "
        "microk8s.daemon-kubelite\nRequires=snap-microk8s-7229.mount\n\n[Service]\n"
        "ExecStart=/usr/bin/snap run microk8s.daemon-kubelite\nSyslogIdentifier=microk8s.daemon-kubelite\nRestart=always\n"
        "WorkingDirectory=/var/snap/microk8s/7229\nTimeoutStopSec=30\nType=simple\n\n[Install]\nWantedBy=multi-user.target\n",
        # One flag per line, evaluated as a bash array by kubelite's wrapper.
        SNAP_DATA + "/args/kubelet": "--kubeconfig=${SNAP_DATA}/credentials/kubelet.config\n--cert-dir=${SNAP_DATA}/certs\n"
        "--client-ca-file=${SNAP_DATA}/certs/ca.crt\n--anonymous-auth=false\n--root-dir=${SNAP_COMMON}/var/lib/kubelet\n"
        "--fail-swap-on=false\n--eviction-hard=\"memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi\"\n"
        "--container-runtime-endpoint=${SNAP_COMMON}/run/containerd.sock\n"
        "# memory manager (Static), reservations per NUMA node\n--memory-manager-policy=Static\n"
        "--reserved-memory '%s'\n--system-reserved=%s\n" % (reserved_memory_flag(config), system_reserved_flag(config)),
    }


def microk8s_argv(config: Mapping[str, object]) -> Tuple[str, ...]:
    return (
        "--kubeconfig=%s/credentials/kubelet.config" % SNAP_DATA,
        "--cert-dir=%s/certs" % SNAP_DATA,
        "--client-ca-file=%s/certs/ca.crt" % SNAP_DATA,
        "--anonymous-auth=false",
        "--root-dir=%s/var/lib/kubelet" % SNAP_COMMON,
        "--fail-swap-on=false",
        "--eviction-hard=memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi",
        "--container-runtime-endpoint=%s/run/containerd.sock" % SNAP_COMMON,
        "--memory-manager-policy=Static",
        "--reserved-memory",
        reserved_memory_flag(config),
        "--system-reserved=" + system_reserved_flag(config),
    )


SHAPES: Dict[str, Shape] = {
    "k3s": Shape("k3s", "k3s-agent.service", "/var/lib/kubelet", None, K3S_MANAGED, k3s_files, k3s_argv,
                 "k3s agent: kubelet-arg+ config= in config.yaml.d, managed drop-in dir"),
    "k0s": Shape("k0s", "k0sworker.service", K0S_DATA + "/kubelet", K0S_DATA + "/kubelet-config.yaml", None, k0s_files, k0s_argv,
                 "k0s worker: root dir /var/lib/k0s/kubelet, --kubelet-extra-args beats kubelet-config.yaml"),
    "microk8s": Shape("microk8s", "snap.microk8s.daemon-kubelite.service", SNAP_COMMON + "/var/lib/kubelet", None, None,
                      microk8s_files, microk8s_argv, "MicroK8s: args/kubelet flags only, root dir under the snap's common dir"),
}


# --------------------------------------------------------------------------- command line (molecule's fast tier)


def static_config_mib(reserved_mib: Sequence[int]) -> Dict[str, object]:
    """The molecule guests' KubeletConfiguration (resources/templates/kubelet-config.yaml.j2) from reserved MiB per node."""
    return {
        "memoryManagerPolicy": "Static",
        "evictionHard": {"memory.available": "100Mi"},
        "systemReserved": {"memory": "%dMi" % (sum(reserved_mib) - 100)},
        "reservedMemory": [{"numaNode": node, "limits": {"memory": "%dMi" % mib}} for node, mib in enumerate(reserved_mib) if mib > 0],
    }


def write_files(directory: str, files: Mapping[str, str]) -> List[str]:
    written = []
    for node_path, text in sorted(files.items()):
        path = os.path.join(directory, node_path.lstrip("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        written.append(node_path)
    return written


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Distribution-shaped kubelet layouts of the sandbox (files, kubelet argv)")
    parser.add_argument("command", choices=("files", "argv"), help="files: write the shape's files under --out; argv: print kubelet's argv (JSON)")
    parser.add_argument("shape", choices=sorted(SHAPES))
    parser.add_argument("--reserved-mib", required=True, help="reservedMemory per NUMA node in MiB, e.g. 100,100")
    parser.add_argument("--out", help="files: the directory standing for the node's /")
    options = parser.parse_args(argv)
    shape = SHAPES[options.shape]
    config = static_config_mib([int(part) for part in options.reserved_mib.split(",")])
    if options.command == "argv":
        print(json.dumps(list(shape.kubelet_argv(config))))
        return 0
    if not options.out:
        parser.error("files needs --out")
    print(json.dumps({"unit": shape.unit, "root_dir": shape.root_dir, "files": write_files(options.out, shape.files(config))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
