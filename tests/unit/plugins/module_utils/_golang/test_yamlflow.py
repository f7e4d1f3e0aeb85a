# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_golang/yamlflow.py: flow collections over several lines, through the reader."""

from __future__ import annotations

from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import load


def test_flow_collections_over_lines_with_comments():
    text = "a: [1, 'two',  # one and two\n   three,\n]\nb: {x: 1, 'y': [], z: {},\n  w}\nc: {\"k\":\"v\"}\n"
    assert load(text) == {"a": [1, "two", "three"], "b": {"x": 1, "y": [], "z": {}, "w": None}, "c": {"k": "v"}}
