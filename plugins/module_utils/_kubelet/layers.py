# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's configuration layers and how they become its effective settings: pure.

The layers (built-in defaults, a defaulted ``--config`` file, ``--config-dir`` drop-ins applied as JSON
merge patches) with the layer that set each field, then the memory manager's fields taken from them, the
command line's flags over them (``kubeletConfigFlagPrecedence``), the operator's overrides over all, and
KEP-6232's drift tolerance. The order and the files are :mod:`_kubelet.config`. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import ByteQuantity
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, factory
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.reserved import (
    eviction_memory,
    memory_resources,
    parse_reserved_memory_config,
    parse_reserved_memory_override,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import (
    DEFAULT_EVICTION_HARD_MEMORY,
    DRIFT_TOLERANCE_GATE,
    DRIFT_TOLERANCE_OPTION,
    MEMORY_AVAILABLE,
    POLICY_NONE,
    POLICY_STATIC,
    CPU_POLICY_NONE,
    CpuManagerSettings,
    KubeletFlags,
    MemoryReservation,
)

__all__ = [
    "MAP_FIELDS",
    "ConfigLayers",
    "kubelet_defaults",
    "defaulted_config_file",
    "merge_dropin",
    "drift_tolerance",
    "effective_gates",
    "cpu_manager_settings",
]


# The KubeletConfiguration fields the memory and CPU managers depend on.
MAP_FIELDS = ("systemReserved", "kubeReserved", "evictionHard", "featureGates", "memoryManagerPolicyOptions", "cpuManagerPolicyOptions",
              "topologyManagerPolicyOptions")
WHOLE_FIELDS = ("memoryManagerPolicy", "reservedMemory", "mergeDefaultEvictionSettings", "cpuManagerPolicy", "reservedSystemCPUs",
                "topologyManagerPolicy", "topologyManagerScope")
# v1beta1 DefaultEvictionHard (pkg/kubelet/apis/config/v1beta1/defaults_linux.go).
DEFAULT_EVICTION_HARD = {
    MEMORY_AVAILABLE: DEFAULT_EVICTION_HARD_MEMORY,
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}
DEFAULT = "default"


class ConfigLayers(Record):
    """The merged fields and, per field (and per ``field.key`` of maps), the layer that set it."""

    document: Dict[str, Any] = factory(dict)
    sources: Dict[str, str] = factory(dict)

    def set_whole(self, key: str, value: Any, source: str) -> None:
        self.document[key] = value
        self.sources[key] = source
        if key in MAP_FIELDS and isinstance(value, Mapping):
            for item in value:
                self.sources["%s.%s" % (key, item)] = source

    def source_of(self, key: str, items: Sequence[str] = ()) -> str:
        """Where ``key`` (or, for a map, the last of ``items`` that is set) came from."""
        found = [self.sources["%s.%s" % (key, item)] for item in items if "%s.%s" % (key, item) in self.sources]
        return found[-1] if found else self.sources.get(key, DEFAULT)


def kubelet_defaults() -> ConfigLayers:
    """Layer 1: ``options.NewKubeletConfiguration()`` for the fields we use."""
    layers = ConfigLayers()
    layers.set_whole("memoryManagerPolicy", POLICY_NONE, DEFAULT)
    # No evictionHard: kubelet puts its default thresholds in only when --config names a file
    # (cmd/kubelet/app/server.go loadConfigFile); with drop-ins or flags alone there is none.
    layers.set_whole("featureGates", {}, DEFAULT)
    return layers


def defaulted_config_file(document: Mapping[str, Any], path: str) -> ConfigLayers:
    """Layer 2: ``loadConfigFile`` replaces the defaults with the file, then v1beta1 defaulting."""
    layers = ConfigLayers()
    for key in MAP_FIELDS + WHOLE_FIELDS:
        if document.get(key) is not None:
            layers.set_whole(key, document[key], path)
    if not layers.document.get("memoryManagerPolicy"):
        layers.set_whole("memoryManagerPolicy", POLICY_NONE, DEFAULT)  # SetDefaults: "" -> None
    if "evictionHard" not in layers.document:
        layers.set_whole("evictionHard", dict(DEFAULT_EVICTION_HARD), DEFAULT)
    elif document.get("mergeDefaultEvictionSettings") is True and isinstance(layers.document["evictionHard"], Mapping):
        # loadConfigFile: the file's own flag adds the default thresholds it does not set (drop-ins never do).
        merged = dict(layers.document["evictionHard"])
        for signal, threshold in DEFAULT_EVICTION_HARD.items():
            if signal not in merged:
                merged[signal] = threshold
                layers.sources["evictionHard.%s" % signal] = DEFAULT
        layers.document["evictionHard"] = merged
    return layers


def merge_dropin(layers: ConfigLayers, document: Mapping[str, Any], path: str) -> None:
    """Layer 3, one file: JSON merge patch of a drop-in (lists replaced, maps merged key-wise)."""
    for key in MAP_FIELDS + WHOLE_FIELDS:
        value = document.get(key)
        if value is None:
            continue  # absent or null: a merge patch leaves the decoded field as it was
        current = layers.document.get(key)
        if key in MAP_FIELDS and isinstance(value, Mapping) and isinstance(current, Mapping):
            merged = dict(current)
            for item, item_value in value.items():
                if item_value is not None:
                    merged[item] = item_value
                    layers.sources["%s.%s" % (key, item)] = path
            layers.document[key] = merged
            layers.sources[key] = path
        else:
            layers.set_whole(key, value, path)


# --------------------------------------------------------------------------- from layers to settings


class _Builder(Record):
    """Scratch state of :func:`load_kubelet_settings`; frozen into ``KubeletSettings`` at the end."""

    policy: str = POLICY_NONE
    entries: Tuple[MemoryReservation, ...] = ()
    system_reserved: Dict[str, ByteQuantity] = factory(dict)
    kube_reserved: Dict[str, ByteQuantity] = factory(dict)
    eviction_hard_memory: Optional[str] = DEFAULT_EVICTION_HARD_MEMORY
    field_sources: Dict[str, str] = factory(dict)
    problems: List[str] = factory(list)


def _memory_keys(value: object) -> List[str]:
    return [key for key in value if isinstance(key, str) and (key == "memory" or key.startswith("hugepages-"))] if isinstance(value, Mapping) else []


def _apply_layers(builder: _Builder, layers: ConfigLayers) -> None:
    document, problems = layers.document, builder.problems
    policy = document.get("memoryManagerPolicy")
    if isinstance(policy, str):
        builder.policy = policy or POLICY_NONE
    else:
        problems.append("kubelet config: memoryManagerPolicy must be a string, got %r" % (policy,))
    builder.field_sources["policy"] = layers.source_of("memoryManagerPolicy")
    entries, entry_problems = parse_reserved_memory_config(document.get("reservedMemory"))
    problems.extend("kubelet config: %s" % item for item in entry_problems)
    builder.entries = entries
    builder.field_sources["reserved_memory"] = layers.source_of("reservedMemory")
    for key, attribute in (("systemReserved", "system_reserved"), ("kubeReserved", "kube_reserved")):
        resources, resource_problems = memory_resources(document.get(key), key)
        problems.extend("kubelet config: %s" % item for item in resource_problems)
        setattr(builder, attribute, resources or {})
        builder.field_sources[attribute] = layers.source_of(key, _memory_keys(document.get(key)))
    threshold, eviction_problems = eviction_memory(document.get("evictionHard", {}), "evictionHard")
    problems.extend("kubelet config: %s" % item for item in eviction_problems)
    builder.eviction_hard_memory = threshold
    builder.field_sources["eviction_hard"] = layers.source_of("evictionHard", [MEMORY_AVAILABLE])


def _apply_flags(builder: _Builder, flags: KubeletFlags) -> None:
    """Layer 4: ``kubeletConfigFlagPrecedence``."""
    builder.problems.extend("kubelet flags: %s" % item for item in flags.problems)
    if flags.policy is not None:
        builder.policy = flags.policy
        builder.field_sources["policy"] = flags.origins["memory-manager-policy"]
    if flags.reserved_memory is not None:
        builder.entries = flags.reserved_memory
        builder.field_sources["reserved_memory"] = flags.origins["reserved-memory"]
    for attribute, flag in (("system_reserved", "system-reserved"), ("kube_reserved", "kube-reserved")):
        value = getattr(flags, attribute)
        if value is not None:
            resources, resource_problems = memory_resources(value, "--" + flag)
            builder.problems.extend("kubelet flags: %s" % item for item in resource_problems)
            setattr(builder, attribute, resources or {})
            builder.field_sources[attribute] = flags.origins[flag]
    if flags.eviction_hard is not None:
        builder.eviction_hard_memory = flags.eviction_hard.get(MEMORY_AVAILABLE)
        builder.field_sources["eviction_hard"] = flags.origins["eviction-hard"]


def _apply_overrides(builder: _Builder, policy: object, reserved_memory: object) -> None:
    if policy is not None:
        if isinstance(policy, str):
            builder.policy = policy
            builder.field_sources["policy"] = "option policy"
        else:
            builder.problems.append("policy override must be a string, got %r" % (policy,))
    if reserved_memory is not None:
        entries, problems = parse_reserved_memory_override(reserved_memory)
        builder.problems.extend(problems)
        builder.entries = entries
        builder.field_sources["reserved_memory"] = "option reserved_memory"


def effective_gates(layers: ConfigLayers, flags: KubeletFlags) -> Dict[str, bool]:
    """Kubelet's feature gates: the configuration's, each one the command line names replaced by the command line's
    (cmd/kubelet/app/server.go ``kubeletConfigFlagPrecedence``: ``--feature-gates`` parsed over the configuration, then
    the configuration's other gates put back; v1.34-v1.37)."""
    config_gates = layers.document.get("featureGates")
    gates = {key: value for key, value in config_gates.items() if isinstance(value, bool)} if isinstance(config_gates, Mapping) else {}
    gates.update(flags.feature_gates or {})
    return gates


def drift_tolerance(layers: ConfigLayers, flags: KubeletFlags, policy: str) -> Optional[str]:
    """KEP-6232: the tolerance kubelet applies itself, or ``None`` (gate off, option ``off``, not Static).

    The option defaults to ``auto`` (kubernetes#142121: "auto (default)").
    """
    gates = effective_gates(layers, flags)
    if gates.get(DRIFT_TOLERANCE_GATE) is not True or policy != POLICY_STATIC:
        return None
    options = layers.document.get("memoryManagerPolicyOptions")
    option = options.get(DRIFT_TOLERANCE_OPTION, "auto") if isinstance(options, Mapping) else "auto"
    option = str(option).strip()
    return None if option == "off" else option


# --------------------------------------------------------------------------- the CPU manager's fields


def _text(value: object) -> Optional[str]:
    return None if value is None else value if isinstance(value, str) else str(value)


def _cpu_of(resources: object) -> Optional[str]:
    return _text(resources.get("cpu")) if isinstance(resources, Mapping) else None


def _gates(value: object) -> Dict[str, bool]:
    return {key: item for key, item in value.items() if isinstance(item, bool)} if isinstance(value, Mapping) else {}


def cpu_manager_settings(layers: ConfigLayers, flags: KubeletFlags, decode_error: Optional[str] = None,
                         file_gates: object = None) -> CpuManagerSettings:
    """The CPU manager's fields (and the topology manager's, built before it): the configuration's layers, the
    command line's flags over them (``kubeletConfigFlagPrecedence``: a map flag's keys replace the configuration's
    map); ``decode_error`` and ``file_gates`` (the ``--config`` file's own ``featureGates``) as the loader found them."""
    document = layers.document
    sources = {"policy": layers.source_of("cpuManagerPolicy"), "options": layers.source_of("cpuManagerPolicyOptions"),
               "reserved_system_cpus": layers.source_of("reservedSystemCPUs"),
               "system_reserved_cpu": layers.source_of("systemReserved", ["cpu"]), "kube_reserved_cpu": layers.source_of("kubeReserved", ["cpu"])}
    policy = _text(document.get("cpuManagerPolicy")) or CPU_POLICY_NONE
    options = document.get("cpuManagerPolicyOptions")
    options = {str(key): _text(value) or "" for key, value in options.items()} if isinstance(options, Mapping) else {}
    reserved = _text(document.get("reservedSystemCPUs")) or ""
    system_cpu, kube_cpu = _cpu_of(document.get("systemReserved")), _cpu_of(document.get("kubeReserved"))
    for name, value in (("cpu-manager-policy", flags.cpu_policy), ("reserved-cpus", flags.reserved_cpus)):
        if value is not None:
            sources["policy" if name == "cpu-manager-policy" else "reserved_system_cpus"] = flags.origins[name]
    policy = flags.cpu_policy if flags.cpu_policy is not None else policy
    reserved = flags.reserved_cpus if flags.reserved_cpus is not None else reserved
    if flags.cpu_policy_options is not None:
        options, sources["options"] = dict(flags.cpu_policy_options), flags.origins["cpu-manager-policy-options"]
    if flags.system_reserved is not None:
        system_cpu, sources["system_reserved_cpu"] = flags.system_reserved.get("cpu"), flags.origins["system-reserved"]
    if flags.kube_reserved is not None:
        kube_cpu, sources["kube_reserved_cpu"] = flags.kube_reserved.get("cpu"), flags.origins["kube-reserved"]
    topology_policy = _text(document.get("topologyManagerPolicy")) or "none"  # kubelet's default
    sources["topology_manager_policy"] = layers.source_of("topologyManagerPolicy")
    if flags.topology_policy is not None:
        topology_policy, sources["topology_manager_policy"] = flags.topology_policy, flags.origins["topology-manager-policy"]
    scope = _text(document.get("topologyManagerScope")) or "container"  # v1beta1 SetDefaults_KubeletConfiguration
    topology_options = document.get("topologyManagerPolicyOptions")
    topology_options = {str(key): _text(value) or "" for key, value in topology_options.items()} if isinstance(topology_options, Mapping) else {}
    if flags.topology_scope is not None:
        scope = flags.topology_scope
    if flags.topology_policy_options is not None:
        topology_options = dict(flags.topology_policy_options)
    return CpuManagerSettings(policy, options, reserved, system_cpu, kube_cpu, sources, topology_policy, scope, topology_options,
                              decode_error, dict(flags.feature_gates or {}), _gates(file_gates))
