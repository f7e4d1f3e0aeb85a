# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests: generated checkpoints of 1-8 NUMA nodes, hugepages and many pods."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_legacy, marshal_v3
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import Block, CheckpointFields, ERAS, MemoryTable, NodeState, PodEntry

UINT64 = st.integers(min_value=0, max_value=2 ** 64 - 1)
RESOURCES = ("memory", "hugepages-2Mi", "hugepages-1Gi")
NUMBER = re.compile(rb"(?<![0-9\\])[0-9]+")


@st.composite
def tables(draw):
    return MemoryTable(*(draw(UINT64) for _field in range(5)))


@st.composite
def checkpoints(draw, with_pod_entries=False):
    node_ids = sorted(draw(st.sets(st.integers(0, 15), min_size=1, max_size=8)))
    resources = ["memory"] + draw(st.lists(st.sampled_from(RESOURCES[1:]), unique=True))
    machine_state = {
        node_id: NodeState(
            number_of_assignments=draw(st.integers(0, 1000)),
            memory_map={resource: draw(tables()) for resource in resources},
            cells=sorted(draw(st.sets(st.sampled_from(node_ids), min_size=1))),
        )
        for node_id in node_ids
    }
    blocks = st.builds(
        Block,
        numa_affinity=st.sets(st.sampled_from(node_ids), min_size=1).map(sorted),
        type=st.sampled_from(resources),
        size=UINT64,
    )
    pod_uids = st.uuids().map(str)
    containers = st.dictionaries(st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True), st.lists(blocks, min_size=1, max_size=3), min_size=1, max_size=3)
    entries = draw(st.dictionaries(pod_uids, containers, max_size=40))
    pod_entries = {}
    if with_pod_entries:
        pod_entries = draw(st.dictionaries(pod_uids, st.builds(PodEntry, st.lists(blocks, min_size=1, max_size=2)), max_size=3))
    return CheckpointFields(
        policy_name=draw(st.sampled_from(["Static", "BestEffort", "None"])),
        machine_state=machine_state,
        entries=entries,
        pod_entries=pod_entries,
    )


PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same_content(a, b):
    return (a.policy_name, a.machine_state, a.entries, a.pod_entries) == (b.policy_name, b.machine_state, b.entries, b.pod_entries)


@PROPERTY_SETTINGS
@given(checkpoints())
def test_legacy_parse_serialize_parse_is_the_identity(fields):
    raw = marshal_legacy(fields)
    report = inspect_checkpoint(raw)
    assert report.layout == "legacy"
    assert report.accepted_by == ERAS
    assert report.irregularities == ()
    assert _same_content(report.content, fields)
    assert marshal_legacy(report.content) == raw


@PROPERTY_SETTINGS
@given(checkpoints(with_pod_entries=True))
def test_v3_parse_serialize_parse_is_the_identity(fields):
    raw = marshal_v3(fields)
    report = inspect_checkpoint(raw)
    assert report.layout == "v3"
    assert report.accepted_by == ERAS
    assert _same_content(report.content, fields)
    assert marshal_v3(report.content) == raw


def _change_one_digit(raw, data):
    spans = [match.span() for match in NUMBER.finditer(raw)]
    start, end = data.draw(st.sampled_from(spans))
    position = data.draw(st.integers(start, end - 1))
    old = raw[position:position + 1]
    choices = [d for d in b"0123456789" if bytes([d]) != old and not (d == ord("0") and position == start and end - start > 1)]
    new = data.draw(st.sampled_from(choices))
    return raw[:position] + bytes([new]) + raw[position + 1:], position


@PROPERTY_SETTINGS
@given(checkpoints(), st.data())
def test_any_one_byte_change_of_a_number_breaks_the_checksum_legacy(fields, data):
    raw = marshal_legacy(fields)
    changed, _position = _change_one_digit(raw, data)
    report = inspect_checkpoint(changed)
    # The zero shortcut of 1.36/1.37 is the one way a changed file can load: a checksum changed to 0.
    if report.inline is not None and report.inline.checksum == 0:
        assert report.accepted_by == ("1.36-gate-off", "1.36-gate-on", "1.37")
    else:
        assert report.accepted_by == ()


@PROPERTY_SETTINGS
@given(checkpoints(), st.data())
def test_any_one_byte_change_of_a_number_breaks_the_v3_checksums(fields, data):
    raw = marshal_v3(fields)
    changed, position = _change_one_digit(raw, data)
    report = inspect_checkpoint(changed)
    # The inline part is what older kubelets read; data + dataChecksum are what 1.37 reads.
    reader = "legacy" if position < raw.index(b',"data":') else "1.37"
    assert not report.eras[reader].accepted
    assert report.write_layout()[0] is None
