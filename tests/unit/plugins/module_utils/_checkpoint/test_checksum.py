# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_checkpoint/checksum.py: the stored and data checksums of kubelet's vectors (spec 10)."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checksum import data_checksum, legacy_checksum, v1_name_checksum, v2_checksum
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import LEGACY_KEYS, V2_KEYS, V3_KEYS


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


@pytest.mark.parametrize("number, variant_and_value", sorted(EXPECTED_CHECKSUMS.items()))
def test_stored_checksums_are_reproduced(vectors, number, variant_and_value, decoded_fields):
    variant, value = variant_and_value
    keys = V2_KEYS if variant == "v2" else LEGACY_KEYS
    fields, error = decoded_fields(vectors[number - 1]["content"], keys)
    assert error is None
    compute = v2_checksum if variant == "v2" else legacy_checksum
    assert fields.checksum == value
    assert compute(fields) == value


@pytest.mark.parametrize("number, value", sorted(EXPECTED_DATA_CHECKSUMS.items()))
def test_data_checksums_are_reproduced(vectors, number, value, decoded_fields):
    fields, error = decoded_fields(vectors[number - 1]["content"], V3_KEYS)
    assert error is None
    assert data_checksum(fields.data) == value == fields.data_checksum


def test_v1_name_checksum_of_g01(vectors, decoded_fields):
    fields, _error = decoded_fields(vectors[0]["content"])
    assert v1_name_checksum(fields) == 2267633148  # spec 4.6


def test_zero_checksum_vectors_are_valid_only_through_the_zero_shortcut(vectors, checkpoint_report):
    for number in (13, 16):
        report = checkpoint_report(vectors[number - 1]["content"])
        assert report.layout == "zero"
        assert not report.eras["legacy"].accepted
        assert {report.eras[era].via for era in ("1.36-gate-off", "1.36-gate-on", "1.37")} == {"zero"}
