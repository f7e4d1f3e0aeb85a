# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checkpoints written by each release's own code, then a reboot that moves the kernel image.

Kubelet's ``Start`` writes the checkpoint of a node that has none (its ``state`` package, in that
release's layout: V3 from v1.37, the legacy layout before). The judge keeps that file; it must be
``in_sync`` for the probe and start every release, and after a KASLR-sized move of memory between
the NUMA nodes it must be ``drift_within_bound``, refused by every release as found and started by
every release after ``kubelet_mm_checkpoint``'s repair, holding the state we wrote (``judge_tree``).

The second test has each release admit Guaranteed pods first (the judge's ``--admit-pods``: the
memory manager's own ``Allocate``, as kubelet's topology manager calls it at admission), so the file
holds assignments kubelet chose: pods on one NUMA node, 1 GiB hugepages, and a pod too large for one
node in a cross-NUMA group. The repair keeps every assignment; every release starts with them.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from typing import Any, Dict, List, Mapping

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.repair import repair_node
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.checks import judge_tree, written_state
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.judge import judge
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    HUGEPAGE_1G_KB,
    HUGEPAGE_2M_KB,
    KIB,
    Boot,
    two_node_boot,
    uniform_reserved,
    write_kubelet_node,
)

CHECKPOINT = os.path.join("var", "lib", "kubelet", "memory_manager_state")
KERNEL_IMAGE_KB = 45260  # what KASLR moves between NUMA nodes on the molecule guests


def written_by(binary: str, scratch: str, boot, admit: str = "", **node: Any) -> bytes:
    """The checkpoint ``binary``'s release writes at its first start on a node booted as ``boot``
    (and, with ``admit``, after admitting those pods)."""
    tree = write_kubelet_node(os.path.join(scratch, "first-start"), boot, checkpoint_bytes=b"", **node)
    target = os.path.join(scratch, "written")
    started = judge(binary, tree, written=target, admit=admit)
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
    assert _probe.probe(HostFiles(as_written)).assessment.verdict == "in_sync"
    problems = judge_tree(judges, "written by each release", "%s as written" % release, as_written, str(tmp_path / "s1"))
    rebooted = write_kubelet_node(str(tmp_path / "rebooted"), boot,
                                  boot.moved(node0=-KERNEL_IMAGE_KB, node1=KERNEL_IMAGE_KB), checkpoint_bytes=content)
    assert _probe.probe(HostFiles(rebooted)).assessment.verdict == "drift_within_bound"
    problems += judge_tree(judges, "written by each release", "%s after a KASLR reboot" % release, rebooted,
                           str(tmp_path / "s2"))
    assert not problems, "\n".join(problems)
    with open(os.path.join(rebooted, CHECKPOINT), "rb") as handle:
        assert handle.read() == content, "judge_tree repairs a copy: the tree keeps the file kubelet wrote"
    shutil.rmtree(str(tmp_path / "write"))


# Four NUMA nodes of 32 GiB, two 1 GiB pages each, 1 GiB reserved per node (kubeadm-style config).
ADMITTING_BOOT = Boot({n: 32 * GIB // KIB for n in range(4)}, {n: {HUGEPAGE_2M_KB: 0, HUGEPAGE_1G_KB: 2} for n in range(4)})


def guaranteed_pod(uid: str, containers: Mapping[str, Mapping[str, str]]) -> Dict[str, Any]:
    """A v1.Pod (API JSON) whose containers request = limit ``resources`` plus one CPU: QoS Guaranteed."""
    def container(name: str, resources: Mapping[str, str]) -> Dict[str, Any]:
        wanted = dict(resources, cpu="1")
        return {"name": name, "resources": {"requests": wanted, "limits": dict(wanted)}}

    return {"metadata": {"uid": uid, "name": uid, "namespace": "default"},
            "spec": {"containers": [container(name, resources) for name, resources in containers.items()]}}


# Admitted in this order: two pods fit on one NUMA node (one with a 1 GiB page), then a pod whose
# memory (40 GiB) and pages (3 GiB) no single node holds: kubelet gives it a cross-NUMA group.
ADMITTED_PODS: List[Dict[str, Any]] = [
    guaranteed_pod("pod-single-hugepage", {"app": {"memory": "2Gi", "hugepages-1Gi": "1Gi"}}),
    guaranteed_pod("pod-single", {"app": {"memory": "1536Mi"}}),
    guaranteed_pod("pod-group", {"app": {"memory": "40Gi", "hugepages-1Gi": "3Gi"}, "sidecar": {"memory": "512Mi"}}),
]


def affinities(content: bytes) -> Dict[str, Dict[str, List[Any]]]:
    """pod -> container -> [(NUMA affinity, resource, size)] of a checkpoint (the part kubelet reads)."""
    entries = written_state(content).get("entries", {})
    return {pod: {name: sorted((tuple(b["numaAffinity"]), b["type"], b["size"]) for b in blocks) for name, blocks in containers.items()}
            for pod, containers in entries.items()}


@pytest.mark.parametrize("release", build.RELEASES)
def test_a_checkpoint_with_assignments_written_by_each_release_is_judged_at_every_release(judges, tmp_path, release):
    if release not in judges:
        pytest.fail("no judge for %s (NUMA_DRIFT_JUDGE_RELEASES leaves it out)" % release, pytrace=False)
    boot = ADMITTING_BOOT
    pods = tmp_path / "pods.json"
    pods.write_text(json.dumps(ADMITTED_PODS))
    reserved = uniform_reserved(sorted(boot.mem_total_kb))
    content = written_by(judges[release], str(tmp_path / "write"), boot, admit=str(pods), reserved=reserved)
    held = affinities(content)
    assert sorted(held) == sorted(pod["metadata"]["uid"] for pod in ADMITTED_PODS), "kubelet assigned every pod"
    groups = {affinity for containers in held.values() for blocks in containers.values() for affinity, _t, _s in blocks}
    assert any(len(group) == 1 for group in groups) and any(len(group) > 1 for group in groups), groups
    assert any(kind == "hugepages-1Gi" and len(affinity) > 1 for affinity, kind, _s in held["pod-group"]["app"]), held["pod-group"]
    assert any(kind == "hugepages-1Gi" and len(affinity) == 1 for affinity, kind, _s in held["pod-single-hugepage"]["app"])

    as_written = write_kubelet_node(str(tmp_path / "as-written"), boot, checkpoint_bytes=content, reserved=reserved)
    assert _probe.probe(HostFiles(as_written)).assessment.verdict == "in_sync"
    problems = judge_tree(judges, "written by each release, with assignments", "%s as written" % release, as_written, str(tmp_path / "s1"))
    # The kernel image moves from node 0 (single-NUMA pods) to node 1 (kubelet puts the group on [1, 2]).
    moved = boot.moved(node0=-KERNEL_IMAGE_KB, node1=KERNEL_IMAGE_KB)
    rebooted = write_kubelet_node(str(tmp_path / "rebooted"), boot, moved, checkpoint_bytes=content, reserved=reserved)
    assert _probe.probe(HostFiles(rebooted)).assessment.verdict == "drift_within_bound"
    problems += judge_tree(judges, "written by each release, with assignments", "%s after a KASLR reboot" % release, rebooted,
                           str(tmp_path / "s2"))
    assert not problems, "\n".join(problems)

    # judge_tree checked that every release holds what the repair wrote; the repair kept kubelet's assignments.
    copy = str(tmp_path / "repaired")
    shutil.copytree(rebooted, copy, symlinks=True)
    fresh = _probe.probe(HostFiles(copy))
    assert repair_node(fresh, backup_dir=str(tmp_path / "backups")).changed
    with open(fresh.path, "rb") as handle:
        assert affinities(handle.read()) == held
