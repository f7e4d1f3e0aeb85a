# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/systemd.py: units, drop-ins, words and environment files as systemd reads them."""

from __future__ import annotations

import os

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.systemd import find_dropins, find_unit


def write(root, node_path, text=""):
    path = os.path.join(str(root), node_path.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def test_the_unit_of_highest_precedence_wins_and_a_masked_unit_is_named(tmp_path):
    write(tmp_path, "/usr/lib/systemd/system/kubelet.service", "[Service]\n")
    assert find_unit(HostFiles(str(tmp_path)), "kubelet.service") == ("/usr/lib/systemd/system/kubelet.service", [])
    write(tmp_path, "/etc/systemd/system/kubelet.service", "[Service]\n")
    assert find_unit(HostFiles(str(tmp_path)), "kubelet.service") == ("/etc/systemd/system/kubelet.service", [])
    os.remove(str(tmp_path / "etc/systemd/system/kubelet.service"))
    os.symlink("/dev/null", str(tmp_path / "etc/systemd/system/kubelet.service"))
    assert find_unit(HostFiles(str(tmp_path)), "kubelet.service") == (None, ["/etc/systemd/system/kubelet.service is masked (linked to /dev/null)"])


def test_a_unit_linked_absolutely_is_found_under_root(tmp_path):
    write(tmp_path, "/opt/units/kubelet.service", "[Service]\n")
    os.makedirs(str(tmp_path / "etc/systemd/system"))
    os.symlink("/opt/units/kubelet.service", str(tmp_path / "etc/systemd/system/kubelet.service"))
    assert find_unit(HostFiles(str(tmp_path)), "kubelet.service") == ("/etc/systemd/system/kubelet.service", [])


def test_drop_ins_sort_by_name_and_earlier_directories_shadow_later_ones(tmp_path):
    write(tmp_path, "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf")
    write(tmp_path, "/usr/lib/systemd/system/kubelet.service.d/20-extra.conf")
    write(tmp_path, "/etc/systemd/system/kubelet.service.d/20-extra.conf")
    write(tmp_path, "/etc/systemd/system/kubelet.service.d/05-first.conf")
    write(tmp_path, "/etc/systemd/system/kubelet.service.d/README")
    assert find_dropins(HostFiles(str(tmp_path)), "kubelet.service") == ([
        "/etc/systemd/system/kubelet.service.d/05-first.conf",
        "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf",
        "/etc/systemd/system/kubelet.service.d/20-extra.conf",
    ], [])
