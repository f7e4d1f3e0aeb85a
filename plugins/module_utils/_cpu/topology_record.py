# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's own record of where each pinned CPU sat, for what kubelet never checks.

Kubelet's ``validateState`` compares CPU ids only, never a CPU's core, socket or NUMA node
(pkg/kubelet/cm/cpumanager/policy_static.go, v1.34-v1.37: it checks the sets of ids only): after a
firmware renumbering or an SNC/NPS toggle that keeps the ids, kubelet starts and keeps each pod pinned to ids that now
name other hardware. So at each good state (the boot guard's in-sync boot, a repair) the collection records, for each
exclusive entry of ``cpu_manager_state``, the core (kubelet's number: the core's lowest thread), the threads of that
core, the socket and the NUMA node of its CPUs, and the online CPUs. A later probe compares the entries that are still
there with the same CPUs (a pod pinned later is not in the record and is not compared): a CPU that moved makes the
class ``assigned_cpu_moved``, refused although kubelet would start.

The record is JSON at ``/var/lib/nodeops-numa-drift/cpu_topology.json``; :func:`record_bytes` writes it,
:func:`parse_record` reads it (bounded, every field checked), :func:`moved_cpus` compares. Pure, stdlib only,
Python >= 3.9.
"""

from __future__ import annotations

import json
from typing import Any, Dict, FrozenSet, Mapping, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import load_json, shown
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import CpuSetError, format_cpuset, parse_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import MAX_TOPOLOGY_ID, CpuInfo, CpuTopology
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.lock import STATE_DIR

__all__ = ["TOPOLOGY_RECORD_FILE", "MAX_RECORD_BYTES", "RecordError", "TopologyRecord", "record_bytes", "parse_record", "moved_cpus"]

TOPOLOGY_RECORD_FILE = STATE_DIR + "/cpu_topology.json"
MAX_RECORD_BYTES = 1024 * 1024
_VERSION = 1
Placement = Tuple[int, int, int, FrozenSet[int]]  # core, socket, NUMA node, the core's threads
Entries = Mapping[str, Mapping[str, FrozenSet[int]]]


class RecordError(ValueError):
    """The record exists but is not one this collection wrote: no comparison can be trusted."""


class TopologyRecord(Record, frozen=True):
    """Where the pinned CPUs sat at the last good state: ``entries`` (pod -> container -> CPUs), each recorded CPU's
    ``placement``, the ``online`` CPUs then, and when (``boot_id``, ``time``)."""

    entries: Dict[str, Dict[str, FrozenSet[int]]]
    placement: Dict[int, Placement]
    online: FrozenSet[int]
    boot_id: Optional[str]
    time: Optional[float]


def _threads(cpus: Mapping[int, CpuInfo], cpu: int) -> FrozenSet[int]:
    """The threads of ``cpu``'s core (kubelet numbers a core by its lowest thread, unique across sockets)."""
    core = cpus[cpu].core
    return frozenset(other for other, info in cpus.items() if info.core == core)


def placement_of(cpus: Mapping[int, CpuInfo], cpu: int) -> Optional[Placement]:
    info = cpus.get(cpu)
    return None if info is None else (info.core, info.socket, info.numa_node, _threads(cpus, cpu))


def record_bytes(topology: CpuTopology, entries: Entries, boot_id: Optional[str], now: float) -> bytes:
    """The record of ``entries`` on ``topology`` (every CPU they hold, with its core's threads)."""
    held = sorted({cpu for containers in entries.values() for cpus in containers.values() for cpu in cpus if cpu in topology.cpus})
    document = {
        "version": _VERSION,
        "boot_id": boot_id,
        "time": round(now, 3),
        "online": format_cpuset(topology.online),
        "entries": {pod: {name: format_cpuset(cpus) for name, cpus in sorted(containers.items())} for pod, containers in sorted(entries.items())},
        "cpus": {str(cpu): {"core": place[0], "socket": place[1], "numa_node": place[2], "threads": format_cpuset(place[3])}
                 for cpu in held for place in (placement_of(topology.cpus, cpu),) if place is not None},
    }
    return (json.dumps(document, indent=1, sort_keys=True) + "\n").encode("utf-8")


def _said(value: Any) -> str:
    return shown(repr(value)[:80])


def _cpuset(value: Any, where: str) -> FrozenSet[int]:
    if not isinstance(value, str):
        raise RecordError("%s is not a CPU list" % where)
    try:
        return parse_cpuset(value)
    except CpuSetError as error:
        raise RecordError("%s: %s" % (where, error)) from None


def _topology_id(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOPOLOGY_ID:
        raise RecordError("%s is not a topology id: %s" % (where, _said(value)))
    return value


def _entries(value: Any) -> Dict[str, Dict[str, FrozenSet[int]]]:
    if not isinstance(value, dict) or not all(isinstance(containers, dict) for containers in value.values()):
        raise RecordError("entries is not an object of pods")
    return {str(pod): {str(name): _cpuset(cpus, "entries[%s][%s]" % (_said(pod), _said(name))) for name, cpus in containers.items()}
            for pod, containers in value.items()}


def _placements(value: Any) -> Dict[int, Placement]:
    if not isinstance(value, dict):
        raise RecordError("cpus is not an object")
    placement: Dict[int, Placement] = {}
    for key, place in value.items():
        cpu = _cpuset(key, "cpus key %s" % _said(key))
        if len(cpu) != 1 or not isinstance(place, dict):
            raise RecordError("cpus[%s] is not one CPU's placement" % _said(key))
        where = "cpus[%s]" % min(cpu)
        placement[min(cpu)] = (_topology_id(place.get("core"), where + ".core"), _topology_id(place.get("socket"), where + ".socket"),
                               _topology_id(place.get("numa_node"), where + ".numa_node"), _cpuset(place.get("threads"), where + ".threads"))
    return placement


def parse_record(raw: bytes) -> TopologyRecord:
    """The record in ``raw``, or :class:`RecordError` naming what is wrong."""
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordError("larger than %d bytes" % MAX_RECORD_BYTES)
    try:
        document = load_json(raw)
    except ValueError as error:
        raise RecordError("not JSON: %s" % error) from None
    if not isinstance(document, dict) or document.get("version") != _VERSION:
        raise RecordError("not a version-%d record" % _VERSION)
    boot_id, when = document.get("boot_id"), document.get("time")
    if boot_id is not None and not isinstance(boot_id, str) or when is not None and (isinstance(when, bool) or not isinstance(when, (int, float))):
        raise RecordError("boot_id or time is not what this collection writes")
    return TopologyRecord(_entries(document.get("entries")), _placements(document.get("cpus")), _cpuset(document.get("online"), "online"),
                          boot_id, None if when is None else float(when))


def moved_cpus(record: TopologyRecord, topology: CpuTopology, entries: Entries) -> FrozenSet[int]:
    """The CPUs of entries still held as recorded (same pod, container and CPUs) whose core, threads, socket or NUMA node
    differ from the record; an offline CPU is kubelet's to refuse, not compared here."""
    moved = set()
    for pod, containers in entries.items():
        for name, cpus in containers.items():
            if record.entries.get(pod, {}).get(name) != cpus:
                continue
            moved.update(cpu for cpu in cpus if cpu in topology.cpus and cpu in record.placement
                         and placement_of(topology.cpus, cpu) != record.placement[cpu])
    return frozenset(moved)
