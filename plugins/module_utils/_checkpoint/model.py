# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's memory manager checkpoint: the file's limits, the eras, each era's struct keys, and the data model.

The data model (``spec/kubelet-memory-manager.md`` section 2) as plain records (:mod:`_common.record`),
``None`` standing for Go's nil.
"""

from __future__ import annotations

from typing import Dict, List, Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, factory

__all__ = [
    "CHECKPOINT_FILE_NAME",
    "ERAS",
    "ERA_RELEASES",
    "era_at",
    "MAX_CHECKPOINT_BYTES",
    "MemoryTable",
    "NodeState",
    "Block",
    "PodEntry",
    "CheckpointFields",
]


CHECKPOINT_FILE_NAME = "memory_manager_state"
MAX_CHECKPOINT_BYTES = 4 * 1024 * 1024  # ~80x a 250-pod node's file; keeps a probe's time and memory bounded
CORRUPTED = "checkpoint is corrupted"

# Era keys, oldest first (the checkpoint structs of memorymanager/state/checkpoint.go per release).
ERA_LEGACY = "legacy"
ERA_136_GATE_OFF = "1.36-gate-off"
ERA_136_GATE_ON = "1.36-gate-on"
ERA_137 = "1.37"
ERAS = (ERA_LEGACY, ERA_136_GATE_OFF, ERA_136_GATE_ON, ERA_137)

# The kubelet releases each era's reader stands for (the supported releases: 1.34 to 1.37).
ERA_RELEASES = {
    ERA_LEGACY: ("1.34", "1.35"),
    ERA_136_GATE_OFF: ("1.36",),
    ERA_136_GATE_ON: ("1.36 with PodLevelResourceManagers",),
    ERA_137: ("1.37",),
}


def era_at(release: str, pod_level_resource_managers: bool = False) -> Optional[str]:
    """The era whose reader kubelet ``release`` (``1.35``) runs (1.36: by its PodLevelResourceManagers gate), or None
    for a release outside the supported ones."""
    if release == "1.36":
        return ERA_136_GATE_ON if pod_level_resource_managers else ERA_136_GATE_OFF
    return next((era for era, releases in ERA_RELEASES.items() if release in releases), None)


# JSON field names of each era's struct, in declaration order (memorymanager/state/checkpoint.go).
LEGACY_KEYS = ("policyName", "machineState", "entries", "checksum")
V2_KEYS = ("policyName", "machineState", "entries", "podEntries", "checksum")
V3_KEYS = ("policyName", "machineState", "entries", "checksum", "data", "dataChecksum")
DATA_KEYS = ("policyName", "machineState", "entries", "podEntries")
_STRUCT_NAMES = {
    LEGACY_KEYS: "state.MemoryManagerCheckpoint",
    V2_KEYS: "state.MemoryManagerCheckpoint",
    V3_KEYS: "state.MemoryManagerCheckpoint",
    DATA_KEYS: "state.MemoryManagerCheckpointData",
}
TABLE_KEYS = ("total", "systemReserved", "allocatable", "reserved", "free")
NODE_KEYS = ("numberOfAssignments", "memoryMap", "cells")
BLOCK_KEYS = ("numaAffinity", "type", "size")
POD_ENTRY_KEYS = ("memoryBlocks",)


# --- Data model (memorymanager/state/state.go) ----------------------------------------


class MemoryTable(Record):
    total: int = 0
    system_reserved: int = 0
    allocatable: int = 0
    reserved: int = 0
    free: int = 0


class NodeState(Record):
    number_of_assignments: int = 0
    memory_map: Optional[Dict[str, Optional[MemoryTable]]] = None
    cells: Optional[List[int]] = None


class Block(Record):
    numa_affinity: Optional[List[int]] = None
    type: str = ""
    size: int = 0


class PodEntry(Record):
    memory_blocks: Optional[List[Block]] = None


NodeMap = Dict[int, Optional[NodeState]]
ContainerBlocks = Dict[str, Optional[List[Block]]]
Entries = Dict[str, Optional[ContainerBlocks]]
PodEntries = Dict[str, PodEntry]


class CheckpointFields(Record):
    """The union of every era's fields; the constructor's empty maps are the defaults (2.7)."""

    policy_name: str = ""
    machine_state: Optional[NodeMap] = factory(dict)
    entries: Optional[Entries] = factory(dict)
    pod_entries: Optional[PodEntries] = factory(dict)
    checksum: int = 0
    data: str = ""
    data_checksum: int = 0
