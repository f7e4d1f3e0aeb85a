# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_output/metrics.py: the textfile collector's file."""

from __future__ import annotations

import os
import stat

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output import metrics
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import VERDICTS
from ansible_collections.nodeops.numa_drift.tests.support.scenario import KIB, MIB, guaranteed_pods, two_node_boot, write_kubelet_node


def test_metrics_of_a_drifted_node(tmp_path):
    recorded = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "node"), recorded, recorded.moved(node0=-40 * MIB // KIB, node1=40 * MIB // KIB),
                              pods=guaranteed_pods(1, (0,)))
    assessment = probe(HostFiles(root)).assessment
    history = [{"time": 1.0, "action": "repaired", "by": "guard"}, {"time": 2.0, "action": "repaired", "by": "role"},
               {"time": 3.0, "action": "restored", "by": "role"}]
    text = metrics.render_metrics(assessment, history, now=1796205300.25, duration_seconds=0.5)
    lines = text.splitlines()
    assert 'nodeops_numa_drift_verdict{verdict="drift_within_bound"} 1' in lines
    assert sum(line.startswith("nodeops_numa_drift_verdict{") for line in lines) == len(VERDICTS)
    assert 'nodeops_numa_drift_memory_drift_bytes{numa_node="0",resource="memory"} %d' % (-40 * MIB) in lines
    assert 'nodeops_numa_drift_memory_drift_bytes{numa_node="1",resource="memory"} %d' % (40 * MIB) in lines
    assert "nodeops_numa_drift_bound_bytes %d" % assessment.bound_bytes in lines
    assert 'nodeops_numa_drift_repairs_total{by="guard"} 1' in lines and 'nodeops_numa_drift_repairs_total{by="role"} 1' in lines
    assert sum(line.startswith("nodeops_numa_drift_repairs_total{") for line in lines) == len(metrics.REPAIR_AUTHORS) == 2
    assert "nodeops_numa_drift_last_run_timestamp_seconds 1796205300.25" in lines
    assert "nodeops_numa_drift_guard_duration_seconds 0.5" in lines
    # The verdict found earlier in this boot, when a later run passes it.
    assert 'nodeops_numa_drift_verdict{verdict="in_sync"} 1' in metrics.render_metrics(assessment, [], 0, verdict="in_sync").splitlines()


def test_write_metrics_is_atomic_and_world_readable(tmp_path):
    directory = str(tmp_path / "textfile_collector")
    path = metrics.write_metrics(directory, "a 1\n")
    assert path == metrics.metrics_path(directory) == os.path.join(directory, "nodeops_numa_drift.prom")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == "a 1\n"
    assert os.listdir(directory) == ["nodeops_numa_drift.prom"]


def test_metrics_say_the_cpu_managers_class_and_cpus(tmp_path):
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.assess import CPU_CLASSES  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodeops.numa_drift.tests.support import cputree  # pylint: disable=import-outside-toplevel

    root = cputree.build_cpu_node(str(tmp_path / "node"), cputree.machine(sockets=2), range(16), {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}},
                                  cputree.cpu_checkpoint_v2("static", "0-1,3-5,8-9,11-13", {"pod-a": {"app": "2,10"}}))
    lines = metrics.render_metrics(probe(HostFiles(root), kubelet_release="1.35.4").assessment, [], now=0).splitlines()
    assert 'nodeops_numa_drift_verdict{verdict="cpu_default_set_stale"} 1' in lines
    assert [line for line in lines if line.startswith("nodeops_numa_drift_cpu_manager_class{") and line.endswith(" 1")] == [
        'nodeops_numa_drift_cpu_manager_class{class="cpus_unrecorded"} 1']
    assert sum(line.startswith("nodeops_numa_drift_cpu_manager_class{") for line in lines) == len(CPU_CLASSES)
    # 16 online; the file records 0-1,3-5,8-9,11-13 and pins 2,10: 12 recorded, 2 pinned.
    assert [line for line in lines if line.startswith("nodeops_numa_drift_cpu_manager_cpus{")] == [
        'nodeops_numa_drift_cpu_manager_cpus{set="online"} 16', 'nodeops_numa_drift_cpu_manager_cpus{set="recorded"} 12',
        'nodeops_numa_drift_cpu_manager_cpus{set="pinned"} 2']


def test_metrics_of_a_node_whose_cpu_manager_is_not_static_count_no_cpus(tmp_path):
    recorded = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "node"), recorded, recorded, pods=guaranteed_pods(1, (0,)))
    text = metrics.render_metrics(probe(HostFiles(root)).assessment, [], now=0)
    assert 'nodeops_numa_drift_cpu_manager_class{class="not_static"} 1' in text.splitlines()
    assert "cpu_manager_cpus" not in text
