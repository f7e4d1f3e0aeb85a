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
(check 2), :func:`state_covers_online` (check 3). The static policy's options (policy_options.go, the same code at
v1.34-v1.37, each option's maturity by release): :func:`static_policy_options` (``NewStaticPolicyOptions``) and
:func:`static_policy_options_fit` (``ValidateStaticPolicyOptions``). Texts are kubelet's, with its ``%q`` quoting.
Stdlib only.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Mapping, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import format_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import go_quote

__all__ = [
    "reserved_cpus_online",
    "reservation_known",
    "reservation_nonzero",
    "reserved_size",
    "none_policy_options",
    "gate_on",
    "option_maturity",
    "static_policy_options",
    "static_policy_options_fit",
    "topology_manager_config",
    "topology_manager",
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


# --------------------------------------------------------------------------- the static policy's options

FULL_PCPUS_ONLY = "full-pcpus-only"
DISTRIBUTE_ACROSS_NUMA = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET = "align-by-socket"
DISTRIBUTE_ACROSS_CORES = "distribute-cpus-across-cores"
STRICT_RESERVATION = "strict-cpu-reservation"
ALIGN_BY_UNCORE_CACHE = "prefer-align-cpus-by-uncorecache"
# policy_options.go alphaOptions / betaOptions (the rest are stableOptions), by release minor.
_ALPHA = (ALIGN_BY_SOCKET, DISTRIBUTE_ACROSS_CORES)
_BETA = {34: (STRICT_RESERVATION, DISTRIBUTE_ACROSS_NUMA, ALIGN_BY_UNCORE_CACHE), 35: (DISTRIBUTE_ACROSS_NUMA, ALIGN_BY_UNCORE_CACHE),
         36: (DISTRIBUTE_ACROSS_NUMA,), 37: (DISTRIBUTE_ACROSS_NUMA,)}
_KNOWN = (FULL_PCPUS_ONLY, DISTRIBUTE_ACROSS_NUMA, ALIGN_BY_SOCKET, DISTRIBUTE_ACROSS_CORES, STRICT_RESERVATION, ALIGN_BY_UNCORE_CACHE)
# NewStaticPolicyOptions: the pairs refused together, in kubelet's order.
_EXCLUSIVE = ((FULL_PCPUS_ONLY, DISTRIBUTE_ACROSS_CORES), (DISTRIBUTE_ACROSS_NUMA, DISTRIBUTE_ACROSS_CORES),
              (ALIGN_BY_UNCORE_CACHE, DISTRIBUTE_ACROSS_CORES), (ALIGN_BY_UNCORE_CACHE, DISTRIBUTE_ACROSS_NUMA))
PARSE_BOOL_TRUE = ("1", "t", "T", "TRUE", "true", "True")  # strconv.ParseBool
PARSE_BOOL_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def none_policy_options(options: Mapping[str, str]) -> Optional[str]:
    """policy_none.go ``NewNonePolicy``: the none policy takes no option (Go's ``%v`` of a map: keys sorted), wrapped
    by ``NewManager``."""
    if not options:
        return None
    return "new none policy error: None policy: received unsupported options=map[%s]" % " ".join(
        "%s:%s" % (name, options[name]) for name in sorted(options))


# pkg/features/kube_features.go: the gates the CPU manager's start reads, (maturity by release minor, default).
_GATES = {
    "CPUManagerPolicyAlphaOptions": ({}, "alpha", False),
    "CPUManagerPolicyBetaOptions": ({}, "beta", True),
    "InPlacePodVerticalScalingExclusiveCPUs": ({}, "alpha", False),
    "PodLevelResourceManagers": ({37: "beta"}, "alpha", False),
    "TopologyManagerPolicyAlphaOptions": ({}, "alpha", False),
    "TopologyManagerPolicyBetaOptions": ({}, "beta", True),
}


def gate_on(gates: Mapping[str, bool], name: str, minor: int) -> bool:
    """component-base's feature gate: the gate as named, else ``AllAlpha`` / ``AllBeta`` for a gate of that maturity at
    this release (``setUnsetAlphaGates`` / ``setUnsetBetaGates``), else its default."""
    if name in gates:
        return bool(gates[name])
    by_release, maturity, default = _GATES[name]
    every = {"alpha": "AllAlpha", "beta": "AllBeta"}[by_release.get(minor, maturity)]
    return bool(gates[every]) if every in gates else default


def option_maturity(option: str, minor: int) -> Optional[str]:
    """``alpha``, ``beta`` or ``stable`` at release 1.<minor>, None for an option kubelet does not know."""
    if option not in _KNOWN:
        return None
    return "alpha" if option in _ALPHA else "beta" if option in _BETA[minor] else "stable"


def _option_available(option: str, minor: int, gates: Mapping[str, bool]) -> Optional[str]:
    """``CheckPolicyOptionAvailable``: known, and its maturity's gate on (alpha off by default, beta on)."""
    maturity = option_maturity(option, minor)
    if maturity is None:
        return "unknown CPU Manager Policy option: %s" % go_quote(option)
    if maturity == "alpha" and not gate_on(gates, "CPUManagerPolicyAlphaOptions", minor):
        return "CPU Manager Policy Alpha-level Options not enabled, but option %s provided" % go_quote(option)
    if maturity == "beta" and not gate_on(gates, "CPUManagerPolicyBetaOptions", minor):
        return "CPU Manager Policy Beta-level Options not enabled, but option %s provided" % go_quote(option)
    return None


def static_policy_options(options: Mapping[str, str], minor: int, gates: Mapping[str, bool]) -> Tuple[Dict[str, bool], Optional[str]]:
    """``NewStaticPolicyOptions``: each option available and a ``strconv.ParseBool`` value, then the pairs refused
    together; ``(options on, None)`` or ``(partial, kubelet's error)``. Kubelet walks a Go map: with several bad
    options it may name another one first (this walks them by name)."""
    parsed: Dict[str, bool] = {}
    for name in sorted(options):
        value = options[name]
        problem = _option_available(name, minor, gates)
        if problem:
            return parsed, problem
        if value not in PARSE_BOOL_TRUE + PARSE_BOOL_FALSE:
            return parsed, "bad value for option %s: strconv.ParseBool: parsing %s: invalid syntax" % (go_quote(name), go_quote(value))
        parsed[name] = value in PARSE_BOOL_TRUE
    for first, second in _EXCLUSIVE:
        if parsed.get(first) and parsed.get(second):
            return parsed, "static policy options %s and %s can not be used at the same time" % (first, second)
    return parsed, None


def static_policy_options_fit(parsed: Mapping[str, bool], num_sockets: int, num_numa_nodes: int, topology_policy: str) -> Optional[str]:
    """``ValidateStaticPolicyOptions``: ``align-by-socket`` refuses the topology manager's ``single-numa-node`` policy and
    a machine with more sockets than NUMA nodes (kubelet's texts, its typo included)."""
    if not parsed.get(ALIGN_BY_SOCKET):
        return None
    if topology_policy == "single-numa-node":
        return "Topolgy manager single-numa-node policy is incompatible with CPUManager align-by-socket policy option"
    if num_sockets > num_numa_nodes:
        return "Align by socket is not compatible with hardware where number of sockets are more than number of NUMA"
    return None


# --------------------------------------------------------------------------- the topology manager (built before the CPU manager)

TOPOLOGY_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")  # kubeletconfig.*TopologyManagerPolicy
TOPOLOGY_SCOPES = ("container", "pod")
PREFER_CLOSEST_NUMA = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA = "max-allowable-numa-nodes"
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8  # topology_manager.go defaultMaxAllowableNUMANodes
# topologymanager/policy_options.go: max-allowable-numa-nodes is beta at v1.34, stable from v1.35; the other is stable.
_TOPOLOGY_BETA = {34: (MAX_ALLOWABLE_NUMA,)}


def topology_manager_config(policy: str, scope: str) -> List[str]:
    """``ValidateKubeletConfiguration`` (pkg/kubelet/apis/config/validation, v1.34-v1.37): the topology manager's policy
    and scope must be known ones (kubelet's words, Go's ``%q`` of the list)."""
    errors = []
    if policy not in TOPOLOGY_POLICIES:
        errors.append("invalid configuration: topologyManagerPolicy (--topology-manager-policy) %s must be one of: [%s]" % (
            go_quote(policy), " ".join(go_quote(name) for name in TOPOLOGY_POLICIES)))
    if scope not in TOPOLOGY_SCOPES:
        errors.append("invalid configuration: topologyManagerScope (--topology-manager-scope) %s must be one of: %s, or %s" % (
            go_quote(scope), go_quote(TOPOLOGY_SCOPES[0]), go_quote(TOPOLOGY_SCOPES[1])))
    return errors


def _go_atoi(value: str) -> Optional[int]:
    """``strconv.Atoi`` of a small decimal (a sign taken), or None where it fails."""
    digits = value[1:] if value[:1] in "+-" else value
    if not digits or not digits.isascii() or not digits.isdigit() or len(digits) > 18:
        return None
    return int(value)


def _topology_option(name: str, value: str, minor: int, gates: Mapping[str, bool]) -> Tuple[Optional[int], Optional[str]]:
    """``CheckPolicyOptionAvailable`` then the option's value: ``(max NUMA nodes it sets or None, kubelet's error)``."""
    if name not in (PREFER_CLOSEST_NUMA, MAX_ALLOWABLE_NUMA):
        return None, "unknown Topology Manager Policy option: %s" % go_quote(name)
    if name in _TOPOLOGY_BETA.get(minor, ()) and not gate_on(gates, "TopologyManagerPolicyBetaOptions", minor):
        return None, "topology manager policy beta-level options not enabled, but option %s provided" % go_quote(name)
    if name == PREFER_CLOSEST_NUMA:
        if value not in PARSE_BOOL_TRUE + PARSE_BOOL_FALSE:
            return None, "bad value for option %s: strconv.ParseBool: parsing %s: invalid syntax" % (go_quote(name), go_quote(value))
        return None, None
    number = _go_atoi(value)
    if number is None:
        return None, "unable to convert policy option to integer %s: strconv.Atoi: parsing %s: invalid syntax" % (go_quote(name), go_quote(value))
    if number < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
        return None, "the minimum value of %s should not be less than %d" % (go_quote(name), DEFAULT_MAX_ALLOWABLE_NUMA_NODES)
    return number, None


def topology_manager(policy: str, options: Mapping[str, str], numa_nodes: int, minor: int, gates: Mapping[str, bool],
                     distances_missing: bool = False) -> Optional[str]:
    """topologymanager ``NewManager`` (v1.34-v1.37), after validation: policy ``none`` takes nothing; else
    ``NewPolicyOptions`` (each option known, its maturity's gate on, its value; kubelet walks a Go map: with several bad
    options it may name another one first, this walks them by name), ``NewNUMAInfo`` (``prefer-closest-numa-nodes`` needs
    every node's distances: cAdvisor has none for a node without a ``distance`` file), then at most
    ``maxAllowableNUMANodes`` NUMA nodes (8 unless ``max-allowable-numa-nodes`` raises it). Kubelet returns the error as it
    is (NewContainerManager)."""
    if policy == "none":
        return None
    allowed = DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name in sorted(options):
        number, problem = _topology_option(name, options[name], minor, gates)
        if problem:
            return problem
        allowed = number if number is not None else allowed
    if options.get(PREFER_CLOSEST_NUMA) in PARSE_BOOL_TRUE and distances_missing:
        return "cannot discover NUMA topology: error getting NUMA distances from cadvisor"
    if numa_nodes > allowed:
        return "unsupported on machines with more than %d NUMA Nodes" % allowed
    return None


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


def state_covers_online(available: FrozenSet[int], default: FrozenSet[int], assignments: Assignments,
                        pod_level: FrozenSet[int] = frozenset()) -> Optional[str]:
    """Check 3: the shared pool, the entries and (``PodLevelResourceManagers`` on, v1.36+) the pod-level entries
    (``pod_level``, their CPUs) together are exactly the available CPUs (the online ones, less the reserved ones under
    strict-cpu-reservation)."""
    known = default.union(*(cpus for containers in assignments.values() for cpus in containers.values())) | pod_level
    if known == available:
        return None
    return "current set of available CPUs %s doesn't match with CPUs in state %s" % (_q(available), _q(known))


def validate_state(online: FrozenSet[int], reserved: FrozenSet[int], strict: bool, default: FrozenSet[int],
                   assignments: Dict[str, Dict[str, FrozenSet[int]]], pod_level: FrozenSet[int] = frozenset()) -> Optional[str]:
    """``staticPolicy.validateState``'s checks in kubelet's order; the first error, or None (kubelet starts);
    ``pod_level``: the CPUs of the restored pod-level entries, which only the last check counts."""
    available = online - reserved if strict else online
    if not default:
        return default_not_empty(default, assignments)
    reserved_check = strictly_reserved_outside_default if strict else reserved_in_default
    return (reserved_check(reserved, default) or entries_outside_default(default, assignments)
            or state_covers_online(available, default, assignments, pod_level))
