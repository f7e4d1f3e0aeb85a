# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The JSON view of an assessment (the modules' ``numa_drift`` return value) and its summary.

Pure functions from engine objects to plain dicts, lists and strings; the keys are a
stable contract for playbooks, reports and the role (see the modules' RETURN docs).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import CheckpointReport
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import Block, CheckpointFields, ERAS
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift import Assessment, checkpoint_era
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.causes import NodeDrift
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.assess import CpuAssessment
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import format_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import ProbeResult
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import KubeletSettings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.machine_state import MEMORY, count_blocks
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import NodeFacts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import describe_bytes

__all__ = ["assessment_facts", "pinned_pods", "summary_line", "numbers_text", "repair_diff", "kubelet_view"]


def _pair(numbers: Optional[Dict[str, Any]], resource: str, index: int) -> Optional[int]:
    return numbers[resource][index] if numbers and resource in numbers else None


def _resource_view(drift: NodeDrift, resource: str) -> Dict[str, Optional[int]]:
    return {
        "recorded_total": _pair(drift.recorded, resource, 0),
        "current_total": _pair(drift.current, resource, 0),
        "delta_total": drift.delta(resource, 0),
        "recorded_allocatable": _pair(drift.recorded, resource, 1),
        "current_allocatable": _pair(drift.current, resource, 1),
        "delta_allocatable": drift.delta(resource, 1),
    }


def _node_view(drift: NodeDrift, bound: Optional[int]) -> Dict[str, Any]:
    resources = sorted(set(drift.recorded or {}) | set(drift.current or {}))
    memory = _resource_view(drift, MEMORY)
    deltas = [abs(d) for d in (memory["delta_total"], memory["delta_allocatable"]) if d is not None]
    return {
        "node": drift.node,
        "memory": memory,
        "hugepages": {res: _resource_view(drift, res) for res in resources if res != MEMORY},
        "holds_kernel_image": drift.holds_kernel_image,
        "within_bound": None if bound is None or not deltas else max(deltas) <= bound,
    }


def _blocks_view(blocks: Optional[List[Block]]) -> Dict[str, Any]:
    """The NUMA nodes a set of blocks pins to, and the bytes per resource."""
    sizes: Dict[str, int] = {}
    for block in blocks or []:
        sizes[block.type] = sizes.get(block.type, 0) + block.size
    return {"numa_nodes": sorted({node for block in blocks or [] for node in block.numa_affinity or []}), "sizes": sizes}


def pinned_pods(content: Optional[CheckpointFields]) -> List[Dict[str, Any]]:
    """The pods whose NUMA pinning the checkpoint holds (kubelet records only Guaranteed pods' containers).

    Pod UID -> containers from ``entries``, and pods with pod-level ``podEntries`` blocks; each with the
    NUMA nodes its blocks are pinned to and the bytes per resource.
    """
    if content is None:
        return []
    entries = content.entries or {}
    pod_entries = content.pod_entries or {}
    pods = []
    for uid in sorted(set(entries) | set(pod_entries)):
        containers = [dict(_blocks_view(blocks), name=name) for name, blocks in sorted((entries.get(uid) or {}).items())]
        pod_level = pod_entries[uid].memory_blocks if uid in pod_entries else None
        # Pod-level blocks (PodLevelResourceManagers) are the pod's whole allotment; else its containers' blocks add up.
        blocks = pod_level if pod_level is not None else [b for bs in (entries.get(uid) or {}).values() for b in bs or []]
        pods.append(dict(_blocks_view(blocks), uid=uid, containers=containers, pod_level=pod_level is not None))
    return pods


def _checkpoint_view(report: Optional[CheckpointReport], path: str, era: Optional[str]) -> Dict[str, Any]:
    """The checkpoint as the kubelet whose rules judge the node reads it (``era``; None: every release's)."""
    view: Dict[str, Any] = {"path": path, "exists": report is not None}
    if report is None:
        return view
    content = report.content_at(era)
    pods, containers, blocks = count_blocks(content.entries if content else None)
    view.update(
        {
            "size": report.size,
            "layout": report.layout,
            "format": report.format_label,
            "checksum_ok": report.verified,
            "accepted_by": list(report.accepted_by),
            "releases_accepting": list(report.releases_accepting),
            "releases_refusing": list(report.releases_refusing),
            "eras": {era: {"accepted": r.accepted, "via": r.via, "error": r.error} for era, r in report.eras.items()},
            "write_layout": report.write_layout(era)[0],
            "policy": content.policy_name if content else None,
            "pods": pods,
            "containers": containers,
            "blocks": blocks,
            "pinned_pods": pinned_pods(content),
            "irregularities": list(report.irregularities),
        }
    )
    return view


def _kernel_view(node: NodeFacts) -> Dict[str, Any]:
    image = node.kernel_image
    return {
        "start": image.start,
        "end": image.end,
        "size": image.span_bytes,
        "numa_nodes": list(image.numa_nodes),
        "unknown_reason": image.unknown_reason,
        "location_reason": image.location_reason,
    }


def _plain(quantities: Mapping[str, int]) -> Dict[str, int]:
    """Byte counts as plain ints (a ``ByteQuantity`` is one with its spelling; facts hold JSON types only: Ansible
    warns about any other type it stores)."""
    return {name: int(value) for name, value in quantities.items()}


def kubelet_view(settings: KubeletSettings) -> Dict[str, Any]:
    """Where kubelet runs and what it is configured with, each setting with its source."""
    return {
        "distribution": settings.distribution,
        "service": settings.service,
        "policy": settings.policy,
        "root_dir": settings.root_dir,
        "config_path": settings.config_path,
        "config_dir": settings.config_dir,
        "dropins": list(settings.dropins),
        "files_read": list(settings.sources),
        "sources": dict(settings.field_sources),
        "reserved_memory": {str(k): _plain(v) for k, v in sorted(settings.reserved_memory.items())},
        "system_reserved": _plain(settings.system_reserved),
        "kube_reserved": _plain(settings.kube_reserved),
        "eviction_hard_memory": settings.eviction_hard_memory,
        "drift_tolerance": settings.drift_tolerance,
        "problems": list(settings.config_problems) + list(settings.problems),
        "release": settings.release.release,
        "version": settings.release.version,
        "release_source": settings.release.source,
        "rules_release": settings.rules_release.release,
    }


def summary_line(assessment: Assessment, node_label: str = "") -> str:
    """One line a person can read: verdict, the largest moves, the bound, what is kept."""
    moves = [
        "node%d %s%s" % (drift.node, "+" if drift.delta(MEMORY) > 0 else "", describe_bytes(drift.delta(MEMORY)))
        for drift in assessment.nodes
        if drift.delta(MEMORY)
    ]
    parts = [assessment.verdict]
    if moves:
        parts.append("memory " + ", ".join(moves))
    if assessment.bound_bytes is not None:
        parts.append("bound %s (%s)" % (describe_bytes(assessment.bound_bytes), assessment.bound_source))
    else:
        parts.append("bound %s" % assessment.bound_source)
    report = assessment.report
    if report is not None and report.content is not None:
        pods, containers, blocks = count_blocks(report.content.entries)
        parts.append("%d pods/%d containers/%d blocks recorded, %s layout" % (pods, containers, blocks, report.layout))
    if assessment.verdict not in ("in_sync", "no_checkpoint", "drift_within_bound", "kubelet_tolerates"):
        first = assessment.causes_for(assessment.verdict)
        if first:
            parts.append(first[0])
    return (node_label + ": " if node_label else "") + "; ".join(parts)


def assessment_facts(result: ProbeResult) -> Dict[str, Any]:
    """The ``numa_drift`` dict both modules return."""
    assessment, settings, node = result.assessment, result.settings, result.node
    return {
        "verdict": assessment.verdict,
        "repairable": assessment.repairable,
        "causes": [{"verdict": cause.verdict, "message": cause.message} for cause in assessment.causes],
        "advice": assessment.advice,
        "bound_bytes": assessment.bound_bytes,
        "bound_source": assessment.bound_source,
        "nodes": [_node_view(drift, assessment.bound_bytes) for drift in assessment.nodes],
        "checkpoint": _checkpoint_view(assessment.report, result.path, checkpoint_era(settings)),
        "kernel_image": _kernel_view(node),
        "kubelet": kubelet_view(settings),
        "guard": dict(result.guard),
        "history": dict(result.history),
        "node_problems": list(node.problems),
        "eras": list(ERAS),
        "cpu": cpu_manager_view(assessment.cpu),
        "summary": summary_line(assessment),
    }


def _cpus(cpus: Any) -> Optional[str]:
    return None if cpus is None else format_cpuset(cpus)


def cpu_manager_view(cpu: Optional[CpuAssessment]) -> Optional[Dict[str, Any]]:
    """The CPU manager's part of the node (kubelet starts it before the memory manager): its class, the verdict it asks
    for, kubelet's stage and error text, the CPUs online, recorded and reserved, the pods named."""
    if cpu is None:
        return None
    start = cpu.start
    state = start.state if start else None
    return {
        "class": cpu.cls,
        "verdict": cpu.verdict,
        "message": cpu.message,
        "release": start.release if start else None,
        "stage": start.stage if start else None,
        "error": start.error if start else None,
        "online": _cpus(start.online) if start else None,
        "recorded": _cpus(cpu.recorded),
        "default": state.default_text if state else None,
        "reserved": _cpus(start.reserved) if start else None,
        "layout": state.layout if state else None,
        "pods": list(cpu.pods),
        "rederived_default": _cpus(cpu.rederived_default),
        # The repair rewrites cpu_manager_state (only defaultCpuSet, in this layout), or it is not touched (None).
        "repair_layout": cpu.rewrite.layout if cpu.rewrite else None,
    }


def numbers_text(nodes: List[Dict[str, Any]], side: str) -> str:
    """Per-node numbers, one ``node<N>.<resource>.<field> = <bytes>`` line each, for diff mode."""
    lines = []
    for view in nodes:
        resources = [(MEMORY, view["memory"])] + sorted(view["hugepages"].items())
        for resource, numbers in resources:
            for name in ("total", "allocatable"):
                value = numbers["%s_%s" % (side, name)]
                if value is not None:
                    lines.append("node%d.%s.%s = %d (%s)" % (view["node"], resource, name, value, describe_bytes(value)))
    return "\n".join(lines) + "\n"


def repair_diff(facts: Dict[str, Any]) -> Dict[str, str]:
    """Diff mode's view of a repair (the module's, and the remediate role's dry run from the probe's facts): each NUMA
    node's numbers as the checkpoint records them, then as the repair writes them (the node's current ones)."""
    path = facts["checkpoint"]["path"]
    before, after = numbers_text(facts["nodes"], "recorded"), numbers_text(facts["nodes"], "current")
    cpu = facts.get("cpu") or {}
    if cpu.get("repair_layout"):  # cpu_manager_state: only defaultCpuSet is re-derived
        before += "cpu_manager_state.defaultCpuSet = %s\n" % cpu["default"]
        after += "cpu_manager_state.defaultCpuSet = %s\n" % cpu["rederived_default"]
    return {
        "before_header": path + " (recorded)",
        "after_header": path + " (recomputed)",
        "before": before,
        "after": after,
    }
