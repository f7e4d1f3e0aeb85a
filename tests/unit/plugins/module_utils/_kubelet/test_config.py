# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/config.py: the --config-dir walk as kubelet's filepath.WalkDir does it."""

from __future__ import annotations

import os

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import go_ext, walk_config_dir


def write(root, node_path, text="{}"):
    path = os.path.join(str(root), node_path.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def test_go_ext_is_filepath_ext():
    assert [go_ext(name) for name in ("a.conf", ".conf", "a.conf.bak", "README", "a.")] == [".conf", ".conf", ".bak", "", "."]


def test_the_walk_is_lexical_recurses_in_place_and_keeps_only_conf(tmp_path):
    for name in ("/d/20-b.conf", "/d/100-a.conf", "/d/15/x.conf", "/d/20-b.conf.bak", "/d/README"):
        write(tmp_path, name)
    found, problems = walk_config_dir(str(tmp_path), "/d")
    assert [shown for shown, _source in found] == ["/d/100-a.conf", "/d/15/x.conf", "/d/20-b.conf"] and problems == []


def test_a_missing_dir_is_a_problem_naming_it(tmp_path):
    assert walk_config_dir(str(tmp_path), "/etc/kubernetes/kubelet.conf.d") == (
        [], ["kubelet --config-dir /etc/kubernetes/kubelet.conf.d does not exist (kubelet would not start)"])


def test_a_drop_in_linked_absolutely_is_listed_and_read_under_root(tmp_path):
    write(tmp_path, "/srv/numa.conf")
    os.makedirs(str(tmp_path / "d"))
    os.symlink("/srv/numa.conf", str(tmp_path / "d/50-numa.conf"))
    assert walk_config_dir(str(tmp_path), "/d") == ([("/d/50-numa.conf", "/d/50-numa.conf")], [])
