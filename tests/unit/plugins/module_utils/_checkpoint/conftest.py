# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures the checkpoint tests share (kubelet's vectors come from tests/unit/conftest.py)."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.decode import decode_fields
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import LEGACY_KEYS
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import parse_document


@pytest.fixture
def checkpoint_report():
    """``checkpoint_report(text)``: what inspect_checkpoint says of a checkpoint's text."""

    def _report(text):
        return inspect_checkpoint(text.encode("utf-8"))

    return _report


@pytest.fixture
def decoded_fields():
    """``decoded_fields(text, keys=LEGACY_KEYS)``: the fields Go's decoding gives a checkpoint's text."""

    def _fields(text, keys=LEGACY_KEYS):
        return decode_fields(parse_document(text.encode("utf-8")), keys)

    return _fields
