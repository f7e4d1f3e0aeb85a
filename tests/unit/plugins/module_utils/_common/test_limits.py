# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_common/limits.py: 64-bit digit strings, nesting, bounded JSON."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common import limits


def test_bounded_int_takes_64_bits_at_most_in_each_base():
    assert limits.bounded_int("18446744073709551615") == limits.UINT64_MAX
    assert limits.bounded_int("18446744073709551616") is None
    assert limits.bounded_int("000000000000000000000000042") == 42
    assert limits.bounded_int("ffffffffffffffff", 16) == limits.UINT64_MAX
    assert limits.bounded_int("1" + "0" * 16, 16) is None
    for bad in ("", "-1", "1e3", "١٢", " 1"):
        assert limits.bounded_int(bad) is None, bad


def test_shown_keeps_short_numbers_and_cuts_long_ones():
    assert limits.shown("12345") == "12345"
    assert limits.shown("9" * 100) == "99999999999999999999... (100 characters)"


def test_nesting_depth_counts_lists_and_dicts_not_tuples():
    assert limits.nesting_depth(1) == 0
    assert limits.nesting_depth({"a": [1, {"b": []}]}) == 4
    assert limits.nesting_depth([("k", [1])]) == 2
    deep = []
    for _level in range(1000):
        deep = [deep]
    assert limits.nesting_depth(deep, limit=10) == 11


def test_load_json_refuses_big_integers_and_deep_nesting_by_name():
    assert limits.load_json('{"a": [-9223372036854775808]}') == {"a": [-9223372036854775808]}
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        limits.load_json("[18446744073709551616]")
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        limits.load_json("[" * 65 + "]" * 65)
    assert limits.load_json("[" * 64 + "]" * 64) is not None
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        limits.load_json("[" * 100000 + "]" * 100000)
