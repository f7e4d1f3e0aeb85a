# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's memory-manager settings: the data model, its constants and Go's quoting.

Pure, stdlib only, Python >= 3.9, no Ansible imports. The parsers of their values are
:mod:`_kubelet.reserved` (reserved memory, ``systemReserved``-style maps, ``evictionHard``),
:mod:`_kubelet.flags` (the command line) and :mod:`_kubelet.document` (a KubeletConfiguration file).
Where the settings are found and how kubelet merges them is :mod:`_kubelet.config`
(with :mod:`_kubelet.distributions` and :mod:`_kubelet.systemd`); kubelet's start-up checks of them are
:mod:`_kubelet.checks`.

``MemoryReservation(numa_node, limits)``: one ``reservedMemory`` entry.
``KubeletFlags``: what a kubelet command line sets (``None`` = not given), with the origin of
each flag. ``KubeletSettings``: the effective settings, where each came from, and problems.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import ByteQuantity
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, factory
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import UNKNOWN, KubeletRelease

__all__ = [
    "POLICY_NONE",
    "POLICY_STATIC",
    "POLICY_BEST_EFFORT",
    "DEFAULT_ROOT_DIR",
    "DEFAULT_EVICTION_HARD_MEMORY",
    "DRIFT_TOLERANCE_GATE",
    "DRIFT_TOLERANCE_OPTION",
    "MemoryReservation",
    "KubeletFlags",
    "KubeletSettings",
    "CpuManagerSettings",
    "CPU_POLICY_NONE",
    "CPU_POLICY_STATIC",
    "go_quote",
    "is_memory_resource",
]

POLICY_NONE = "None"
POLICY_STATIC = "Static"
POLICY_BEST_EFFORT = "BestEffort"
# The resources --system-reserved / --kube-reserved accept (cmd/kubelet/app/server.go parseResourceList).
RESERVABLE_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pid")

CPU_POLICY_NONE = "none"  # v1beta1 SetDefaults_KubeletConfiguration: "" -> none
CPU_POLICY_STATIC = "static"

DEFAULT_ROOT_DIR = "/var/lib/kubelet"
STATE_FILE_NAME = "memory_manager_state"
CPU_STATE_FILE_NAME = "cpu_manager_state"  # cpumanager.cpuManagerStateFileName: read beside it
# Kubelet's DefaultEvictionHard; only the memory signal matters for Node Allocatable memory.
DEFAULT_EVICTION_HARD_MEMORY = "100Mi"
MEMORY_AVAILABLE = "memory.available"
# KEP-6232 (kubernetes#140473, #142121): the gate and the memory manager policy option.
DRIFT_TOLERANCE_GATE = "MemoryManagerDriftTolerance"
DRIFT_TOLERANCE_OPTION = "memory-drift-tolerance"


# strconv.appendEscapedRune's named escapes (Go's %q)
_GO_NAMED_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """Go's ``%q`` for the plain strings kubelet quotes."""
    out = []
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char in _GO_NAMED_ESCAPES:
            out.append(_GO_NAMED_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append("\\x%02x" % ord(char))
        else:
            out.append(char)
    return '"%s"' % "".join(out)


def is_memory_resource(name: str) -> bool:
    # corev1helper.IsHugePageResourceName || name == v1.ResourceMemory
    return name == "memory" or name.startswith("hugepages-")


# --------------------------------------------------------------------------- data


class MemoryReservation(Record, frozen=True):
    """One ``reservedMemory`` entry: a NUMA node and its limits, in the order given."""

    numa_node: int
    limits: Tuple[Tuple[str, ByteQuantity], ...]


class KubeletFlags(Record, frozen=True):
    """What a kubelet command line sets; ``None`` means the flag was not given.

    ``origins`` maps a flag name (``system-reserved``) to where its last occurrence came from.
    """

    root_dir: Optional[str] = None
    config: Optional[str] = None
    config_dir: Optional[str] = None
    policy: Optional[str] = None
    reserved_memory: Optional[Tuple[MemoryReservation, ...]] = None
    system_reserved: Optional[Dict[str, str]] = None
    kube_reserved: Optional[Dict[str, str]] = None
    eviction_hard: Optional[Dict[str, str]] = None
    feature_gates: Optional[Dict[str, bool]] = None
    cpu_policy: Optional[str] = None
    cpu_policy_options: Optional[Dict[str, str]] = None
    reserved_cpus: Optional[str] = None
    topology_policy: Optional[str] = None
    topology_scope: Optional[str] = None
    topology_policy_options: Optional[Dict[str, str]] = None
    origins: Dict[str, str] = factory(dict)
    problems: Tuple[str, ...] = ()


class CpuManagerSettings(Record, frozen=True):
    """What kubelet's CPU manager is built from: ``cpuManagerPolicy``, ``cpuManagerPolicyOptions``,
    ``reservedSystemCPUs`` (``""``: kubelet picks the reserved CPUs itself) and the ``cpu`` of system-reserved and
    kube-reserved as written (None when not set); ``sources``: field -> where it came from; ``topologyManagerPolicy``
    (the ``align-by-socket`` option refuses ``single-numa-node``), ``topologyManagerScope`` and
    ``topologyManagerPolicyOptions`` (the topology manager is built before the CPU manager); ``decode_error``: kubelet's
    refusal of the ``--config`` file's field types (:mod:`_kubelet.decode`); ``flag_gates`` / ``file_gates``: the
    feature gates of the command line and of the ``--config`` file, each checked on its own before the merged ones
    (:mod:`_kubelet.gates`)."""

    policy: str = CPU_POLICY_NONE
    options: Dict[str, str] = factory(dict)
    reserved_system_cpus: str = ""
    system_reserved_cpu: Optional[str] = None
    kube_reserved_cpu: Optional[str] = None
    sources: Dict[str, str] = factory(dict)
    topology_manager_policy: str = "none"
    topology_manager_scope: str = "container"
    topology_manager_options: Dict[str, str] = factory(dict)
    decode_error: Optional[str] = None
    flag_gates: Dict[str, bool] = factory(dict)
    file_gates: Dict[str, bool] = factory(dict)


class KubeletSettings(Record, frozen=True):
    """Kubelet's effective memory-manager settings, where they came from, and how kubelet runs.

    ``field_sources``: field -> the file, flag or option that set it (``default`` when none).
    ``config_problems``: kubelet's configuration could not be found or read (verdict
    ``kubelet_config_unknown``); ``problems``: values kubelet would reject (``reserved_changed``).
    ``drift_tolerance``: KEP-6232's ``memory-drift-tolerance`` when kubelet has it on (gate on and
    the option not ``off``), else ``None``. ``release``: the kubelet that will start (``_kubelet.release``);
    ``rules_release``: the release whose rules judge the node (that one when it is tested, the nearest tested one
    when the operator allows it, unknown otherwise: then every supported release's rules). ``feature_gates``: the
    effective gates (the command line's below the configuration's).
    """

    policy: str
    reserved_memory: Dict[int, Dict[str, int]]
    reserved_memory_entries: Tuple[MemoryReservation, ...]
    system_reserved: Dict[str, int]
    kube_reserved: Dict[str, int]
    eviction_hard_memory: Optional[str]
    root_dir: str
    config_path: Optional[str]
    field_sources: Dict[str, str] = factory(dict)
    sources: Tuple[str, ...] = ()
    problems: Tuple[str, ...] = ()
    distribution: str = "unknown"
    service: Optional[str] = None
    config_dir: Optional[str] = None
    dropins: Tuple[str, ...] = ()
    config_problems: Tuple[str, ...] = ()
    drift_tolerance: Optional[str] = None
    release: KubeletRelease = UNKNOWN
    rules_release: KubeletRelease = UNKNOWN
    feature_gates: Dict[str, bool] = factory(dict)
    cpu: CpuManagerSettings = CpuManagerSettings()
