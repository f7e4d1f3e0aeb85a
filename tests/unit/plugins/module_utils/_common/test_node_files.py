# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_common/node_files.py: a node's files through one interface, symlinks resolved as
on the node, one reader with one rule for links, limits and refusals; on the node and on the controller alike.

A node's filesystem mounted at a non-``/`` root (a container's ``/host``, a rescue system's ``/mnt``)
holds absolute symbolic links that mean paths of the node, not of the probing machine: the probe must
give the verdict it gives when the same node is probed at its own ``/``. Every reading case runs both
ways (``tests/support/node_answer.py``): on the node's files and on the node reader's answer of them.
"""

from __future__ import annotations

import errno
import os
import shutil
import time

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import (
    MAX_SYMLINKS,
    FileTooLargeError,
    HostFiles,
    NotRegularFileError,
    list_dir,
    node_join,
    read_node_text,
    read_regular_file,
    under_root,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import walk_config_dir
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import NodeReadError, read_node_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.support.node_answer import both_ways
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
    expected = probe(HostFiles(plain))
    assert expected.assessment.verdict == ("drift_within_bound" if drift_kib else "in_sync")
    assert expected.settings.policy == "Static" and expected.settings.service == "kubelet"
    result = probe(HostFiles(mounted))
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
    # The same resolution on the controller, from the node reader's answer: in memory, never through this kernel.
    for path in ("/abs/dir/file", "/rel/file", "/real/dir/up/dir/file", "/real/last", "/dangling", "/../../etc/passwd"):
        on_node, answered = both_ways(root, lambda files, path=path: files.resolve(path))
        assert on_node == answered == under_root(root, path)[len(root):], path


def test_a_symlink_loop_under_root_is_eloop_as_on_the_node(tmp_path):
    root = str(tmp_path)
    os.symlink("/b", _host(root, "/a"))
    os.symlink("/a", _host(root, "/b"))
    with pytest.raises(OSError) as raised:
        under_root(root, "/a/file")
    assert raised.value.errno == errno.ELOOP and "/a/file" in str(raised.value)
    on_node, answered = both_ways(root, lambda files: files.read_text("/a/file"))
    assert on_node == answered and on_node[0] == "OSError" and "too many levels of symbolic links" in on_node[1]
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
    for path in ("/real", "/link"):
        on_node, answered = both_ways(str(tmp_path), lambda files, path=path: list_dir(files, path, "/shown"))
        assert on_node == answered == (["a", "b", "c.conf"], None)


def test_list_dir_missing_not_a_directory_and_unlistable(tmp_path):
    (tmp_path / "file").write_text("x")
    os.symlink("nowhere", str(tmp_path / "dangling"))
    os.symlink("loop", str(tmp_path / "loop"))
    expected = {
        "/absent": (None, None),
        "/dangling": (None, None),
        "/file": (None, "/file is not a directory"),
        "/file/under": (None, "/file/under is not a directory"),
        "/loop": (None, "cannot list /loop: %s" % os.strerror(errno.ELOOP)),
    }
    for path, listed in expected.items():
        on_node, answered = both_ways(str(tmp_path), lambda files, path=path: list_dir(files, path, path))
        assert on_node == answered, path
        assert on_node[0] is None and (on_node[1] == listed[1] or (path == "/loop" and "symbolic links" in on_node[1])), (path, on_node)


def test_list_dir_resolves_an_absolute_link_under_root(tmp_path):
    root = tmp_path / "node"
    (root / "etc" / "real.d").mkdir(parents=True)
    (root / "etc" / "real.d" / "10.conf").write_text("")
    os.symlink("/etc/real.d", str(root / "etc" / "link.d"))  # a node path: resolved from root, not from this machine's /
    assert both_ways(str(root), lambda files: list_dir(files, "/etc/link.d", "/etc/link.d")) == ((["10.conf"], None),) * 2
    assert both_ways(str(root), lambda files: list_dir(files, "/etc/absent.d", "/etc/absent.d")) == ((None, None),) * 2


def test_every_lister_uses_the_one_rule(tmp_path):
    """The --config-dir walk and sysfs name what they list in the lister's words; only what a missing
    directory means is theirs (kubelet refuses a missing --config-dir; sysfs without nodes is no topology)."""
    root = tmp_path / "node"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "kubelet.conf.d").write_text("not a directory")
    files = HostFiles(str(root))
    assert walk_config_dir(files, "/etc/kubelet.conf.d") == ([], ["kubelet --config-dir /etc/kubelet.conf.d is not a directory"])
    assert walk_config_dir(files, "/etc/absent.d") == ([], ["kubelet --config-dir /etc/absent.d does not exist (kubelet would not start)"])
    missing = "%s does not exist: kubelet would see no NUMA topology and no memory" % under_root(str(root), "/sys/devices/system/node")
    with pytest.raises(NodeReadError) as raised:
        read_node_facts(files)
    assert missing in str(raised.value)


# --------------------------------------------------------------------------- the one reader


def write(root, node_path, data=b"x"):
    path = os.path.join(str(root), node_path.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


def test_a_regular_file_is_read_up_to_its_limit(tmp_path):
    write(tmp_path, "/proc/iomem", b"0123456789")
    files = HostFiles(str(tmp_path))
    assert files.read_bytes("/proc/iomem", 10) == b"0123456789"
    with pytest.raises(FileTooLargeError, match="is larger than 9 bytes"):
        files.read_bytes("/proc/iomem", 9)
    assert files.read_bytes("/proc/iomem", 4, truncate=True) == b"0123"
    with pytest.raises(FileNotFoundError):
        files.read_bytes("/proc/missing", 10)
    for limit, truncate in ((10, False), (9, False), (4, True)):
        on_node, answered = both_ways(str(tmp_path), lambda files: files.read_bytes("/proc/iomem", limit, truncate=truncate))
        assert on_node == answered, (limit, truncate)


def test_a_fifo_is_refused_at_once_followed_or_not(tmp_path):
    os.makedirs(str(tmp_path / "etc"))
    os.mkfifo(str(tmp_path / "etc" / "fifo"))
    for follow in (False, True):
        started = time.monotonic()
        with pytest.raises(NotRegularFileError) as raised:
            HostFiles(str(tmp_path)).read_bytes("/etc/fifo", 100, follow=follow)
        assert raised.value.kind == "a FIFO (named pipe)" and time.monotonic() - started < 5
        on_node, answered = both_ways(str(tmp_path), lambda files: files.read_bytes("/etc/fifo", 100, follow=follow))
        assert on_node == answered == ("NotRegularFileError", "%s/etc/fifo is a FIFO (named pipe), not a regular file" % tmp_path)
    assert both_ways(str(tmp_path), lambda files: read_node_text(files, "/etc/fifo")) == ((None, "/etc/fifo is not a regular file", True),) * 2


def test_a_symlink_is_refused_unless_followed_and_followed_under_root(tmp_path):
    write(tmp_path, "/lib/systemd/system/kubelet.service", b"[Service]\n")
    os.makedirs(str(tmp_path / "etc/systemd/system"))
    os.symlink("/lib/systemd/system/kubelet.service", str(tmp_path / "etc/systemd/system/kubelet.service"))
    files = HostFiles(str(tmp_path))
    with pytest.raises(NotRegularFileError) as raised:
        files.read_bytes("/etc/systemd/system/kubelet.service", 100)
    assert "symbolic link (to /lib/systemd/system/kubelet.service; not followed)" in str(raised.value)
    # Followed as systemd follows it: the absolute target is a node path, read under root.
    assert files.read_bytes("/etc/systemd/system/kubelet.service", 100, follow=True) == b"[Service]\n"
    assert read_node_text(files, "/etc/systemd/system/kubelet.service") == ("[Service]\n", None, True)
    # The engine's raw reads never follow the last link (sysfs, procfs, the checkpoint): both ways alike.
    on_node, answered = both_ways(str(tmp_path), lambda files: files.read_bytes("/etc/systemd/system/kubelet.service", 100))
    assert on_node == answered and on_node[0] == "NotRegularFileError"


def test_read_node_text_names_the_node_path_in_every_problem(tmp_path):
    root = str(tmp_path)
    write(tmp_path, "/etc/big", b"a" * 11)
    write(tmp_path, "/etc/latin1", b"caf\xe9\n")
    write(tmp_path, "/etc/zeros.conf", b"\0" * 4096)
    write(tmp_path, "/etc/kubernetes/pki/ca.key", b"secret")
    write(tmp_path, "/etc/kubernetes/kubelet.conf", b"apiVersion: v1\nkind: Config\nusers:\n- name: x\n  user:\n    client-key-data: c2VjcmV0\n")
    os.makedirs(str(tmp_path / "etc/dir"))
    os.symlink("/nowhere", str(tmp_path / "etc/dangling"))
    expected = {
        "/etc/missing": (None, "/etc/missing does not exist", False),
        "/etc/dangling": (None, "/etc/dangling does not exist", False),
        "/etc/dir": (None, "/etc/dir is not a regular file", True),
        "/etc/zeros.conf": (None, "/etc/zeros.conf holds NUL bytes: it is not a text file", True),
        "/etc/kubernetes/pki/ca.key": (None, "/etc/kubernetes/pki/ca.key is not read: its name marks a key, certificate, "
                                       "kubeconfig or token (a key, certificate, kubeconfig or token never leaves the node)", True),
        "/etc/kubernetes/kubelet.conf": (None, "/etc/kubernetes/kubelet.conf is not read: it is a kubeconfig (a key, certificate, "
                                         "kubeconfig or token never leaves the node)", True),
    }
    for path, said in expected.items():
        assert both_ways(root, lambda files, path=path: read_node_text(files, path)) == (said, said), path
    assert both_ways(root, lambda files: read_node_text(files, "/etc/big", limit=10)) == ((None, "/etc/big is larger than 10 bytes", True),) * 2
    text, problem, exists = read_node_text(HostFiles(root), "/etc/latin1")
    assert text is None and exists and problem.startswith("/etc/latin1 is not UTF-8: ")


def test_an_unreadable_file_is_the_same_error_both_ways(tmp_path):
    write(tmp_path, "/etc/default/kubelet", b"KUBELET_EXTRA_ARGS=--v=2\n")
    os.chmod(str(tmp_path / "etc/default/kubelet"), 0)
    if os.access(str(tmp_path / "etc/default/kubelet"), os.R_OK):  # root reads it anyway: a node reading as root
        read_as = "KUBELET_EXTRA_ARGS=--v=2\n"
        assert both_ways(str(tmp_path), lambda files: read_node_text(files, "/etc/default/kubelet")) == ((read_as, None, True),) * 2
        return
    on_node, answered = both_ways(str(tmp_path), lambda files: read_node_text(files, "/etc/default/kubelet"))
    assert on_node == answered == (None, "cannot read /etc/default/kubelet: Permission denied", True)


def test_credentials_are_redacted_before_the_engine_reads_them(tmp_path):
    write(tmp_path, "/etc/systemd/system/k3s.service.env", b"K3S_TOKEN=K10abc::server:0123\nK3S_URL=https://10.0.0.1:6443\n")
    on_node, answered = both_ways(str(tmp_path), lambda files: files.read_text("/etc/systemd/system/k3s.service.env"))
    assert on_node == answered == "K3S_TOKEN=REDACTED\nK3S_URL=https://10.0.0.1:6443\n"


def test_the_write_paths_reader_reads_host_paths(tmp_path):
    path = write(tmp_path, "/var/lib/nodeops-numa-drift/history.json", b"[]")
    assert read_regular_file(path, 2) == b"[]"
    with pytest.raises(FileTooLargeError):
        read_regular_file(path, 1)
