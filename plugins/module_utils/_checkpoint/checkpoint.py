# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's memory manager checkpoint (``memory_manager_state``): decode, verify, serialize.

Spec references are to ``spec/kubelet-memory-manager.md``:

* the data model (section 2) as plain records (:mod:`_record`), ``None`` standing for Go's nil;
* decoding with Go ``encoding/json`` semantics (4.5) into each era's struct (2.7);
* the checksum variants (4.2-4.8) and the four era readers with their fallbacks (3.5);
* layout detection (3.1), the layout a repair may write (3.6), and the inputs a repair
  must refuse because kubelet never writes them (4.5 [R], 9);
* ``MarshalCheckpoint``-identical output for the legacy and V3 layouts (1, 3.4).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import (
    GoJsonError,
    JsonObject,
    TypedDecoder,
    fold_key,
    marshal_string,
    parse_document,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gospew import (
    GoMap,
    GoPtr,
    GoScalar,
    GoSlice,
    GoStruct,
    GoValue,
    deep_hash,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, factory, replace

__all__ = [
    "CHECKPOINT_FILE_NAME",
    "ERAS",
    "ERA_RELEASES",
    "MAX_CHECKPOINT_BYTES",
    "MemoryTable",
    "NodeState",
    "Block",
    "PodEntry",
    "CheckpointFields",
    "EraResult",
    "CheckpointReport",
    "decode_fields",
    "legacy_checksum",
    "v1_name_checksum",
    "v2_checksum",
    "data_checksum",
    "read_as_era",
    "inspect_checkpoint",
    "marshal_legacy",
    "marshal_v3",
    "marshal_for_layout",
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


# --- The era readers (UnmarshalCheckpoint, VerifyChecksum) -----------------------------


class EraResult(Record, frozen=True):
    accepted: bool
    via: Optional[str]  # which variant loaded: legacy, v1-name, zero, v2, v3
    error: Optional[str]


def _accept(via: str) -> EraResult:
    return EraResult(True, via, None)


def _reject(error: str) -> EraResult:
    return EraResult(False, None, error)


class ParsedDocument:
    """A parsed file with each era struct's decode and each checksum variant computed once."""

    def __init__(self, tree: Any) -> None:
        self.tree = tree
        self._decoded: Dict[Tuple[str, ...], Tuple[CheckpointFields, Optional[str]]] = {}
        self._checksums: Dict[str, int] = {}

    def decoded(self, keys: Tuple[str, ...]) -> Tuple[CheckpointFields, Optional[str]]:
        if keys not in self._decoded:
            self._decoded[keys] = decode_fields(self.tree, keys)
        return self._decoded[keys]

    def checksum(self, variant: str) -> int:
        """legacy, v1-name (over the V1 decode) or v2 (over the V2 decode)."""
        if variant not in self._checksums:
            if variant == "v2":
                self._checksums[variant] = v2_checksum(self.decoded(V2_KEYS)[0])
            else:
                compute = legacy_checksum if variant == "legacy" else v1_name_checksum
                self._checksums[variant] = compute(self.decoded(LEGACY_KEYS)[0])
        return self._checksums[variant]


def _read_v1(doc: ParsedDocument, allow_zero: bool, allow_v1_name: bool) -> EraResult:
    fields, error = doc.decoded(LEGACY_KEYS)
    if error:
        return _reject(error)
    if allow_zero and fields.checksum == 0:
        return _accept("zero")  # "accept empty checksum for compatibility with old file backend"
    if allow_v1_name and fields.checksum == doc.checksum("v1-name"):
        return _accept("v1-name")
    if fields.checksum == doc.checksum("legacy"):
        return _accept("legacy")
    return _reject(CORRUPTED)


def _read_v2(doc: ParsedDocument) -> EraResult:
    fields, error = doc.decoded(V2_KEYS)
    if error:
        return _reject(error)
    if fields.checksum == doc.checksum("v2"):
        return _accept("v2")
    return _reject(CORRUPTED)


def _read_v3(doc: ParsedDocument) -> Tuple[EraResult, bool]:
    """1.37 steps 1-5; the flag says whether a failure forbids falling back."""
    fields, error = doc.decoded(V3_KEYS)
    if error is None:
        error = _data_error(fields.data)
    if error is None and fields.data_checksum != data_checksum(fields.data):
        error = CORRUPTED
    if error is None:
        return _accept("v3"), False
    no_fallback = fields.data != "" or fields.data_checksum != 0
    return _reject("could not load v3 checkpoint: " + error), no_fallback


def _data_error(data: str) -> Optional[str]:
    try:
        _fields, error = decode_fields(parse_document(data.encode("utf-8")), DATA_KEYS)
    except GoJsonError as syntax:
        error = str(syntax)
    return None if error is None else "failed to deserialize memory manager checkpoint data: " + error


def read_as_era(document: Any, era: str) -> EraResult:
    """Would kubelet of ``era`` load this parsed document? (decode + checksum; not policy)."""
    doc = document if isinstance(document, ParsedDocument) else ParsedDocument(document)
    if era == ERA_LEGACY:
        fields, error = doc.decoded(LEGACY_KEYS)
        if error:
            return _reject(error)
        return _accept("legacy") if fields.checksum == doc.checksum("legacy") else _reject(CORRUPTED)
    if era == ERA_136_GATE_OFF:
        return _read_v1(doc, allow_zero=True, allow_v1_name=True)
    if era == ERA_136_GATE_ON:
        v2 = _read_v2(doc)
        return v2 if v2.accepted else _read_v1(doc, allow_zero=True, allow_v1_name=False)
    if era == ERA_137:
        v3, no_fallback = _read_v3(doc)
        if v3.accepted or no_fallback:
            return v3
        v2 = _read_v2(doc)
        return v2 if v2.accepted else _read_v1(doc, allow_zero=True, allow_v1_name=False)
    raise ValueError("unknown kubelet era %r (known: %s)" % (era, ", ".join(ERAS)))


# --- Layout, content and what a repair may do (docs/safety.md) ------------------------


class CheckpointReport(Record, frozen=True):
    """Everything a probe needs to know about one checkpoint file."""

    size: int
    syntax_error: Optional[str]
    shape: str  # keys present: legacy | v2 | v3 | not-json
    layout: str  # legacy | v1-name | v2 | v3 | v3-broken | zero | unverified | not-json | too-large
    format_label: str  # the vectors' labels: v1-legacy, v1-zero-checksum, v2, v2-zero-checksum, v3, v3-broken, not-json
    eras: Dict[str, EraResult]
    content: Optional[CheckpointFields]  # what kubelet restores (1.37: the data section)
    inline: Optional[CheckpointFields]
    irregularities: Tuple[str, ...]

    @property
    def accepted_by(self) -> Tuple[str, ...]:
        return tuple(era for era in ERAS if self.eras[era].accepted)

    @property
    def verified(self) -> bool:
        return bool(self.accepted_by)

    @property
    def releases_accepting(self) -> Tuple[str, ...]:
        return tuple(release for era in self.accepted_by for release in ERA_RELEASES[era])

    @property
    def releases_refusing(self) -> Tuple[str, ...]:
        return tuple(release for era in ERAS if not self.eras[era].accepted for release in ERA_RELEASES[era])

    def releases_disagree(self) -> str:
        """``""``, or which kubelet releases start with this file and which refuse it."""
        if not self.releases_accepting or not self.releases_refusing:
            return ""
        return "kubelet releases disagree about this file: %s accept it, %s refuse it" % (
            ", ".join(self.releases_accepting), ", ".join(self.releases_refusing))

    def write_layout(self) -> Tuple[Optional[str], str]:
        """docs/safety.md: the layout a repair writes (legacy or v3), or None and why it must refuse."""
        return _write_layout(self)


def _top_level_keys(tree: Any) -> Tuple[str, ...]:
    return tuple(fold_key(key) for key in tree.keys_in_order()) if isinstance(tree, JsonObject) else ()


def _shape(tree: Any) -> str:
    keys = _top_level_keys(tree)
    if "data" in keys or "datachecksum" in keys:
        return "v3"
    return "v2" if "podentries" in keys else "legacy"


def _empty_v3_part(inline: CheckpointFields) -> bool:
    """``"data":""`` and ``"dataChecksum":0``: 1.37 falls back to the V2/V1 part (``loadAndMigrateCheckpointV3``)."""
    return inline.data == "" and inline.data_checksum == 0


def _layout(shape: str, tree: Any, eras: Dict[str, EraResult], inline: CheckpointFields) -> str:
    if shape == "v3" and not _empty_v3_part(inline):
        return "v3" if eras[ERA_137].via == "v3" else "v3-broken"
    if inline.checksum == 0:
        return "zero"
    for via in ("legacy", "v1-name", "v2"):
        if any(result.via == via for result in eras.values()):
            return via
    return "unverified"


def _format_label(shape: str, layout: str, inline: CheckpointFields) -> str:
    if shape == "v3":
        return layout if layout in ("v3", "v3-broken") else "v3-empty-data"
    zero = "-zero-checksum" if inline.checksum == 0 else ""
    return ("v2" if shape == "v2" else "v1-legacy" if not zero else "v1") + zero


def _walk_irregularities(value: Any, path: str, known: Dict[str, Tuple[str, ...]], found: List[str]) -> None:
    if value is None:
        found.append("%s is null (kubelet never writes null)" % path)
    elif isinstance(value, JsonObject):
        keys = value.keys_in_order()
        seen: Dict[str, str] = {}
        allowed = known.get(_schema_of(path))
        for key in keys:
            if fold_key(key) in seen:
                found.append("%s repeats the key %r" % (path, key))
            seen[fold_key(key)] = key
            if not key.isascii():
                found.append("%s has the non-ASCII key %r" % (path, key))
            elif allowed is not None and key not in allowed:
                kind = "a case variant of a field" if fold_key(key) in map(fold_key, allowed) else "an unknown key"
                found.append("%s has %s %r" % (path, kind, key))
        for key, item in value:
            _walk_irregularities(item, "%s.%s" % (path, key), known, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk_irregularities(item, "%s[%d]" % (path, index), known, found)


def _schema_of(path: str) -> str:
    """Which struct an object at ``path`` is: top, node, table, block, pod-entry or a map."""
    parts = path.split(".")
    depth = len(parts)
    if depth == 1:
        return "top"
    section = parts[1]
    if section == "machineState":
        return {3: "node", 5: "table"}.get(depth, "map")
    if section == "podEntries" and depth == 3:
        return "pod-entry"
    if "[" in parts[-1]:
        return "block"
    return "map"


def _irregularities(tree: Any, top_keys: Tuple[str, ...], name: str) -> List[str]:
    known = {"top": top_keys, "node": NODE_KEYS, "table": TABLE_KEYS, "block": BLOCK_KEYS, "pod-entry": POD_ENTRY_KEYS}
    found: List[str] = []
    _walk_irregularities(tree, name, known, found)
    if isinstance(tree, JsonObject):
        for key, nodes in tree:
            if fold_key(key) == "machinestate" and isinstance(nodes, JsonObject):
                found.extend(
                    "%s.machineState has the non-canonical NUMA node id %r" % (name, node_id)
                    for node_id in nodes.keys_in_order()
                    if not (node_id.isascii() and node_id.isdigit()) or (node_id != "0" and node_id.startswith("0"))
                )
    else:
        found.append("%s is not a JSON object" % name)
    return found


def _content(shape: str, doc: ParsedDocument, eras: Dict[str, EraResult], inline: CheckpointFields) -> CheckpointFields:
    if eras[ERA_137].via == "v3":
        data_fields, _error = decode_fields(parse_document(inline.data.encode("utf-8")), DATA_KEYS)
        return data_fields
    if shape == "v2":
        return doc.decoded(V2_KEYS)[0]
    return inline


def inspect_checkpoint(raw: bytes) -> CheckpointReport:
    """Decode ``raw`` as every era would; never raises for bad content."""
    if len(raw) > MAX_CHECKPOINT_BYTES:
        error = "the file is %d bytes, more than the %d bytes any kubelet writes" % (len(raw), MAX_CHECKPOINT_BYTES)
        return _unreadable(len(raw), error, "too-large")
    try:
        tree = parse_document(raw)
    except GoJsonError as syntax:
        return _unreadable(len(raw), str(syntax), "not-json")
    shape = _shape(tree)
    doc = ParsedDocument(tree)
    eras = {era: read_as_era(doc, era) for era in ERAS}
    inline, _error = doc.decoded(V3_KEYS if shape == "v3" else V2_KEYS)
    layout = _layout(shape, tree, eras, inline)
    found = _irregularities(tree, V3_KEYS if shape == "v3" else V2_KEYS, "checkpoint")
    if eras[ERA_137].via == "v3":
        found += _irregularities(parse_document(inline.data.encode("utf-8")), DATA_KEYS, "data")
    return CheckpointReport(
        size=len(raw),
        syntax_error=None,
        shape=shape,
        layout=layout,
        format_label=_format_label(shape, layout, inline),
        eras=eras,
        content=_content(shape, doc, eras, inline),
        inline=inline,
        irregularities=tuple(found),
    )


def _unreadable(size: int, error: str, layout: str) -> CheckpointReport:
    return CheckpointReport(
        size=size,
        syntax_error=error,
        shape="not-json",
        layout=layout,
        format_label="not-json",
        eras={era: _reject(error) for era in ERAS},
        content=None,
        inline=None,
        irregularities=(),
    )


def _has_pod_entries(fields: Optional[CheckpointFields]) -> bool:
    return bool(fields is not None and fields.pod_entries)


def _inline_matches_data(report: CheckpointReport) -> bool:
    inline, content = report.inline, report.content
    return (
        inline is not None
        and content is not None
        and inline.checksum == legacy_checksum(inline)
        and (inline.policy_name, inline.machine_state, inline.entries)
        == (content.policy_name, content.machine_state, content.entries)
    )


def _write_layout(report: CheckpointReport) -> Tuple[Optional[str], str]:
    """A file the supported releases disagree about is never rewritten (whichever reading a repair
    kept, some release would start with a state other than the one it starts with today)."""
    layout, reason = _layout_to_write(report)
    disagreement = report.releases_disagree()
    if disagreement:
        detail = reason if layout is None else "a %s file" % report.layout
        return None, "%s; %s, so it is left as it is" % (detail, disagreement)
    return layout, reason


def _layout_to_write(report: CheckpointReport) -> Tuple[Optional[str], str]:
    if report.layout in ("not-json", "too-large", "unverified") or not report.verified:
        return None, "no kubelet era accepts the file: %s" % (report.syntax_error or CORRUPTED)
    if report.layout == "zero":
        return None, "the checksum is 0: the content is unauthenticated and legacy kubelets reject it"
    if report.layout == "v3-broken":
        return None, "the V3 data section does not load (%s); kubelet 1.37 refuses it" % report.eras[ERA_137].error
    if _has_pod_entries(report.content):
        return None, "the checkpoint has pod-level entries (podEntries), whose validation this version does not model"
    if report.irregularities:
        return None, "the file is not kubelet output: " + "; ".join(report.irregularities[:5])
    if report.layout == "v3":
        if not _inline_matches_data(report):
            return None, "the V3 inline part does not verify or differs from the data section"
        return "v3", "1.37 layout kept: legacy inline part plus data and dataChecksum"
    return "legacy", "legacy layout with the legacy checksum, accepted by every kubelet era"


# --- Go json.Marshal of the checkpoint (MarshalCheckpoint) -----------------------------


def _marshal_ints(values: Optional[List[int]]) -> str:
    return "null" if values is None else "[" + ",".join(str(value) for value in values) + "]"


def _marshal_object(items: List[Tuple[str, str]]) -> str:
    return "{" + ",".join(marshal_string(key) + ":" + value for key, value in items) + "}"


def _marshal_sorted_map(mapping: Optional[dict], marshal_value: Callable[[Any], str]) -> str:
    # Go sorts map keys as strings, also for int keys (Go's ``encoding/json``).
    if mapping is None:
        return "null"
    return _marshal_object(sorted(((str(key), marshal_value(value)) for key, value in mapping.items())))


def _marshal_table(table: Optional[MemoryTable]) -> str:
    if table is None:
        return "null"
    numbers = (table.total, table.system_reserved, table.allocatable, table.reserved, table.free)
    return _marshal_object([(key, str(number)) for key, number in zip(TABLE_KEYS, numbers)])


def _marshal_node(node: Optional[NodeState]) -> str:
    if node is None:
        return "null"
    return _marshal_object(
        [
            ("numberOfAssignments", str(node.number_of_assignments)),
            ("memoryMap", _marshal_sorted_map(node.memory_map, _marshal_table)),
            ("cells", _marshal_ints(node.cells)),
        ]
    )


def _marshal_block(block: Block) -> str:
    return _marshal_object(
        [("numaAffinity", _marshal_ints(block.numa_affinity)), ("type", marshal_string(block.type)), ("size", str(block.size))]
    )


def _marshal_blocks(blocks: Optional[List[Block]]) -> str:
    return "null" if blocks is None else "[" + ",".join(_marshal_block(block) for block in blocks) + "]"


def _marshal_entries(entries: Optional[Entries]) -> str:
    return _marshal_sorted_map(entries, lambda containers: _marshal_sorted_map(containers, _marshal_blocks))


def _marshal_pod_entry(entry: PodEntry) -> str:
    return _marshal_object([("memoryBlocks", _marshal_blocks(entry.memory_blocks))] if entry.memory_blocks else [])


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
    return _marshal_object([(key, values[key]()) for key in keys if key not in omit_empty or omit_empty[key]])


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
