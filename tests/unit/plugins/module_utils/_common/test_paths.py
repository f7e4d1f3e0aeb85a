# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_common/paths.py: node paths under ``root``, symlinks resolved as on the node.

A node's filesystem mounted at a non-``/`` root (a container's ``/host``, a rescue system's ``/mnt``)
holds absolute symbolic links that mean paths of the node, not of the probing machine: the probe must
give the verdict it gives when the same node is probed at its own ``/``.
"""

from __future__ import annotations

import errno
import os
import shutil

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.paths import (
    MAX_SYMLINKS,
    list_dir,
    list_node_dir,
    node_join,
    under_root,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import walk_config_dir
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import NodeReadError, read_node_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    KIB,
    MIB,
    checkpoint_file,
    guaranteed_pods,
    kubelet_config,
    two_node_boot,
    uniform_reserved,
    write_kubelet_node,
)

STATIC = kubelet_config(uniform_reserved([0, 1]))
KIND = '{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"'
# kubeadm's layout: unit, drop-in, environment file, --config and --config-dir.
FILES = {
    "/usr/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet\n",
    "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf": "[Service]\n"
    'Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"\n'
    "EnvironmentFile=-/etc/default/kubelet\n"
    "ExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_CONFIG_ARGS $KUBELET_EXTRA_ARGS\n",
    "/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--config-dir=/etc/kubernetes/kubelet.conf.d\n",
    "/etc/kubernetes/kubelet.conf.d/50-numa.conf": KIND + ', "memoryManagerPolicy": "Static"}\n',
}
# Node paths turned into absolute symbolic links to a copy elsewhere on the node (files and directories).
LINKED = (
    "/usr/lib/systemd/system/kubelet.service",
    "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf",
    "/etc/default/kubelet",
    "/etc/kubernetes/kubelet.conf.d/50-numa.conf",
    "/var/lib/kubelet/config.yaml",
)
STORE = "/srv/node-store"
# kubelet's root dir moved and linked (docs/safety.md: symlinked directories above the checkpoint are fine).
KUBELET_DIR, KUBELET_DIR_TARGET = "/var/lib/kubelet", "/data/kubelet"


def _node(root, verdict_drift_kib):
    recorded = two_node_boot()
    current = recorded.moved(node0=-verdict_drift_kib, node1=verdict_drift_kib)
    return write_kubelet_node(root, recorded, current, pods=guaranteed_pods(2, (0,)), config=STATIC, extra_files=FILES)


def _host(root, node_path):
    return os.path.join(root, node_path.lstrip("/"))


def _link_absolutely(root, node_path, stored=None):
    """Move ``node_path`` to ``stored`` (``STORE/<node_path>``) and leave an absolute symlink (a node path) in its place."""
    stored = stored or node_join(STORE, node_path.lstrip("/"))
    os.makedirs(os.path.dirname(_host(root, stored)), exist_ok=True)
    shutil.move(_host(root, node_path), _host(root, stored))
    os.symlink(stored, _host(root, node_path))


def _summary(result):
    settings = result.settings
    return (result.assessment.verdict, result.assessment.causes, settings.distribution, settings.service, settings.sources,
            settings.config_path, settings.config_dir, settings.dropins, settings.field_sources, settings.policy,
            settings.reserved_memory, settings.config_problems, settings.problems, result.raw)


@pytest.mark.parametrize("drift_kib", [40 * MIB // KIB, 0])
def test_absolute_symlinks_resolve_under_a_mounted_root_as_on_the_node(tmp_path, drift_kib):
    plain = _node(str(tmp_path / "plain"), drift_kib)
    mounted = _node(str(tmp_path / "host"), drift_kib)
    for node_path in LINKED:
        _link_absolutely(mounted, node_path)
    _link_absolutely(mounted, KUBELET_DIR, KUBELET_DIR_TARGET)
    # Nothing of the node exists on the probing machine at these paths: the links only make sense under root.
    assert not os.path.exists(STORE) and not os.path.exists(KUBELET_DIR_TARGET)
    expected = probe(plain)
    assert expected.assessment.verdict == ("drift_within_bound" if drift_kib else "in_sync")
    assert expected.settings.policy == "Static" and expected.settings.service == "kubelet"
    result = probe(mounted)
    assert _summary(result) == _summary(expected)
    # The checkpoint is found through the symlinked kubelet directory, resolved under root.
    assert result.path == _host(mounted, node_join(KUBELET_DIR_TARGET, "memory_manager_state"))
    # On the probing machine the same path leads elsewhere (the link is absolute): nothing there.
    assert not os.path.exists(checkpoint_file(mounted))


def test_under_root_resolves_every_symlink_under_root(tmp_path):
    root = str(tmp_path)
    os.makedirs(_host(root, "/real/dir"))
    open(_host(root, "/real/dir/file"), "w").close()
    os.symlink("/real", _host(root, "/abs"))  # absolute: a node path
    os.symlink("real/dir", _host(root, "/rel"))  # relative: from its own directory
    os.symlink("../../../../../../../real", _host(root, "/real/dir/up"))  # '..' stops at root, as at '/'
    os.symlink("/real/dir/file", _host(root, "/real/last"))
    os.symlink("/missing/file", _host(root, "/dangling"))
    assert under_root(root, "/abs/dir/file") == _host(root, "/real/dir/file")
    assert under_root(root, "/rel/file") == _host(root, "/real/dir/file")
    assert under_root(root, "/real/dir/up/dir/file") == _host(root, "/real/dir/file")
    assert under_root(root, "/real/last") == _host(root, "/real/dir/file")
    assert under_root(root, "/dangling") == _host(root, "/missing/file")
    # follow=False: the last component is left as it is (a symlinked checkpoint is refused, not followed).
    assert under_root(root, "/abs/last", follow=False) == _host(root, "/real/last")
    assert under_root(root, "/real/last", follow=False) == _host(root, "/real/last")
    # '..' in the node path itself never climbs out of root.
    assert under_root(root, "/../../etc/passwd") == _host(root, "/etc/passwd")
    # At '/', the node is this machine: the path is the node path (the kernel resolves it).
    assert under_root("/", "/abs/../etc//passwd") == "/etc/passwd"


def test_a_symlink_loop_under_root_is_eloop_as_on_the_node(tmp_path):
    root = str(tmp_path)
    os.symlink("/b", _host(root, "/a"))
    os.symlink("/a", _host(root, "/b"))
    with pytest.raises(OSError) as raised:
        under_root(root, "/a/file")
    assert raised.value.errno == errno.ELOOP and "/a/file" in str(raised.value)
    # A chain of exactly MAX_SYMLINKS (the kernel's limit, path_resolution(7)) links still resolves.
    os.makedirs(_host(root, "/chain"))
    for index in range(MAX_SYMLINKS):
        os.symlink("/chain/%d" % (index + 1), _host(root, "/chain/%d" % index))
    open(_host(root, "/chain/%d" % MAX_SYMLINKS), "w").close()
    assert under_root(root, "/chain/0") == _host(root, "/chain/%d" % MAX_SYMLINKS)


# --------------------------------------------------------------------------- the one lister


def test_list_dir_sorts_and_follows_a_link_to_a_directory(tmp_path):
    (tmp_path / "real").mkdir()
    for name in ("b", "a", "c.conf"):
        (tmp_path / "real" / name).write_text("")
    os.symlink("real", str(tmp_path / "link"))
    assert list_dir(str(tmp_path / "real"), "/shown") == (["a", "b", "c.conf"], None)
    assert list_dir(str(tmp_path / "link"), "/shown") == (["a", "b", "c.conf"], None)


def test_list_dir_missing_not_a_directory_and_unlistable(tmp_path):
    (tmp_path / "file").write_text("x")
    os.symlink("nowhere", str(tmp_path / "dangling"))
    os.symlink("loop", str(tmp_path / "loop"))
    assert list_dir(str(tmp_path / "absent"), "/absent") == (None, None)
    assert list_dir(str(tmp_path / "dangling"), "/dangling") == (None, None)
    assert list_dir(str(tmp_path / "file"), "/etc/file") == (None, "/etc/file is not a directory")
    assert list_dir(str(tmp_path / "loop"), "/loop") == (None, "cannot list /loop: %s" % os.strerror(errno.ELOOP))


def test_list_node_dir_resolves_an_absolute_link_under_root(tmp_path):
    root = tmp_path / "node"
    (root / "etc" / "real.d").mkdir(parents=True)
    (root / "etc" / "real.d" / "10.conf").write_text("")
    os.symlink("/etc/real.d", str(root / "etc" / "link.d"))  # a node path: resolved from root, not from this machine's /
    assert list_node_dir(str(root), "/etc/link.d") == (["10.conf"], None)
    assert list_node_dir(str(root), "/etc/absent.d") == (None, None)


def test_every_lister_uses_the_one_rule(tmp_path):
    """The --config-dir walk and sysfs name what they list in the lister's words; only what a missing
    directory means is theirs (kubelet refuses a missing --config-dir; sysfs without nodes is no topology)."""
    root = tmp_path / "node"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "kubelet.conf.d").write_text("not a directory")
    assert walk_config_dir(str(root), "/etc/kubelet.conf.d") == ([], ["kubelet --config-dir /etc/kubelet.conf.d is not a directory"])
    assert walk_config_dir(str(root), "/etc/absent.d") == ([], ["kubelet --config-dir /etc/absent.d does not exist (kubelet would not start)"])
    missing = "%s does not exist: kubelet would see no NUMA topology and no memory" % under_root(str(root), "/sys/devices/system/node")
    with pytest.raises(NodeReadError) as raised:
        read_node_facts(str(root))
    assert missing in str(raised.value)
