# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prometheus text-format metrics of one node's assessment, for node_exporter's textfile collector.

:func:`render_metrics` is pure (an assessment, the repair history, two numbers in; text out);
:func:`write_metrics` writes it atomically (temporary file + rename, ``_files.atomic_write``)
to ``<textfile dir>/nodeops_numa_drift.prom``, so the collector never reads half a file.
The drift gauge is KEP-6232's ``kubelet_memory_manager_memory_drift_bytes{numa_node}`` (current
minus recorded, signed) and the bound gauge its ``kubelet_memory_manager_drift_tolerance_bytes``,
computed outside kubelet. Stdlib only.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.assess import CPU_CLASSES, CpuAssessment
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import pinned_cpus
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift import Assessment
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import VERDICTS
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import atomic_write

__all__ = ["METRICS_FILE", "REPAIR_AUTHORS", "render_metrics", "metrics_path", "write_metrics"]

METRICS_FILE = "nodeops_numa_drift.prom"
REPAIR_AUTHORS = ("guard", "role")
_PREFIX = "nodeops_numa_drift_"


def _label(value: object) -> str:
    text = str(value)
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _family(name: str, help_text: str, samples: List[str]) -> List[str]:
    return ["# HELP %s%s %s" % (_PREFIX, name, help_text), "# TYPE %s%s gauge" % (_PREFIX, name)] + samples


def _number(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def _drift_samples(assessment: Assessment) -> List[str]:
    samples = []
    for drift in assessment.nodes:
        for resource in sorted(set(drift.recorded or {}) & set(drift.current or {})):
            delta = drift.delta(resource, 0)
            if delta is not None:
                samples.append('%smemory_drift_bytes{numa_node="%d",resource="%s"} %d' % (_PREFIX, drift.node, _label(resource), delta))
    return samples


def _cpu_manager_lines(cpu: CpuAssessment) -> List[str]:
    """The CPU manager's class as found, and how many CPUs are online, recorded in cpu_manager_state, and pinned."""
    found = ['%scpu_manager_class{class="%s"} %d' % (_PREFIX, name, int(name == cpu.cls)) for name in CPU_CLASSES]
    lines = _family("cpu_manager_class", "1 for the CPU manager's class as this run found it (the guard: before any repair), 0 for every "
                    "other class.", found)
    start = cpu.start
    if start is None:
        return lines
    counts = [("online", len(start.online))]
    if start.state is not None:
        counts += [("recorded", len(cpu.recorded or ())), ("pinned", len(pinned_cpus(start.state)))]
    return lines + _family("cpu_manager_cpus", "CPUs online now, recorded in cpu_manager_state (shared pool and pinned), and pinned "
                           "to pods.", ['%scpu_manager_cpus{set="%s"} %d' % (_PREFIX, name, count) for name, count in counts])


def _repair_counts(history: List[Dict[str, Any]]) -> Dict[str, int]:
    counts = dict.fromkeys(REPAIR_AUTHORS, 0)
    for entry in history:
        if entry.get("action") == "repaired" and entry.get("by") in counts:
            counts[entry["by"]] += 1
    return counts


def render_metrics(
    assessment: Assessment,
    history: List[Dict[str, Any]],
    now: float,
    duration_seconds: Optional[float] = None,
    verdict: Optional[str] = None,
) -> str:
    """The metrics file's text: verdict, drift, bound, the CPU manager's class and CPUs, repairs, timestamps.

    ``verdict`` (default the assessment's) is the one found at this boot before any repair:
    a later run in the same boot passes the verdict it recorded then.
    """
    found = verdict or assessment.verdict
    lines = _family("verdict", "1 for the verdict found at this boot before any repair, 0 for every other verdict.", [
        '%sverdict{verdict="%s"} %d' % (_PREFIX, name, int(name == found)) for name in VERDICTS
    ])
    lines += _family("memory_drift_bytes", "Per NUMA node and resource: current minus recorded total, in bytes "
                     "(as KEP-6232's kubelet_memory_manager_memory_drift_bytes).", _drift_samples(assessment))
    if assessment.bound_bytes is not None:
        lines += _family("bound_bytes", "The drift bound per NUMA node in bytes (as KEP-6232's "
                         "kubelet_memory_manager_drift_tolerance_bytes); absent when unknown.",
                         ["%sbound_bytes %d" % (_PREFIX, assessment.bound_bytes)])
    if assessment.cpu is not None:
        lines += _cpu_manager_lines(assessment.cpu)
    lines += _family("repairs_total", "Repairs recorded in the node's repair history (its loop-guard window), by who repaired.", [
        '%srepairs_total{by="%s"} %d' % (_PREFIX, by, count) for by, count in sorted(_repair_counts(history).items())
    ])
    lines += _family("last_run_timestamp_seconds", "UNIX time of the run that wrote this file.",
                     ["%slast_run_timestamp_seconds %s" % (_PREFIX, _number(round(now, 3)))])
    if duration_seconds is not None:
        lines += _family("guard_duration_seconds", "How long the boot guard's run took, in seconds.",
                         ["%sguard_duration_seconds %s" % (_PREFIX, _number(round(duration_seconds, 6)))])
    return "\n".join(lines) + "\n"


def metrics_path(textfile_dir: str) -> str:
    return os.path.join(textfile_dir, METRICS_FILE)


def write_metrics(textfile_dir: str, text: str) -> str:
    """Write ``text`` atomically to ``<textfile_dir>/nodeops_numa_drift.prom`` (mode 0644: the exporter reads it)."""
    os.makedirs(textfile_dir, mode=0o755, exist_ok=True)
    path = metrics_path(textfile_dir)
    atomic_write(path, text.encode("utf-8"), mode=0o644)
    return path
