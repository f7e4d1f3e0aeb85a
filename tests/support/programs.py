# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The program that runs kubelet on a test node: a script that says its release as the real one does, or the
real, version-stamped kubelet the guests run (``tests/vm/kubelet_disk.py`` builds it), put where the node's unit
runs it.

What each program prints is what the real one prints: ``kubelet --version`` -> ``Kubernetes v1.34.4``, ``k3s
--version`` -> ``k3s version v1.34.4+k3s1 (<commit>)`` then a Go line, ``rke2 --version`` -> ``rke2 version
v1.34.4+rke2r1 (<commit>)``, ``k0s version`` -> ``v1.34.4+k0s.0``; MicroK8s says it in its snap's
``meta/snap.yaml`` (``version: v1.34.4``).
"""

from __future__ import annotations

import os
import shutil
from typing import Dict, Optional, Tuple

# Where each layout of tests/support/distributions.py (and the sandbox's) keeps the program its unit runs.
PROGRAMS = {
    "k3s": "/usr/local/bin/k3s",
    "rke2": "/usr/local/bin/rke2",
    "k0s": "/usr/local/bin/k0s",
    "eks-al2023": "/usr/bin/kubelet",
    "eks-al2": "/usr/bin/kubelet",
    "openshift": "/usr/bin/kubelet",  # kubenswrapper /usr/bin/kubelet ...
    "kubespray": "/usr/local/bin/kubelet",
    "kubeadm-config-dir": "/usr/bin/kubelet",
    "kubeadm-flags": "/usr/bin/kubelet",
    "kubeadm": "/usr/bin/kubelet",
}
MICROK8S_SNAP_YAML = "/snap/microk8s/current/meta/snap.yaml"


def said(program: str, version: str) -> str:
    """What ``program`` (by its base name) prints when asked its version, for ``version`` ``v1.34.4``."""
    name = os.path.basename(program)
    if name == "k3s":
        return "k3s version %s+k3s1 (6b8e1f9c)\ngo version go1.24.6\n" % version
    if name == "rke2":
        return "rke2 version %s+rke2r1 (2a1c5d7e)\ngo version go1.24.6 X:boringcrypto\n" % version
    if name == "k0s":
        return "%s+k0s.0\n" % version
    return "Kubernetes %s\n" % version


def version_script(output: str, rc: int = 0, asked: Tuple[str, ...] = ("--version", "version"), marker: Optional[str] = None) -> str:
    """A program that prints ``output`` and exits ``rc`` when asked its version, and fails otherwise; ``marker``:
    a host file it appends a line to each time it runs (to count its runs)."""
    lines = ["#!/bin/sh"]
    if marker:
        lines.append("echo \"$*\" >> '%s'" % marker)
    lines.append('case "$1" in')
    lines.append("  %s) cat <<'EOF'\n%sEOF\n  exit %d ;;" % ("|".join(asked), output, rc))
    lines.append("esac")
    lines.append('echo "a test program: only asked its version" >&2')
    lines.append("exit 2")
    return "\n".join(lines) + "\n"


def install_program(root: str, node_path: str, text: str) -> str:
    """Write the executable ``text`` at ``node_path`` under ``root``; its host path."""
    path = os.path.join(root, node_path.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, 0o755)
    return path


def install_release(root: str, layout: str, version: str) -> Optional[str]:
    """Put the program of ``layout`` saying ``version`` (``v1.34.4``) where the layout's unit runs it (MicroK8s:
    its snap.yaml); the host path written."""
    if layout == "microk8s":
        path = os.path.join(root, MICROK8S_SNAP_YAML.lstrip("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("name: microk8s\nversion: %s\nsummary: Kubernetes for workstations and appliances\nconfinement: classic\n" % version)
        return path
    program = PROGRAMS[layout]
    return install_program(root, program, version_script(said(program, version)))


# The real kubelet the guests run, version-stamped (tests/vm/kubelet_disk.py): release -> its cached binary.
REAL_KUBELET_VERSIONS = ("v1.34.4", "v1.37.2")


def real_kubelets() -> Dict[str, str]:
    """``{version: binary}`` of the real, version-stamped kubelets built for the guests (built when missing;
    {} where Go cannot build them)."""
    from ansible_collections.nodeops.numa_drift.tests.vm import kubelet_disk  # pylint: disable=import-outside-toplevel

    return kubelet_disk.built_kubelets(REAL_KUBELET_VERSIONS)


def install_real_kubelet(root: str, node_path: str, binary: str) -> str:
    """The real kubelet ``binary`` at ``node_path`` under ``root`` (a hard link where the file system allows)."""
    path = os.path.join(root, node_path.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        os.link(binary, path)
    except OSError:
        shutil.copy2(binary, path)
    return path
