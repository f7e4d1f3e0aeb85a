# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checksum variants (4.2-4.8): the go-spew values kubelet hashes (``checksum.New``) and the checksums."""

from __future__ import annotations

from typing import List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (
    Block,
    CheckpointFields,
    ContainerBlocks,
    Entries,
    MemoryTable,
    NodeMap,
    NodeState,
    PodEntries,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gospew import GoMap, GoPtr, GoScalar, GoSlice, GoStruct, GoValue, deep_hash

__all__ = [
    "legacy_checksum",
    "v1_name_checksum",
    "v2_checksum",
    "data_checksum",
]


# --- The Go values that kubelet hashes (checksum.New) ----------------------------------


def _ints_value(values: Optional[List[int]]) -> GoSlice:
    return GoSlice("[]int", None if values is None else [GoScalar("int", value) for value in values])


def _table_value(table: Optional[MemoryTable]) -> GoPtr:
    if table is None:
        return GoPtr("state.MemoryTable", None)
    numbers = (table.total, table.system_reserved, table.allocatable, table.reserved, table.free)
    names = ("TotalMemSize", "SystemReserved", "Allocatable", "Reserved", "Free")
    return GoPtr(
        "state.MemoryTable",
        GoStruct("state.MemoryTable", [(name, GoScalar("uint64", number)) for name, number in zip(names, numbers)]),
    )


def _node_value(node: Optional[NodeState]) -> GoPtr:
    if node is None:
        return GoPtr("state.NUMANodeState", None)
    tables = None if node.memory_map is None else [(res, _table_value(t)) for res, t in node.memory_map.items()]
    return GoPtr(
        "state.NUMANodeState",
        GoStruct(
            "state.NUMANodeState",
            [
                ("NumberOfAssignments", GoScalar("int", node.number_of_assignments)),
                ("MemoryMap", GoMap("map[v1.ResourceName]*state.MemoryTable", tables)),
                ("Cells", _ints_value(node.cells)),
            ],
        ),
    )


def _block_value(block: Block) -> GoStruct:
    return GoStruct(
        "state.Block",
        [
            ("NUMAAffinity", _ints_value(block.numa_affinity)),
            ("Type", GoScalar("v1.ResourceName", block.type)),
            ("Size", GoScalar("uint64", block.size)),
        ],
    )


def _blocks_value(blocks: Optional[List[Block]]) -> GoSlice:
    return GoSlice("[]state.Block", None if blocks is None else [_block_value(block) for block in blocks])


def _node_map_value(nodes: Optional[NodeMap]) -> GoMap:
    return GoMap("state.NUMANodeMap", None if nodes is None else [(nid, _node_value(n)) for nid, n in nodes.items()])


def _containers_value(containers: Optional[ContainerBlocks]) -> GoMap:
    items = None if containers is None else [(name, _blocks_value(b)) for name, b in containers.items()]
    return GoMap("map[string][]state.Block", items)


def _entries_value(entries: Optional[Entries]) -> GoMap:
    items = None if entries is None else [(pod, _containers_value(c)) for pod, c in entries.items()]
    return GoMap("state.ContainerMemoryAssignments", items)


def _pod_entries_value(pod_entries: Optional[PodEntries]) -> GoMap:
    if pod_entries is None:
        return GoMap("state.PodMemoryAssignments", None)
    items = [
        (uid, GoStruct("state.PodEntry", [("MemoryBlocks", _blocks_value(entry.memory_blocks))]))
        for uid, entry in pod_entries.items()
    ]
    return GoMap("state.PodMemoryAssignments", items)


def _checkpoint_value(fields: CheckpointFields, type_name: str, with_pod_entries: bool) -> GoValue:
    members: List[Tuple[str, GoValue]] = [
        ("PolicyName", GoScalar("string", fields.policy_name)),
        ("MachineState", _node_map_value(fields.machine_state)),
        ("Entries", _entries_value(fields.entries)),
    ]
    if with_pod_entries:
        members.append(("PodEntries", _pod_entries_value(fields.pod_entries)))
    members.append(("Checksum", GoScalar("checksum.Checksum", 0)))  # hashed with the checksum zeroed (4.1)
    return GoPtr(type_name, GoStruct(type_name, members))


def legacy_checksum(fields: CheckpointFields) -> int:
    """``MemoryManagerCheckpoint.VerifyChecksum``: the legacy (and 1.37 inline) checksum."""
    return deep_hash(_checkpoint_value(fields, "state.MemoryManagerCheckpoint", with_pod_entries=False))


def v1_name_checksum(fields: CheckpointFields) -> int:
    """``MemoryManagerCheckpointV1.VerifyChecksum``: 1.36 with PodLevelResourceManagers off hashes under the V1 type name."""
    return deep_hash(_checkpoint_value(fields, "state.MemoryManagerCheckpointV1", with_pod_entries=False))


def v2_checksum(fields: CheckpointFields) -> int:
    """``MemoryManagerCheckpointV2.VerifyChecksum``: 1.36 V2 (and 1.37's V2 fallback) include ``PodEntries``."""
    return deep_hash(_checkpoint_value(fields, "state.MemoryManagerCheckpoint", with_pod_entries=True))


def data_checksum(data: str) -> int:
    """``MemoryManagerCheckpointV3.VerifyChecksum``: FNV-1a 32 of ``(string)`` followed by the decoded ``data`` string."""
    return deep_hash(GoScalar("string", data))
