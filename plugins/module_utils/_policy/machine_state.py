# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's machine state for the Static memory manager policy (kubelet's memorymanager policy_static.go).

* :func:`default_machine_state` - ``getDefaultMachineState``, from this boot's per-NUMA numbers and
  ``reservedMemory``; all arithmetic is uint64 and wraps like Go's (kubelet starts with a
  reservation larger than its node: ``getDefaultMachineState`` does not check).
* :func:`replay_blocks` - ``validateState``'s replay of the assignments, the recorded blocks filled into that state.
* :func:`compare_states` - ``areMachineStatesEqual``: kubelet >= 1.32's comparison, and the stricter
  per-node comparison of older kubelets.
* :func:`group_problems` - ``areGroupsEqual`` (docs/safety.md: refused): groups that would make the outcome
  depend on Go's random map order.
"""

from __future__ import annotations

import copy
from typing import Dict, List, Mapping, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import Entries, MemoryTable, NodeMap, NodeState
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, factory

__all__ = [
    "MEMORY",
    "NodeMemory",
    "ReplayIssue",
    "StateDifference",
    "default_machine_state",
    "replay_blocks",
    "expected_machine_state",
    "compare_states",
    "group_problems",
    "count_blocks",
]

MEMORY = "memory"
_UINT64 = 2 ** 64


def _sub(a: int, b: int) -> int:
    """Go uint64 subtraction: wraps modulo 2^64 without error (as in ``getDefaultMachineState``)."""
    return (a - b) % _UINT64


class NodeMemory(Record, frozen=True):
    """One NUMA node as cadvisor reports it (``sysinfo.GetNodesInfo``): MemTotal and each hugepage pool."""

    mem_total_bytes: int
    hugepage_totals: Mapping[str, int] = factory(dict)  # resource name -> bytes


def _table(total: int, system_reserved: int, allocatable: int) -> MemoryTable:
    return MemoryTable(total, system_reserved, allocatable, reserved=0, free=allocatable)


def default_machine_state(machine: Mapping[int, NodeMemory], reserved: Mapping[int, Mapping[str, int]]) -> NodeMap:
    """``getDefaultMachineState``: the state kubelet computes before replaying any block."""
    state: NodeMap = {}
    for node_id, node in machine.items():
        node_reserved = reserved.get(node_id, {})
        memory_map: Dict[str, Optional[MemoryTable]] = {}
        hugepage_sum = 0
        for resource, total in node.hugepage_totals.items():
            system_reserved = node_reserved.get(resource, 0)
            memory_map[resource] = _table(total, system_reserved, _sub(total, system_reserved))
            hugepage_sum += total
        system_reserved = node_reserved.get(MEMORY, 0)
        allocatable = _sub(_sub(node.mem_total_bytes, system_reserved), hugepage_sum)
        memory_map[MEMORY] = _table(node.mem_total_bytes, system_reserved, allocatable)
        state[node_id] = NodeState(number_of_assignments=0, memory_map=memory_map, cells=[node_id])
    return state


class ReplayIssue(Record, frozen=True):
    """A kubelet start failure (or, for ``does_not_fit``, a silent loss) found by the replay."""

    kind: str  # missing_node | missing_resource | does_not_fit
    pod: str
    container: str
    message: str


def _replay_issue(kind: str, pod: str, container: str, text: str) -> ReplayIssue:
    return ReplayIssue(kind, pod, container, "[memorymanager] (pod: %s, container: %s) %s" % (pod, container, text))


def replay_blocks(state: NodeMap, entries: Optional[Entries]) -> List[ReplayIssue]:
    """``validateState``: fill every recorded block into ``state`` (mutated), as kubelet does.

    Pods and containers go in sorted order (kubelet's is random; the result is the same
    for consistent groups, see :func:`group_problems`); blocks in list order. Kubelet
    stops at the first missing node or resource; the replay does too, per container.
    """
    issues: List[ReplayIssue] = []
    for pod in sorted(entries or {}):
        for container in sorted(entries[pod] or {}):
            for block in entries[pod][container] or []:
                issue = _replay_block(state, block.numa_affinity or [], block.type, block.size, pod, container)
                if issue is not None:
                    issues.append(issue)
                    break
    return issues


def _replay_block(state: NodeMap, affinity: List[int], resource: str, size: int, pod: str, container: str):
    remaining = size
    for node_id in affinity:
        node = state.get(node_id)
        if node is None:
            return _replay_issue("missing_node", pod, container, "the memory assignment uses the NUMA that does not exist")
        node.number_of_assignments += 1
        node.cells = list(affinity)
        table = (node.memory_map or {}).get(resource)
        if table is None:
            return _replay_issue(
                "missing_resource", pod, container, "the memory assignment uses memory resource that does not exist"
            )
        if remaining == 0 or table.free == 0:
            continue
        placed = min(table.free, remaining)
        table.reserved += placed
        table.free -= placed
        remaining -= placed
    if remaining:
        # Released kubelets drop the remainder silently; KEP-6232's conservation check refuses it.
        return _replay_issue("does_not_fit", pod, container, "the memory assignment does not fit the machine state")
    return None


def expected_machine_state(
    machine: Mapping[int, NodeMemory], reserved: Mapping[int, Mapping[str, int]], entries: Optional[Entries]
) -> Tuple[NodeMap, List[ReplayIssue]]:
    """``getDefaultMachineState`` + ``validateState``'s replay: what kubelet will recompute at its next start."""
    state = default_machine_state(machine, reserved)
    return state, replay_blocks(state, copy.deepcopy(entries))


class StateDifference(Record, frozen=True):
    """One reason kubelet finds ``the expected machine state is different from the real one``."""

    kind: str  # node_set | assignments | cells | resources | total | system_reserved | allocatable | free | reserved
    node: Optional[int]
    resource: Optional[str]
    stored: object
    expected: object
    log: str  # kubelet's log line for it (``areMachineStatesEqual``)


_TABLE_FIELDS = (
    ("total", "TotalMemSize"),
    ("system_reserved", "SystemReserved"),
    ("allocatable", "Allocatable"),
)


def _group_sum(state: NodeMap, cells: List[int], resource: str, attribute: str) -> int:
    total = 0
    for node_id in cells:
        node = state.get(node_id)
        table = (node.memory_map or {}).get(resource) if node else None
        total += getattr(table, attribute) if table else 0
    return total % _UINT64  # kubelet adds uint64s


def _node_differences(node_id: int, stored: NodeState, expected: NodeState) -> List[StateDifference]:
    found = []
    if stored.number_of_assignments != expected.number_of_assignments:
        found.append(
            StateDifference(
                "assignments", node_id, None, stored.number_of_assignments, expected.number_of_assignments,
                "Node state had a different number of memory assignments.",
            )
        )
    if sorted(stored.cells or []) != sorted(expected.cells or []):
        found.append(
            StateDifference("cells", node_id, None, stored.cells, expected.cells, "Node states had different groups")
        )
    stored_map, expected_map = stored.memory_map or {}, expected.memory_map or {}
    if sorted(stored_map) != sorted(expected_map):
        found.append(
            StateDifference(
                "resources", node_id, None, sorted(stored_map), sorted(expected_map),
                "Node state had memory maps of different lengths"
                if len(stored_map) != len(expected_map) else "Memory state didn't have resource",
            )
        )
    for resource in sorted(set(stored_map) & set(expected_map)):
        stored_table, expected_table = stored_map[resource] or MemoryTable(), expected_map[resource] or MemoryTable()
        for attribute, go_name in _TABLE_FIELDS:
            if getattr(stored_table, attribute) != getattr(expected_table, attribute):
                found.append(
                    StateDifference(
                        attribute, node_id, resource, getattr(stored_table, attribute), getattr(expected_table, attribute),
                        "Memory states for the NUMA node and resource are different (field %s)" % go_name,
                    )
                )
    return found


def _sum_differences(stored: NodeMap, expected: NodeMap, node_id: int, strict: bool) -> List[StateDifference]:
    found = []
    node = stored[node_id]
    for resource in sorted((node.memory_map or {}) if node else {}):
        for attribute in ("free", "reserved"):
            if strict:  # before 1.32: every number of every table per node
                table_s = node.memory_map[resource] or MemoryTable()
                table_e = ((expected[node_id].memory_map or {}).get(resource)) or MemoryTable()
                values = (getattr(table_s, attribute), getattr(table_e, attribute))
            else:  # 1.32 on: sums over the stored node's group
                cells = node.cells or []
                values = (_group_sum(stored, cells, resource, attribute), _group_sum(expected, cells, resource, attribute))
            if values[0] != values[1]:
                found.append(
                    StateDifference(
                        attribute, node_id, resource, values[0], values[1],
                        "NUMA node and resource had different memory states (field %s)" % attribute,
                    )
                )
    return found


def compare_states(stored: NodeMap, expected: NodeMap, strict: bool = False) -> List[StateDifference]:
    """``areMachineStatesEqual``; ``strict`` adds the per-node free/reserved equality of kubelets before 1.32."""
    if sorted(stored) != sorted(expected):
        return [
            StateDifference("node_set", None, None, sorted(stored), sorted(expected), "Node states were different")
        ]
    found: List[StateDifference] = []
    for node_id in sorted(stored):
        found += _node_differences(node_id, stored[node_id] or NodeState(), expected[node_id] or NodeState())
    if any(d.kind == "resources" for d in found):
        return found
    for node_id in sorted(stored):
        found += _sum_differences(stored, expected, node_id, strict)
    return found


def group_problems(entries: Optional[Entries]) -> List[str]:
    """Strictly ascending affinities, one affinity list per node: else ``areGroupsEqual``'s outcome depends on Go's map order."""
    problems: List[str] = []
    group_of: Dict[int, Tuple[int, ...]] = {}
    for pod in sorted(entries or {}):
        for container in sorted(entries[pod] or {}):
            for block in entries[pod][container] or []:
                affinity = tuple(block.numa_affinity or ())
                where = "pod %s container %s" % (pod, container)
                if not affinity:
                    problems.append("%s has a block without NUMA affinity" % where)
                if list(affinity) != sorted(set(affinity)):
                    problems.append("%s has the affinity %s, not strictly ascending" % (where, list(affinity)))
                for node_id in affinity:
                    if group_of.setdefault(node_id, affinity) != affinity:
                        problems.append(
                            "NUMA node %d is in two groups: %s and %s" % (node_id, list(group_of[node_id]), list(affinity))
                        )
    return problems


def count_blocks(entries: Optional[Entries]) -> Tuple[int, int, int]:
    """(pods, containers, blocks) recorded in ``entries``."""
    pods = entries or {}
    containers = [blocks for pod in pods.values() for blocks in (pod or {}).values()]
    return len(pods), len(containers), sum(len(blocks or []) for blocks in containers)
