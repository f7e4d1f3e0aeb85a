# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decoding a checkpoint with Go ``encoding/json`` semantics (4.5) into each era's struct (2.7)."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (
    BLOCK_KEYS,
    Block,
    CheckpointFields,
    ContainerBlocks,
    Entries,
    MemoryTable,
    NODE_KEYS,
    NodeMap,
    NodeState,
    POD_ENTRY_KEYS,
    PodEntries,
    PodEntry,
    TABLE_KEYS,
    _STRUCT_NAMES,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import JsonObject, TypedDecoder

__all__ = [
    "decode_fields",
]


# --- Go decoding into the model (json.Unmarshal) ---------------------------------------


def _decode_int_list(dec: TypedDecoder, value: Any, current: Optional[List[int]]) -> Optional[List[int]]:
    if value is None:
        return None
    if not isinstance(value, list) or isinstance(value, JsonObject):
        dec.type_error(value, "[]int", "struct field")
        return current
    return [dec.integer(item, "int", "value") for item in value]


def _decode_table(dec: TypedDecoder, value: Any) -> Optional[MemoryTable]:
    if value is None:
        return None
    numbers = dict.fromkeys(TABLE_KEYS, 0)
    for name, item in dec.fields(value, TABLE_KEYS, "state.MemoryTable", "value"):
        numbers[name] = dec.integer(item, "uint64", "struct field MemoryTable." + name, numbers[name])
    return MemoryTable(
        numbers["total"], numbers["systemReserved"], numbers["allocatable"], numbers["reserved"], numbers["free"]
    )


def _decode_map(
    dec: TypedDecoder, value: Any, current: Optional[dict], go_type: str, decode_value: Callable[[Any], Any]
) -> Optional[dict]:
    """A map-valued field: ``null`` -> nil; an object is decoded *into* the existing map (4.5 item 3)."""
    if value is None:
        return None
    if not isinstance(value, JsonObject):
        dec.type_error(value, go_type, "struct field")
        return current
    result = current if current is not None else {}
    for key, item in value:
        result[key] = decode_value(item)
    return result


def _decode_node(dec: TypedDecoder, value: Any) -> Optional[NodeState]:
    if value is None:
        return None
    node = NodeState()
    for name, item in dec.fields(value, NODE_KEYS, "state.NUMANodeState", "value"):
        if name == "numberOfAssignments":
            node.number_of_assignments = dec.integer(item, "int", "struct field NUMANodeState.numberOfAssignments")
        elif name == "memoryMap":
            node.memory_map = _decode_map(
                dec, item, node.memory_map, "map[v1.ResourceName]*state.MemoryTable", lambda v: _decode_table(dec, v)
            )
        else:
            node.cells = _decode_int_list(dec, item, node.cells)
    return node


def _decode_node_map(dec: TypedDecoder, value: Any, current: Optional[NodeMap]) -> Optional[NodeMap]:
    if value is None:
        return None
    if not isinstance(value, JsonObject):
        dec.type_error(value, "state.NUMANodeMap", "struct field")
        return current
    result = current if current is not None else {}
    for key, item in value:
        node = _decode_node(dec, item)
        node_id = dec.map_int_key(key, "int")
        if node_id is not None:
            result[node_id] = node
    return result


def _decode_block(dec: TypedDecoder, value: Any) -> Block:
    block = Block()
    for name, item in dec.fields(value, BLOCK_KEYS, "state.Block", "value"):
        if name == "numaAffinity":
            block.numa_affinity = _decode_int_list(dec, item, block.numa_affinity)
        elif name == "type":
            block.type = dec.string(item, "v1.ResourceName", "struct field Block.type", block.type)
        else:
            block.size = dec.integer(item, "uint64", "struct field Block.size", block.size)
    return block


def _decode_blocks(dec: TypedDecoder, value: Any) -> Optional[List[Block]]:
    if value is None:
        return None
    if not isinstance(value, list) or isinstance(value, JsonObject):
        dec.type_error(value, "[]state.Block", "value")
        return None
    return [_decode_block(dec, item) for item in value]


def _decode_entries(dec: TypedDecoder, value: Any, current: Optional[Entries]) -> Optional[Entries]:
    def containers(item: Any) -> Optional[ContainerBlocks]:
        return _decode_map(dec, item, None, "map[string][]state.Block", lambda v: _decode_blocks(dec, v))

    return _decode_map(dec, value, current, "state.ContainerMemoryAssignments", containers)


def _decode_pod_entry(dec: TypedDecoder, value: Any) -> PodEntry:
    entry = PodEntry()
    for _name, item in dec.fields(value, POD_ENTRY_KEYS, "state.PodEntry", "value"):
        entry.memory_blocks = _decode_blocks(dec, item)
    return entry


def _decode_pod_entries(dec: TypedDecoder, value: Any, current: Optional[PodEntries]) -> Optional[PodEntries]:
    return _decode_map(dec, value, current, "state.PodMemoryAssignments", lambda v: _decode_pod_entry(dec, v))


def decode_fields(tree: Any, keys: Tuple[str, ...]) -> Tuple[CheckpointFields, Optional[str]]:
    """Decode a parsed document into the era struct whose JSON fields are ``keys``.

    Returns the decoded fields and Go's first type error (None when decoding succeeded).
    """
    dec = TypedDecoder()
    fields = CheckpointFields()
    struct_name = _STRUCT_NAMES[keys]
    for name, value in dec.fields(tree, keys, struct_name, "value"):
        if name == "policyName":
            fields.policy_name = dec.string(value, "string", "struct field .policyName", fields.policy_name)
        elif name == "machineState":
            fields.machine_state = _decode_node_map(dec, value, fields.machine_state)
        elif name == "entries":
            fields.entries = _decode_entries(dec, value, fields.entries)
        elif name == "podEntries":
            fields.pod_entries = _decode_pod_entries(dec, value, fields.pod_entries)
        elif name == "checksum":
            fields.checksum = dec.integer(value, "checksum.Checksum", "struct field .checksum", fields.checksum)
        elif name == "data":
            fields.data = dec.string(value, "string", "struct field .data", fields.data)
        else:
            fields.data_checksum = dec.integer(value, "checksum.Checksum", "struct field .dataChecksum", fields.data_checksum)
    return fields, dec.first_error
