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
