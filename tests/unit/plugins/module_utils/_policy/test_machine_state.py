# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's default machine state, block replay and state comparison (spec 5)."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_legacy, marshal_v3
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import CheckpointFields
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy import machine_state as ms
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import Block, MemoryTable, NodeState

GIB = 1024 ** 3
RESERVED_G19 = {0: {"memory": 4429185024}, 1: {"memory": 4429185024}}
HUGEPAGES_G19 = {"hugepages-1Gi": 4 * GIB, "hugepages-2Mi": 0}
BEFORE = {0: ms.NodeMemory(134651412480, HUGEPAGES_G19), 1: ms.NodeMemory(135233794048, HUGEPAGES_G19)}
AFTER = {0: ms.NodeMemory(134607716352, HUGEPAGES_G19), 1: ms.NodeMemory(135277490176, HUGEPAGES_G19)}


def _content(vectors, number):
    return inspect_checkpoint(vectors[number - 1]["content"].encode()).content


@pytest.mark.parametrize("machine, number", [(BEFORE, 19), (AFTER, 20)])
def test_recompute_reproduces_the_synthetic_vectors(vectors, machine, number):
    # spec 10, acceptance test 3
    entries = _content(vectors, 19).entries
    state, issues = ms.expected_machine_state(machine, RESERVED_G19, entries)
    assert issues == []
    assert state == _content(vectors, number).machine_state


def test_recomputed_after_state_serialises_to_g20_and_g21(vectors):
    # spec 10, acceptance test 5
    g19 = _content(vectors, 19)
    state, _issues = ms.expected_machine_state(AFTER, RESERVED_G19, g19.entries)
    fields = CheckpointFields(policy_name=g19.policy_name, machine_state=state, entries=g19.entries)
    assert marshal_legacy(fields) == vectors[19]["content"].encode()
    assert marshal_v3(fields) == vectors[20]["content"].encode()


def test_default_state_per_node():
    state = ms.default_machine_state({3: ms.NodeMemory(10 * GIB, {"hugepages-1Gi": 2 * GIB, "hugepages-2Mi": 0})},
                                     {3: {"memory": GIB, "hugepages-1Gi": GIB}})
    node = state[3]
    assert node.cells == [3] and node.number_of_assignments == 0
    assert node.memory_map["memory"] == MemoryTable(10 * GIB, GIB, 7 * GIB, 0, 7 * GIB)
    assert node.memory_map["hugepages-1Gi"] == MemoryTable(2 * GIB, GIB, GIB, 0, GIB)
    assert node.memory_map["hugepages-2Mi"] == MemoryTable(0, 0, 0, 0, 0)


def test_subtraction_wraps_like_go_uint64():
    machine = {0: ms.NodeMemory(GIB, {"hugepages-2Mi": 0})}
    state = ms.default_machine_state(machine, {0: {"memory": 2 * GIB}})
    assert state[0].memory_map["memory"].allocatable == 2 ** 64 - GIB
    assert state[0].memory_map["memory"].free == 2 ** 64 - GIB


def test_cross_numa_block_fills_nodes_in_affinity_order():
    state = ms.default_machine_state({0: ms.NodeMemory(4 * GIB), 1: ms.NodeMemory(4 * GIB)}, {0: {"memory": GIB}, 1: {"memory": GIB}})
    issues = ms.replay_blocks(state, {"p": {"c": [Block([0, 1], "memory", 5 * GIB)]}})
    assert issues == []
    assert state[0].memory_map["memory"].reserved == 3 * GIB and state[0].memory_map["memory"].free == 0
    assert state[1].memory_map["memory"].reserved == 2 * GIB and state[1].memory_map["memory"].free == GIB
    assert state[0].cells == state[1].cells == [0, 1]
    assert state[0].number_of_assignments == state[1].number_of_assignments == 1


def test_every_block_counts_on_every_node_of_its_affinity_even_zero_size():
    state = ms.default_machine_state({0: ms.NodeMemory(4 * GIB, {"hugepages-1Gi": 2 * GIB})}, {0: {"memory": GIB}})
    blocks = [Block([0], "memory", GIB), Block([0], "hugepages-1Gi", GIB), Block([0], "memory", 0)]
    assert ms.replay_blocks(state, {"p": {"c": blocks}}) == []
    assert state[0].number_of_assignments == 3


@pytest.mark.parametrize(
    "block, kind, text",
    [
        (Block([2], "memory", 1), "missing_node", "the memory assignment uses the NUMA that does not exist"),
        (Block([0], "hugepages-2Mi", 1), "missing_resource", "the memory assignment uses memory resource that does not exist"),
        (Block([0], "memory", 3 * GIB + 4096), "does_not_fit", "the memory assignment does not fit the machine state"),
    ],
)
def test_replay_issues_carry_kubelets_text(block, kind, text):
    state = ms.default_machine_state({0: ms.NodeMemory(4 * GIB)}, {0: {"memory": GIB}})
    issues = ms.replay_blocks(state, {"pod-a": {"ctr": [block]}})
    assert [(i.kind, i.message) for i in issues] == [(kind, "[memorymanager] (pod: pod-a, container: ctr) " + text)]


def test_a_block_that_fits_by_zero_bytes_is_fine():
    state = ms.default_machine_state({0: ms.NodeMemory(4 * GIB)}, {0: {"memory": GIB}})
    assert ms.replay_blocks(state, {"p": {"c": [Block([0], "memory", 3 * GIB)]}}) == []
    assert state[0].memory_map["memory"].free == 0


def _two_node_state(reserved0, reserved1):
    def node(reserved, cells):
        return NodeState(1, {"memory": MemoryTable(4 * GIB, GIB, 3 * GIB, reserved, 3 * GIB - reserved)}, cells)
    return {0: node(reserved0, [0, 1]), 1: node(reserved1, [0, 1])}


def test_from_1_32_only_group_sums_of_free_and_reserved_are_compared():
    stored, expected = _two_node_state(2 * GIB, GIB), _two_node_state(GIB, 2 * GIB)
    assert ms.compare_states(stored, expected) == []
    strict = ms.compare_states(stored, expected, strict=True)
    assert {(d.kind, d.node) for d in strict} == {("free", 0), ("reserved", 0), ("free", 1), ("reserved", 1)}


@pytest.mark.parametrize(
    "change, kind, log",
    [
        (lambda s: s.pop(1), "node_set", "Node states were different"),
        (lambda s: setattr(s[0], "number_of_assignments", 2), "assignments", "Node state had a different number of memory assignments."),
        (lambda s: setattr(s[0], "cells", [0]), "cells", "Node states had different groups"),
        (lambda s: s[0].memory_map.update({"hugepages-2Mi": MemoryTable()}), "resources", "Node state had memory maps of different lengths"),
        (lambda s: setattr(s[1].memory_map["memory"], "total", 1), "total", "Memory states for the NUMA node and resource are different (field TotalMemSize)"),
        (lambda s: setattr(s[1].memory_map["memory"], "system_reserved", 1), "system_reserved", "(field SystemReserved)"),
    ],
)
def test_each_comparison_rule_names_its_kubelet_log(change, kind, log):
    stored, expected = _two_node_state(GIB, GIB), _two_node_state(GIB, GIB)
    change(stored)
    differences = ms.compare_states(stored, expected)
    assert differences and differences[0].kind == kind
    assert log in differences[0].log


def test_cells_compare_after_sorting():
    stored, expected = _two_node_state(GIB, GIB), _two_node_state(GIB, GIB)
    stored[0].cells = [1, 0]
    assert ms.compare_states(stored, expected) == []


def test_group_problems():
    entries = {
        "a": {"c": [Block([0, 1], "memory", 1)]},
        "b": {"c": [Block([1], "memory", 1), Block([3, 2], "memory", 1), Block(None, "memory", 1)]},
    }
    problems = ms.group_problems(entries)
    assert "NUMA node 1 is in two groups: [0, 1] and [1]" in problems
    assert any("[3, 2], not strictly ascending" in p for p in problems)
    assert any("without NUMA affinity" in p for p in problems)
    assert ms.group_problems({"a": {"c": [Block([0, 1], "memory", 1)], "d": [Block([0, 1], "hugepages-1Gi", 1)]}}) == []


def test_count_blocks():
    assert ms.count_blocks({"a": {"c": [Block(), Block()], "d": None}, "b": None}) == (2, 2, 2)
    assert ms.count_blocks(None) == (0, 0, 0)
