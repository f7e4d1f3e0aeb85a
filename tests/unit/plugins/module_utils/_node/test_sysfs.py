# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_node/sysfs.py: reading a node's sysfs NUMA tree (memory, hugepages, lists)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import NodeReadError, read_node_facts
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import OMIT, build_node_tree

MiB = 1024 * 1024
GiB = 1024 * MiB


def node_of(facts, node_id):
    """The NUMA node ``node_id`` of ``facts``."""
    [node] = [node for node in facts.numa_nodes if node.id == node_id]
    return node


def read_hostile(root):
    """A tree with a required file unreadable or malformed: the strict read raises NodeReadError naming
    exactly the errors the lenient read reports; returns the lenient read's facts."""
    with pytest.raises(NodeReadError) as raised:
        read_node_facts(HostFiles(root))
    facts = read_node_facts(HostFiles(root), strict=False)
    assert facts.read_errors
    assert raised.value.problems == facts.read_errors
    assert str(raised.value) == "the node's NUMA memory cannot be read: " + "; ".join(facts.read_errors)
    return facts


# --------------------------------------------------------------------------- whole trees


def _two_node_spec(node0_kb=131452848, node1_kb=132106924, gib_pages=4):
    return {
        0: {"mem_total_kb": node0_kb, "hugepages": {2048: 0, 1048576: gib_pages}},
        1: {"mem_total_kb": node1_kb, "hugepages": {2048: 0, 1048576: gib_pages}},
    }


@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_reads_every_numa_node(tmp_path, count):
    nodes = {node_id: {"mem_total_kb": (node_id + 1) * 1024 * 1024} for node_id in range(count)}
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes=nodes)))
    assert facts.problems == ()
    assert facts.node_ids() == tuple(range(count))
    assert [node.mem_total_bytes for node in facts.numa_nodes] == [(i + 1) * GiB for i in range(count)]
    assert facts.online == tuple(range(count)) == facts.possible
    assert facts.machine_mem_total_bytes == sum((i + 1) * GiB for i in range(count))
    assert all(node.has_cpus is True for node in facts.numa_nodes)


def test_node_ids_sort_numerically_not_lexically(tmp_path):
    nodes = {node_id: {"mem_total_kb": 1024 * 1024} for node_id in (0, 2, 10)}
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes=nodes)))
    assert facts.node_ids() == (0, 2, 10)
    assert [node.id for node in facts.numa_nodes] == [0, 2, 10]


def test_spec_10_after_reboot_machine(tmp_path):
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes=_two_node_spec())))
    node0, node1 = facts.numa_nodes
    assert node0.mem_total_bytes == 134607716352
    assert node1.mem_total_bytes == 135277490176
    assert [pool.resource_name for pool in node0.hugepages] == ["hugepages-1Gi", "hugepages-2Mi"]
    gib, two_mib = node0.hugepages
    assert (gib.page_size_kib, gib.nr_pages, gib.total_bytes) == (1048576, 4, 4 * GiB)
    assert (two_mib.page_size_kib, two_mib.nr_pages, two_mib.total_bytes) == (2048, 0, 0)
    assert [pool.total_bytes for pool in node1.hugepages if pool.resource_name == "hugepages-1Gi"] == [4294967296]
    assert facts.hugepage_resource_names() == ("hugepages-1Gi", "hugepages-2Mi")
    assert facts.read_errors == ()


def test_hugepages_of_both_sizes_with_pages(tmp_path):
    nodes = {0: {"mem_total_kb": 8 * 1024 * 1024, "hugepages": {2048: 512, 1048576: 2}}}
    node = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes=nodes))).numa_nodes[0]
    assert {pool.resource_name: pool.total_bytes for pool in node.hugepages} == {
        "hugepages-2Mi": 512 * 2 * MiB,
        "hugepages-1Gi": 2 * GiB,
    }


def test_unusual_hugepage_sizes_get_kubelet_names(tmp_path):
    nodes = {0: {"hugepages": {64: 3, 32768: 1, 16777216: 1}}}
    node = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes=nodes))).numa_nodes[0]
    assert [pool.resource_name for pool in node.hugepages] == ["hugepages-16Gi", "hugepages-32Mi", "hugepages-64Ki"]


def test_no_hugepages_directory_means_no_sizes_and_no_problem(tmp_path):
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes={0: {"hugepages": OMIT}})))
    assert facts.numa_nodes[0].hugepages == ()
    assert facts.problems == ()


def test_unreadable_nr_hugepages_is_a_problem_not_a_crash(tmp_path):
    nodes = {0: {"hugepages": {2048: OMIT, 1048576: "four\n"}}}
    facts = read_hostile(build_node_tree(tmp_path, nodes=nodes))
    node = facts.numa_nodes[0]
    assert [(pool.resource_name, pool.nr_pages, pool.total_bytes) for pool in node.hugepages] == [
        ("hugepages-1Gi", None, None),
        ("hugepages-2Mi", None, None),
    ]
    assert len(node.read_errors) == 2  # two pools whose size kubelet cannot know
    assert len(node.problems) == 2
    assert any("hugepages-2048kB/nr_hugepages" in problem and "cannot read" in problem for problem in node.problems)
    assert any("'four' is not a page count" in problem for problem in node.problems)
    assert set(node.problems) <= set(facts.problems)


def test_stray_entry_in_hugepages_directory_is_reported(tmp_path):
    root = build_node_tree(tmp_path, extra_files={"sys/devices/system/node/node0/hugepages/README": "x"})
    facts = read_hostile(root)
    assert [pool.resource_name for pool in facts.numa_nodes[0].hugepages] == ["hugepages-1Gi", "hugepages-2Mi"]
    assert any("unexpected entry 'README'" in problem for problem in facts.problems)


def test_hugepage_total_overflowing_64_bits_is_reported(tmp_path):
    nodes = {0: {"hugepages": {1048576: str(2 ** 50)}}}
    facts = read_hostile(build_node_tree(tmp_path, nodes=nodes))
    pool = facts.numa_nodes[0].hugepages[0]
    assert pool.nr_pages == 2 ** 50 and pool.total_bytes is None
    assert any("do not fit in 64 bits" in problem for problem in facts.problems)


def test_memory_only_node(tmp_path):
    nodes = {0: {"mem_total_kb": 16 * 1024 * 1024}, 1: {"mem_total_kb": 64 * 1024 * 1024, "cpulist": "\n"}}
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes=nodes)))
    assert facts.problems == ()
    assert node_of(facts, 1).has_cpus is False  # memory and no CPU (CXL, HBM): kubelet still counts it
    assert node_of(facts, 1).mem_total_bytes == 64 * GiB


def test_node_without_cpulist_has_unknown_cpus(tmp_path):
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes={0: {"cpulist": OMIT}, 1: {"cpulist": "garbage"}})))
    assert node_of(facts, 0).has_cpus is None and node_of(facts, 1).has_cpus is None


def test_missing_meminfo_is_unknown_with_a_problem(tmp_path):
    facts = read_hostile(build_node_tree(tmp_path, nodes={0: {}, 1: {"meminfo_text": OMIT}}))
    assert node_of(facts, 0).mem_total_bytes == 4 * GiB
    assert node_of(facts, 1).mem_total_bytes is None
    assert node_of(facts, 1).read_errors
    [problem] = facts.problems
    assert "node1/meminfo" in problem and "cannot read" in problem


def test_letters_in_meminfo_are_unknown_with_a_problem(tmp_path):
    nodes = {0: {"meminfo_text": "Node 0 MemTotal:       64296O6O kB\n"}}
    facts = read_hostile(build_node_tree(tmp_path, nodes=nodes))
    assert node_of(facts, 0).mem_total_bytes is None
    assert facts.problems == (os.path.join(str(tmp_path), "sys/devices/system/node/node0/meminfo") + ": no 'MemTotal: <number> kB' line",)


def test_odd_whitespace_in_meminfo_file(tmp_path):
    nodes = {0: {"meminfo_text": "\n\t Node 0 MemTotal:\t\t 1048576 kB \t\n\n"}}
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes=nodes)))
    assert node_of(facts, 0).mem_total_bytes == GiB and facts.problems == ()


def test_zero_memtotal_is_a_problem(tmp_path):
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes={0: {"mem_total_kb": 0}})))
    assert node_of(facts, 0).mem_total_bytes == 0
    assert any("MemTotal is 0" in problem for problem in facts.problems)


def test_binary_garbage_in_meminfo_does_not_crash(tmp_path):
    root = build_node_tree(tmp_path)
    with open(os.path.join(root, "sys/devices/system/node/node0/meminfo"), "wb") as handle:
        handle.write(b"\xff\xfe\x00MemTotal: \xc3 12 kB")
    facts = read_hostile(root)
    assert node_of(facts, 0).mem_total_bytes is None and len(facts.problems) == 1


def test_directory_where_meminfo_should_be(tmp_path):
    root = build_node_tree(tmp_path, nodes={0: {"meminfo_text": OMIT}})
    os.makedirs(os.path.join(root, "sys/devices/system/node/node0/meminfo"))
    facts = read_hostile(root)
    assert node_of(facts, 0).mem_total_bytes is None
    assert "cannot read" in facts.problems[0]


def test_missing_sysfs_node_directory_entirely(tmp_path):
    facts = read_hostile(build_node_tree(tmp_path, node_sysfs_dir=False))
    assert facts.numa_nodes == () and facts.node_ids() == ()
    assert facts.online is None and facts.possible is None
    assert len(facts.problems) == 1 and "no NUMA topology" in facts.problems[0]


def test_node_directory_without_any_node(tmp_path):
    facts = read_hostile(build_node_tree(tmp_path, nodes={}))
    assert facts.numa_nodes == ()
    assert facts.online == ()
    assert any("no node<N> directory" in problem for problem in facts.problems)


def test_entries_that_only_look_like_nodes_are_ignored(tmp_path):
    root = build_node_tree(
        tmp_path,
        extra_files={
            "sys/devices/system/node/nodeX/meminfo": "MemTotal: 1 kB",
            "sys/devices/system/node/node1abc/meminfo": "MemTotal: 1 kB",
        },
    )
    assert read_node_facts(HostFiles(root)).node_ids() == (0,)


def test_online_and_possible_lists(tmp_path):
    root = build_node_tree(tmp_path, nodes={0: {}, 1: {}}, online="0-1\n", possible="0-3\n")
    facts = read_node_facts(HostFiles(root))
    assert facts.online == (0, 1) and facts.possible == (0, 1, 2, 3)


def test_garbage_online_list_is_a_problem_and_missing_is_not(tmp_path):
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, online="zero\n", possible=OMIT)))
    assert facts.online is None and facts.possible is None
    assert len(facts.problems) == 1 and "online" in facts.problems[0]


def test_root_prefix_is_honoured(tmp_path):
    host = tmp_path / "host"
    build_node_tree(host, nodes={0: {"mem_total_kb": 1024}})
    assert node_of(read_node_facts(HostFiles(str(host) + "/")), 0).mem_total_bytes == 1024 * 1024
    assert read_hostile(str(tmp_path)).numa_nodes == ()
