# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures shared by the unit tests: kubelet's checkpoint vectors from ``tests/fixtures/kubelet-checkpoints.json``."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.tests.support.vectors import VECTORS_FILE, load_vectors


@pytest.fixture(scope="session")
def vectors():
    """All 21 vectors; a missing file is an error, never a skip."""
    found = load_vectors()
    assert len(found) == 21, "expected the 21 vectors of tests/fixtures/README.md in %s" % VECTORS_FILE
    return found
