# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_common/kinds.py: a value's kind in YAML's words, never a Python class name."""

from __future__ import annotations

from collections import OrderedDict

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.kinds import kind_of


class TaggedStr(str):
    """As Ansible's ``_AnsibleTaggedStr``: a subclass no user typed."""


class TaggedDict(dict):
    """As Ansible's ``_AnsibleTaggedDict``."""


@pytest.mark.parametrize("value, kind", [
    (None, "null"), (True, "a boolean"), (5, "an integer"), (1.5, "a number"), ("5", "a string"), (TaggedStr("5"), "a string"),
    ({}, "a mapping"), (TaggedDict(), "a mapping"), (OrderedDict(), "a mapping"), ([], "a list"), ((), "a list"), (b"x", "bytes"),
    (object(), "a value"),
])
def test_kind_of_names_what_a_person_wrote(value, kind):
    assert kind_of(value) == kind
