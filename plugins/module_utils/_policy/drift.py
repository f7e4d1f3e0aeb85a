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

from typing import List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import CheckpointReport, inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_for_layout
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (
    CHECKPOINT_FILE_NAME,
    CheckpointFields,
    ERAS,
    NodeMap,
    era_at,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import KubeletSettings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.causes import (
    Cause,
    NodeDrift,
    _config_rejections,
    _layout_causes,
    _policy_causes,
    _state_causes,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.iomem import auto_bound_bytes
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import NodeFacts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import describe_bytes, parse_quantity
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, replace
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.assess import CpuAssessment
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import (
    CPU_REPAIRABLE,
    NOTHING_TO_DO,
    REPAIRABLE,
    REPAIRABLE_VERDICTS,
    TOLERATED,
    UNTESTED,
    VERDICTS,
    remediate_advice,
)

__all__ = [
    "RepairPlan",
    "Assessment",
    "resolve_bound",
    "assess",
    "verify_written",
]

VALIDATED_POLICIES = ("Static", "BestEffort")  # BestEffort wraps Static's validation (memorymanager ``NewManager``)

_ADVICE = {
    "kubelet_config_unknown": "nothing was touched: fix or name kubelet's configuration (options kubelet_config, "
    "kubelet_config_dir, kubelet_flags, kubelet_root_dir, or policy and reserved_memory), then probe again",
    "kubelet_config_rejected": "nothing was touched, and deleting the checkpoint would not help: kubelet refuses "
    "this configuration whatever the checkpoint holds; fix the value named in the causes in kubelet's configuration, "
    "restart kubelet, then probe again",
    "kubelet_release_untested": "nothing was touched: this kubelet's release is outside the tested ones (1.34 to 1.37); "
    "upgrade or downgrade kubelet to a tested release, or allow the nearest tested release's rules with "
    "untested_release=nearest, then probe again",
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
    "cpu_manager_unknown": "nothing was touched: kubelet's CPU manager (started before the memory manager) could not be judged; "
    "fix what the causes name (the online CPUs under /sys/devices/system/cpu, the CPU manager's options), then probe again",
    "cpu_manager_refuses": "nothing was touched, and repairing memory_manager_state alone would not start kubelet: its CPU manager "
    "refuses cpu_manager_state; evict the pods named (or drain the node), then remove cpu_manager_state, as kubelet's error says",
    "cpu_default_set_stale": remediate_advice(),
    "cpu_checkpoint_untrusted": "nothing was touched: kubelet would start, but cpu_manager_state cannot be trusted (the causes say "
    "why); drain the node and remove cpu_manager_state before repairing anything",
}


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
    cpu: Optional[CpuAssessment] = None

    @property
    def repairable(self) -> bool:
        return self.verdict in REPAIRABLE_VERDICTS

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


def checkpoint_era(settings: KubeletSettings) -> Optional[str]:
    """The checkpoint reader of the kubelet whose rules judge the node, or None (every supported release's)."""
    release = settings.rules_release.release
    return era_at(release, settings.feature_gates.get("PodLevelResourceManagers", False)) if release else None


def _plan(report: CheckpointReport, expected: NodeMap, era: Optional[str]) -> RepairPlan:
    content = report.content_at(era)
    layout, _reason = report.write_layout(era)
    fields = CheckpointFields(policy_name=content.policy_name, machine_state=expected, entries=content.entries)
    return RepairPlan(layout, fields, marshal_for_layout(fields, layout))


def _config_unknown(settings: KubeletSettings, bound: Optional[int], source: str) -> Optional[Assessment]:
    """Kubelet's configuration could not be found or read: no verdict about the checkpoint."""
    if not settings.config_problems:
        return None
    causes = tuple(Cause("kubelet_config_unknown", problem) for problem in settings.config_problems)
    return Assessment("kubelet_config_unknown", causes, bound, source, (), None, None)


def _judge(
    report: CheckpointReport, node: NodeFacts, settings: KubeletSettings, bound: Optional[int], source: str
) -> Tuple[List[Cause], Tuple[NodeDrift, ...], NodeMap]:
    era = checkpoint_era(settings)
    content = report.content_at(era)
    causes = _layout_causes(report, era, settings.rules_release.name) + _policy_causes(content, settings)
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
    raw: Optional[bytes], node: NodeFacts, settings: KubeletSettings, bound_option: str = "auto", cpu: Optional[CpuAssessment] = None
) -> Assessment:
    """Decide, for one node, what kubelet would do and what a repair may do; ``cpu``: the CPU manager's part, which
    kubelet meets first (one verdict covers both managers)."""
    return with_cpu_manager(_assess_memory(raw, node, settings, bound_option), cpu)


def with_cpu_manager(memory: Assessment, cpu: Optional[CpuAssessment]) -> Assessment:
    """The node's verdict over both managers: a CPU-manager cause comes first in the order (kubelet starts the CPU
    manager before the memory manager and exits on its error). The node is repairable only when each manager starts
    as it is or is repairable: a stale ``defaultCpuSet`` (``cpu_default_set_stale``) is repaired with the memory
    manager's drift when there is one (its plan kept), and a memory manager that refuses is the node's verdict."""
    if cpu is None or cpu.verdict is None or memory.verdict == "kubelet_config_unknown":
        return replace(memory, cpu=cpu)
    causes = (Cause(cpu.verdict, cpu.message),) + memory.causes
    if cpu.verdict == CPU_REPAIRABLE:
        memory_fine = memory.verdict in NOTHING_TO_DO or memory.verdict == REPAIRABLE
        verdict = CPU_REPAIRABLE if memory_fine else memory.verdict
        return replace(memory, verdict=verdict, causes=causes, plan=memory.plan if memory_fine else None, cpu=cpu)
    verdict = _first_verdict(list(causes))
    return replace(memory, verdict=verdict, causes=causes, plan=memory.plan if verdict == memory.verdict else None, cpu=cpu)


def _assess_memory(
    raw: Optional[bytes], node: NodeFacts, settings: KubeletSettings, bound_option: str = "auto"
) -> Assessment:
    bound, source = resolve_bound(bound_option, node)
    unknown = _config_unknown(settings, bound, source)
    if unknown:
        return unknown
    if settings.release.known and not settings.rules_release.known:
        # A release outside the tested matrix: kubelet's own code never judged its rules here; nothing is written.
        found = _assess_checkpoint(raw, node, settings, bound, source)
        cause = Cause(UNTESTED, "%s (%s) is %s: nothing is written; untested_release=nearest judges it by the nearest tested "
                      "release's rules" % (settings.release.name, settings.release.source, settings.release.untested_why))
        return Assessment(UNTESTED, (cause,) + found.causes, bound, source, found.nodes, found.report, None)
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
    era = checkpoint_era(settings)
    if not report.verified or (era is not None and not report.eras[era].accepted):
        return Assessment("corrupt", tuple(_layout_causes(report, era, settings.rules_release.name)), bound, source, (), report, None)
    if settings.drift_tolerance is not None:
        # KEP-6232 on: kubelet_tolerates stands where drift_within_bound would, judged with kubelet's bound.
        own_bound, own_source = kubelet_bound(settings, node)
        causes, nodes, _expected = _judge(report, node, settings, own_bound, own_source)
        if _first_verdict(causes) == REPAIRABLE:
            return Assessment(TOLERATED, tuple(_tolerated(causes)), own_bound, own_source, nodes, report, None)
    causes, nodes, expected = _judge(report, node, settings, bound, source)
    verdict = _first_verdict(causes)
    unmodelled = report.unmodelled(era) if verdict == REPAIRABLE else None
    if unmodelled:
        # Kubelet reads past what it did not write (it starts with an in-sync file as it is); a rewrite is refused.
        causes, verdict = [Cause("unsupported_layout", unmodelled)] + causes, "unsupported_layout"
    plan = _plan(report, expected, era) if verdict == REPAIRABLE else None
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
