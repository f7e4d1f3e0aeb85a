# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_node/model.py: the node's NUMA facts as records and what they derive
(memory-only nodes, complete nodes, hugepage pools and resources, the kernel image's span)."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import HugepagePool, KernelImage, NodeFacts, NumaNode

GIB = 1024 ** 3
POOL_2M = HugepagePool(2048, 16, "hugepages-2Mi", 16 * 2 * 1024 * 1024)
POOL_1G = HugepagePool(1048576, 2, "hugepages-1Gi", 2 * GIB)
KERNEL = KernelImage(0x1000000, 0x3ffffff, 0x3000000, (0,), (0,), None, None)


def numa(node_id, mem=64 * GIB, hugepages=(POOL_1G, POOL_2M), has_cpus=True):
    return NumaNode(node_id, mem, tuple(hugepages), frozenset(), has_cpus, ())


def facts(*nodes):
    return NodeFacts("/", tuple(nodes), tuple(n.id for n in nodes), tuple(n.id for n in nodes), 128 * 1024 * 1024,
                     sum(n.mem_total_bytes or 0 for n in nodes), KERNEL, ())


def test_the_kernel_image_is_known_when_its_span_is():
    assert KERNEL.known
    assert not KernelImage(None, None, None, (), (), "zeroed addresses: run as root", None).known
    # Where it lies may be unknown while its span is known (the bound needs the span only).
    assert KernelImage(0x1000000, 0x3ffffff, 0x3000000, (), (), None, "no memory block holds it").known


def test_node_facts_find_nodes_by_id_and_list_what_kubelet_counts():
    node_facts = facts(numa(0), numa(2, hugepages=(POOL_2M,), has_cpus=False), numa(1, hugepages=()))
    assert node_facts.node_ids() == (0, 2, 1)  # in the order read (the reader sorts them)
    # kubelet's capacity has one resource per hugepage size on any node, sorted
    assert node_facts.hugepage_resource_names() == ("hugepages-1Gi", "hugepages-2Mi")
    assert facts().node_ids() == () and facts().hugepage_resource_names() == ()


def test_records_are_frozen():
    with pytest.raises(AttributeError):
        POOL_1G.nr_pages = 3
    with pytest.raises(AttributeError):
        numa(0).mem_total_bytes = 1
