# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_checkpoint/model.py: the eras and the releases they stand for, each era's struct
keys in declaration order (memorymanager/state/checkpoint.go and state.go), and the records' defaults."""

from __future__ import annotations

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint import model
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (
    CHECKPOINT_FILE_NAME,
    ERA_RELEASES,
    ERAS,
    MAX_CHECKPOINT_BYTES,
    Block,
    CheckpointFields,
    MemoryTable,
    NodeState,
    PodEntry,
)


def test_the_eras_oldest_first_and_the_supported_releases_each_stands_for():
    assert ERAS == ("legacy", "1.36-gate-off", "1.36-gate-on", "1.37")
    assert set(ERA_RELEASES) == set(ERAS)
    # Every supported kubelet (1.34 to 1.37) is read by exactly one era when its gates are fixed.
    releases = [release.split()[0] for era in ERAS for release in ERA_RELEASES[era]]
    assert sorted(set(releases)) == ["1.34", "1.35", "1.36", "1.37"]
    assert ERA_RELEASES["1.36-gate-on"] == ("1.36 with PodLevelResourceManagers",)


def test_each_struct_has_its_json_keys_in_declaration_order():
    # The JSON output order and the order of the fields in the checksum string.
    assert model.LEGACY_KEYS == ("policyName", "machineState", "entries", "checksum")
    assert model.V2_KEYS == ("policyName", "machineState", "entries", "podEntries", "checksum")
    # V3 embeds the V1 struct (its fields promoted to the top level), then data and dataChecksum.
    assert model.V3_KEYS == model.LEGACY_KEYS + ("data", "dataChecksum")
    assert model.DATA_KEYS == ("policyName", "machineState", "entries", "podEntries")  # no checksum of its own
    assert model.TABLE_KEYS == ("total", "systemReserved", "allocatable", "reserved", "free")
    assert model.NODE_KEYS == ("numberOfAssignments", "memoryMap", "cells")
    assert model.BLOCK_KEYS == ("numaAffinity", "type", "size")
    assert model.POD_ENTRY_KEYS == ("memoryBlocks",)


def test_the_struct_names_go_spew_prints():
    # V2 and V3 are aliases of MemoryManagerCheckpoint, so every era's file struct prints under that name.
    names = model._STRUCT_NAMES  # pylint: disable=protected-access
    assert {names[keys] for keys in (model.LEGACY_KEYS, model.V2_KEYS, model.V3_KEYS)} == {"state.MemoryManagerCheckpoint"}
    assert names[model.DATA_KEYS] == "state.MemoryManagerCheckpointData"


def test_the_file_and_its_limit():
    assert CHECKPOINT_FILE_NAME == "memory_manager_state"  # memorymanager memoryManagerStateFileName
    assert MAX_CHECKPOINT_BYTES == 4 * 1024 * 1024
    assert model.CORRUPTED == "checkpoint is corrupted"  # kubelet checkpointmanager/errors: CorruptCheckpointError


def test_the_constructor_defaults_are_empty_maps_and_zero_values():
    # Before decoding, kubelet's constructor sets machineState and entries (and podEntries) to empty, non-nil maps.
    fields = CheckpointFields()
    assert (fields.policy_name, fields.machine_state, fields.entries, fields.pod_entries) == ("", {}, {}, {})
    assert (fields.checksum, fields.data, fields.data_checksum) == (0, "", 0)
    other = CheckpointFields()
    assert other.machine_state is not fields.machine_state and other.entries is not fields.entries  # one map per record
    assert MemoryTable() == MemoryTable(0, 0, 0, 0, 0)
    assert (NodeState().memory_map, NodeState().cells, NodeState().number_of_assignments) == (None, None, 0)  # Go's nil
    assert (Block().numa_affinity, Block().type, Block().size) == (None, "", 0)
    assert PodEntry().memory_blocks is None


def test_records_compare_by_value():
    assert Block([0, 1], "memory", 1024) == Block([0, 1], "memory", 1024)
    assert Block([0, 1], "memory", 1024) != Block([1, 0], "memory", 1024)  # affinity order is kept
    table = MemoryTable(total=2048, system_reserved=512, allocatable=1536, reserved=512, free=1024)
    assert NodeState(0, {"memory": table}, [0]) == NodeState(0, {"memory": MemoryTable(2048, 512, 1536, 512, 1024)}, [0])
