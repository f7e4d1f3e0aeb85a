# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/launch.py: the KubeletLaunch record, which of a distribution's units runs
(the enabled one first), and the command and files of a service every profile reports."""

from __future__ import annotations

import os

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.launch import (
    KubeletLaunch,
    _command_words,
    _first_service,
    _is_enabled,
    _service_sources,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.systemd import load_service
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import build_node_tree

RKE2_UNITS = ("rke2-agent", "rke2-server")  # the order of the RKE2 profile: the agent first
UNIT = "[Service]\nExecStart=/usr/local/bin/rke2 %s\n"


def rke2_node(tmp_path, **extra_files):
    """Both units of RKE2's tarball install under /usr/local/lib/systemd/system (docs.rke2.io "Installation Methods")."""
    files = {"/usr/local/lib/systemd/system/%s.service" % name: UNIT % name.split("-")[1] for name in RKE2_UNITS}
    files.update(extra_files)
    return build_node_tree(tmp_path, extra_files=files)


def enable(root, target_dir, unit):
    """What ``systemctl enable`` does: a link to the unit in ``/etc/systemd/system/<target>.wants/``."""
    link_dir = os.path.join(root, "etc/systemd/system", target_dir)
    os.makedirs(link_dir, exist_ok=True)
    # An absolute link names the node's own unit: only the link itself is looked at, never its target on this machine.
    os.symlink("/usr/local/lib/systemd/system/" + unit, os.path.join(link_dir, unit))


def test_a_launch_record_defaults_to_found_with_nothing_read():
    launch = KubeletLaunch("kubeadm", "kubelet")
    assert (launch.args, launch.sources, launch.problems, launch.dropin_redirects, launch.notes) == ((), (), (), (), ())
    assert launch.found is True and launch.default_config is None


def test_an_enabled_unit_is_linked_into_a_wants_or_requires_dir(tmp_path):
    root = rke2_node(tmp_path)
    assert not _is_enabled(HostFiles(root), "rke2-server.service")
    enable(root, "multi-user.target.wants", "rke2-server.service")
    assert _is_enabled(HostFiles(root), "rke2-server.service") and not _is_enabled(HostFiles(root), "rke2-agent.service")
    enable(root, "kubernetes.target.requires", "rke2-agent.service")
    assert _is_enabled(HostFiles(root), "rke2-agent.service")


def test_a_link_in_another_kind_of_dir_does_not_enable(tmp_path):
    root = rke2_node(tmp_path)
    enable(root, "multi-user.target.d", "rke2-server.service")  # a drop-in dir, not a dependency dir
    assert not _is_enabled(HostFiles(root), "rke2-server.service")


def test_the_enabled_unit_runs_else_the_first_that_exists(tmp_path):
    root = rke2_node(tmp_path)
    assert _first_service(HostFiles(root), RKE2_UNITS).name == "rke2-agent.service"  # none enabled: the profile's order
    enable(root, "multi-user.target.wants", "rke2-server.service")
    service = _first_service(HostFiles(root), RKE2_UNITS)
    assert service.name == "rke2-server.service"
    assert [arg.value for arg in _command_words(service)] == ["/usr/local/bin/rke2", "server"]


def test_no_unit_of_the_profile_is_none(tmp_path):
    root = build_node_tree(tmp_path)
    assert _first_service(HostFiles(root), ("k0sworker", "k0scontroller")) is None
    assert _command_words(None) == [] and _service_sources(None) == []


def test_a_services_sources_are_its_unit_drop_ins_and_the_environment_files_read(tmp_path):
    dropin = "/etc/systemd/system/rke2-agent.service.d/10-env.conf"
    root = rke2_node(tmp_path, **{
        dropin: "[Service]\nEnvironmentFile=-/etc/default/rke2-agent\nEnvironmentFile=-/etc/sysconfig/rke2-agent\n",
        "/etc/default/rke2-agent": "RKE2_CONFIG_FILE=/etc/rke2.yaml\n",
    })
    service = load_service(HostFiles(root), "rke2-agent.service")
    # The missing optional file (-/etc/sysconfig/...) was not read, so it is no source.
    assert _service_sources(service) == ["/usr/local/lib/systemd/system/rke2-agent.service", dropin, "/etc/default/rke2-agent"]
