# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node trees that real nodes leave behind and a broken node can hold: links, loops, FIFOs, unreadable, binary and
zero-filled files, a masked unit, a node mounted under another root. For the parity of the node path and the
controller path (each ``build(root) -> root``: a drifted kubeadm node with one oddity)."""

from __future__ import annotations

import os
import shutil
from typing import Callable, Dict

from ansible_collections.nodeops.numa_drift.tests.support.distributions import LAYOUTS, document, drifted_node, STATIC

KUBEADM_DROPIN = "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"


def _kubeadm(root: str, **extra: str) -> str:
    files = dict(LAYOUTS["kubeadm-config-dir"][0], **extra)
    return drifted_node(root, files)


def _host(root: str, node_path: str) -> str:
    return os.path.join(root, node_path.lstrip("/"))


def _linked(root: str, node_path: str, target: str) -> None:
    os.makedirs(os.path.dirname(_host(root, target)), exist_ok=True)
    shutil.move(_host(root, node_path), _host(root, target))
    os.symlink(target, _host(root, node_path))


def _every_file_linked_absolutely(root: str) -> str:
    _kubeadm(root)
    for node_path in ("/etc/default/kubelet", "/var/lib/kubelet/config.yaml", "/etc/kubernetes/kubelet.conf.d/20-b.conf"):
        _linked(root, node_path, "/srv/store" + node_path)
    _linked(root, "/var/lib/kubelet", "/data/kubelet")
    return root


def _relative_links_and_dot_dot(root: str) -> str:
    _kubeadm(root)
    _linked(root, "/etc/kubernetes/kubelet.conf.d", "/etc/kubernetes/real.conf.d")
    os.unlink(_host(root, "/etc/kubernetes/kubelet.conf.d"))
    os.symlink("../kubernetes/./real.conf.d", _host(root, "/etc/kubernetes/kubelet.conf.d"))
    return root


def _written(node_path: str, data: bytes, mode: int = 0o644) -> Callable[[str], str]:
    def build(root: str) -> str:
        _kubeadm(root)
        path = _host(root, node_path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
        os.chmod(path, mode)
        return root
    return build


def _made(node_path: str, make: Callable[[str], None]) -> Callable[[str], str]:
    def build(root: str) -> str:
        _kubeadm(root)
        path = _host(root, node_path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        make(path)
        return root
    return build


def _masked_unit(root: str) -> str:
    drifted_node(root, {"/etc/systemd/system/kubelet.service": "", "/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet\n",
                        "/var/lib/kubelet/config.yaml": document(**STATIC)})
    os.unlink(_host(root, "/etc/systemd/system/kubelet.service"))
    os.symlink("/dev/null", _host(root, "/etc/systemd/system/kubelet.service"))
    return root


def _no_sysfs(root: str) -> str:
    _kubeadm(root)
    shutil.rmtree(_host(root, "/sys/devices/system/node"))
    return root


def _checkpoint_linked(root: str) -> str:
    _kubeadm(root)
    _linked(root, "/var/lib/kubelet/memory_manager_state", "/var/lib/kubelet/elsewhere")
    return root


ODD_TREES: Dict[str, Callable[[str], str]] = {
    "every file linked absolutely": _every_file_linked_absolutely,
    "relative links and dot-dot": _relative_links_and_dot_dot,
    "a drop-in that is a FIFO": _made("/etc/kubernetes/kubelet.conf.d/30-fifo.conf", os.mkfifo),
    "a link loop for a drop-in": _made("/etc/kubernetes/kubelet.conf.d/30-loop.conf", lambda path: os.symlink(os.path.basename(path), path)),
    "a dangling drop-in": _made("/etc/kubernetes/kubelet.conf.d/30-gone.conf", lambda path: os.symlink("/nowhere", path)),
    "an unreadable drop-in": _written("/etc/kubernetes/kubelet.conf.d/30-locked.conf", document(memoryManagerPolicy="None").encode(), 0),
    "a zero-filled drop-in": _written("/etc/kubernetes/kubelet.conf.d/30-zeros.conf", b"\0" * 65536),
    "a latin-1 environment file": _written("/etc/default/kubelet", b"KUBELET_EXTRA_ARGS=--node-labels=caf\xe9\n"),
    "a kubeconfig where the configuration should be": _written("/var/lib/kubelet/config.yaml", b"apiVersion: v1\nkind: Config\nusers: []\n"),
    "a key named as a drop-in": _written("/etc/kubernetes/kubelet.conf.d/30-key.conf", b"-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n"),
    "a masked kubelet unit": _masked_unit,
    "no NUMA sysfs": _no_sysfs,
    "a symlinked checkpoint": _checkpoint_linked,
    "a checkpoint that is a directory": _made("/var/lib/kubelet/memory_manager_state", os.mkdir),
    "a checkpoint of binary bytes": _written("/var/lib/kubelet/memory_manager_state", bytes(range(256)) * 4),
}
