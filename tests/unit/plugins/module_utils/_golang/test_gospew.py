# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""go-spew %#v rendering and FNV-1a 32 against the spec's worked examples (spec 4)."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checksum import _checkpoint_value
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.decode import decode_fields
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import LEGACY_KEYS, V2_KEYS
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import parse_document
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gospew import (
    GoMap,
    GoPtr,
    GoScalar,
    GoSlice,
    GoStruct,
    fnv1a_32,
    spew_sharp_v,
)

G01_RENDERED = (
    "(*state.MemoryManagerCheckpoint){PolicyName:(string)static MachineState:(state.NUMANodeMap)map[0:<*>"
    "{NumberOfAssignments:(int)0 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[memory:<*>{TotalMemSize:"
    "(uint64)2048 SystemReserved:(uint64)512 Allocatable:(uint64)1536 Reserved:(uint64)512 Free:(uint64)1024}] "
    "Cells:([]int)[]}] Entries:(state.ContainerMemoryAssignments)map[pod:map[container1:[{NUMAAffinity:([]int)[0] "
    "Type:(v1.ResourceName)memory Size:(uint64)512}]]] Checksum:(checksum.Checksum)0}"
)
EMPTY_RENDERED = (
    "(*state.MemoryManagerCheckpoint){PolicyName:(string)Static MachineState:(state.NUMANodeMap)map[] "
    "Entries:(state.ContainerMemoryAssignments)map[] Checksum:(checksum.Checksum)0}"
)


def _legacy_rendering(text: str) -> str:
    fields, error = decode_fields(parse_document(text.encode()), LEGACY_KEYS)
    assert error is None
    value = _checkpoint_value(fields, "state.MemoryManagerCheckpoint", with_pod_entries=False)
    return spew_sharp_v(value).decode()


@pytest.mark.parametrize(
    "data, expected",
    [(b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968)],
)
def test_fnv1a_32_reference_values(data, expected):
    assert fnv1a_32(data) == expected


def test_fnv_single_byte_substitution_always_changes_the_hash():
    base = G01_RENDERED.encode()
    for index in range(0, len(base), 7):
        changed = bytearray(base)
        changed[index] ^= 0x01
        assert fnv1a_32(bytes(changed)) != fnv1a_32(base)


def test_worked_example_g01_renders_exactly(vectors):
    rendered = _legacy_rendering(vectors[0]["content"])
    assert rendered == G01_RENDERED
    assert len(rendered.encode()) == 501
    assert fnv1a_32(rendered.encode()) == 4215593881


def test_empty_checkpoint_renders_and_hashes(vectors):
    # spec 4.9
    text = '{"policyName":"Static","machineState":{},"checksum":3940083781}'
    assert _legacy_rendering(text) == EMPTY_RENDERED
    assert fnv1a_32(EMPTY_RENDERED.encode()) == 3940083781


def test_g20_rendering_is_1489_bytes_with_hugepage_key_order(vectors):
    rendered = _legacy_rendering(vectors[19]["content"])
    assert len(rendered.encode()) == 1489
    assert "map[hugepages-1Gi:<*>" in rendered and "} hugepages-2Mi:<*>" in rendered and "} memory:<*>" in rendered
    assert "Cells:([]int)[0 1]" in rendered
    assert fnv1a_32(rendered.encode()) == 3684058912


def test_nil_versus_empty_slices_and_maps():
    assert spew_sharp_v(GoSlice("[]int", None)) == b"([]int)<nil>"
    assert spew_sharp_v(GoSlice("[]int", [])) == b"([]int)[]"
    assert spew_sharp_v(GoMap("state.NUMANodeMap", None)) == b"(state.NUMANodeMap)<nil>"
    assert spew_sharp_v(GoMap("state.NUMANodeMap", [])) == b"(state.NUMANodeMap)map[]"


def test_map_keys_sort_numerically_for_ints_and_bytewise_for_strings():
    ints = GoMap("m", [(10, GoScalar("int", 1)), (2, GoScalar("int", 1)), (-1, GoScalar("int", 1))])
    assert spew_sharp_v(ints) == b"(m)map[-1:1 2:1 10:1]"
    strings = GoMap("m", [("memory", GoScalar("int", 0)), ("Zeta", GoScalar("int", 0)), ("hugepages-2Mi", GoScalar("int", 0))])
    assert spew_sharp_v(strings) == b"(m)map[Zeta:0 hugepages-2Mi:0 memory:0]"


def test_empty_string_leaves_nothing_after_the_annotation():
    block = GoStruct("state.Block", [("Type", GoScalar("v1.ResourceName", "")), ("Size", GoScalar("uint64", 0))])
    assert spew_sharp_v(block) == b"(state.Block){Type:(v1.ResourceName) Size:(uint64)0}"


def test_top_level_nil_pointer_keeps_its_type():
    assert spew_sharp_v(GoPtr("state.MemoryTable", None)) == b"(*state.MemoryTable)<nil>"


def test_quirk_null_last_table_drops_the_cells_annotation():
    # spec 4.2 rule 11
    text = '{"machineState":{"0":{"memoryMap":{"memory":null},"cells":[0]}}}'
    assert "map[memory:<nil>] Cells:[0]}" in _legacy_rendering(text)
    text = '{"machineState":{"0":{"memoryMap":{"memory":null}}}}'
    assert "map[memory:<nil>] Cells:<nil>}" in _legacy_rendering(text)


def test_quirk_null_last_node_drops_the_entries_annotation():
    rendered = _legacy_rendering('{"machineState":{"0":{},"1":null},"entries":{}}')
    assert "1:<nil>] Entries:map[] Checksum:(checksum.Checksum)0}" in rendered


def test_null_that_is_not_last_keeps_annotations():
    rendered = _legacy_rendering('{"machineState":{"0":null,"1":{}}}')
    assert "map[0:<nil> 1:<*>{NumberOfAssignments:(int)0" in rendered
    assert "Entries:(state.ContainerMemoryAssignments)map[]" in rendered


def test_v2_worked_example_hashes_to_stored_value(vectors):
    fields, error = decode_fields(parse_document(vectors[14]["content"].encode()), V2_KEYS)
    assert error is None
    value = _checkpoint_value(fields, "state.MemoryManagerCheckpoint", with_pod_entries=True)
    rendered = spew_sharp_v(value).decode()
    assert "PodEntries:(state.PodMemoryAssignments)map[pod:{MemoryBlocks:([]state.Block)[{NUMAAffinity:([]int)[0]" in rendered
    assert fnv1a_32(rendered.encode()) == 1278640530
