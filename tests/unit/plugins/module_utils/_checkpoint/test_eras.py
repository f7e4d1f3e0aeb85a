# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_checkpoint/eras.py: each kubelet era's reader on kubelet's vectors."""

from __future__ import annotations

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.tests.support.vectors import VECTOR_ERAS


def test_every_vector_reproduces_every_era(vectors, checkpoint_report):
    outcomes = {}
    for number, vector in enumerate(vectors, 1):
        report = checkpoint_report(vector["content"])
        for vector_era, era in VECTOR_ERAS.items():
            outcomes[(number, vector_era)] = report.eras[era].accepted
    expected = {
        (number, vector_era): vector["derived_checksum_acceptance"][vector_era]
        for number, vector in enumerate(vectors, 1)
        for vector_era in VECTOR_ERAS
    }
    assert len(expected) == 84
    assert outcomes == expected


def test_huge_numbers_are_rejected_by_every_era():
    report = inspect_checkpoint(b'{"machineState":{"0":{"numberOfAssignments":' + b"9" * 5000 + b"}}}")
    assert report.accepted_by == ()
    assert "cannot unmarshal number" in report.eras["legacy"].error
