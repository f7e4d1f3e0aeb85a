# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's CPU-manager start-up rules, one pure function each: ``None`` when the rule passes, else kubelet's error.

Construction (kubelet refuses its configuration on this machine, whatever the checkpoint holds):
:func:`reserved_cpus_online` (cmd/kubelet/app/server.go ``getReservedCPUs``), :func:`reservation_known` and
:func:`reservation_nonzero` (pkg/kubelet/cm/cpumanager/cpu_manager.go ``NewManager``), :func:`reserved_size`
(policy_static.go ``NewStaticPolicy``). Validation of a restored checkpoint (policy_static.go
``staticPolicy.validateState``, the same at v1.34-v1.37): :func:`default_not_empty` (check 0),
:func:`reserved_in_default` / :func:`strictly_reserved_outside_default` (check 1), :func:`entries_outside_default`
(check 2), :func:`state_covers_online` (check 3). Texts are kubelet's, with its ``%q`` quoting. Stdlib only.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Mapping, Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import format_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import go_quote

__all__ = [
    "reserved_cpus_online",
    "reservation_known",
    "reservation_nonzero",
    "reserved_size",
    "default_not_empty",
    "reserved_in_default",
    "strictly_reserved_outside_default",
    "entries_outside_default",
    "state_covers_online",
    "validate_state",
]

Assignments = Mapping[str, Mapping[str, FrozenSet[int]]]


def _q(cpus: FrozenSet[int]) -> str:
    return go_quote(format_cpuset(cpus))


# --------------------------------------------------------------------------- construction


def reserved_cpus_online(text: str, reserved: FrozenSet[int], online: FrozenSet[int]) -> Optional[str]:
    """server.go ``getReservedCPUs``: ``reservedSystemCPUs`` must be a subset of the online CPUs (kubelet prints the
    configured text as given)."""
    if reserved <= online:
        return None
    return "reserved-cpus: %s is not a subset of online-cpus: %s" % (text, format_cpuset(online))


def reservation_known(milli: Optional[int]) -> Optional[str]:
    """cpu_manager.go ``NewManager``: the static policy needs a cpu reservation (kube-reserved + system-reserved)."""
    return None if milli is not None else "[cpumanager] unable to determine reserved CPU resources for static policy"


def reservation_nonzero(milli: int) -> Optional[str]:
    """cpu_manager.go ``NewManager``: a zero reservation would let the shared pool be exhausted."""
    return None if milli else "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero"


def reserved_size(reserved: FrozenSet[int], wanted: int) -> Optional[str]:
    """policy_static.go ``NewStaticPolicy``: the reserved set holds exactly ceil(reservation) CPUs (an empty pick when
    too few CPUs are online), wrapped by ``NewManager`` as a static policy error."""
    if len(reserved) == wanted:
        return None
    return "new static policy error: [cpumanager] unable to reserve the required amount of CPUs (size of %s did not equal %d)" % (
        format_cpuset(reserved), wanted)


# --------------------------------------------------------------------------- validateState


def default_not_empty(default: FrozenSet[int], assignments: Assignments) -> Optional[str]:
    """Check 0: an empty default set is kubelet's fresh state only when nothing is assigned."""
    return "default cpuset cannot be empty" if not default and assignments else None


def reserved_in_default(reserved: FrozenSet[int], default: FrozenSet[int]) -> Optional[str]:
    """Check 1 (without strict-cpu-reservation): every reserved CPU is in the shared pool."""
    if reserved <= default:
        return None
    return "not all reserved cpus: %s are present in defaultCpuSet: %s" % (_q(reserved), _q(default))


def strictly_reserved_outside_default(reserved: FrozenSet[int], default: FrozenSet[int]) -> Optional[str]:
    """Check 1 (strict-cpu-reservation): no reserved CPU is in the shared pool."""
    inside = reserved & default
    if not inside:
        return None
    return "some of strictly reserved cpus: %s are present in defaultCpuSet: %s" % (_q(inside), _q(default))


def entries_outside_default(default: FrozenSet[int], assignments: Assignments) -> Optional[str]:
    """Check 2: no exclusive CPU is in the shared pool (kubelet walks a Go map: with several overlaps it may name
    another one first)."""
    for pod in sorted(assignments):
        for container, cpus in sorted(assignments[pod].items()):
            if cpus & default:
                return "pod: %s, container: %s cpuset: %s overlaps with default cpuset %s" % (pod, container, _q(cpus), _q(default))
    return None


def state_covers_online(available: FrozenSet[int], default: FrozenSet[int], assignments: Assignments) -> Optional[str]:
    """Check 3: the shared pool and the entries together are exactly the available CPUs (the online ones, less the
    reserved ones under strict-cpu-reservation)."""
    known = default.union(*(cpus for containers in assignments.values() for cpus in containers.values()))
    if known == available:
        return None
    return "current set of available CPUs %s doesn't match with CPUs in state %s" % (_q(available), _q(known))


def validate_state(online: FrozenSet[int], reserved: FrozenSet[int], strict: bool, default: FrozenSet[int],
                   assignments: Dict[str, Dict[str, FrozenSet[int]]]) -> Optional[str]:
    """``staticPolicy.validateState``'s checks in kubelet's order; the first error, or None (kubelet starts)."""
    available = online - reserved if strict else online
    if not default:
        return default_not_empty(default, assignments)
    reserved_check = strictly_reserved_outside_default if strict else reserved_in_default
    return (reserved_check(reserved, default) or entries_outside_default(default, assignments)
            or state_covers_online(available, default, assignments))
