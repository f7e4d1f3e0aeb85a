# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_checkpoint/decode.py: Go's decoding rules for a checkpoint (spec 4.5)."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import Block


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
def test_go_decoding_semantics(text, check, decoded_fields):
    fields, error = decoded_fields(text)
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
def test_go_type_errors(text, message, decoded_fields):
    _fields_decoded, error = decoded_fields(text)
    assert error is not None and message in error


def test_type_error_keeps_decoding_and_reports_the_first(decoded_fields):
    fields, error = decoded_fields('{"checksum":"x","policyName":"kept","machineState":{"0":{"cells":[1.5]}}}')
    assert "string" in error
    assert fields.policy_name == "kept"
