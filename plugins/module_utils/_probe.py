# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe: read one node and assess it, the one place that orchestrates the node reads.

:func:`probe` reads kubelet's settings (``_kubelet.config``), the node's NUMA facts (``_node.sysfs``), the
memory manager checkpoint and the boot guard's record, all through the node's
:class:`~_common.node_files.NodeFiles`, then hands them to the pure :func:`_policy.drift.assess`.
:func:`read_plan` is what those reads declare: the node reader's plan (``_node.plan_reader``), so the
controller gets in one read what the probe will look at. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import CHECKPOINT_FILE_NAME, MAX_CHECKPOINT_BYTES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import load_json
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import NodeFiles, node_join, read_node_text, read_regular_file
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.assess import CpuAssessment, assess_cpu_manager
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import CPU_STATE_FILE_NAME, MAX_CPU_STATE_BYTES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.rules import ALIGN_BY_UNCORE_CACHE
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.start import picks_by_uncore_cache
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.topology_record import MAX_RECORD_BYTES, RecordError, TopologyRecord, parse_record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import load_kubelet_settings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.distributions import DISCOVERY_FOLLOWS, DISCOVERY_READS
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.flags import KUBELET_FOLLOWS
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import KubeletSettings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import CACHE_READS, READS as CPU_READS, CpuTopology, read_cpu_topology
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import NodeFacts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import READS as SYSFS_READS, read_node_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift import Assessment, assess
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import HISTORY_FILE, HistoryError, NOT_COUNTED, history_in
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.lock import TOPOLOGY_RECORD_FILE

__all__ = ["ProbeResult", "CpuManagerRead", "probe", "read_plan", "read_checkpoint", "GUARD_PROGRAM", "GUARD_STATE"]

# The boot guard's program and its record of the last boot (docs/guard.md).
GUARD_PROGRAM = "/usr/local/libexec/nodeops-numa-drift/numa-drift-guard"
GUARD_STATE = "/var/lib/nodeops-numa-drift/guard.json"
MAX_GUARD_STATE_BYTES = 64 * 1024
GUARD_READS = ({"stat": GUARD_PROGRAM}, {"read": GUARD_STATE})
# The repair history (_write.history), read with the rest so that the remediate role's loop guard decides from the
# probe's facts, without reading the node again.
HISTORY = "/" + HISTORY_FILE  # the node path of the history at its default place
HISTORY_READS = ({"read": HISTORY, "raw": True, "literal": True},)
# The collection's record of where the pinned CPUs sat at the last good state (_cpu.topology_record).
TOPOLOGY_RECORD = "/" + TOPOLOGY_RECORD_FILE
TOPOLOGY_RECORD_READS = ({"read": TOPOLOGY_RECORD, "raw": True, "literal": True},)
MAX_REPAIR_TIMES = 1000  # the most recent ones: the loop guard decides the same for any loop_max_repairs up to this


def read_checkpoint(path: str) -> Optional[bytes]:
    """The checkpoint's bytes at the host ``path`` (the write path's re-read), or None when nothing is there.

    Reads at most the size limit + 1; only a regular file (a symbolic link is refused, never followed).
    """
    try:
        return read_regular_file(path, MAX_CHECKPOINT_BYTES + 1, truncate=True)
    except FileNotFoundError:
        return None


def _checkpoint(files: NodeFiles, root_dir: str, name: str = CHECKPOINT_FILE_NAME, limit: int = MAX_CHECKPOINT_BYTES) -> Tuple[str, Optional[bytes]]:
    """``(where it is, its bytes or None)`` of ``<root dir>/memory_manager_state`` (``memoryManagerStateFileName``;
    the root dir only moves with ``--root-dir``) or of ``name`` beside it (``cpu_manager_state``); a symbolic link is
    refused, never followed (docs/safety.md)."""
    node_path = node_join(root_dir, name)
    try:
        raw: Optional[bytes] = files.read_bytes(node_path, limit + 1, truncate=True)
    except FileNotFoundError:
        raw = None
    return files.host_path(node_path, follow=False), raw


class CpuManagerRead(Record, frozen=True):
    """What the CPU manager's part was computed from: ``cpu_manager_state`` at ``path`` (``raw``: its bytes, None:
    absent) and the online CPUs (``topology``; None under a policy that reads none)."""

    path: str
    raw: Optional[bytes]
    topology: Optional[CpuTopology]


def _cpu_manager(files: NodeFiles, settings: KubeletSettings) -> Tuple[CpuAssessment, CpuManagerRead]:
    """The CPU manager's part (kubelet starts it before the memory manager): its checkpoint and the online CPUs."""
    path, raw = _checkpoint(files, settings.root_dir, CPU_STATE_FILE_NAME, MAX_CPU_STATE_BYTES)
    if raw is not None and len(raw) > MAX_CPU_STATE_BYTES:
        raw = raw[:MAX_CPU_STATE_BYTES]  # truncated: kubelet's JSON reader refuses what is left, and so does ours
    # getReservedCPUs checks reservedSystemCPUs against the online CPUs whatever the policy.
    wanted = settings.cpu.policy == "static" or settings.cpu.reserved_system_cpus
    topology = read_cpu_topology(files, picks_by_uncore_cache(settings.cpu)) if wanted else None
    record_path = files.host_path(TOPOLOGY_RECORD, follow=False)
    record = _topology_record(files, record_path) if settings.cpu.policy == "static" else None
    return assess_cpu_manager(settings, topology, raw, path, record, record_path), CpuManagerRead(path, raw, topology)


def _topology_record(files: NodeFiles, where: str) -> Union[None, TopologyRecord, str]:
    """The collection's topology record (None: there is none), or why it cannot be read (naming the file, ``where``)."""
    try:
        return parse_record(files.read_bytes(TOPOLOGY_RECORD, MAX_RECORD_BYTES))
    except FileNotFoundError:
        return None
    except (OSError, RecordError) as error:
        return "this collection's CPU topology record %s cannot be read (%s): remove it once the pinned CPUs' placement is known good" % (where, error)


def _guard(files: NodeFiles) -> Dict[str, Any]:
    """The boot guard on this node: installed or not, and what it decided at its last boot."""
    view: Dict[str, Any] = {"installed": files.isfile(GUARD_PROGRAM)}
    text, _problem, _exists = read_node_text(files, GUARD_STATE, limit=MAX_GUARD_STATE_BYTES)
    try:
        record = load_json(text) if text else {}
    except ValueError:
        record = {}
    record = record if isinstance(record, dict) else {}
    view.update({key: record.get(key) for key in ("boot_id", "verdict", "action", "message", "time")})
    return view


def _history(files: NodeFiles) -> Dict[str, Any]:
    """The repair history at its default place: where it is (a host path), the times of the repair attempts it
    records (those the loop guard counts, most recent last), or why it cannot be used."""
    view: Dict[str, Any] = {"path": files.host_path(HISTORY, follow=False), "repairs": [], "error": None}
    try:
        entries = history_in(files, HISTORY)
    except HistoryError as error:
        view["error"] = str(error)
        return view
    view["repairs"] = sorted(entry["time"] for entry in entries if entry.get("action") not in NOT_COUNTED)[-MAX_REPAIR_TIMES:]
    return view


class ProbeResult(Record, frozen=True):
    """One node's assessment with what it was computed from (``raw`` = the checkpoint's bytes at ``path``)."""

    assessment: Assessment
    settings: KubeletSettings
    node: NodeFacts
    path: str
    raw: Optional[bytes]
    guard: Dict[str, Any]
    history: Dict[str, Any]
    cpu: Optional[CpuAssessment] = None
    cpu_read: Optional[CpuManagerRead] = None


def probe(
    files: NodeFiles,
    kubelet_root_dir: Optional[str] = None,
    kubelet_config: Optional[str] = None,
    kubelet_config_dir: Optional[str] = None,
    drift_bound: str = "auto",
    policy: Optional[str] = None,
    reserved_memory: Optional[object] = None,
    kubelet_flags: Optional[object] = None,
    kubelet_release: Optional[str] = None,
    untested_release: str = "refuse",
) -> ProbeResult:
    """Read one node through ``files`` and assess it, at the release of the kubelet that will start."""
    settings = load_kubelet_settings(
        files,
        kubelet_root_dir=kubelet_root_dir,
        config_path=kubelet_config,
        config_dir=kubelet_config_dir,
        flags=kubelet_flags,
        policy=policy,
        reserved_memory=reserved_memory,
        kubelet_release=kubelet_release,
        untested_release=untested_release,
    )
    node = read_node_facts(files)
    path, raw = _checkpoint(files, settings.root_dir)
    cpu, cpu_read = (None, None) if settings.config_problems else _cpu_manager(files, settings)
    return ProbeResult(assess(raw, node, settings, drift_bound, cpu), settings, node, path, raw, _guard(files), _history(files), cpu, cpu_read)


def _option_reads(arguments: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """What the probe's options name: a configuration file, a drop-in directory, a root dir, and the paths a
    ``kubelet_flags`` command line names (as kubelet's flags are followed in a unit)."""
    rules: List[Dict[str, Any]] = []
    if arguments.get("kubelet_config"):
        rules.append({"read": arguments["kubelet_config"], "literal": True})
    if arguments.get("kubelet_config_dir"):
        rules.append({"walk": arguments["kubelet_config_dir"], "literal": True})
    if arguments.get("kubelet_root_dir"):
        for name in (CHECKPOINT_FILE_NAME, CPU_STATE_FILE_NAME):
            rules.append({"read": posixpath.join(arguments["kubelet_root_dir"], name), "raw": True, "literal": True})
    flags = arguments.get("kubelet_flags")
    if isinstance(flags, (list, tuple)):
        flags = " ".join(str(flag) for flag in flags)
    if isinstance(flags, str) and flags:
        from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.plan_reader import followed_rules  # pylint: disable=import-outside-toplevel

        rules.extend(followed_rules(KUBELET_FOLLOWS, list(KUBELET_FOLLOWS), flags))
    return rules


def _cache_reads(arguments: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The CPUs' cache files (about 25 paths per CPU), which the probe reads only where kubelet picks its reserved CPUs by
    them (``picks_by_uncore_cache``): read when the option's name is in a text read before them (kubelet's configuration,
    flags, environment files) or in ``kubelet_flags``. Where the name is spelled otherwise (a JSON or YAML escape), the
    probe asks for them in a second read (``plugin_utils._snapshot.missed_rules``)."""
    if ALIGN_BY_UNCORE_CACHE in str(arguments.get("kubelet_flags") or ""):
        return list(CACHE_READS)
    return [{"when": re.escape(ALIGN_BY_UNCORE_CACHE), "then": list(CACHE_READS)}]


def read_plan(arguments: Mapping[str, Any]) -> Tuple[List[Dict[str, Any]], Dict[str, Dict[str, Any]]]:
    """``(rules, follows)``: what :func:`probe` reads on a node with these options (``_node.plan_reader``); with
    ``kubelet_release`` named, no program is asked its release."""
    rules = (list(SYSFS_READS) + list(CPU_READS) + list(DISCOVERY_READS) + list(GUARD_READS) + list(HISTORY_READS) + list(TOPOLOGY_RECORD_READS)
             + _option_reads(arguments) + _cache_reads(arguments))
    follows = dict(DISCOVERY_FOLLOWS)
    if arguments.get("kubelet_release"):
        # No program is asked: what is there is all discovery looks at (kubeadm's /usr/bin/kubelet).
        follows.pop("exec-program")
        rules = [_without_version(rule, follows) for rule in rules]
    return rules, follows


def _without_version(rule: Dict[str, Any], follows: Mapping[str, Any]) -> Dict[str, Any]:
    if "version" in rule:
        return {"stat": rule["version"]}
    return dict(rule, follow=[name for name in rule["follow"] if name in follows]) if "follow" in rule else rule
