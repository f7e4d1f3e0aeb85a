# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_checkpoint/marshal.py: byte-for-byte MarshalCheckpoint of every layout kubelet writes."""

from __future__ import annotations

import json

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_for_layout, marshal_legacy, marshal_v3
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (
    CheckpointFields,
    ERAS,
    MemoryTable,
    NodeState,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import marshal_string


KUBELET_WRITTEN = (19, 20, 21)


@pytest.mark.parametrize("number", KUBELET_WRITTEN)
def test_kubelet_written_vectors_round_trip_byte_for_byte(vectors, number):
    content = vectors[number - 1]["content"].encode("utf-8")
    report = inspect_checkpoint(content)
    assert marshal_for_layout(report.content, report.write_layout()[0]) == content


def test_g01_reserialises_as_the_spec_examples(vectors, checkpoint_report):
    report = checkpoint_report(vectors[0]["content"])
    legacy = marshal_legacy(report.content).decode()
    assert legacy == (
        '{"policyName":"static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,'
        '"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}},"entries":{"pod":'
        '{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}},"checksum":4215593881}'
    )
    v3 = marshal_v3(report.content).decode()
    assert v3.startswith(legacy[:-1] + ',"data":"{\\"policyName\\":\\"static\\",\\"machineState\\"')
    assert v3.endswith('}}}","dataChecksum":1849615440}')


def test_v3_output_of_a_v2_file_is_accepted_by_every_era(vectors, checkpoint_report):
    g15 = checkpoint_report(vectors[14]["content"]).content
    g15.pod_entries = {}
    report = inspect_checkpoint(marshal_v3(g15))
    assert report.accepted_by == ERAS
    assert report.layout == "v3"


def test_marshal_never_writes_a_trailing_newline_or_spaces(vectors, checkpoint_report):
    out = marshal_legacy(checkpoint_report(vectors[19]["content"]).content)
    assert not out.endswith(b"\n") and b" " not in out


def test_map_keys_are_sorted_as_strings_in_json():
    fields = CheckpointFields(
        policy_name="Static",
        machine_state={n: NodeState(0, {"memory": MemoryTable()}, [n]) for n in (0, 1, 2, 10, 11)},
    )
    text = marshal_legacy(fields).decode()
    assert [text.index('"%d":' % n) for n in (0, 1, 10, 11, 2)] == sorted(text.index('"%d":' % n) for n in (0, 1, 2, 10, 11))


def test_go_string_escaping():
    assert marshal_string('a"b\\c<d>e&f\u2028\u2029\x01\n\t') == '"a\\"b\\\\c\\u003cd\\u003ee\\u0026f\\u2028\\u2029\\u0001\\n\\t"'
    assert marshal_string("é漢") == '"é漢"'


def test_omitempty_applies_to_entries_and_pod_entries_only():
    out = marshal_legacy(CheckpointFields(policy_name="", machine_state={})).decode()
    assert out == '{"policyName":"","machineState":{},"checksum":%d}' % json.loads(out)["checksum"]
    assert inspect_checkpoint(out.encode()).accepted_by == ERAS
