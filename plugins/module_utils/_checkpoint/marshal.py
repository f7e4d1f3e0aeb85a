# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``MarshalCheckpoint``-identical output for the legacy and V3 layouts (1, 3.4): Go ``json.Marshal`` of the checkpoint."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checksum import data_checksum, legacy_checksum
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.decode import decode_fields
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (
    Block,
    CheckpointFields,
    DATA_KEYS,
    Entries,
    LEGACY_KEYS,
    MemoryTable,
    NodeState,
    PodEntry,
    TABLE_KEYS,
    V3_KEYS,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import replace
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import marshal_object, marshal_string, parse_document

__all__ = [
    "marshal_legacy",
    "marshal_v3",
    "marshal_for_layout",
]


# --- Go json.Marshal of the checkpoint (MarshalCheckpoint) -----------------------------


def _marshal_ints(values: Optional[List[int]]) -> str:
    return "null" if values is None else "[" + ",".join(str(value) for value in values) + "]"


def _marshal_sorted_map(mapping: Optional[dict], marshal_value: Callable[[Any], str]) -> str:
    # Go sorts map keys as strings, also for int keys (Go's ``encoding/json``).
    if mapping is None:
        return "null"
    return marshal_object(sorted(((str(key), marshal_value(value)) for key, value in mapping.items())))


def _marshal_table(table: Optional[MemoryTable]) -> str:
    if table is None:
        return "null"
    numbers = (table.total, table.system_reserved, table.allocatable, table.reserved, table.free)
    return marshal_object([(key, str(number)) for key, number in zip(TABLE_KEYS, numbers)])


def _marshal_node(node: Optional[NodeState]) -> str:
    if node is None:
        return "null"
    return marshal_object(
        [
            ("numberOfAssignments", str(node.number_of_assignments)),
            ("memoryMap", _marshal_sorted_map(node.memory_map, _marshal_table)),
            ("cells", _marshal_ints(node.cells)),
        ]
    )


def _marshal_block(block: Block) -> str:
    return marshal_object(
        [("numaAffinity", _marshal_ints(block.numa_affinity)), ("type", marshal_string(block.type)), ("size", str(block.size))]
    )


def _marshal_blocks(blocks: Optional[List[Block]]) -> str:
    return "null" if blocks is None else "[" + ",".join(_marshal_block(block) for block in blocks) + "]"


def _marshal_entries(entries: Optional[Entries]) -> str:
    return _marshal_sorted_map(entries, lambda containers: _marshal_sorted_map(containers, _marshal_blocks))


def _marshal_pod_entry(entry: PodEntry) -> str:
    return marshal_object([("memoryBlocks", _marshal_blocks(entry.memory_blocks))] if entry.memory_blocks else [])


def _marshal_struct(fields: CheckpointFields, keys: Tuple[str, ...]) -> str:
    values = {
        "policyName": lambda: marshal_string(fields.policy_name),
        "machineState": lambda: _marshal_sorted_map(fields.machine_state, _marshal_node),
        "entries": lambda: _marshal_entries(fields.entries),
        "podEntries": lambda: _marshal_sorted_map(fields.pod_entries, _marshal_pod_entry),
        "checksum": lambda: str(fields.checksum),
        "data": lambda: marshal_string(fields.data),
        "dataChecksum": lambda: str(fields.data_checksum),
    }
    omit_empty = {"entries": fields.entries, "podEntries": fields.pod_entries}
    return marshal_object([(key, values[key]()) for key in keys if key not in omit_empty or omit_empty[key]])


def _kubelet_parsed(fields: CheckpointFields, keys: Tuple[str, ...]) -> CheckpointFields:
    """The fields as kubelet will decode them from the bytes we are about to write (every era's ``UnmarshalCheckpoint``)."""
    decoded, error = decode_fields(parse_document(_marshal_struct(fields, keys).encode("utf-8")), keys)
    if error:
        raise ValueError("internal error: marshalled checkpoint does not decode: " + error)
    return decoded


def marshal_legacy(fields: CheckpointFields) -> bytes:
    """``MarshalCheckpoint`` of the legacy struct: policyName, machineState, entries, checksum."""
    state = replace(fields, checksum=0, pod_entries={}, data="", data_checksum=0)
    checksum = legacy_checksum(_kubelet_parsed(state, LEGACY_KEYS))
    return _marshal_struct(replace(state, checksum=checksum), LEGACY_KEYS).encode("utf-8")


def marshal_v3(fields: CheckpointFields) -> bytes:
    """1.37's writer (``MemoryManagerCheckpointV3.MarshalCheckpoint``): data + dataChecksum, inline legacy part with the legacy checksum."""
    state = replace(fields, checksum=0, data="", data_checksum=0)
    data = _marshal_struct(state, DATA_KEYS)
    inline = replace(state, pod_entries={})
    checksum = legacy_checksum(_kubelet_parsed(inline, LEGACY_KEYS))
    full = replace(inline, checksum=checksum, data=data, data_checksum=data_checksum(data))
    return _marshal_struct(full, V3_KEYS).encode("utf-8")


def marshal_for_layout(fields: CheckpointFields, layout: str) -> bytes:
    if layout == "v3":
        return marshal_v3(fields)
    if layout == "legacy":
        return marshal_legacy(fields)
    raise ValueError("cannot write layout %r (writable: legacy, v3)" % layout)
