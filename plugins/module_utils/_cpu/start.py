# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Would kubelet's CPU manager start? Its construction and ``Start`` at one release, from the rules of :mod:`rules`.

:func:`cpu_manager_start` follows kubelet's own order: ``getReservedCPUs`` and the reservation (cmd/kubelet/app/
server.go), ``cpumanager.NewManager`` and ``NewStaticPolicy`` (the reserved CPUs: ``reservedSystemCPUs``, or kubelet's
own pick, :func:`_cpu.reserved.take_by_topology`), then ``Start``: the state package's restore (:func:`_cpu.checkpoint.restore`,
with the ``PodLevelResourceManagers`` and ``InPlacePodVerticalScalingExclusiveCPUs`` gates) and the static policy's
``validateState``. Before all that, kubelet's own refusal of its configuration (:func:`config_refusal`: a feature
gate the release does not know, a field of the wrong type, feature gate dependencies, the topology manager's policy and
scope), and in ``NewContainerManager`` the topology manager's ``NewManager`` (its options, the NUMA node count). The
answer names the stage kubelet stops at (``config``, ``construct``, ``restore``, ``validate``), or ``started``, or
``unknown`` where this collection does not model what kubelet does (a pick kubelet never finishes, a
layout it does not read). Pure.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Optional, Tuple, Union

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import QuantityError, parse_milli_quantity
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu import rules
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import CPU_STATE_FILE_NAME, CpuState, RestoreError, pod_level_cpus, restore
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import CpuSetError, parse_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.reserved import KubeletLoops, take_by_topology
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import node_join
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.gates import aggregate, gates_refused
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import release_minor
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import CPU_POLICY_NONE, CPU_POLICY_STATIC, CpuManagerSettings, go_quote
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import CpuTopology

__all__ = ["START_PREFIX", "STRICT_OPTION", "POD_LEVEL_GATE", "CpuStart", "config_refusal", "cpu_manager_start", "is_strict", "picks_by_uncore_cache"]

START_PREFIX = "start cpu manager error: "  # containerManagerImpl.Start (pkg/kubelet/cm/container_manager_linux.go)
STRICT_OPTION = rules.STRICT_RESERVATION
# Gates that change what kubelet restores and counts. PodLevelResourceManagers (v1.36+): v1.36 reads the v3 layout
# first, v1.36 and v1.37 restore podEntries and validateState counts their CPUs. InPlacePodVerticalScalingExclusiveCPUs:
# nothing at start up to v1.36, v1.37 parses each baseline.
POD_LEVEL_GATE = "PodLevelResourceManagers"
BASELINES_GATE = "InPlacePodVerticalScalingExclusiveCPUs"


class CpuStart(Record, frozen=True):
    """What kubelet's CPU manager does at one release: ``stage`` (``started``, ``construct``, ``restore``,
    ``validate`` or ``unknown``), kubelet's ``error`` text, the online and reserved CPUs, the restored ``state``."""

    release: str
    stage: str
    error: Optional[str]
    online: FrozenSet[int]
    reserved: FrozenSet[int]
    strict: bool
    state: Optional[CpuState] = None
    restore_modelled: bool = True

    @property
    def started(self) -> bool:
        return self.stage == "started"


def is_strict(options: dict) -> bool:
    return options.get(STRICT_OPTION) in rules.PARSE_BOOL_TRUE


def picks_by_uncore_cache(cpu: CpuManagerSettings) -> bool:
    """NewStaticPolicy picks the reserved CPUs itself (no ``reservedSystemCPUs``) and by uncore cache
    (``prefer-align-cpus-by-uncorecache`` true): only then does kubelet's start depend on the CPUs' caches."""
    return cpu.policy == CPU_POLICY_STATIC and not cpu.reserved_system_cpus and cpu.options.get(rules.ALIGN_BY_UNCORE_CACHE) in rules.PARSE_BOOL_TRUE


def _unmodelled(cpu: CpuManagerSettings) -> Optional[str]:
    """Why the start is not judged here, or None."""
    if cpu.policy not in (CPU_POLICY_NONE, CPU_POLICY_STATIC):
        return "cpuManagerPolicy %s is not one kubelet knows (none, static)" % go_quote(cpu.policy)
    return None


def _options(cpu: CpuManagerSettings, minor: int, gates: dict, topology: CpuTopology) -> Tuple[Dict[str, bool], Optional[str]]:
    """NewStaticPolicy's options, or kubelet's error (wrapped by NewManager)."""
    parsed, problem = rules.static_policy_options(cpu.options, minor, gates)
    problem = problem or rules.static_policy_options_fit(parsed, topology.count("socket"), topology.count("numa_node"), cpu.topology_manager_policy)
    return parsed, "new static policy error: " + problem if problem else None


def _reservation(cpu: CpuManagerSettings, explicit: FrozenSet[int]) -> Tuple[Optional[int], Optional[str]]:
    """server.go: kube-reserved + system-reserved cpu, in thousandths; ``reservedSystemCPUs`` replaces both with its size."""
    if explicit:
        return 1000 * len(explicit), None
    found = [value for value in (cpu.system_reserved_cpu, cpu.kube_reserved_cpu) if value is not None]
    try:
        return (sum(parse_milli_quantity(value) for value in found) if found else None), None
    except QuantityError as error:
        return None, "cpu reservation: %s" % error


def _explicit_reserved(cpu: CpuManagerSettings, topology: CpuTopology) -> Tuple[FrozenSet[int], Optional[str]]:
    """server.go ``getReservedCPUs`` (whatever the policy): ``reservedSystemCPUs`` parsed, a subset of the online CPUs."""
    try:
        explicit = parse_cpuset(cpu.reserved_system_cpus)
    except CpuSetError as error:
        return frozenset(), "unable to parse reserved-cpus list: %s" % error
    return explicit, rules.reserved_cpus_online(cpu.reserved_system_cpus, explicit, topology.online)


class _Construction(Record, frozen=True):
    """Where NewManager stops: kubelet's ``error`` (``stage`` construct) or why it is not judged (``stage`` unknown),
    else the ``reserved`` CPUs (``stage`` None)."""

    reserved: FrozenSet[int]
    stage: Optional[str] = None
    error: Optional[str] = None


def _refused(error: str) -> _Construction:
    return _Construction(frozenset(), "construct", error)


def _pick(topology: CpuTopology, wanted: int, minor: int, parsed: Dict[str, bool]) -> FrozenSet[int]:
    """NewStaticPolicy without reservedSystemCPUs: ``takeByTopology(allCPUs, wanted)`` under the policy options."""
    return take_by_topology(topology.cpus, topology.count("socket"), topology.count("core"), wanted, minor,
                            spread=bool(parsed.get(rules.DISTRIBUTE_ACROSS_CORES)), numa_distributed=bool(parsed.get(rules.DISTRIBUTE_ACROSS_NUMA)),
                            full_pcpus_only=bool(parsed.get(rules.FULL_PCPUS_ONLY)), align_by_socket=bool(parsed.get(rules.ALIGN_BY_SOCKET)),
                            align_by_uncore_cache=bool(parsed.get(rules.ALIGN_BY_UNCORE_CACHE)))


def _static_policy(cpu: CpuManagerSettings, topology: CpuTopology, explicit: FrozenSet[int], minor: int, gates: dict) -> _Construction:
    """NewManager + NewStaticPolicy in kubelet's order: the reservation, the options, then the reserved CPUs."""
    milli, problem = _reservation(cpu, explicit)
    problem = problem or rules.reservation_known(milli)
    if problem or milli is None:
        return _refused(problem or "")
    problem = rules.reservation_nonzero(milli)
    if problem:
        return _refused(problem)
    parsed, problem = _options(cpu, minor, gates, topology)
    if problem:
        return _refused(problem)
    wanted = -(-milli // 1000)
    try:
        reserved = explicit or _pick(topology, wanted, minor, parsed)
    except KubeletLoops as error:
        return _Construction(frozenset(), "unknown", "kubelet's takeByTopologyNUMADistributed never returns on this topology (%s): "
                             "kubelet hangs in NewStaticPolicy; set reservedSystemCPUs" % error)
    problem = rules.reserved_size(reserved, wanted)
    return _refused(problem) if problem else _Construction(reserved)


def config_refusal(cpu: CpuManagerSettings, gates: dict, minor: int) -> Optional[str]:
    """Kubelet refuses its configuration before it builds anything (cmd/kubelet/app/server.go ``NewKubeletCommand``), in
    its order: the command line's feature gates, the ``--config`` file's decoding (a field of the wrong type), its gates
    over the command line's, the merged gates (component-base: locks and dependencies), then
    ``ValidateKubeletConfiguration`` (the topology manager's policy and scope). Kubelet's words, or None."""
    problem = gates_refused(cpu.flag_gates, {}, {}, minor) if cpu.flag_gates else None  # before the file is read
    problem = problem or cpu.decode_error or gates_refused(cpu.flag_gates, cpu.file_gates, gates, minor)
    if problem:
        return problem
    errors = rules.topology_manager_config(cpu.topology_manager_policy, cpu.topology_manager_scope)
    return "failed to validate kubelet configuration, error: " + aggregate(errors) if errors else None


def _construction(cpu: CpuManagerSettings, topology: CpuTopology, minor: int, gates: dict) -> _Construction:
    """getReservedCPUs, NewContainerManager's topology manager, then NewManager for the configured policy."""
    explicit, problem = _explicit_reserved(cpu, topology)
    if problem:
        return _Construction(explicit, "construct", problem)
    problem = rules.topology_manager(cpu.topology_manager_policy, cpu.topology_manager_options, topology.machine_numa_nodes(), minor,
                                     gates, topology.distances_missing)
    if problem:
        return _Construction(explicit, "construct", problem)
    if cpu.policy == CPU_POLICY_STATIC:
        return _static_policy(cpu, topology, explicit, minor, gates)
    problem = rules.none_policy_options(cpu.options)
    return _Construction(explicit, "construct", problem) if problem else _Construction(explicit)


def cpu_manager_start(release: str, cpu: CpuManagerSettings, gates: dict, topology: CpuTopology, raw: Optional[bytes],
                      root_dir: str) -> CpuStart:
    """Kubelet ``release``'s CPU manager on this node: construction, then ``Start`` on ``raw`` (None: no file)."""
    minor = release_minor(release)
    strict = cpu.policy == CPU_POLICY_STATIC and is_strict(cpu.options)
    refused = config_refusal(cpu, gates, minor)
    if refused:
        return CpuStart(release, "config", refused, topology.online, frozenset(), strict)
    unmodelled = _unmodelled(cpu)
    if unmodelled:
        return CpuStart(release, "unknown", unmodelled, topology.online, frozenset(), strict)
    built = _construction(cpu, topology, minor, gates)
    reserved = built.reserved
    if built.stage is not None:
        return CpuStart(release, built.stage, built.error, topology.online, reserved, strict)
    if raw is None:
        return CpuStart(release, "started", None, topology.online, reserved, strict)  # restoreState: storeState
    # PodLevelResourceManagers exists from v1.36 (AllAlpha/AllBeta turn it on there).
    pod_level = minor >= 36 and rules.gate_on(gates, POD_LEVEL_GATE, minor)
    restored: Union[CpuState, RestoreError] = restore(raw, cpu.policy, minor, rules.gate_on(gates, BASELINES_GATE, minor), pod_level)
    if isinstance(restored, RestoreError):
        stage = "restore" if restored.modelled else "unknown"
        text = START_PREFIX + restore_error(restored.text, root_dir) if restored.modelled else restored.text
        return CpuStart(release, stage, text, topology.online, reserved, strict, restore_modelled=restored.modelled)
    problem = (rules.validate_state(topology.online, reserved, strict, restored.default, restored.entries, pod_level_cpus(restored))
               if cpu.policy == CPU_POLICY_STATIC else None)
    if problem:
        return CpuStart(release, "validate", START_PREFIX + problem, topology.online, reserved, strict, restored)
    return CpuStart(release, "started", None, topology.online, reserved, strict, restored)


def restore_error(inner: str, root_dir: str) -> str:
    """NewCheckpointState's wrapping of a refused file (state/state_checkpoint.go), naming the file kubelet reads."""
    return ("could not restore state from checkpoint: %s, please drain this node and delete the CPU manager checkpoint file %s "
            "before restarting Kubelet" % (inner, go_quote(node_join(root_dir, CPU_STATE_FILE_NAME))))
