# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_common/record.py: the engine's value types."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, factory, replace


class Point(Record, frozen=True):
    x: int
    y: int = 0


class Bag(Record):
    items: list = factory(list)


def test_fields_defaults_equality_and_repr():
    assert Point(1) == Point(1, 0) == Point(x=1, y=0) and Point(1) != Point(1, 2)
    assert "Point(" in repr(Point(1, 2)) and "x=1" in repr(Point(1, 2))
    with pytest.raises(TypeError):
        Point()  # pylint: disable=no-value-for-parameter


def test_frozen_records_refuse_assignment_and_replace_makes_a_copy():
    point = Point(1, 2)
    with pytest.raises(AttributeError):
        point.x = 5
    moved = replace(point, y=7)
    assert (moved.x, moved.y, point.y) == (1, 7, 2)


def test_factory_defaults_are_fresh_per_instance():
    first, second = Bag(), Bag()
    first.items.append(1)
    assert second.items == [] and first.items == [1]
