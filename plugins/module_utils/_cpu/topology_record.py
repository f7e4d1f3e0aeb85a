# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's own record of where each CPU sat, for what kubelet never checks.

Kubelet's ``validateState`` compares CPU ids only, never a CPU's core, socket or NUMA node
(pkg/kubelet/cm/cpumanager/policy_static.go, v1.34-v1.37: it checks the sets of ids only): after a
firmware renumbering or an SNC/NPS toggle that keeps the ids, kubelet starts and keeps each pod pinned to ids that now
name other hardware. So at each good state of the CPU manager (a boot the guard finds in sync or with nothing pinned,
a repair) the collection records every online CPU's socket, NUMA node and the threads of its core: the topology the
pods pinned during that uptime are pinned on. A later probe compares the CPUs every entry of ``cpu_manager_state``
holds: one whose socket or NUMA node changed, or whose core's threads (among the CPUs online at both times: SMT turned
on or a sibling offlined is not a move) changed, makes the class ``assigned_cpu_moved``, refused although kubelet
would start.

The record is JSON at ``/var/lib/nodeops-numa-drift/cpu_topology.json``; :func:`record_bytes` writes it,
:func:`parse_record` reads it (bounded: at most :data:`MAX_CPUS` CPUs, :data:`MAX_THREADS` threads a core; every
field checked, the record consistent), :func:`moved_cpus` compares. Pure, stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, FrozenSet, Mapping, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import load_json, shown
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import MAX_CPUS, CpuSetError, format_cpuset, parse_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import MAX_TOPOLOGY_ID, CpuInfo, CpuTopology

__all__ = ["MAX_RECORD_BYTES", "RecordError", "TopologyRecord", "record_bytes", "parse_record", "moved_cpus"]

MAX_RECORD_BYTES = 1024 * 1024
MAX_THREADS = 64  # threads of one core: SMT-8 is the most any machine has
_VERSION = 1
_BOOT_ID = re.compile(r"^[0-9A-Za-z-]{1,64}$")
_CPU_KEY = re.compile(r"^[0-9]{1,5}$")
Placement = Tuple[int, int, FrozenSet[int]]  # socket, NUMA node, the threads of the CPU's core


class RecordError(ValueError):
    """The record exists but is not one this collection wrote: no comparison can be trusted."""


class TopologyRecord(Record, frozen=True):
    """Where each online CPU sat at the last good state (``placement``), the ``online`` CPUs then, and when
    (``boot_id``, ``time``)."""

    placement: Dict[int, Placement]
    online: FrozenSet[int]
    boot_id: Optional[str]
    time: Optional[float]


def _threads(cpus: Mapping[int, CpuInfo], cpu: int) -> FrozenSet[int]:
    """The threads of ``cpu``'s core (kubelet numbers a core by its lowest thread, unique across sockets)."""
    core = cpus[cpu].core
    return frozenset(other for other, info in cpus.items() if info.core == core)


def placements(cpus: Mapping[int, CpuInfo]) -> Dict[int, Placement]:
    cores: Dict[int, set] = {}
    for cpu, info in cpus.items():
        cores.setdefault(info.core, set()).add(cpu)
    return {cpu: (info.socket, info.numa_node, frozenset(cores[info.core])) for cpu, info in cpus.items()}


def record_bytes(topology: CpuTopology, boot_id: Optional[str], now: float) -> bytes:
    """The record of every online CPU of ``topology``."""
    document = {
        "version": _VERSION,
        "boot_id": boot_id if boot_id and _BOOT_ID.match(boot_id) else None,
        "time": round(now, 3),
        "online": format_cpuset(topology.online),
        "cpus": {str(cpu): {"socket": socket, "numa_node": numa, "threads": format_cpuset(threads)}
                 for cpu, (socket, numa, threads) in sorted(placements(topology.cpus).items())},
    }
    return (json.dumps(document, indent=1, sort_keys=True) + "\n").encode("utf-8")


def _said(value: Any) -> str:
    return shown(repr(value)[:80])


def _cpuset(value: Any, where: str, limit: int = MAX_CPUS) -> FrozenSet[int]:
    if not isinstance(value, str):
        raise RecordError("%s is not a CPU list" % where)
    try:
        return parse_cpuset(value, limit)
    except CpuSetError as error:
        raise RecordError("%s: %s" % (where, error)) from None


def _topology_id(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOPOLOGY_ID:
        raise RecordError("%s is not a topology id: %s" % (where, _said(value)))
    return value


def _placement(key: str, place: Any, online: FrozenSet[int]) -> Tuple[int, Placement]:
    """One CPU's placement, consistent with the record: a CPU online then, its threads online then and its own among them."""
    if not _CPU_KEY.match(key):
        raise RecordError("cpus key %s is not a CPU id" % _said(key))
    cpu = int(key)
    if not isinstance(place, dict):
        raise RecordError("cpus[%d] is not a placement" % cpu)
    where = "cpus[%d]" % cpu
    threads = _cpuset(place.get("threads"), where + ".threads", MAX_THREADS)
    if cpu not in online or cpu not in threads or not threads <= online:
        raise RecordError("%s is not consistent with the record's online CPUs" % where)
    return cpu, (_topology_id(place.get("socket"), where + ".socket"), _topology_id(place.get("numa_node"), where + ".numa_node"), threads)


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
    boot_id, when, cpus = document.get("boot_id"), document.get("time"), document.get("cpus")
    if boot_id is not None and not (isinstance(boot_id, str) and _BOOT_ID.match(boot_id)):
        raise RecordError("boot_id is not a boot id")
    if when is not None and (isinstance(when, bool) or not isinstance(when, (int, float))):
        raise RecordError("time is not a number")
    online = _cpuset(document.get("online"), "online")
    if not isinstance(cpus, dict) or len(cpus) != len(online):
        raise RecordError("cpus does not hold one placement for each online CPU")
    placement = dict(_placement(str(key), place, online) for key, place in cpus.items())
    if set(placement) != online:
        raise RecordError("cpus does not hold one placement for each online CPU")
    return TopologyRecord(placement, online, boot_id, None if when is None else float(when))


def moved_cpus(record: TopologyRecord, topology: CpuTopology, held: FrozenSet[int]) -> FrozenSet[int]:
    """The pinned CPUs (``held``) whose socket or NUMA node differ from the record, or whose core's threads differ among
    the CPUs online both then and now; a CPU offline now (kubelet's to refuse) or new since the record is not compared."""
    compared = held & topology.online & record.online
    if not compared:
        return frozenset()
    now = placements(topology.cpus)
    common = topology.online & record.online
    moved = set()
    for cpu in compared:
        socket, numa, threads = now[cpu]
        was_socket, was_numa, was_threads = record.placement[cpu]
        if (socket, numa, threads & common) != (was_socket, was_numa, was_threads & common):
            moved.add(cpu)
    return frozenset(moved)
