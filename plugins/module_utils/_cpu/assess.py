# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPU manager's part of a node's verdict: what kubelet's CPU manager does, and what class of state that is.

:func:`assess_cpu_manager` runs :func:`_cpu.start.cpu_manager_start` at the release whose rules judge the node (at
every supported release when it is unknown: the first that refuses speaks), then classes the state:

* nothing to do: ``in_sync`` (kubelet starts with the file as it is), ``no_checkpoint`` (kubelet writes one),
  ``not_static`` (policy ``none`` and kubelet restores the file);
* the repairable class, where kubelet refuses and only ``defaultCpuSet`` is stale (re-deriving it keeps every
  entry and kubelet's own rules pass on the result): ``cpus_unrecorded`` (online CPUs the file records nowhere:
  the online set grew, or a torn two-step write leaked them), ``shared_cpus_offline`` (only CPUs of the shared pool
  went away). Verdict ``cpu_default_set_stale``, with the file re-written (:mod:`_cpu.rewrite`): ``defaultCpuSet``
  re-derived, in the file's own layout; a file this collection does not re-write (fields it does not know, a v4 file
  whose halves disagree) is refused (``cpu_manager_refuses``);
* refused (verdict ``cpu_manager_refuses``): ``assigned_cpu_offline``, ``reserved_overlaps_assignment``,
  ``config_changed`` (policy, options or reserved CPUs), ``default_overlaps_assignment``, ``no_shared_cpu_left``
  (strict-cpu-reservation with every unreserved CPU assigned, kubernetes#141196), ``corrupt`` (checksum, broken
  ``data``, unparsable), ``kubelet_config_refused`` (kubelet fails before it reads the file);
* untrusted although kubelet may start (verdict ``cpu_checkpoint_untrusted``, or ``cpu_manager_refuses`` where
  kubelet refuses it too): ``cpu_claimed_twice``, ``checksum_zero``, ``unsupported_layout``, ``assigned_cpu_moved``
  (an entry kept since the collection's topology record holds CPUs now on another core, socket or NUMA node, which
  kubelet never compares: :mod:`_cpu.topology_record`);
* ``unknown`` (verdict ``cpu_manager_unknown``): the CPUs could not be read, kubelet's start is not modelled, or the
  topology record cannot be read where it would be compared.

Pure, stdlib only, Python >= 3.9.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, replace
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu import rules
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import (
    CpuState,
    pinned_cpus,
    pod_entries_of,
    pod_entry_cpus,
    pod_level_cpus,
    recorded_cpus,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import format_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.rewrite import CpuRewrite, rewrite_default_set
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.start import CpuStart, config_refusal, cpu_manager_start
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.topology_record import TopologyRecord, moved_cpus
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import SUPPORTED_RELEASES, release_minor
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import CPU_POLICY_STATIC, KubeletSettings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import CpuTopology

__all__ = ["CPU_CLASSES", "NOTHING_TO_DO_CLASSES", "STALE_CLASSES", "UNTRUSTED_CLASSES", "CpuAssessment", "assess_cpu_manager", "verdict_of"]

NOTHING_TO_DO_CLASSES = ("in_sync", "no_checkpoint", "not_static")
STALE_CLASSES = ("cpus_unrecorded", "shared_cpus_offline")
UNTRUSTED_CLASSES = ("cpu_claimed_twice", "checksum_zero", "unsupported_layout", "assigned_cpu_moved")
# The classes whose pinning the topology record vouches for: kubelet starts, or only defaultCpuSet is re-derived.
_KEPT_PINNING = ("in_sync",) + STALE_CLASSES


class CpuAssessment(Record, frozen=True):
    """The CPU manager's part: its ``cls``, the node ``verdict`` it asks for (None: nothing to do), what kubelet does
    (``start``), a one-line ``message``, the pods it names, and the default set re-derived with the file that holds it
    (``rewrite``: the repairable class)."""

    cls: str
    verdict: Optional[str]
    message: str
    start: Optional[CpuStart]
    pods: Tuple[str, ...] = ()
    rederived_default: Optional[FrozenSet[int]] = None
    problems: Tuple[str, ...] = ()
    rewrite: Optional[CpuRewrite] = None

    @property
    def recorded(self) -> Optional[FrozenSet[int]]:
        state = self.start.state if self.start else None
        return None if state is None else recorded_cpus(state)


def verdict_of(cls: str, kubelet_starts: bool) -> Optional[str]:
    """The node verdict a class asks for (docs/modules.md, Verdicts)."""
    if cls in NOTHING_TO_DO_CLASSES:
        return None
    if cls == "unknown":
        return "cpu_manager_unknown"
    if cls in STALE_CLASSES:
        return "cpu_default_set_stale"
    if cls in UNTRUSTED_CLASSES and kubelet_starts:
        return "cpu_checkpoint_untrusted"
    return "cpu_manager_refuses"


# --------------------------------------------------------------------------- the classes, one predicate each


def _pinnings(state: CpuState) -> Tuple[Tuple[str, FrozenSet[int]], ...]:
    """``(pod, CPUs)`` for every exclusive entry and every restored pod-level entry (a pod's containers share its
    pod-level CPUs: policy_static.go allocatePodForAdd)."""
    both = (state.entries, pod_entries_of(state))
    return tuple((pod, cpus) for entries in both for pod, containers in entries.items() for cpus in containers.values())


def pods_holding(state: CpuState, cpus: FrozenSet[int]) -> Tuple[str, ...]:
    return tuple(sorted({pod for pod, held in _pinnings(state) if held & cpus}))


def cpus_claimed_twice(state: CpuState) -> FrozenSet[int]:
    """CPUs held by two different pods (kubelet never compares entries: only corruption makes this)."""
    owners: Dict[int, set] = {}
    for pod, cpus in _pinnings(state):
        for cpu in cpus:
            owners.setdefault(cpu, set()).add(pod)
    return frozenset(cpu for cpu, pods in owners.items() if len(pods) > 1)


def rederive_default(start: CpuStart, state: CpuState) -> FrozenSet[int]:
    """The only derived field, from the facts: online - pinned (the entries' and the restored pod-level entries' CPUs);
    under strict-cpu-reservation, less reserved too."""
    available = start.online - start.reserved if start.strict else start.online
    return available - pinned_cpus(state)


def _reserved_config_changed(start: CpuStart, state: CpuState, explicit: bool, unrecorded: FrozenSet[int], gone: FrozenSet[int]) -> bool:
    """Reserved CPUs misplaced in the file not because the online set moved kubelet's own pick: strict-cpu-reservation
    turned on or off, or ``reservedSystemCPUs`` changed."""
    if start.strict:
        misplaced = bool(start.reserved & state.default)
    else:
        misplaced = not start.reserved <= state.default
    if not misplaced:
        return False
    return explicit or not (unrecorded - start.reserved or gone)


def _drift_class(start: CpuStart, state: CpuState, explicit_reserved: bool) -> Tuple[str, Tuple[str, ...], Optional[FrozenSet[int]]]:
    """``(class, pods named, re-derived default)`` of a file kubelet's validateState refuses."""
    assigned = pinned_cpus(state)
    gone = recorded_cpus(state) - start.online
    unrecorded = unrecorded_cpus(start)
    if assigned & gone:
        return "assigned_cpu_offline", pods_holding(state, assigned & gone), None
    if assigned & start.reserved:
        return "reserved_overlaps_assignment", pods_holding(state, assigned & start.reserved), None
    if _reserved_config_changed(start, state, explicit_reserved, unrecorded, gone):
        return "config_changed", (), None
    if state.default & assigned:
        return "default_overlaps_assignment", pods_holding(state, state.default & assigned), None
    default = rederive_default(start, state)
    if not state.pod_level and default & pod_entry_cpus(state):
        # The file's pod-level CPUs, which kubelet does not restore, would join the shared pool: the gate was turned off
        # since kubelet wrote them.
        return "config_changed", pods_holding(replace(state, pod_level=True), default), None
    if rules.validate_state(start.online, start.reserved, start.strict, default, state.entries, pod_level_cpus(state)):
        return "no_shared_cpu_left", (), None
    return ("shared_cpus_offline" if gone else "cpus_unrecorded"), (), default


def _class_of(start: CpuStart, cpu_explicit: bool) -> Tuple[str, Tuple[str, ...], Optional[FrozenSet[int]]]:
    if start.stage == "unknown":
        return ("unsupported_layout" if not start.restore_modelled else "unknown"), (), None
    if start.stage in ("config", "construct"):
        return "kubelet_config_refused", (), None
    if start.stage == "restore":
        return ("config_changed" if "differs from state checkpoint policy" in (start.error or "") else "corrupt"), (), None
    state = start.state
    if state is None:
        return "no_checkpoint", (), None
    twice = cpus_claimed_twice(state)
    if twice:
        return "cpu_claimed_twice", pods_holding(state, twice), None
    if state.checksum_zero:
        return "checksum_zero", (), None
    if start.started:
        return ("in_sync" if state.policy_name == CPU_POLICY_STATIC else "not_static"), (), None
    return _drift_class(start, state, cpu_explicit)


_WHAT = {
    "in_sync": "kubelet's CPU manager starts with %(file)s as it is",
    "no_checkpoint": "no %(file)s: kubelet's CPU manager writes one",
    "not_static": "cpuManagerPolicy none: kubelet's CPU manager restores %(file)s as it is",
    "cpus_unrecorded": "only defaultCpuSet is stale: online CPUs %(unrecorded)s are recorded nowhere (the online set grew, or a torn "
                       "two-step write leaked them); re-deriving defaultCpuSet as %(rederived)s keeps every entry",
    "shared_cpus_offline": "only defaultCpuSet is stale: CPUs %(gone)s of the shared pool are offline; re-deriving defaultCpuSet as "
                           "%(rederived)s keeps every entry",
    "assigned_cpu_offline": "assigned CPUs %(assigned_gone)s are offline or gone: pods %(pods)s lost exclusive CPUs",
    "reserved_overlaps_assignment": "reserved CPUs %(reserved)s overlap the exclusive CPUs of pods %(pods)s",
    "config_changed": "the CPU manager's configuration changed since %(file)s was written (policy, options, reserved CPUs, or "
                      "PodLevelResourceManagers turned off under pod-level entries)%(named)s",
    "default_overlaps_assignment": "defaultCpuSet holds exclusive CPUs of pods %(pods)s",
    "no_shared_cpu_left": "strict-cpu-reservation leaves no shared CPU once every entry is kept (kubernetes#141196)",
    "corrupt": "%(file)s cannot be trusted: kubelet's restore refuses it",
    "kubelet_config_refused": "kubelet's CPU manager refuses its configuration on this machine, whatever %(file)s holds",
    "cpu_claimed_twice": "two pods claim the same CPUs (%(twice)s: pods %(pods)s): %(file)s cannot be trusted",
    "checksum_zero": "%(file)s has \"checksum\": 0, which kubelet takes unverified: it cannot be trusted",
    "unsupported_layout": "%(file)s is in a layout this collection does not read",
    "assigned_cpu_moved": "CPUs %(moved)s of pods %(pods)s are on another core, socket or NUMA node than when this collection "
                          "recorded them%(when)s: kubelet never compares that, and would keep the pods pinned to other hardware (if the "
                          "new placement is meant, drain the node, then remove %(file)s and this collection's record %(record)s)",
    "unknown": "kubelet's CPU manager could not be judged",
}


CPU_CLASSES = tuple(_WHAT)  # every class, in the order above (the metrics' labels)


def _message(cls: str, start: Optional[CpuStart], pods: Sequence[str], rederived: Optional[FrozenSet[int]], path: str, problems: Sequence[str],
             moved: FrozenSet[int] = frozenset(), when: str = "", record_path: str = "") -> str:
    state = start.state if start else None
    recorded = recorded_cpus(state) if state else frozenset()
    online = start.online if start else frozenset()
    values = {"file": path, "pods": ", ".join(pods), "named": ": pods %s" % ", ".join(pods) if pods else "",
              "rederived": '"%s"' % format_cpuset(rederived or ()),
              "gone": format_cpuset(recorded - online), "assigned_gone": format_cpuset((pinned_cpus(state) if state else frozenset()) - online),
              "reserved": format_cpuset(start.reserved if start else ()),
              "unrecorded": format_cpuset(unrecorded_cpus(start) if start else ()),
              "twice": format_cpuset(cpus_claimed_twice(state)) if state else "", "moved": format_cpuset(moved), "when": when,
              "record": record_path}
    text = _WHAT[cls] % values
    said = "; ".join(list(problems) + ([start.error] if start and start.error else []))
    if start and start.stage not in ("started", "unknown"):
        text += "; kubelet %s (%s) says: %s" % (start.release, start.stage, said)
    elif said:
        text += ": " + said
    return text


def _releases(settings: KubeletSettings) -> Tuple[str, ...]:
    release = settings.rules_release.release
    return (release,) if release in SUPPORTED_RELEASES else SUPPORTED_RELEASES


def _speaking_release(starts: Sequence[CpuStart], explicit_reserved: bool) -> Tuple[CpuStart, Tuple[str, Tuple[str, ...], Optional[FrozenSet[int]]]]:
    """The release whose answer is the node's: the first that refuses; where several refuse (the release unknown), the
    first whose refusal a re-derived default set cannot mend (a v4 file whose data part v1.37 calls corrupt is repairable
    only for v1.34, which reads the other half)."""
    refusing = [(one, _class_of(one, explicit_reserved)) for one in starts if not one.started]
    if not refusing:
        return starts[0], _class_of(starts[0], explicit_reserved)
    return next(((one, said) for one, said in refusing if said[0] not in STALE_CLASSES), refusing[0])


def _when(record: TopologyRecord) -> str:
    return " (at boot %s)" % record.boot_id if record.boot_id else ""


def unrecorded_cpus(start: CpuStart) -> FrozenSet[int]:
    """Online CPUs the file records nowhere (the strictly reserved ones aside, which it must not hold)."""
    recorded = recorded_cpus(start.state) if start.state else frozenset()
    return start.online - recorded - (start.reserved if start.strict else frozenset())


def _since_the_record(start: CpuStart, record: TopologyRecord) -> str:
    """Whether the unrecorded CPUs were online at the recorded good state: a torn write leaked them, or the set grew."""
    unrecorded = unrecorded_cpus(start)
    if unrecorded <= record.online:
        return "; they were online when this collection last recorded the CPUs: a torn write leaked them"
    return "; CPUs %s were not online when this collection last recorded the CPUs: the online set grew" % format_cpuset(unrecorded - record.online)


def assess_cpu_manager(settings: KubeletSettings, topology: Optional[CpuTopology], raw: Optional[bytes], path: str,
                       record: Union[None, TopologyRecord, str] = None, record_path: str = "") -> CpuAssessment:
    """The CPU manager's part of the node's verdict (``raw``: ``cpu_manager_state``'s bytes at ``path``, None: none;
    ``record``: the collection's topology record at ``record_path``, None when there is none, or why it cannot be read)."""
    cpu = settings.cpu
    # Kubelet refuses its configuration (config_refusal) whatever the CPU policy.
    if (cpu.policy != CPU_POLICY_STATIC and raw is None and not cpu.options and not cpu.reserved_system_cpus
            and not any(config_refusal(cpu, settings.feature_gates, release_minor(release)) for release in _releases(settings))):
        return CpuAssessment("not_static", None, "cpuManagerPolicy %s and no %s: nothing for the CPU manager to restore" % (cpu.policy, path), None)
    # getReservedCPUs checks reservedSystemCPUs against the online CPUs whatever the policy.
    if (cpu.policy == CPU_POLICY_STATIC or cpu.reserved_system_cpus) and (topology is None or not topology.known):
        problems = tuple(topology.problems if topology else ("the online CPUs were not read",))
        return CpuAssessment("unknown", "cpu_manager_unknown", _message("unknown", None, (), None, path, problems), None, problems=problems)
    starts: List[CpuStart] = [cpu_manager_start(release, cpu, settings.feature_gates, topology or CpuTopology({}), raw, settings.root_dir)
                              for release in _releases(settings)]
    start, (cls, pods, rederived) = _speaking_release(starts, bool(cpu.reserved_system_cpus))
    state = start.state
    pinned = pinned_cpus(state) if state is not None else frozenset()
    compared = cls in _KEPT_PINNING and bool(pinned) and topology is not None
    if compared and isinstance(record, str):
        return CpuAssessment("unknown", "cpu_manager_unknown", _message("unknown", None, (), None, path, (record,)), start, problems=(record,))
    moved = moved_cpus(record, topology, pinned) if compared and isinstance(record, TopologyRecord) else frozenset()
    if moved:
        cls, pods, rederived = "assigned_cpu_moved", pods_holding(state, moved), None
    message = _message(cls, start, pods, rederived, path, (), moved, _when(record) if isinstance(record, TopologyRecord) else "", record_path)
    if cls == "cpus_unrecorded" and isinstance(record, TopologyRecord):
        message += _since_the_record(start, record)
    if rederived is None or start.state is None or raw is None:
        return CpuAssessment(cls, verdict_of(cls, start.started), message, start, pods, rederived)
    rewrite = rewrite_default_set(raw, start.state, rederived)
    if isinstance(rewrite, str):
        return CpuAssessment(cls, "cpu_manager_refuses", "%s, but %s is not re-written: %s" % (message, path, rewrite), start, pods, rederived)
    return CpuAssessment(cls, verdict_of(cls, start.started), message, start, pods, rederived, rewrite=rewrite)
