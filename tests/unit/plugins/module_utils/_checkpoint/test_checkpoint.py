# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_checkpoint/checkpoint.py: inspect_checkpoint on kubelet's vectors and bad input (spec 3, 10)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checksum import legacy_checksum


# spec 10, acceptance test 7: every one of these is refused by a repair.
REFUSED = (2, 3, 4, 5, 7, 8, 9, 14, 17, 13, 16, 15, 18, 6, 10, 11)


def test_every_vector_reproduces_its_valid_flag(vectors, checkpoint_report):
    for vector in vectors:
        report = checkpoint_report(vector["content"])
        # "valid" = the upstream test's own reader accepts: 1.37 for v3test/, legacy for legacy/.
        era = "legacy" if vector["name"].startswith("legacy/") else "1.37"
        assert report.eras[era].accepted == vector["valid"], vector["name"]


def test_every_vector_gets_its_format_label(vectors, checkpoint_report):
    assert [checkpoint_report(v["content"]).format_label for v in vectors] == [v["format"] for v in vectors]


@pytest.mark.parametrize("number", REFUSED)
def test_refused_vectors_have_no_write_layout(vectors, number, checkpoint_report):
    layout, reason = checkpoint_report(vectors[number - 1]["content"]).write_layout()
    assert layout is None
    assert reason


def test_writable_vectors_keep_their_layout(vectors, checkpoint_report):
    assert checkpoint_report(vectors[18]["content"]).write_layout()[0] == "legacy"
    assert checkpoint_report(vectors[19]["content"]).write_layout()[0] == "legacy"
    assert checkpoint_report(vectors[20]["content"]).write_layout()[0] == "v3"


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
def test_non_kubelet_input_is_listed_as_irregular(text, fragment, decoded_fields):
    fields, _error = decoded_fields(text)
    fields.checksum = legacy_checksum(fields)
    doc = json.loads(text, object_pairs_hook=lambda pairs: pairs)
    assert doc is not None
    # Give the file a valid checksum, so only the irregularity can refuse it.
    raw = text.replace('"machineState"', '"checksum":%d,"machineState"' % fields.checksum, 1).encode()
    report = inspect_checkpoint(raw)
    assert any(fragment in item for item in report.irregularities), report.irregularities
    assert report.write_layout()[0] is None
