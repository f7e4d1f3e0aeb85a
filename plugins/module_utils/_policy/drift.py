# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Recorded vs current machine state: the bound, the verdict, and the repair plan.

:func:`assess` is pure: checkpoint bytes + node facts + kubelet settings + a bound in,
an :class:`Assessment` out. It lists every cause it finds, each tagged with a verdict
from the vocabulary of docs/modules.md (Verdicts), and the verdict is the first of them in this order
(kubelet's own restore order, then the fields that must match exactly, then the bound).
The repair plan is the fully recomputed machine state (what ``getDefaultMachineState`` and ``validateState`` recompute; docs/safety.md), never a
patch of the deltas. Nothing here reads a node: :mod:`_probe` reads one and calls :func:`assess`.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import CheckpointReport, inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_for_layout
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (
    CHECKPOINT_FILE_NAME,
    CheckpointFields,
    ERAS,
    NodeMap,
)
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
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.iomem import auto_bound_bytes
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import NodeFacts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import describe_bytes, parse_quantity
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import REPAIRABLE, TOLERATED, VERDICTS, remediate_advice

__all__ = [
    "Cause",
    "NodeDrift",
    "RepairPlan",
    "Assessment",
    "resolve_bound",
    "assess",
    "verify_written",
]

VALIDATED_POLICIES = ("Static", "BestEffort")  # BestEffort wraps Static's validation (memorymanager ``NewManager``)
EXPECTED_STATE_DIFFERS = "[memorymanager] the expected machine state is different from the real one"

_ADVICE = {
    "kubelet_config_unknown": "nothing was touched: fix or name kubelet's configuration (options kubelet_config, "
    "kubelet_config_dir, kubelet_flags, kubelet_root_dir, or policy and reserved_memory), then probe again",
    "kubelet_config_rejected": "nothing was touched, and deleting the checkpoint would not help: kubelet refuses "
    "this configuration whatever the checkpoint holds; fix the value named in the causes in kubelet's configuration, "
    "restart kubelet, then probe again",
    "kubelet_tolerates": "nothing to do: kubelet tolerates this drift itself (KEP-6232 memory-drift-tolerance)",
    "no_checkpoint": "nothing to do: kubelet writes a fresh checkpoint at start",
    "in_sync": "nothing to do: kubelet starts with this checkpoint",
    "drift_within_bound": remediate_advice(),
    "corrupt": "drain the node and remove the checkpoint (state: absent), as kubelet's error says",
    "unsupported_layout": "drain the node and remove the checkpoint (state: absent), or repair by hand",
    "policy_mismatch": "drain the node and remove the checkpoint (state: absent): the policy changed",
    "topology_changed": "a real topology change: drain the node and remove the checkpoint (state: absent)",
    "reserved_changed": "fix the kubelet configuration, or drain and remove the checkpoint (state: absent)",
    "hugepages_changed": "restore the hugepage allocation (nr_hugepages) or drain and remove the checkpoint",
    "bound_unknown": "run the probe as root (so /proc/iomem shows addresses) or pass drift_bound, e.g. 128Mi",
    "drift_exceeds_bound": "a real capacity change: check the DIMMs/VM size, then drain and remove the checkpoint",
    "assignments_do_not_fit": "a pod would lose memory: drain the node and remove the checkpoint (state: absent)",
}


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


class RepairPlan(Record, frozen=True):
    layout: str
    fields: CheckpointFields
    content: bytes


class Assessment(Record, frozen=True):
    verdict: str
    causes: Tuple[Cause, ...]
    bound_bytes: Optional[int]
    bound_source: str
    nodes: Tuple[NodeDrift, ...]
    report: Optional[CheckpointReport]
    plan: Optional[RepairPlan]

    @property
    def repairable(self) -> bool:
        return self.verdict == REPAIRABLE

    @property
    def advice(self) -> str:
        return _ADVICE[self.verdict]

    def causes_for(self, verdict: str) -> List[str]:
        return [cause.message for cause in self.causes if cause.verdict == verdict]


def resolve_bound(option: str, node: NodeFacts) -> Tuple[Optional[int], str]:
    """KEP-6232's bound (memory_drift.go): ``auto`` = kernel span + 64 MiB, ``off`` = 0, or a quantity."""
    text = str(option).strip()
    if text == "off":
        return 0, "off: exact comparison"
    if text != "auto":
        return parse_quantity(text), "fixed: %s" % text
    bound = auto_bound_bytes(node.kernel_image)
    if bound is None:
        return None, "auto: unknown (%s)" % (node.kernel_image.unknown_reason or "no kernel image in /proc/iomem")
    return bound, "auto: kernel image span %s + 64 MiB" % describe_bytes(node.kernel_image.span_bytes)


def _first_verdict(causes: List[Cause]) -> str:
    return min((cause.verdict for cause in causes), key=VERDICTS.index)


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


def _layout_causes(report: CheckpointReport) -> List[Cause]:
    if not report.verified:
        errors = sorted({result.error for result in report.eras.values() if result.error})
        return [Cause("corrupt", "no kubelet era loads the checkpoint: " + "; ".join(errors))]
    layout, reason = report.write_layout()
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


def _plan(report: CheckpointReport, expected: NodeMap) -> RepairPlan:
    content = report.content
    layout, _reason = report.write_layout()
    fields = CheckpointFields(policy_name=content.policy_name, machine_state=expected, entries=content.entries)
    return RepairPlan(layout, fields, marshal_for_layout(fields, layout))


def _config_unknown(settings: KubeletSettings, bound: Optional[int], source: str) -> Optional[Assessment]:
    """Kubelet's configuration could not be found or read: no verdict about the checkpoint."""
    if not settings.config_problems:
        return None
    causes = tuple(Cause("kubelet_config_unknown", problem) for problem in settings.config_problems)
    return Assessment("kubelet_config_unknown", causes, bound, source, (), None, None)


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


def _judge(
    report: CheckpointReport, node: NodeFacts, settings: KubeletSettings, bound: Optional[int], source: str
) -> Tuple[List[Cause], Tuple[NodeDrift, ...], NodeMap]:
    content = report.content
    causes = _layout_causes(report) + _policy_causes(content, settings)
    nodes: Tuple[NodeDrift, ...] = ()
    expected: NodeMap = {}
    if settings.policy in VALIDATED_POLICIES and content.policy_name == settings.policy:
        state_causes, expected, nodes = _state_causes(content, node, settings, bound, source)
        causes += state_causes
    elif not causes:
        causes.append(Cause("in_sync", 'policy "%s" does not validate the machine state' % settings.policy))
    return causes, nodes, expected


def kubelet_bound(settings: KubeletSettings, node: NodeFacts) -> Tuple[Optional[int], str]:
    """The bound kubelet itself applies with KEP-6232 on; ``auto`` without iomem is exact (kubernetes#142121)."""
    bound, source = resolve_bound(settings.drift_tolerance or "off", node)
    if bound is None:
        return 0, "kubelet's auto tolerance: exact comparison (%s)" % source
    return bound, "kubelet's memory-drift-tolerance " + source


def _tolerated(causes: List[Cause]) -> List[Cause]:
    return [Cause(TOLERATED, cause.message + "; kubelet tolerates it itself") if cause.verdict == REPAIRABLE else cause for cause in causes]


def assess(
    raw: Optional[bytes], node: NodeFacts, settings: KubeletSettings, bound_option: str = "auto"
) -> Assessment:
    """Decide, for one node, what kubelet would do and what a repair may do."""
    bound, source = resolve_bound(bound_option, node)
    unknown = _config_unknown(settings, bound, source)
    if unknown:
        return unknown
    rejections = _config_rejections(node, settings)
    if rejections:
        # Kubelet stops before it reads the checkpoint; what the file would meet is listed after.
        found = _assess_checkpoint(raw, node, settings, bound, source)
        causes = tuple(rejections) + found.causes
        return Assessment("kubelet_config_rejected", causes, bound, source, found.nodes, found.report, None)
    return _assess_checkpoint(raw, node, settings, bound, source)


def _assess_checkpoint(
    raw: Optional[bytes], node: NodeFacts, settings: KubeletSettings, bound: Optional[int], source: str
) -> Assessment:
    if raw is None:
        return Assessment("no_checkpoint", (Cause("no_checkpoint", CHECKPOINT_FILE_NAME + " does not exist"),), bound, source, (), None, None)
    report = inspect_checkpoint(raw)
    if not report.verified:
        return Assessment("corrupt", tuple(_layout_causes(report)), bound, source, (), report, None)
    if settings.drift_tolerance is not None:
        # KEP-6232 on: kubelet_tolerates stands where drift_within_bound would, judged with kubelet's bound.
        own_bound, own_source = kubelet_bound(settings, node)
        causes, nodes, _expected = _judge(report, node, settings, own_bound, own_source)
        if _first_verdict(causes) == REPAIRABLE:
            return Assessment(TOLERATED, tuple(_tolerated(causes)), own_bound, own_source, nodes, report, None)
    causes, nodes, expected = _judge(report, node, settings, bound, source)
    verdict = _first_verdict(causes)
    plan = _plan(report, expected) if verdict == REPAIRABLE else None
    return Assessment(verdict, tuple(causes), bound, source, nodes, report, plan)


def verify_written(content: bytes, plan: RepairPlan) -> List[str]:
    """Re-read check of a written file: every era loads it, and it holds exactly the plan."""
    report = inspect_checkpoint(content)
    problems = ["kubelet %s would reject it: %s" % (era, report.eras[era].error) for era in ERAS if not report.eras[era].accepted]
    written = report.content
    if written is None or (written.policy_name, written.machine_state, written.entries) != (
        plan.fields.policy_name, plan.fields.machine_state, plan.fields.entries
    ):
        problems.append("the file does not hold the planned state")
    if content != plan.content:
        problems.append("the file's bytes differ from the planned bytes")
    return problems
