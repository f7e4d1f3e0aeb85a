# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parity of the two ways a node is probed, over every node tree the tests build.

On the node, the engine reads the real files (``HostFiles``); on the controller it reads the node reader's answer of
them (``AnsweredFiles``), read with the probe's own read plan, crossing as JSON and checked as the controller checks it
(``tests/support/node_answer.py``). The facts must be the same, or the same error, and a node shaped as a supported
distribution must take one read: the read plan declares everything discovery reads. The trees: the kubelet judge's
corpus (the unit corpus, every distribution layout, checkpoint layouts, configuration cases, kubelet's checkpoint
vectors), the sandbox fleet's nodes, and the odd trees (links, loops, FIFOs, unreadable and zero-filled files).
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.support import corpus
from ansible_collections.nodeops.numa_drift.tests.support.node_answer import answered, outcome
from ansible_collections.nodeops.numa_drift.tests.support.odd_trees import ODD_TREES
from ansible_collections.nodeops.numa_drift.tests.support.vectors import load_vectors

CASES = dict(corpus.unit_cases(), **corpus.distribution_cases(), **corpus.layout_cases(), **corpus.config_cases())
FLEET = corpus.sandbox_fleet_trees()
VECTORS = {vector["name"]: vector for vector in load_vectors()}


def facts_of(drift_bound):
    return lambda files: json.loads(json.dumps(assessment_facts(probe(files, drift_bound=drift_bound))))


def assert_same_both_ways(root, drift_bound="auto", reads=1):
    on_node = outcome(facts_of(drift_bound), HostFiles(root))
    on_controller, took = answered(root, facts_of(drift_bound), {"drift_bound": drift_bound})
    assert on_controller == on_node
    assert took == reads, "the read plan missed a path discovery reads: %d reads" % took
    return on_node


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_corpus_is_probed_alike_on_the_node_and_the_controller(tmp_path, name):
    case = CASES[name]
    root = case.build(str(tmp_path / "node"))
    assert_same_both_ways(root, case.bound)


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_kubelets_checkpoint_vectors_are_probed_alike(tmp_path, name):
    root = corpus.vector_tree(str(tmp_path / "tree"), VECTORS[name]["content"])
    assert_same_both_ways(root)


@pytest.mark.parametrize("key", sorted(FLEET))
def test_the_sandbox_fleets_nodes_are_probed_alike(tmp_path, key):
    from ansible_collections.nodeops.numa_drift.tests.sandbox import fleet  # pylint: disable=import-outside-toplevel

    root = str(tmp_path / "node")
    fleet.write_node_tree(root, FLEET[key][1])
    assert_same_both_ways(root)


@pytest.mark.parametrize("name", sorted(ODD_TREES))
def test_odd_trees_are_probed_alike(tmp_path, name):
    root = ODD_TREES[name](str(tmp_path / "node"))
    facts = assert_same_both_ways(root)
    assert facts  # a verdict, or the same error both ways


def test_a_variable_built_path_takes_one_more_read_and_the_same_facts(tmp_path):
    from ansible_collections.nodeops.numa_drift.tests.support.distributions import drifted_node  # pylint: disable=import-outside-toplevel

    files = {"/etc/systemd/system/kubelet.service": "[Service]\nEnvironment=\"ROOT=/data/kubelet\"\n"
                                                    "ExecStart=/usr/bin/kubelet --config=/var/lib/kubelet/config.yaml --root-dir=${ROOT}\n"}
    root = drifted_node(str(tmp_path / "node"), dict(files, **{"/var/lib/kubelet/config.yaml": corpus.json.dumps(
        dict(corpus.kubelet_config(corpus.uniform_reserved([0, 1])), apiVersion="kubelet.config.k8s.io/v1beta1", kind="KubeletConfiguration"))}),
        kubelet_root_dir="/data/kubelet")
    facts = assert_same_both_ways(root, reads=2)
    assert facts["verdict"] == "drift_within_bound"


# The uncore-cache option (kubelet picks its reserved CPUs by each core's L3): 1 socket x 4 cores x 2 threads, two L3s.
def _uncore_node(root, options, reserved=None):
    from ansible_collections.nodeops.numa_drift.tests.support import cputree  # pylint: disable=import-outside-toplevel

    machine = cputree.machine(sockets=1, cores_per_socket=4, threads_per_core=2)
    config = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}, "cpuManagerPolicyOptions": options}
    if reserved:
        config["reservedSystemCPUs"] = reserved
    return cputree.build_cpu_node(root, machine, None, config, None, {cpu: 20 + core // 2 for cpu, (core, _s, _n) in machine.items()})


def _cache_paths(root, arguments=None):
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import read_plan  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodeops.numa_drift.tests.support.node_answer import sent  # pylint: disable=import-outside-toplevel

    rules, follows = read_plan(arguments or {})
    return sorted(path for path in sent(root, rules, follows) if "/cache" in path)


def _uncore_caches_read(root):
    return {cpu: info.uncore_cache for cpu, info in probe(HostFiles(root)).cpu_read.topology.cpus.items()}


def test_the_uncore_option_reads_the_cpus_caches_in_the_same_read(tmp_path):
    root = _uncore_node(str(tmp_path / "node"), {"prefer-align-cpus-by-uncorecache": "true"})
    assert_same_both_ways(root, reads=1)
    assert "/sys/devices/system/cpu/cpu7/cache/index3/shared_cpu_map" in _cache_paths(root)
    assert _uncore_caches_read(root) == {cpu: 20 + (cpu % 4) // 2 for cpu in range(8)}


@pytest.mark.parametrize("options, reserved", [({}, None), ({"prefer-align-cpus-by-uncorecache": "false"}, None),
                                               ({"prefer-align-cpus-by-uncorecache": "true"}, "0")])
def test_no_cache_file_is_read_where_kubelet_does_not_pick_by_them(tmp_path, options, reserved):
    root = _uncore_node(str(tmp_path / "node"), options, reserved)
    assert_same_both_ways(root, reads=1)
    assert set(_uncore_caches_read(root).values()) == {None}
    if not options:  # no text names the option: the node reader reads no cache file
        assert _cache_paths(root) == []


def test_an_option_spelled_so_that_the_plan_misses_it_takes_one_more_read_of_every_cache(tmp_path):
    root = _uncore_node(str(tmp_path / "node"), {})
    path = tmp_path / "node" / "var/lib/kubelet/config.yaml"
    text = path.read_text(encoding="utf-8")
    assert '"cpuManagerPolicyOptions": {}' in text, text
    # JSON's \u0065 is an 'e': kubelet reads the option, the plan's test of the texts does not see its name.
    path.write_text(text.replace('"cpuManagerPolicyOptions": {}', '"cpuManagerPolicyOptions": {"prefer-align-cpus-by-uncorecach\\u0065": "true"}'),
                    encoding="utf-8")
    assert_same_both_ways(root, reads=2)
    assert _uncore_caches_read(root) == {cpu: 20 + (cpu % 4) // 2 for cpu in range(8)}
