# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checkpoint codec against kubelet's vectors and Go's decoding rules (spec 3, 4, 10)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checksum import data_checksum, legacy_checksum, v1_name_checksum, v2_checksum
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.decode import decode_fields
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_for_layout, marshal_legacy, marshal_v3
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (
    Block,
    CheckpointFields,
    ERAS,
    LEGACY_KEYS,
    MemoryTable,
    NodeState,
    V2_KEYS,
    V3_KEYS,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import marshal_string, parse_document

from ansible_collections.nodeops.numa_drift.tests.unit.vectors import VECTOR_ERAS

# spec 10, acceptance test 1: the stored checksum of each valid vector and its variant.
EXPECTED_CHECKSUMS = {
    1: ("legacy", 4215593881),
    12: ("legacy", 4215593881),
    15: ("v2", 1278640530),
    19: ("legacy", 1989574470),
    20: ("legacy", 3684058912),
    21: ("legacy", 3684058912),
}
EXPECTED_DATA_CHECKSUMS = {6: 1849615440, 10: 1849615440, 11: 2100279793, 18: 637296054, 21: 2197810131}
# spec 10, acceptance test 7: every one of these is refused by a repair.
REFUSED = (2, 3, 4, 5, 7, 8, 9, 14, 17, 13, 16, 15, 18, 6, 10, 11)
KUBELET_WRITTEN = (19, 20, 21)


def _report(text):
    return inspect_checkpoint(text.encode("utf-8"))


def _fields(text, keys=LEGACY_KEYS):
    return decode_fields(parse_document(text.encode("utf-8")), keys)


def test_every_vector_reproduces_every_era(vectors):
    outcomes = {}
    for number, vector in enumerate(vectors, 1):
        report = _report(vector["content"])
        for vector_era, era in VECTOR_ERAS.items():
            outcomes[(number, vector_era)] = report.eras[era].accepted
    expected = {
        (number, vector_era): vector["derived_checksum_acceptance"][vector_era]
        for number, vector in enumerate(vectors, 1)
        for vector_era in VECTOR_ERAS
    }
    assert len(expected) == 84
    assert outcomes == expected


def test_every_vector_reproduces_its_valid_flag(vectors):
    for vector in vectors:
        report = _report(vector["content"])
        # "valid" = the upstream test's own reader accepts: 1.37 for v3test/, legacy for legacy/.
        era = "legacy" if vector["name"].startswith("legacy/") else "1.37"
        assert report.eras[era].accepted == vector["valid"], vector["name"]


def test_every_vector_gets_its_format_label(vectors):
    assert [_report(v["content"]).format_label for v in vectors] == [v["format"] for v in vectors]


@pytest.mark.parametrize("number, variant_and_value", sorted(EXPECTED_CHECKSUMS.items()))
def test_stored_checksums_are_reproduced(vectors, number, variant_and_value):
    variant, value = variant_and_value
    keys = V2_KEYS if variant == "v2" else LEGACY_KEYS
    fields, error = _fields(vectors[number - 1]["content"], keys)
    assert error is None
    compute = v2_checksum if variant == "v2" else legacy_checksum
    assert fields.checksum == value
    assert compute(fields) == value


@pytest.mark.parametrize("number, value", sorted(EXPECTED_DATA_CHECKSUMS.items()))
def test_data_checksums_are_reproduced(vectors, number, value):
    fields, error = _fields(vectors[number - 1]["content"], V3_KEYS)
    assert error is None
    assert data_checksum(fields.data) == value == fields.data_checksum


def test_v1_name_checksum_of_g01(vectors):
    fields, _error = _fields(vectors[0]["content"])
    assert v1_name_checksum(fields) == 2267633148  # spec 4.6


def test_zero_checksum_vectors_are_valid_only_through_the_zero_shortcut(vectors):
    for number in (13, 16):
        report = _report(vectors[number - 1]["content"])
        assert report.layout == "zero"
        assert not report.eras["legacy"].accepted
        assert {report.eras[era].via for era in ("1.36-gate-off", "1.36-gate-on", "1.37")} == {"zero"}


@pytest.mark.parametrize("number", REFUSED)
def test_refused_vectors_have_no_write_layout(vectors, number):
    layout, reason = _report(vectors[number - 1]["content"]).write_layout()
    assert layout is None
    assert reason


def test_writable_vectors_keep_their_layout(vectors):
    assert _report(vectors[18]["content"]).write_layout()[0] == "legacy"
    assert _report(vectors[19]["content"]).write_layout()[0] == "legacy"
    assert _report(vectors[20]["content"]).write_layout()[0] == "v3"


@pytest.mark.parametrize("number", KUBELET_WRITTEN)
def test_kubelet_written_vectors_round_trip_byte_for_byte(vectors, number):
    content = vectors[number - 1]["content"].encode("utf-8")
    report = inspect_checkpoint(content)
    assert marshal_for_layout(report.content, report.write_layout()[0]) == content


def test_g01_reserialises_as_the_spec_examples(vectors):
    report = _report(vectors[0]["content"])
    legacy = marshal_legacy(report.content).decode()
    assert legacy == (
        '{"policyName":"static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,'
        '"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}},"entries":{"pod":'
        '{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}},"checksum":4215593881}'
    )
    v3 = marshal_v3(report.content).decode()
    assert v3.startswith(legacy[:-1] + ',"data":"{\\"policyName\\":\\"static\\",\\"machineState\\"')
    assert v3.endswith('}}}","dataChecksum":1849615440}')


def test_v3_output_of_a_v2_file_is_accepted_by_every_era(vectors):
    g15 = _report(vectors[14]["content"]).content
    g15.pod_entries = {}
    report = inspect_checkpoint(marshal_v3(g15))
    assert report.accepted_by == ERAS
    assert report.layout == "v3"


def test_marshal_never_writes_a_trailing_newline_or_spaces(vectors):
    out = marshal_legacy(_report(vectors[19]["content"]).content)
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


# --- Go decoding semantics (spec 4.5) ---------------------------------------------------


@pytest.mark.parametrize(
    "text, check",
    [
        ('{"machineState":null}', lambda f: f.machine_state is None),
        ('{}', lambda f: f.machine_state == {} and f.entries == {}),
        ('null', lambda f: f.machine_state == {} and f.policy_name == ""),
        ('{"policyName":null}', lambda f: f.policy_name == ""),
        ('{"policyName":"a","policyName":null}', lambda f: f.policy_name == "a"),
        ('{"policyName":"a","POLICYNAME":"b"}', lambda f: f.policy_name == "b"),
        ('{"PolicyName":"x"}', lambda f: f.policy_name == "x"),
        ('{"polic\u017fyName":"x"}', lambda f: f.policy_name == ""),
        ('{"\u212aey":1, "policyname":"y"}', lambda f: f.policy_name == "y"),
        ('{"machineState":{"0":{}},"machineState":{"1":{}}}', lambda f: sorted(f.machine_state) == [0, 1]),
        ('{"machineState":{"01":{"cells":[1]},"+1":{"cells":[2]}}}', lambda f: f.machine_state[1].cells == [2]),
        ('{"machineState":{"0":{"cells":null}}}', lambda f: f.machine_state[0].cells is None),
        ('{"machineState":{"0":{"cells":[]}}}', lambda f: f.machine_state[0].cells == []),
        ('{"machineState":{"0":{"cells":[null,3]}}}', lambda f: f.machine_state[0].cells == [0, 3]),
        ('{"machineState":{"0":{"memoryMap":{"memory":{}}}}}', lambda f: f.machine_state[0].memory_map["memory"].total == 0),
        ('{"machineState":{"0":{"memoryMap":{"memory":null}}}}', lambda f: f.machine_state[0].memory_map["memory"] is None),
        ('{"entries":{"p":null}}', lambda f: f.entries == {"p": None}),
        ('{"entries":{"p":{"c":null}}}', lambda f: f.entries == {"p": {"c": None}}),
        ('{"entries":{"p":{"c":[null,{}]}}}', lambda f: f.entries["p"]["c"] == [Block(), Block()]),
        ('{"entries":{"p":{"c":[{"affinity":[0]}]}}}', lambda f: f.entries["p"]["c"][0].numa_affinity is None),
        ('{"checksum":18446744073709551615}', lambda f: f.checksum == 2 ** 64 - 1),
        ('{"unknown":[[[{"x":1e999}]]]}', lambda f: f.policy_name == ""),
        ('{"policyName":"\\ud800x"}', lambda f: f.policy_name == "\ufffdx"),
    ],
)
def test_go_decoding_semantics(text, check):
    fields, error = _fields(text)
    assert error is None
    assert check(fields)


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"checksum":-1}', "cannot unmarshal number -1"),
        ('{"checksum":18446744073709551616}', "cannot unmarshal number 18446744073709551616"),
        ('{"checksum":1.0}', "cannot unmarshal number 1.0"),
        ('{"checksum":1e3}', "cannot unmarshal number 1e3"),
        ('{"checksum":"1"}', "cannot unmarshal string"),
        ('{"policyName":1}', "cannot unmarshal number 1"),
        ('{"machineState":{"0x1":{}}}', "cannot unmarshal number 0x1"),
        ('{"machineState":{" 1":{}}}', "cannot unmarshal number  1"),
        ('{"machineState":{"0":{"numberOfAssignments":9223372036854775808}}}', "9223372036854775808"),
        ('{"machineState":{"0":{"memoryMap":{"memory":{"total":-0}}}}}', "cannot unmarshal number -0"),
        ('{"machineState":[]}', "cannot unmarshal array"),
        ('{"entries":{"p":{"c":{}}}}', "cannot unmarshal object"),
        ('[]', "cannot unmarshal array"),
        ('true', "cannot unmarshal bool"),
    ],
)
def test_go_type_errors(text, message):
    _fields_decoded, error = _fields(text)
    assert error is not None and message in error


def test_type_error_keeps_decoding_and_reports_the_first():
    fields, error = _fields('{"checksum":"x","policyName":"kept","machineState":{"0":{"cells":[1.5]}}}')
    assert "string" in error
    assert fields.policy_name == "kept"


# --- Bad input: clean errors, never a traceback ------------------------------------------


@pytest.mark.parametrize(
    "raw, expected",
    [
        (b"", "unexpected end of JSON input"),
        (b"   \n", "unexpected end of JSON input"),
        (b"{", "unexpected end of JSON input"),
        (b'{"policyName":"Sta', "unexpected end of JSON input"),
        (b'{"policyName":"Static",', "unexpected end of JSON input"),
        (b"{}x", "invalid JSON"),
        (b"{}{}", "invalid JSON"),
        (b'{"a":1,}', "invalid JSON"),
        (b"{/*c*/}", "invalid JSON"),
        (b'{"a":NaN}', "invalid"),
        (b'{"a":Infinity}', "invalid"),
        (b"\xef\xbb\xbf{}", "invalid JSON"),
        (b"\x00\x00\x00", "invalid JSON"),
        (b'{"a":"\x00"}', "invalid JSON"),
        (b"\xff\xfe{}", "invalid JSON"),
        (b"[" * 100000, "nesting"),
    ],
)
def test_bad_input_gives_a_clean_error(raw, expected):
    report = inspect_checkpoint(raw)
    assert report.layout == "not-json"
    assert expected in report.syntax_error
    assert report.accepted_by == ()
    assert report.write_layout()[0] is None


def test_deeply_nested_valid_json_gives_a_clean_error():
    raw = b'{"x":' + b"[" * 50000 + b"]" * 50000 + b"}"
    report = inspect_checkpoint(raw)
    assert report.accepted_by == ()
    assert "nesting" in report.syntax_error


def test_invalid_utf8_inside_a_string_becomes_replacement_characters():
    report = inspect_checkpoint(b'{"policyName":"St\xffatic","machineState":{}}')
    assert report.syntax_error is None
    assert report.content.policy_name == "St\ufffdatic"


def test_huge_numbers_are_rejected_by_every_era():
    report = inspect_checkpoint(b'{"machineState":{"0":{"numberOfAssignments":' + b"9" * 5000 + b"}}}")
    assert report.accepted_by == ()
    assert "cannot unmarshal number" in report.eras["legacy"].error


def test_fifty_megabyte_file_is_refused_cleanly():
    raw = b'{"policyName":"Static","machineState":{},"entries":{"p":{"c":[' + b'{"size":1},' * (50 * 2 ** 20 // 11) + b"{}]}}}"
    assert len(raw) > 50 * 2 ** 20
    report = inspect_checkpoint(raw)
    assert report.layout == "too-large"
    assert "more than the" in report.syntax_error
    assert report.write_layout()[0] is None


@pytest.mark.parametrize(
    "text, fragment",
    [
        ('{"policyName":"Static","POLICYNAME":"Static","machineState":{},"checksum":0}', "repeats the key"),
        ('{"PolicyName":"Static","machineState":{}}', "case variant"),
        ('{"policyName":"Static","machineState":{"01":{}}}', "non-canonical NUMA node id"),
        ('{"policyName":"Static","machineState":{"0":null}}', "is null"),
        ('{"policyName":"Static","machineState":{"0":{"nodes":[0]}}}', "unknown key 'nodes'"),
        ('{"policyName":"Static","machineState":{},"extra":1}', "unknown key 'extra'"),
        ('{"policyName":"Static","machineState":{},"entries":{"p":{"c":[{"ty\u00e9pe":"memory"}]}}}', "non-ASCII key"),
    ],
)
def test_non_kubelet_input_is_listed_as_irregular(text, fragment):
    fields, _error = _fields(text)
    fields.checksum = legacy_checksum(fields)
    doc = json.loads(text, object_pairs_hook=lambda pairs: pairs)
    assert doc is not None
    # Give the file a valid checksum, so only the irregularity can refuse it.
    raw = text.replace('"machineState"', '"checksum":%d,"machineState"' % fields.checksum, 1).encode()
    report = inspect_checkpoint(raw)
    assert any(fragment in item for item in report.irregularities), report.irregularities
    assert report.write_layout()[0] is None
