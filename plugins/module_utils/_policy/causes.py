# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The causes of a verdict: what kubelet would meet in a checkpoint, its configuration and the node.

Each builder returns the :class:`Cause` list of one check (the layout, the policy, the node's readings,
the recorded vs recomputed machine state, the bound, kubelet's start-up checks of its configuration);
:mod:`drift` orders them into a verdict. Pure: nothing here reads a node.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import CheckpointReport
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import CheckpointFields, NodeMap
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import KubeletSettings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.checks import (
    CONFIG_FIELD_NAMES,
    configuration_rejections,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.machine_state import (
    MEMORY,
    NodeMemory,
    StateDifference,
    compare_states,
    expected_machine_state,
    group_problems,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import NodeFacts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import describe_bytes
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import REPAIRABLE

__all__ = [
    "Cause",
    "NodeDrift",
]


class Cause(Record, frozen=True):
    verdict: str
    message: str


class NodeDrift(Record, frozen=True):
    """Recorded vs current numbers of one NUMA node (None where one side has no such node)."""

    node: int
    recorded: Optional[Dict[str, Tuple[int, int]]]  # resource -> (total, allocatable)
    current: Optional[Dict[str, Tuple[int, int]]]
    holds_kernel_image: bool

    def delta(self, resource: str, index: int = 0) -> Optional[int]:
        if not self.recorded or not self.current or resource not in self.recorded or resource not in self.current:
            return None
        return self.current[resource][index] - self.recorded[resource][index]


def _machine(node: NodeFacts) -> Dict[int, NodeMemory]:
    # cadvisor reports a node without readable meminfo as 0 bytes (``getNodeMemInfo``); so do we.
    return {
        numa.id: NodeMemory(
            numa.mem_total_bytes or 0,
            {pool.resource_name: pool.total_bytes or 0 for pool in numa.hugepages},
        )
        for numa in node.numa_nodes
    }


def _tables(state: Optional[NodeMap]) -> Dict[int, Optional[Dict[str, Tuple[int, int]]]]:
    result: Dict[int, Optional[Dict[str, Tuple[int, int]]]] = {}
    for node_id, node_state in (state or {}).items():
        memory_map = (node_state.memory_map if node_state else None) or {}
        result[node_id] = {res: (t.total, t.allocatable) for res, t in memory_map.items() if t is not None}
    return result


def _node_drifts(stored: NodeMap, expected: NodeMap, node: NodeFacts) -> Tuple[NodeDrift, ...]:
    recorded, current = _tables(stored), _tables(expected)
    holders = set(node.kernel_image.numa_nodes)
    return tuple(
        NodeDrift(node_id, recorded.get(node_id), current.get(node_id), node_id in holders)
        for node_id in sorted(set(recorded) | set(current))
    )


def _layout_causes(report: CheckpointReport, era: Optional[str] = None, release: str = "") -> List[Cause]:
    """What the checkpoint's layout means: for the kubelet that will start (``era``, named ``release``) when it is
    known, else for every supported release (a file they disagree about is never rewritten)."""
    if era is not None and not report.eras[era].accepted:
        return [Cause("corrupt", "%s does not load the checkpoint: %s" % (release, report.eras[era].error))]
    if not report.verified:
        errors = sorted({result.error for result in report.eras.values() if result.error})
        return [Cause("corrupt", "no kubelet era loads the checkpoint: " + "; ".join(errors))]
    layout, reason = report.layout_for(era)
    return [] if layout else [Cause("unsupported_layout", reason)]


def _policy_causes(content: CheckpointFields, settings: KubeletSettings) -> List[Cause]:
    if content.policy_name == settings.policy:
        return []
    return [
        Cause(
            "policy_mismatch",
            '[memorymanager] configured policy "%s" differs from state checkpoint policy "%s"'
            % (settings.policy, content.policy_name),
        )
    ]


def _node_reading_causes(node: NodeFacts) -> List[Cause]:
    """docs/safety.md: a node whose memory cannot be read is refused, never computed from 0."""
    if not node.numa_nodes:
        detail = "; ".join(node.problems) or "no node<N> directory"
        return [Cause("topology_changed", "no NUMA node is readable under %s: %s" % (node.root, detail))]
    causes = []
    for numa in node.numa_nodes:
        if numa.mem_total_bytes is None:
            causes += [Cause("topology_changed", "node %d: %s" % (numa.id, p)) for p in numa.problems] or [
                Cause("topology_changed", "node %d: MemTotal unknown" % numa.id)
            ]
        elif any(pool.total_bytes is None for pool in numa.hugepages):
            causes += [Cause("hugepages_changed", "node %d: %s" % (numa.id, p)) for p in numa.problems]
    return causes


def _difference_cause(diff: StateDifference, memory_drifted: bool) -> Optional[Cause]:
    where = "node %s %s" % (diff.node, diff.resource or "")
    detail = "%s: %s recorded %s, now %s (%s)" % (where.strip(), diff.kind, diff.stored, diff.expected, diff.log)
    if diff.kind in ("node_set", "resources"):
        return Cause("topology_changed", detail)
    if diff.kind == "system_reserved":
        return Cause("reserved_changed", detail)
    if diff.resource != MEMORY and diff.kind in ("total", "allocatable"):
        return Cause("hugepages_changed", detail)
    if diff.resource == MEMORY and diff.kind in ("total", "allocatable"):
        return None  # judged against the bound
    if diff.resource == MEMORY and diff.kind in ("free", "reserved") and memory_drifted:
        return None  # recomputed from the blocks by the repair (KEP-6232: not compared)
    return Cause("assignments_do_not_fit", detail + ": the recorded assignments do not match the blocks")


def _bound_causes(nodes: Tuple[NodeDrift, ...], bound: Optional[int], source: str) -> List[Cause]:
    causes = []
    for drift in nodes:
        for index, name in ((0, "total"), (1, "allocatable")):
            delta = drift.delta(MEMORY, index)
            if not delta:
                continue
            text = "node %d memory %s moved by %s (%+d bytes)" % (drift.node, name, describe_bytes(delta), delta)
            if bound is None:
                causes.append(Cause("bound_unknown", text + "; no bound: " + source))
            elif abs(delta) > bound:
                causes.append(Cause("drift_exceeds_bound", text + ", more than the bound of %d bytes (%s)" % (bound, source)))
            else:
                causes.append(Cause(REPAIRABLE, text + ", within the bound of %d bytes (%s)" % (bound, source)))
    return causes


def _state_causes(
    content: CheckpointFields, node: NodeFacts, settings: KubeletSettings, bound: Optional[int], source: str
) -> Tuple[List[Cause], NodeMap, Tuple[NodeDrift, ...]]:
    machine = _machine(node)
    causes = _node_reading_causes(node)
    expected, issues = expected_machine_state(machine, settings.reserved_memory, content.entries)
    stored = content.machine_state or {}
    nodes = _node_drifts(stored, expected, node)
    if not stored and not content.entries:
        return causes + [Cause("in_sync", "the machine state is empty: kubelet re-initialises it (validateState)")], expected, nodes
    if not stored:
        return causes + [Cause("assignments_do_not_fit", "[memorymanager] machine state can not be empty when it has memory assignments")], expected, nodes
    # Every supported kubelet (1.34-1.37) compares free and reserved as sums over the stored node's group.
    differences = compare_states(stored, expected)
    memory_drifted = any(d.resource == MEMORY and d.kind in ("total", "allocatable") for d in differences)
    causes += [cause for cause in (_difference_cause(d, memory_drifted) for d in differences) if cause]
    causes += [Cause("assignments_do_not_fit", issue.message) for issue in issues]
    causes += [Cause("assignments_do_not_fit", problem) for problem in group_problems(content.entries)]
    causes += _bound_causes(nodes, bound, source)
    if not differences and not any(i.kind != "does_not_fit" for i in issues):
        causes.append(Cause("in_sync", "the recorded machine state equals the recomputed one"))
    return causes, expected, nodes


def _sources(settings: KubeletSettings, fields: Tuple[str, ...]) -> str:
    """``reservedMemory from /var/lib/kubelet/config.yaml; ...``: where each value to fix was set."""
    return "; ".join(
        "%s from %s" % (CONFIG_FIELD_NAMES[field], settings.field_sources.get(field, "default")) for field in fields
    )


def _config_rejections(node: NodeFacts, settings: KubeletSettings) -> List[Cause]:
    """Kubelet refuses its configuration at start before it reads the checkpoint (config parsing and
    ``ValidateKubeletConfiguration``, then the memory manager's ``NewManager``): no verdict about the file."""
    read_from = ", ".join(settings.sources) or settings.config_path or "kubelet's defaults"
    messages = ["%s (kubelet configuration read from %s)" % (problem, read_from) for problem in settings.problems]
    if node.numa_nodes:
        capacity = node.machine_mem_total_bytes or sum(m.mem_total_bytes for m in _machine(node).values())
        rejections = configuration_rejections(settings, node.node_ids(), capacity, node.hugepage_resource_names())
        messages += ["%s (%s)" % (error, _sources(settings, fields)) for error, fields in rejections]
    return [Cause("kubelet_config_rejected", message) for message in messages]
