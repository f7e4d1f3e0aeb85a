# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checkpoints written by each release's own code, then a reboot that moves the kernel image.

Kubelet's ``Start`` writes the checkpoint of a node that has none (its ``state`` package, in that
release's layout: V3 from v1.37, the legacy layout before). The judge keeps that file; it must be
``in_sync`` for the probe and start every release, and after a KASLR-sized move of memory between
the NUMA nodes it must be ``drift_within_bound``, refused by every release as found and started by
every release after ``kubelet_mm_checkpoint``'s repair, holding the state we wrote (``judge_tree``).
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils import _drift as drift
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.checks import judge_tree
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.judge import judge
from ansible_collections.nodeops.numa_drift.tests.unit.plugins.module_utils.scenario import two_node_boot, write_kubelet_node

CHECKPOINT = os.path.join("var", "lib", "kubelet", "memory_manager_state")
KERNEL_IMAGE_KB = 45260  # what KASLR moves between NUMA nodes on the molecule guests


def written_by(binary: str, scratch: str, boot) -> bytes:
    """The checkpoint ``binary``'s release writes at its first start on a node booted as ``boot``."""
    tree = write_kubelet_node(os.path.join(scratch, "first-start"), boot, checkpoint_bytes=b"")
    target = os.path.join(scratch, "written")
    started = judge(binary, tree, written=target)
    assert started.started, started.brief()
    assert not os.path.exists(os.path.join(tree, CHECKPOINT)), "the judge wrote into the tree"
    with open(target, "rb") as handle:
        return handle.read()


@pytest.mark.parametrize("release", build.RELEASES)
def test_a_checkpoint_written_by_each_release_is_judged_at_every_release(judges, tmp_path, release):
    if release not in judges:
        pytest.fail("no judge for %s (NUMA_DRIFT_JUDGE_RELEASES leaves it out)" % release, pytrace=False)
    boot = two_node_boot()
    content = written_by(judges[release], str(tmp_path / "write"), boot)
    layout = json.loads(content)
    assert ("data" in layout) == (release >= "v1.37"), "v1.37 writes the V3 layout, earlier releases the legacy one"

    as_written = write_kubelet_node(str(tmp_path / "as-written"), boot, checkpoint_bytes=content)
    assert drift.probe(root=as_written).assessment.verdict == "in_sync"
    problems = judge_tree(judges, "written by each release", "%s as written" % release, as_written, str(tmp_path / "s1"))
    rebooted = write_kubelet_node(str(tmp_path / "rebooted"), boot,
                                  boot.moved(node0=-KERNEL_IMAGE_KB, node1=KERNEL_IMAGE_KB), checkpoint_bytes=content)
    assert drift.probe(root=rebooted).assessment.verdict == "drift_within_bound"
    problems += judge_tree(judges, "written by each release", "%s after a KASLR reboot" % release, rebooted,
                           str(tmp_path / "s2"))
    assert not problems, "\n".join(problems)
    with open(os.path.join(rebooted, CHECKPOINT), "rb") as handle:
        assert handle.read() == content, "judge_tree repairs a copy: the tree keeps the file kubelet wrote"
    shutil.rmtree(str(tmp_path / "write"))
